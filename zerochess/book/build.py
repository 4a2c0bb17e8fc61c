"""Build Polyglot books from games (PGN) or annotated positions (EPD).

PGN: every game contributes its first N plies; each (position, move) is weighted either by
how often it was played (``count``) or, as Polyglot's own ``make`` does, by the result for the
side that played it (``result``: win 2, draw 1, loss 0; games without a result are skipped and
moves whose total is 0 are left out, so the engine never plays a move that only lost).

EPD: every record with a ``bm`` (best moves) or ``pv`` (first move) operation contributes that
move with weight 1. An EPD of bare start positions (like ``noob_2moves.epd``) has no moves, and
the move sequences that lead to its positions are not in the file, so nothing can be built
from it: `NoMovesError` says so. Build from a PGN of the lines instead
(``books/noob_2moves.pgn`` is such a PGN, reconstructed by ``books/make_pgn.py``).

Positions are keyed with the native board's Polyglot Zobrist hash (same value as
``chess.polyglot.zobrist_hash``, about 100x faster).
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Callable, Iterator

import chess
import chess.pgn
import chess.polyglot

from zerochess.book.epd import parse_epd_line
from zerochess.book.polyglot import to_polyglot_uci, write_book
from zerochess.chess import Board

Progress = Callable[[int], None]  # called with a number of bytes (PGN) or records (EPD) done
RESULT_POINTS = {"1-0": (2, 0), "0-1": (0, 2), "1/2-1/2": (1, 1)}  # (white, black)


class NoMovesError(ValueError):
    """The input holds no (position, move) pairs, so there is no book to write."""


def pgn_lines(path: str | os.PathLike, progress: Progress | None = None,
              ) -> Iterator[tuple[str, list[str], str]]:
    """Yield ``(start_fen, mainline_uci_moves, result)`` for each game of a PGN file.

    Games with parse errors are raised as ValueError naming the file and game number, so a
    broken input is never silently turned into a smaller book."""
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        number, done = 0, 0
        while True:
            game = chess.pgn.read_game(f)
            if game is None:
                break
            number += 1
            if game.errors:
                raise ValueError(f"{os.fspath(path)}: game {number}: {game.errors[0]}")
            moves = [m.uci() for m in game.mainline_moves()]
            yield game.board().fen(), moves, game.headers.get("Result", "*")
            if progress:
                pos = f.tell()
                progress(pos - done)
                done = pos


def counts_from_pgn(path: str | os.PathLike, plies: int = 16, weighting: str = "count",
                    progress: Progress | None = None) -> dict[tuple[int, str], int]:
    """``{(key, polyglot_uci): weight}`` from the first ``plies`` plies of each game."""
    if weighting not in ("count", "result"):
        raise ValueError(f"weighting must be 'count' or 'result', not {weighting!r}")
    counts: dict[tuple[int, str], int] = defaultdict(int)
    for fen, moves, result in pgn_lines(path, progress):
        if weighting == "result" and result not in RESULT_POINTS:
            continue
        board = Board(fen)
        for uci in moves[:plies]:
            king = board.piece_at(chess.parse_square(uci[:2])) in ("K", "k")
            weight = 1 if weighting == "count" else RESULT_POINTS[result][0 if board.turn else 1]
            counts[board.zobrist(), to_polyglot_uci(uci, king)] += weight
            board.push_uci(uci)
    return {k: w for k, w in counts.items() if w > 0}


def counts_from_epd(path: str | os.PathLike,
                    progress: Progress | None = None) -> dict[tuple[int, str], int]:
    """``{(key, polyglot_uci): weight}`` from the ``bm``/``pv`` operations of an EPD file."""
    counts: dict[tuple[int, str], int] = defaultdict(int)
    with open(path, encoding="utf-8-sig") as f:
        for number, line in enumerate(f, 1):
            if progress:
                progress(1)
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                board, ops = parse_epd_line(line)
            except ValueError as exc:
                raise ValueError(f"{os.fspath(path)}: line {number}: {exc}") from None
            moves = list(ops.get("bm", []) or [])
            if not moves and ops.get("pv"):
                moves = [ops["pv"][0]]
            key = chess.polyglot.zobrist_hash(board)
            for move in moves:
                king = board.piece_type_at(move.from_square) == chess.KING
                counts[key, to_polyglot_uci(move.uci(), king)] += 1
    return dict(counts)


def build_book(source: str | os.PathLike, out: str | os.PathLike, plies: int = 16,
               weighting: str = "count", progress: Progress | None = None) -> int:
    """Build ``out`` (Polyglot .bin) from a ``.pgn`` or ``.epd`` file; returns the entry count."""
    ext = os.path.splitext(os.fspath(source))[1].lower()
    if ext == ".pgn":
        counts = counts_from_pgn(source, plies, weighting, progress)
    elif ext == ".epd":
        counts = counts_from_epd(source, progress)
    else:
        raise ValueError(f"{os.fspath(source)}: expected a .pgn or .epd file")
    if not counts:
        hint = (" It has no bm/pv moves; an EPD of start positions does not say how they were "
                "reached, so build from a PGN of the lines (e.g. books/noob_2moves.pgn)."
                if ext == ".epd" else "")
        raise NoMovesError(f"{os.fspath(source)}: no book moves found.{hint}")
    return write_book(out, counts)


def source_size(source: str | os.PathLike) -> int:
    """The progress total for `build_book`: bytes of a PGN, lines of an EPD."""
    if os.fspath(source).lower().endswith(".epd"):
        with open(source, "rb") as f:
            return sum(1 for _ in f)
    return os.path.getsize(source)
