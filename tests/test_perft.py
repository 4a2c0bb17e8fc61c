"""Perft: exact leaf counts on the six standard positions of the chessprogramming wiki.

Depths are chosen so the whole file runs in about a second; deeper counts are in
benchmarks/bench_perft.py.
"""

import pytest

from zerochess.chess import Board

# (name, FEN, counts at depth 1, 2, ...) from https://www.chessprogramming.org/Perft_Results
POSITIONS = [
    ("start", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
     [20, 400, 8902, 197281, 4865609]),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
     [48, 2039, 97862, 4085603]),
    ("position3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
     [14, 191, 2812, 43238, 674624]),
    ("position4", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
     [6, 264, 9467, 422333]),
    ("position4-mirrored", "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1",
     [6, 264, 9467, 422333]),
    ("position5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
     [44, 1486, 62379, 2103487]),
    ("position6", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
     [46, 2079, 89890, 3894594]),
]

# Positions that exercise one rule each (counts verified with python-chess).
EDGE_CASES = [
    # en passant capture would expose the king along the rank (the pinned pawn pair)
    ("ep-rank-pin", "8/8/8/K2pP2q/8/8/8/7k w - d6 0 1", 1, 6),
    # en passant is the only way out of a pawn check
    ("ep-evasion", "8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1", 1, 9),
    # castling through an attacked square is illegal (f1 attacked), queenside is fine
    ("castle-through-check", "4k3/8/8/8/8/8/5r2/R3K2R w KQ - 0 1", 1, 22),
    # promotions with capture, all four pieces
    ("promotions", "1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1", 1, 13),
]


@pytest.mark.parametrize("name,fen,counts", POSITIONS, ids=[p[0] for p in POSITIONS])
def test_perft_standard_positions(name, fen, counts):
    board = Board(fen)
    for depth, expected in enumerate(counts, start=1):
        assert board.perft(depth) == expected, f"{name} depth {depth}"
    assert board.fen().split()[:4] == fen.split()[:4], "perft must leave the board unchanged"


@pytest.mark.parametrize("name,fen,depth,expected", EDGE_CASES, ids=[e[0] for e in EDGE_CASES])
def test_perft_edge_cases(name, fen, depth, expected):
    import chess
    assert len(list(chess.Board(fen).legal_moves)) == expected  # the oracle agrees
    assert Board(fen).perft(depth) == expected


def test_divide_sums_to_perft_and_matches_python_chess():
    import chess
    fen = POSITIONS[1][1]
    ours = Board(fen).divide(2)
    oracle = {}
    ref = chess.Board(fen)
    for move in ref.legal_moves:
        ref.push(move)
        oracle[move.uci()] = ref.legal_moves.count()
        ref.pop()
    assert ours == oracle
    assert sum(ours.values()) == 2039
