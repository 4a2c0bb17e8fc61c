"""Perft speed: the native board against python-chess, measured in one run.

Both count the same way: recursive make/unmake, with the last ply counted in bulk from the
number of legal moves (python-chess: ``board.legal_moves.count()``). Each position is run
at the same depth by both; the native side is repeated until it has run long enough to time,
and the median of the repeats is taken. Prints nodes/s for each and the ratio.

    python benchmarks/bench_perft.py            # about a minute
    python benchmarks/bench_perft.py --quick    # a few seconds
"""

import argparse
import statistics
import time

import chess

from zerochess.chess import Board

POSITIONS = [  # name, FEN, depth for the head-to-head, depth for the native-only deep run
    ("start", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 4, 6),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 3, 5),
    ("position3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 4, 6),
    ("position4", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 3, 5),
    ("position5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 3, 5),
    ("position6", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 3, 5),
]


def python_chess_perft(board: chess.Board, depth: int) -> int:
    if depth == 1:
        return board.legal_moves.count()
    total = 0
    for move in board.legal_moves:
        board.push(move)
        total += python_chess_perft(board, depth - 1)
        board.pop()
    return total


def timed(fn, min_time: float, max_repeats: int):
    """Median seconds per call over repeats, running at least `min_time` in total."""
    times, result = [], None
    spent = 0.0
    while (spent < min_time or len(times) < 3) and len(times) < max_repeats:
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
        spent += times[-1]
    return result, statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shallower, fewer repeats")
    args = parser.parse_args()
    shrink = 1 if args.quick else 0

    print(f"{'position':<10} {'depth':>5} {'nodes':>10} {'python-chess n/s':>17} "
          f"{'native n/s':>14} {'ratio':>8}")
    ratios = []
    py_total = native_total = 0.0
    nodes_total = 0
    for name, fen, depth, _ in POSITIONS:
        depth -= shrink
        ref_nodes, ref_time = timed(lambda: python_chess_perft(chess.Board(fen), depth),
                                    min_time=0.0, max_repeats=1 if args.quick else 3)
        board = Board(fen)
        nodes, native_time = timed(lambda: board.perft(depth), min_time=0.2, max_repeats=1000)
        assert nodes == ref_nodes, (name, nodes, ref_nodes)
        ratio = ref_time / native_time
        ratios.append(ratio)
        py_total += ref_time
        native_total += native_time
        nodes_total += nodes
        print(f"{name:<10} {depth:>5} {nodes:>10} {nodes / ref_time:>17,.0f} "
              f"{nodes / native_time:>14,.0f} {ratio:>7.0f}x")
    print(f"{'all':<10} {'':>5} {nodes_total:>10} {nodes_total / py_total:>17,.0f} "
          f"{nodes_total / native_total:>14,.0f} {py_total / native_total:>7.0f}x")
    print(f"median ratio native/python-chess: {statistics.median(ratios):.0f}x (target >= 100x)")

    print("\nnative only, deeper:")
    for name, fen, _, deep in POSITIONS:
        deep -= 2 * shrink
        board = Board(fen)
        nodes, seconds = timed(lambda: board.perft(deep), min_time=0.0, max_repeats=3)
        print(f"{name:<10} perft({deep}) = {nodes:>12,} in {seconds:6.3f} s: {nodes / seconds:,.0f} nodes/s")


if __name__ == "__main__":
    main()
