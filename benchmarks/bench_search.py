"""Search speed: zerochess's Cython MCTS core against a pure-Python PUCT MCTS.

    python3 benchmarks/bench_search.py                # uniform backend, both searches
    python3 benchmarks/bench_search.py --network      # + outside-evaluator share, `small` net

Both searches run in this process, one thread, on the same positions (the bench positions
without a forced mate, where zerochess's solver would make visits unfairly cheap)
with the same node count and the same ``UniformEvaluator``; each figure is the median of
``--repeats`` interleaved runs (the machine's other core is often busy). The ratio is what the issue's
target (>= 50x) is about.

With ``--network`` the `small` preset (untrained weights: the speed does not depend on
them) evaluates on the CPU and the share of wall time spent outside ``evaluate`` is
measured at minibatch 32 and 64 (target: under 10%).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import chess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from pure_python_mcts import PurePythonMCTS  # noqa: E402

from zerochess.chess.board import Board  # noqa: E402
from zerochess.neural.evaluator import UniformEvaluator  # noqa: E402
from zerochess.search.params import SearchParams  # noqa: E402
from zerochess.search.search import Search  # noqa: E402
from zerochess.tools.bench import OPEN_FENS, run_bench  # noqa: E402


def cython_nps(nodes: int) -> float:
    total, _, seconds, _ = run_bench(UniformEvaluator(), nodes, fens=OPEN_FENS)
    return total / seconds


def python_nps(nodes: int) -> float:
    mcts = PurePythonMCTS(UniformEvaluator())
    start = time.perf_counter()
    for fen in OPEN_FENS:
        mcts.search(chess.Board(fen), nodes)
    return len(OPEN_FENS) * nodes / (time.perf_counter() - start)


class TimedEvaluator:
    """Wraps an evaluator and adds up the wall time spent inside ``evaluate``."""

    def __init__(self, inner):
        self.inner, self.seconds, self.max_batch = inner, 0.0, inner.max_batch

    def evaluate(self, tokens, legal_idx, offsets):
        start = time.perf_counter()
        out = self.inner.evaluate(tokens, legal_idx, offsets)
        self.seconds += time.perf_counter() - start
        return out


def outside_share(minibatch: int, nodes: int, threads: int) -> tuple[float, float]:
    """(share of wall time outside evaluate, nodes/s) with the `small` net on the CPU."""
    from zerochess.neural.api import fresh_network
    from zerochess.neural.torch_evaluator import TorchEvaluator

    evaluator = TimedEvaluator(TorchEvaluator(fresh_network("small"), device="cpu",
                                              threads=threads, precision="fp32"))
    search = Search(evaluator, SearchParams(minibatch=minibatch, max_collisions=minibatch))
    search.search(Board(OPEN_FENS[1]), nodes=2 * minibatch)     # warm-up
    evaluator.seconds = 0.0
    wall = 0.0
    total = 0
    for fen in OPEN_FENS[:4]:
        search.new_game()
        start = time.perf_counter()
        total += search.search(Board(fen), nodes=nodes).nodes
        wall += time.perf_counter() - start
    return 1.0 - evaluator.seconds / wall, total / wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000, help="playouts per position (both searches)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--network", action="store_true", help="also measure with the small net")
    ap.add_argument("--network-nodes", type=int, default=512)
    ap.add_argument("--threads", type=int, default=1, help="torch threads for --network")
    args = ap.parse_args()

    # Interleaved, so that a busy spell of the other core hits both searches alike; the
    # ratio is the median of the per-repeat ratios.
    cys, pys = [], []
    for _ in range(args.repeats):
        cys.append(cython_nps(args.nodes))
        pys.append(python_nps(args.nodes))
    cy, py = statistics.median(cys), statistics.median(pys)
    ratio = statistics.median(c / p for c, p in zip(cys, pys))
    print(f"positions {len(OPEN_FENS)} (bench positions without a forced mate), uniform backend, one thread, median of {args.repeats}")
    print(f"pure-Python MCTS (python-chess)  {py:12,.0f} nodes/s  ({args.nodes} nodes/position)")
    print(f"zerochess Cython MCTS            {cy:12,.0f} nodes/s  ({args.nodes} nodes/position)")
    print(f"ratio (median of per-repeat ratios) {ratio:9,.1f}x")
    if args.network:
        for minibatch in (32, 64):
            shares, rates = zip(*(outside_share(minibatch, args.network_nodes, args.threads)
                                  for _ in range(max(1, args.repeats // 2))))
            print(f"small net, minibatch {minibatch:3d}: outside evaluator "
                  f"{100 * statistics.median(shares):5.2f}% of wall time, "
                  f"{statistics.median(rates):8,.0f} nodes/s")


if __name__ == "__main__":
    main()
