"""PGN of match games, with the runner's clock after each move as ``[%clk h:mm:ss]``, the
engine's score as ``[%eval ...]`` (lichess/ChessBase annotations that python-chess and GUIs
read) and the think time as ``{0.52s}``, book moves marked ``{book}``, and the reason the game
ended as the last comment (cutechess's style: ``{White loses on time}``). With time or node
odds each side's limit has its own tags (``WhiteTimeControl``, ``BlackLimit`` ...)."""

from __future__ import annotations

import time

import chess
import chess.pgn

from zerochess.match.config import MatchConfig
from zerochess.match.game import GameRecord


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
    white, black = config.limit_of(record.white), config.limit_of(record.black)
    if white == black:
        h["TimeControl"] = white.pgn()
        if not white.tc:
            h["Limit"] = white.describe()
    else:  # time or node odds: each side's own, as cutechess writes them
        for side, limit in (("White", white), ("Black", black)):
            h[f"{side}TimeControl"] = limit.pgn()
            if not limit.tc:
                h[f"{side}Limit"] = limit.describe()
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
