"""Parsers for the UCI commands that carry arguments: ``position``, ``go``, ``setoption``.

They read what Stockfish reads and say what they left out: ``parse_position`` and
``parse_go`` return their value with a list of warnings (the loop sends each as ``info
string warning: ...``) and raise ``UciError`` only when nothing can be read at all (a
``position`` without a readable FEN). A GUI's small slips (a FEN with a field too many or
too few, an uppercase promotion letter, an unknown ``go`` word) must not cost a game, and a
command half-understood must never leave the engine answering from an older position or
searching without end. They never touch the engine's state.
"""

from __future__ import annotations

from zerochess.chess import STARTING_FEN, Board
from zerochess.search.timeman import GoParams


class UciError(ValueError):
    """A command the engine cannot accept; the message is shown to the user."""


#: What python-chess (and Stockfish, in effect) assumes for the FEN fields a GUI leaves out.
_FEN_DEFAULTS = ("w", "-", "-", "0", "1")


def parse_position(args: list[str], chess960: bool = False) -> tuple[Board, list[str]]:
    """``position startpos|fen FEN [moves m1 m2 ...]`` -> (board with the moves pushed,
    warnings).

    The FEN may be X-FEN or Shredder-FEN, and may lack its last fields (side to move White,
    no castling, no en passant, counters 0 and 1) or carry extra ones (ignored). Moves may
    write castling as king takes rook (e1h1) or, in standard chess, as the king's two-square
    move (e1g1), and a promotion letter in either case; the moves are played up to the first
    that is not legal, as Stockfish does. ``chess960`` (``UCI_Chess960``) sets the form the
    board writes castling in. UciError: no board can be read at all."""
    warnings: list[str] = []
    if not args:
        raise UciError("position needs 'startpos' or 'fen <FEN>'")
    if "moves" in args:
        split = args.index("moves")
        spec, moves = args[:split], args[split + 1:]
    else:
        spec, moves = args, []
    if spec[0] == "startpos":
        if len(spec) != 1:
            warnings.append(f"position: words after startpos ignored: {_shown(' '.join(spec[1:]))}")
        fen = STARTING_FEN
    elif spec[0] == "fen":
        fen = _complete_fen(spec[1:], warnings)
    else:
        raise UciError(f"position needs 'startpos' or 'fen <FEN>', got {_shown(spec[0])}")
    try:
        board = Board(fen, chess960=chess960)
    except ValueError as exc:
        raise UciError(f"invalid FEN: {exc}") from None
    for ply, move in enumerate(moves, start=1):
        move = _lowercase_promotion(move, warnings)
        try:
            board.push_uci(move)
        except ValueError as exc:
            kept = f"the position after the {ply - 1} moves before it" if ply > 1 else \
                "the position before the moves"
            warnings.append(f"position: move {ply} ({_shown(move)}) and the rest ignored: {exc}; "
                            f"playing from {kept}")
            break
    return board, warnings


def _complete_fen(fields: list[str], warnings: list[str]) -> str:
    """The six FEN fields from what the GUI sent: extra fields dropped, missing ones filled."""
    if not fields:
        raise UciError("invalid FEN: 'position fen' without a FEN")
    if len(fields) > 6:
        warnings.append(f"position: FEN fields after the sixth ignored: {_shown(' '.join(fields[6:]))}")
        fields = fields[:6]
    elif len(fields) < 6:
        filled = list(_FEN_DEFAULTS[len(fields) - 1:])
        if len(fields) < 4:   # side, castling or en passant guessed: worth saying
            warnings.append(f"position: FEN without its last {6 - len(fields)} fields; "
                            f"taken as {' '.join(filled)}")
        fields = fields + filled
    return " ".join(fields)


def _lowercase_promotion(move: str, warnings: list[str]) -> str:
    """``a7a8Q`` -> ``a7a8q`` (UCI writes promotions in lowercase; Stockfish reads both)."""
    if len(move) == 5 and move[4] in "QRBN":
        warnings.append(f"move {move}: promotion letter read as lowercase")
        return move[:4] + move[4].lower()
    return move


