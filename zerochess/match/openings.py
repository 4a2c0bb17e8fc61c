"""Opening suites for matches: EPD (a FEN per line) or PGN (each game's moves from its start
position), the two formats cutechess and fastchess read with ``-openings``.

Chess960 suites (Fischer random starts in X-FEN, double Fischer random ones in Shredder-FEN)
are read as they are; a suite is played as Chess960 when ``variant`` says so or, left to the
suite, when any of its positions has a castling right that only Chess960 can use (a rook
off its corner or a king off the e-file)."""

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
    """A start FEN and the book moves (UCI) played from it before the engines take over;
    ``chess960``: the game is played with Chess960's castling (and UCI_Chess960)."""
    fen: str
    moves: tuple[str, ...] = ()
    chess960: bool = False

    def board(self) -> chess.Board:
        board = chess.Board(self.fen, chess960=self.chess960)
        for uci in self.moves:
            board.push_uci(uci)
        return board


STARTPOS = Opening(chess.STARTING_FEN)


VARIANTS = ("standard", "chess960")


def load_openings(path: str | os.PathLike, plies: int | None = None,
                  variant: str | None = None) -> list[Opening]:
    """Read a suite; errors name the file and the line or game number. ``variant``:
    "standard", "chess960", or None to let the suite decide (see the module docstring)."""
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
    needs960 = [o for o in openings if o.chess960]
    if variant == "standard" and needs960:
        raise MatchConfigError(f"openings {path!r}: {needs960[0].fen!r} has Chess960 castling "
                               "rights; play it with --variant chess960")
    chess960 = variant == "chess960" or (variant is None and bool(needs960))
    return [Opening(o.fen, o.moves, chess960) for o in openings]


def _read_epd(path: str) -> list[Opening]:
    openings = []
    with open(path, encoding="utf-8-sig") as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                board, _ = parse_epd_line(line, chess960=True)
            except ValueError as exc:
                raise MatchConfigError(f"openings {path!r}, line {number}: {exc}") from None
            if board.is_game_over():
                raise MatchConfigError(f"openings {path!r}, line {number}: the game is already over")
            shredder = board.has_chess960_castling_rights() and line.split()[2].lower() != "kqkq"
            openings.append(Opening(board.fen(shredder=shredder),
                                    chess960=board.has_chess960_castling_rights()))
    return openings


def _read_pgn(path: str, plies: int | None) -> list[Opening]:
    openings = []
    with open(path, encoding="utf-8-sig") as f:
        number = 0
        while (game := chess.pgn.read_game(f)) is not None:
            number += 1
            if game.errors:
                raise MatchConfigError(f"openings {path!r}, game {number}: {game.errors[0]}")
            start = game.board()
            moves = [start.uci(m, chess960=start.chess960)
                     for m in game.mainline_moves()][:plies]
            opening = Opening(start.fen(), tuple(moves),
                              start.chess960 or start.has_chess960_castling_rights())
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
