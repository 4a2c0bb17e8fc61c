"""PGN of match games, with the runner's clock after each move as ``[%clk h:mm:ss]``, the
engine's score as ``[%eval ...]`` (lichess/ChessBase annotations that python-chess and GUIs
read) and the think time as ``{0.52s}``, book moves marked ``{book}``, and the reason the game
ended as the last comment (cutechess's style: ``{White loses on time}``)."""

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
    if config.tc:
        h["TimeControl"] = config.tc.pgn()
    else:
        h["TimeControl"] = "-"
        h["Limit"] = f"nodes={config.nodes}" if config.nodes else f"movetime={config.movetime:g}s"
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
