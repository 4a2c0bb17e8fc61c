"""Parsers for the UCI commands that carry arguments: ``position``, ``go``, ``setoption``.

Each returns a value or raises ``UciError`` with a message that says what was wrong; the
loop turns it into ``info string error: ...`` and keeps its last valid state. They never
touch the engine's state, so a bad command cannot leave anything half-changed.
"""

from __future__ import annotations

from zerochess.chess import STARTING_FEN, Board
from zerochess.search.timeman import GoParams


class UciError(ValueError):
    """A command the engine cannot accept; the message is shown to the user."""


def parse_position(args: list[str], chess960: bool = False) -> Board:
    """``position startpos|fen FEN [moves m1 m2 ...]`` -> a Board with the moves pushed.

    The FEN may be X-FEN or Shredder-FEN; moves may write castling as king takes rook (e1h1)
    or, in standard chess, as the king's two-square move (e1g1). ``chess960`` (the
    ``UCI_Chess960`` option) sets the form the board writes castling in from then on."""
    if not args:
        raise UciError("position needs 'startpos' or 'fen <FEN>'")
    if "moves" in args:
        split = args.index("moves")
        spec, moves = args[:split], args[split + 1:]
    else:
        spec, moves = args, []
    if spec[0] == "startpos":
        if len(spec) != 1:
            raise UciError(f"unexpected words after startpos: {' '.join(spec[1:])!r}")
        fen = STARTING_FEN
    elif spec[0] == "fen":
        fen = " ".join(spec[1:])
    else:
        raise UciError(f"position needs 'startpos' or 'fen <FEN>', got {spec[0]!r}")
    try:
        board = Board(fen, chess960=chess960)
    except ValueError as exc:
        raise UciError(f"invalid FEN: {exc}") from None
    for ply, move in enumerate(moves, start=1):
        try:
            board.push_uci(move)
        except ValueError as exc:
            raise UciError(f"move {ply} of the position command: {exc}") from None
    return board


_INT_ARGS = ("wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth", "mate")
_FLAG_ARGS = ("infinite", "ponder")


def parse_go(args: list[str], board: Board | None = None) -> GoParams:
    """``go [wtime N] [btime N] ... [infinite] [ponder] [searchmoves m1 m2 ...]``."""
    params = GoParams()
    seen = set()
    i = 0
    while i < len(args):
        word = args[i]
        if word in seen and word != "searchmoves":
            raise UciError(f"go: {word} given twice")
        seen.add(word)
        if word in _FLAG_ARGS:
            setattr(params, word, True)
            i += 1
        elif word in _INT_ARGS:
            if i + 1 >= len(args):
                raise UciError(f"go: {word} needs a number")
            try:
                value = int(args[i + 1])
            except ValueError:
                raise UciError(f"go: {word} needs an integer, got {args[i + 1]!r}") from None
            # Clocks may be negative when a GUI's own overhead ate the time: treat as zero.
            if word in ("wtime", "btime"):
                value = max(0, value)
            elif value < 0 or (value == 0 and word in ("movestogo", "depth", "mate")):
                raise UciError(f"go: {word} must be positive, got {value}")
            if word == "mate":
                params.depth = 2 * value  # a mate search is a depth-limited search here
            else:
                setattr(params, word, value)
            i += 2
        elif word == "searchmoves":
            moves = []
            i += 1
            while i < len(args) and args[i] not in _INT_ARGS + _FLAG_ARGS:
                moves.append(args[i])
                i += 1
            if not moves:
                raise UciError("go: searchmoves needs at least one move")
            if board is not None:
                bad = []
                for k, move in enumerate(moves):
                    try:  # castling may come in either form (e1g1, e1h1): keep the board's
                        moves[k] = board.normalize_uci(move)
                    except ValueError:
                        bad.append(move)
                if bad:
                    raise UciError(f"go: searchmoves has moves that are not legal here: {' '.join(bad)}")
            params.searchmoves = tuple(dict.fromkeys(moves))
        else:
            raise UciError(f"go: unknown parameter {word!r}")
    return params


def parse_setoption(args: list[str]) -> tuple[str, str | None]:
    """``setoption name <id, may contain spaces> [value <x, may contain spaces>]``."""
    if not args or args[0] != "name":
        raise UciError("setoption needs 'name <option> [value <value>]'")
    if "value" in args:
        split = args.index("value")
        name, value = " ".join(args[1:split]), " ".join(args[split + 1:])
    else:
        name, value = " ".join(args[1:]), None
    if not name:
        raise UciError("setoption needs an option name")
    return name, value
