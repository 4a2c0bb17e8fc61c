"""Shared by the Chess960 tests: the start positions and python-chess as the perft oracle."""

from __future__ import annotations

import random
from pathlib import Path

import chess

FRC_BOOK = Path(__file__).resolve().parent.parent / "books" / "FRC_openings.epd"
DFRC_BOOK = Path(__file__).resolve().parent.parent / "books" / "DFRC_openings_500.epd"


def start_positions(path: Path = FRC_BOOK) -> list[str]:
    """The book's FENs (the 960 Chess960 starts, X-FEN KQkq; or DFRC, Shredder-FEN)."""
    return [line.split(";")[0].strip() for line in path.read_text().splitlines() if line.strip()]


def oracle_perft(board: chess.Board, depth: int) -> int:
    """python-chess's leaf count, the last ply counted in bulk as the native perft does."""
    if depth == 1:
        return board.legal_moves.count()
    total = 0
    for move in list(board.legal_moves):
        board.push(move)
        total += oracle_perft(board, depth - 1)
        board.pop()
    return total


def oracle_perft_fen(fen: str, depth: int) -> int:
    return oracle_perft(chess.Board(fen, chess960=True), depth)


def played_positions(fens: list[str], count: int, seed: int, max_plies: int = 24) -> list[str]:
    """FENs reached from the given starts by random play that still have a castling right;
    in half of them a castling move is legal, so castling itself is exercised."""
    rng = random.Random(seed)
    found: list[str] = []
    while len(found) < count:
        board = chess.Board(rng.choice(fens), chess960=True)
        for _ in range(rng.randrange(4, max_plies)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        can_castle = any(board.is_castling(m) for m in board.legal_moves)
        if board.castling_rights and not board.is_game_over() and (
                can_castle or len(found) % 2):
            found.append(board.fen())
    return found
