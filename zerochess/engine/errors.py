"""Errors raised for bad input: by the board, and by the network file readers.

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


class CheckpointError(ValueError):
    """A network file (``.pt`` checkpoint or ``.onnx`` network) cannot be used; the message
    names the file and the problem. It lives here, without torch, because the engine reads
    ``.onnx`` files where torch is not installed."""

    def __init__(self, path, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")
