"""PGN of match games, with the runner's clock after each move as ``[%clk h:mm:ss]``, the
engine's score as ``[%eval ...]`` (lichess/ChessBase annotations that python-chess and GUIs
read) and the think time as ``{0.52s}``, book moves marked ``{book}``, and the reason the game
ended as the last comment (cutechess's style: ``{White loses on time}``). With time or node
odds each side's limit has its own tags (``WhiteTimeControl``, ``BlackLimit`` ...).

Read back (`book_end`, `ending_of`, `limit_tags`): where a game written here, by cutechess or
by fastchess left its opening and how it ended, for `zerochess rate` and `zerochess match
--resume`."""

from __future__ import annotations

import re
import time

import chess
import chess.pgn

from zerochess.match.config import MatchConfig
from zerochess.match.game import GameRecord

FORFEIT_TERMINATIONS = ("time forfeit", "rules infraction", "abandoned")
RESULTS = ("1-0", "0-1", "1/2-1/2")
# What the writer puts before the reason in the last move's comment.
_ANNOTATION = re.compile(r"\[%[^\]]*\]|^\s*\d+(?:\.\d+)?s\b")


def game_pgn(record: GameRecord, config: MatchConfig, site: str = "?") -> chess.pgn.Game:
    game = chess.pgn.Game()
    h = game.headers
    h["Event"] = config.event
    h["Site"] = site
    h["Date"] = time.strftime("%Y.%m.%d", time.localtime(record.start_time))
    h["Round"] = str(record.round)
    h["White"] = record.white
    h["Black"] = record.black
    h["Result"] = record.result
    root = record.opening.board()
    for _ in record.opening.moves:
        root.pop()
    if root.fen() != chess.STARTING_FEN or root.chess960:
        game.setup(root)  # FEN and SetUp "1"; Variant "Chess960" for a Chess960 board
    h.update(limit_tags(record.white, record.black, config))
    h["Termination"] = record.termination
    h["PlyCount"] = str(len(record.opening.moves) + len(record.moves))
    node = game
    for uci in record.opening.moves:
        node = node.add_variation(chess.Move.from_uci(uci), comment="book")
    for m in record.moves:
        node = node.add_variation(chess.Move.from_uci(m.move))
        node.comment = f"{m.elapsed:.3f}s"
        if m.score is not None:
            node.set_eval(m.score, m.depth)
        if m.clock is not None:
            node.set_clock(max(m.clock, 0.0))
    if record.reason:
        if node is game:
            game.comment = record.reason
        else:
            node.comment = (node.comment + " " + record.reason).strip()
    return game


def write_game(handle, record: GameRecord, config: MatchConfig) -> None:
    """Append one game and flush, so that the PGN of an interrupted match keeps its games."""
    print(game_pgn(record, config), file=handle, end="\n\n")
    handle.flush()


def limit_tags(white: str, black: str, config: MatchConfig) -> dict[str, str]:
    """The tags that say what each side played under: ``TimeControl`` (and ``Limit`` for
    nodes or movetime) when both play under one limit, else each side's own, as cutechess
    writes them for time or node odds."""
    tags = {}
    w, b = config.limit_of(white), config.limit_of(black)
    if w == b:
        tags["TimeControl"] = w.pgn()
        if not w.tc:
            tags["Limit"] = w.describe()
    else:
        for side, limit in (("White", w), ("Black", b)):
            tags[f"{side}TimeControl"] = limit.pgn()
            if not limit.tc:
                tags[f"{side}Limit"] = limit.describe()
    return tags


def book_end(game: chess.pgn.Game) -> tuple[chess.pgn.GameNode, tuple[str, ...]]:
    """The node where the opening's book moves (a PGN suite's, marked ``{book}`` on one root)
    end, and those moves in UCI."""
    node, book = game, []
    while node.variations and node.variations[0].comment.strip() == "book":
        node = node.variations[0]
        book.append(node.move.uci())
    return node, tuple(book)


def ending_of(game: chess.pgn.Game) -> tuple[str, str, str | None]:
    """``(termination, reason, forfeit)`` of a finished game read back: the ``Termination``
    tag, the human-readable ending (the last comment without clock, eval and think time) and
    the engine that forfeited (``Termination`` ``time forfeit``, ``rules infraction`` or
    ``abandoned``: the loser, or in a drawn time forfeit the side the reason names)."""
    h = game.headers
    last = game.end()
    text = _ANNOTATION.sub("", last.comment if last is not game else game.comment).strip()
    termination = h.get("Termination", "unknown")
    reason = text or h.get("Termination", "") or "unknown"
    forfeit = None
    if termination in FORFEIT_TERMINATIONS:
        result = h.get("Result")
        if result == "1-0":
            forfeit = h["Black"]
        elif result == "0-1":
            forfeit = h["White"]
        else:
            side = reason.removeprefix("Draw:").split()[:1]
            forfeit = {"White": h["White"], "Black": h["Black"]}.get(side[0]) if side else None
    return termination, reason, forfeit
