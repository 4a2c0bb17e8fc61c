"""Opening suites for matches: EPD (a FEN per line) or PGN (each game's moves from its start
position), the two formats cutechess and fastchess read with ``-openings``."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass

import chess
import chess.pgn

from zerochess.book.epd import parse_epd_line
from zerochess.match.config import MatchConfigError


@dataclass(frozen=True)
class Opening:
    """A start FEN and the book moves (UCI) played from it before the engines take over."""
    fen: str
    moves: tuple[str, ...] = ()

    def board(self) -> chess.Board:
        board = chess.Board(self.fen)
        for uci in self.moves:
            board.push_uci(uci)
        return board


STARTPOS = Opening(chess.STARTING_FEN)


def load_openings(path: str | os.PathLike, plies: int | None = None) -> list[Opening]:
    """Read a suite; errors name the file and the line or game number."""
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".epd", ".pgn"):
        raise MatchConfigError(f"openings {path!r}: expected a .epd or .pgn file")
    try:
        openings = _read_epd(path) if ext == ".epd" else _read_pgn(path, plies)
    except OSError as exc:
        raise MatchConfigError(f"openings {path!r}: {exc.strerror}") from None
    if not openings:
        raise MatchConfigError(f"openings {path!r}: no positions found")
    return openings


def _read_epd(path: str) -> list[Opening]:
    openings = []
    with open(path, encoding="utf-8-sig") as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                board, _ = parse_epd_line(line)
            except ValueError as exc:
                raise MatchConfigError(f"openings {path!r}, line {number}: {exc}") from None
            if board.is_game_over():
                raise MatchConfigError(f"openings {path!r}, line {number}: the game is already over")
            openings.append(Opening(board.fen()))
    return openings


def _read_pgn(path: str, plies: int | None) -> list[Opening]:
    openings = []
    with open(path, encoding="utf-8-sig") as f:
        number = 0
        while (game := chess.pgn.read_game(f)) is not None:
            number += 1
            if game.errors:
                raise MatchConfigError(f"openings {path!r}, game {number}: {game.errors[0]}")
            moves = [m.uci() for m in game.mainline_moves()][:plies]
            opening = Opening(game.board().fen(), tuple(moves))
            if opening.board().is_game_over():
                raise MatchConfigError(f"openings {path!r}, game {number}: the game is already over")
            openings.append(opening)
    return openings


def opening_order(count: int, pairs: int, order: str, seed: int, start: int = 1) -> list[int]:
    """Indexes of the opening for each game pair: file order from ``start`` (1-based),
    wrapping around, or a seeded shuffle (each opening once before any repeats)."""
    indexes = list(range(count))
    if order == "random":
        random.Random(seed).shuffle(indexes)
    first = (start - 1) % count
    return [indexes[(first + i) % count] for i in range(pairs)]