def _shown(text: str, limit: int = 40) -> str:
    """A word from the input, quoted and cut, for a message."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


_NUMBERS = ("wtime", "btime", "winc", "binc", "movestogo", "movetime", "nodes", "depth", "mate")
_LIMITS = ("wtime", "btime", "movetime", "nodes", "depth", "mate")  # each ends a search alone
_FLAGS = ("infinite", "ponder")
_KEYWORDS = _NUMBERS + _FLAGS + ("searchmoves",)


def parse_go(args: list[str], board: Board | None = None) -> tuple[GoParams, list[str]]:
    """``go [wtime N] [btime N] ... [infinite] [ponder] [searchmoves m1 m2 ...]`` ->
    (GoParams, warnings). Never raises: every ``go`` gets a ``bestmove``.

    An unknown word is ignored; a number that cannot be used is ignored or brought into
    range (``depth 0`` is depth 1); a limit given twice keeps its last value; the
    ``searchmoves`` that are not legal in ``board`` are dropped (``searchmoves`` ``()`` when
    none is: nothing to search). A ``go`` that asked for limits of which none can be used,
    or a clock only for the side not to move, gets ``at_once`` (Stockfish moves at once
    then) rather than a search without end."""
    params, warnings = GoParams(), []
    seen: set[str] = set()
    asked = False        # the go named a limit, usable or not
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word in seen and word != "searchmoves":
            warnings.append(f"go: {word} given twice; the last one counts")
        seen.add(word)
        if word in _FLAGS:
            setattr(params, word, True)
        elif word in _NUMBERS:
            asked |= word in _LIMITS
            text = args[i] if i < len(args) and args[i] not in _KEYWORDS else None
            i += text is not None
            _set_number(params, word, text, warnings)
        elif word == "searchmoves":
            moves = []
            while i < len(args) and args[i] not in _KEYWORDS:
                moves.append(args[i])
                i += 1
            params.searchmoves = _legal_searchmoves(moves, board, warnings)
        else:
            warnings.append(f"go: unknown word {_shown(word)} ignored")
    if not (params.infinite or _has_usable_limit(params, board)) and asked:
        params.at_once = True
        warnings.append(_at_once_reason(params, board))
    return params, warnings


def _set_number(params: GoParams, word: str, text: str | None, warnings: list[str]) -> None:
    """Set ``go``'s ``word`` from ``text``, or say why not."""
    try:
        value = int(text) if text is not None else None
    except ValueError:
        value = None
    if value is None:
        got = "nothing" if text is None else _shown(text)
        warnings.append(f"go: {word} needs an integer, got {got}; ignored")
        return
    if word in ("wtime", "btime", "winc", "binc"):
        value = max(0, value)   # a clock a GUI's own overhead took below zero: no time left
    elif word == "movetime" and value < 0:
        warnings.append(f"go: movetime {value} taken as 0")
        value = 0
    elif word == "depth" and value < 1:
        warnings.append(f"go: depth {value} taken as 1")
        value = 1
    elif word in ("movestogo", "nodes", "mate") and value < 1:
        warnings.append(f"go: {word} {value} ignored (it must be at least 1)")
        return
    setattr(params, word, value)


def _legal_searchmoves(moves: list[str], board: Board | None,
                       warnings: list[str]) -> tuple[str, ...] | None:
    """The ``searchmoves`` legal in ``board``, as the board writes them (castling may come
    as e1g1 or e1h1); ``None`` (every move) when the list is empty."""
    if not moves:
        warnings.append("go: searchmoves without a move ignored")
        return None
    legal, bad = [], []
    for move in moves:
        move = _lowercase_promotion(move, warnings)
        if board is None:
            legal.append(move)
            continue
        try:
            legal.append(board.normalize_uci(move))
        except ValueError:
            bad.append(move)
    if bad:
        left = "searching the others" if legal else "no move left to search"
        warnings.append(f"go: searchmoves not legal here, ignored: "
                        f"{_shown(' '.join(bad), 80)}; {left}")
    return tuple(dict.fromkeys(legal))


def _our_clock(params: GoParams, board: Board | None) -> int | None:
    if board is None:
        return params.wtime if params.wtime is not None else params.btime
    return params.wtime if board.turn else params.btime


def _has_usable_limit(params: GoParams, board: Board | None) -> bool:
    return (params.movetime is not None or params.nodes is not None or params.depth is not None
            or params.mate is not None or _our_clock(params, board) is not None)


def _at_once_reason(params: GoParams, board: Board | None) -> str:
    if (params.wtime is not None or params.btime is not None) and board is not None:
        side, other = ("White", "Black") if board.turn else ("Black", "White")
        return (f"go: a clock for {other} only, with {side} to move: moving at once, "
                f"as Stockfish does")
    return "go: none of its limits can be used: moving at once"


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
