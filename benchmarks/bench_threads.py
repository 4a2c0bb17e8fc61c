"""`Threads`: the engine's nodes/s with 1, 2, ... batches in flight, in one run.

    python benchmarks/bench_threads.py                      # shipped network, then uniform
    python benchmarks/bench_threads.py --threads 1,2,4,8,16 --repeats 9
    python benchmarks/bench_threads.py --backends default   # the network only

What the UCI engine runs: ``Search`` with the engine's parameters (``ENGINE_PARAMS``:
MinibatchSize 8, unless ``--minibatch``) and ``threads`` set as UCI ``Threads`` sets it,
over one evaluator built as the engine builds it (``make_evaluator``, one intra-op thread per
call, ``Backend auto``: ONNX Runtime on a CPU), shared by every thread count. Each figure
searches 4 positions without a forced mate for ``--seconds`` each, from a fresh tree;
nodes/s is their nodes over their time. The thread counts take turns within each repeat,
in an order rotated every repeat, so that load from other processes on a shared machine
hits them alike; printed per count: the median nodes/s, the median of the per-repeat
ratios to the first count (``Threads`` 1), network evaluations/s, nodes per CPU second of
the process (all its threads) with its ratio to the first count (what the threads' own
bookkeeping costs), and ``cores``: CPU seconds per second, how many cores the process got.

Scaling needs idle cores: on a machine shared with other jobs, Linux's autogroup scheduler
gives each session (terminal, job) a fair share of the CPU however many threads it runs,
so there ``cores`` stays at the share and nodes/s cannot grow with ``Threads``; read
nodes/CPU-s there, and nodes/s only where ``cores`` reaches the thread count.

``uniform`` (no network) measures the search's own cost: there every thread count is
bound by the one thread that owns the tree, so the ratio shows the price of the threads'
bookkeeping, not a gain.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from zerochess.chess.board import Board  # noqa: E402
from zerochess.search.results import SearchLimits  # noqa: E402
from zerochess.search.search import Search  # noqa: E402
from zerochess.tools.bench import OPEN_FENS  # noqa: E402
from zerochess.search.params import ENGINE_PARAMS  # noqa: E402

#: OPEN_FENS less its third (Qxf7# for the uniform search: a proven root makes nodes free).
FENS = [OPEN_FENS[i] for i in (0, 1, 3, 4)]


def default_threads() -> str:
    """1, 2, then doubling up to the machine's cores (and the core count itself)."""
    cores, counts, t = os.cpu_count() or 1, [1, 2], 4
    while t <= cores:
        counts.append(t)
        t *= 2
    if cores > 2 and cores not in counts:
        counts.append(cores)
    return ",".join(map(str, counts))


def measure(search: Search, seconds: float) -> tuple[float, float, float, float]:
    """(nodes/s, evaluations/s, nodes per CPU second, CPU seconds per second) of
    ``search`` over FENS, ``seconds`` each, fresh trees."""
    nodes = evals = 0
    elapsed = cpu = 0.0
    for fen in FENS:
        search.new_game()
        start, start_cpu = time.perf_counter(), time.process_time()
        result = search.search(Board(fen), limits=SearchLimits(
            should_stop=lambda p: p.elapsed >= seconds))
        elapsed += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
        search.tree.verify()            # every batch in flight was backed up
        nodes, evals = nodes + result.nodes, evals + result.nn_evals
    return nodes / elapsed, evals / elapsed, nodes / cpu, cpu / elapsed


def run_backend(backend: str, threads: list[int], args) -> None:
    from zerochess.neural.backends import make_evaluator

    started = time.perf_counter()
    evaluator = make_evaluator(None if backend == "default" else backend, device="cpu",
                               threads=1, runtime="auto")
    loaded = time.perf_counter() - started
    minibatch = args.minibatch or ENGINE_PARAMS.minibatch
    searches = {t: Search(evaluator, ENGINE_PARAMS.replace(seed=0, minibatch=minibatch,
                                                           threads=t)) for t in threads}
    for search in searches.values():          # warm-up: first-call allocations, the pool
        search.search(Board(FENS[0]), nodes=4 * minibatch * max(threads))
    runs: dict[int, list[tuple[float, float, float, float]]] = {t: [] for t in threads}
    for rep in range(args.repeats):
        for i in range(len(threads)):
            t = threads[(i + rep) % len(threads)]
            runs[t].append(measure(searches[t], args.seconds))
    first = threads[0]
    print(f"\n{backend}: {evaluator!r} (ready in {loaded:.1f} s), MinibatchSize {minibatch}, "
          f"{len(FENS)} positions x {args.seconds:g} s, median of {args.repeats} interleaved "
          f"repeats; {os.cpu_count()} cores")
    print(f"{'Threads':>7s} {'nodes/s':>9s} {'ratio to ' + str(first):>12s} {'evals/s':>9s}"
          f" {'nodes/CPU-s':>11s} {'ratio':>6s} {'cores':>5s}   nodes/s of each repeat")
    for t in threads:
        nps = [r[0] for r in runs[t]]
        ratio = statistics.median(x[0] / y[0] for x, y in zip(runs[t], runs[first]))
        cpu_ratio = statistics.median(x[2] / y[2] for x, y in zip(runs[t], runs[first]))
        print(f"{t:7d} {statistics.median(nps):9,.0f} {ratio:11.2f}x "
              f"{statistics.median(r[1] for r in runs[t]):9,.0f} "
              f"{statistics.median(r[2] for r in runs[t]):11,.0f} {cpu_ratio:5.2f}x "
              f"{statistics.median(r[3] for r in runs[t]):5.2f}   "
              + " ".join(f"{x:,.0f}" for x in nps))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default=default_threads(), help="comma list, first = baseline")
    ap.add_argument("--backends", default="default,uniform",
                    help="comma list: default, zero, uniform, checkpoint paths")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=0.5, help="per position and figure")
    ap.add_argument("--minibatch", type=int, default=0,
                    help="leaves per batch (default: the engine's MinibatchSize)")
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    print(f"python {sys.version.split()[0]}, load average before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for backend in args.backends.split(","):
        run_backend(backend, threads, args)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
