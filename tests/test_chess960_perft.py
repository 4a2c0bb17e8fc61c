"""Chess960 perft against python-chess (``chess960=True``), the oracle.

The default run checks depth 4 on 16 of the 960 start positions (every 60th line of
books/FRC_openings.epd, so every king and rook arrangement family is sampled the same way
on each run), the double-Fischer-random starts of books/DFRC_openings_500.epd at depth 3,
and positions reached from the starts by random play that still hold castling rights.
All 960 starts at depth 4 run in ``test_every_chess960_start_position_at_depth_4`` with
``--chess960-all`` (python-chess is the cost: about 13 CPU-minutes, spread over all cores,
which would double CI's whole test run, so CI runs the sample).
"""

import os
from concurrent.futures import ProcessPoolExecutor

import chess
import pytest

from chess960_helpers import (DFRC_BOOK, oracle_perft, oracle_perft_fen, played_positions,
                              start_positions)
from zerochess.chess import Board

STARTS = start_positions()


def test_the_book_holds_the_960_distinct_start_positions():
    assert len(STARTS) == 960
    assert len({fen.split()[0] for fen in STARTS}) == 960


@pytest.mark.parametrize("fen", STARTS[::60])
def test_a_sample_of_start_positions_at_depth_4(fen):
    assert Board(fen, chess960=True).perft(4) == oracle_perft_fen(fen, 4)


def test_double_fischer_random_starts_at_depth_3():
    for fen in start_positions(DFRC_BOOK)[::25]:
        assert Board(fen, chess960=True).perft(3) == oracle_perft_fen(fen, 3), fen


def test_positions_reached_by_random_play_with_castling_rights_left():
    positions = played_positions(STARTS, count=60, seed=960)
    castlings = 0
    for fen in positions:
        ref = chess.Board(fen, chess960=True)
        castlings += sum(ref.is_castling(m) for m in ref.legal_moves)
        board = Board(fen, chess960=True)
        # depth 3 everywhere, and the first ply split so a wrong count names its move
        assert board.divide(2) == {ref.uci(m): (ref.push(m), ref.legal_moves.count(),
                                                ref.pop())[1] for m in list(ref.legal_moves)}, fen
        assert board.perft(3) == oracle_perft(ref, 3), fen
    assert castlings >= 30  # castling moves were really on the board


@pytest.mark.slow
def test_every_chess960_start_position_at_depth_4(request):
    if not request.config.getoption("--chess960-all"):
        pytest.skip("all 960 starts: run with --chess960-all (about 13 CPU-minutes)")
    with ProcessPoolExecutor(max_workers=os.cpu_count()) as pool:
        expected = list(pool.map(oracle_perft_fen, STARTS, [4] * len(STARTS), chunksize=8))
    for fen, count in zip(STARTS, expected):
        assert Board(fen, chess960=True).perft(4) == count, fen
