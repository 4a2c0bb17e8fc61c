"""Errors raised for bad input to the board (the network file readers' is ``zerochess.neural.errors``).

All are ``ValueError`` subclasses (as python-chess's ``IllegalMoveError`` is) so that a caller
that only cares "was the input acceptable?" catches one type, while the UCI layer can tell
the user precisely what was wrong. The board is never left half-changed when one is raised.
"""


class InvalidFenError(ValueError):
    """A FEN string that cannot describe a legal chess position."""


class InvalidMoveError(ValueError):
    """A move string that is not UCI notation (e.g. ``e2e9`` or ``hello``)."""


class IllegalMoveError(ValueError):
    """A well-formed UCI move that is not legal in the current position."""
