"""Two ONNX files of one network, side by side: positions/s, the search's nodes/s, and how
far apart their outputs are. For a change of the exported graph (not of the weights):

    git show HEAD~1:zerochess/data/network.onnx > /tmp/before.onnx
    python benchmarks/bench_graph.py --baseline /tmp/before.onnx             # against the shipped file
    python benchmarks/bench_graph.py --baseline a.onnx --candidate b.onnx --repeats 9

Each file runs in its own worker process under ONNX Runtime fp32 (bench_inference.py's
workers: what UCI ``Backend`` builds), driven round-robin, first mover rotating, so that load
from other processes on a shared machine hits both alike. Printed: the median positions/s of
``evaluate`` per batch size and, in brackets, the median of the per-repeat ratios
candidate / baseline; the same for the engine's search (``ENGINE_PARAMS``, MinibatchSize 8,
four positions for ``--search-seconds`` each); and the candidate's legal priors and WDL
against the baseline's on 512 random-game positions (bars: mean KL < 1e-3, |dWDL| < 1e-2,
the same as bench_inference.py's).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from bench_inference import Worker  # noqa: E402
from bench_network import divergence  # noqa: E402

RUNTIME = "onnx-fp32"


def main() -> None:
    from zerochess.neural.shipped import shipped_network_path
    from zerochess.search.params import ENGINE_PARAMS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True, help="the .onnx file to compare against")
    ap.add_argument("--candidate", default=str(shipped_network_path("default", ".onnx")),
                    help="the .onnx file under test (default: the shipped network)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batches", default="1,8,32")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--slice", type=float, default=1.0, help="seconds per timed figure")
    ap.add_argument("--search-seconds", type=float, default=2.0,
                    help="per position and repeat; 0: no search figures")
    args = ap.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    names = ("baseline", "candidate")
    workers = [Worker(RUNTIME, args.threads, path) for path in (args.baseline, args.candidate)]
    rates: dict[tuple[int, int], list[float]] = {}
    nps: dict[int, list[float]] = {0: [], 1: []}
    try:
        for w in workers:
            w.answer()  # ready: the file read and checked against its probe
        for rep in range(args.repeats):
            for b in batches:
                for i in range(2):
                    k = (i + rep) % 2
                    rates.setdefault((k, b), []).append(
                        workers[k].ask(cmd="time", batch=b, seconds=args.slice)["rate"])
            if args.search_seconds > 0:
                for i in range(2):
                    k = (i + rep) % 2
                    nps[k].append(workers[k].ask(cmd="search", seconds=args.search_seconds,
                                                 minibatch=ENGINE_PARAMS.minibatch)["nps"])
        with tempfile.TemporaryDirectory() as tmp:
            outs = []
            for k, w in enumerate(workers):
                path = os.path.join(tmp, f"{k}.npz")
                w.ask(cmd="faith", out=path)
                outs.append(dict(np.load(path)))
    finally:
        for w in workers:
            w.close()

    print(f"{RUNTIME}, {args.threads} thread(s); baseline {args.baseline}, candidate "
          f"{args.candidate}; medians of {args.repeats} interleaved repeats "
          f"[median ratio candidate / baseline]")
    print(f"{'':9s}" + "".join(f"{'B=' + str(b):>19s}" for b in batches)
          + ("   search nodes/s" if args.search_seconds > 0 else ""))
    for k, name in enumerate(names):
        cells = ""
        for b in batches:
            ratio = statistics.median(c / a for a, c in zip(rates[(0, b)], rates[(k, b)]))
            cells += f"{statistics.median(rates[(k, b)]):11,.0f} [{ratio:4.2f}x]"
        if args.search_seconds > 0:
            ratio = statistics.median(c / a for a, c in zip(nps[0], nps[k]))
            cells += f"{statistics.median(nps[k]):11,.0f} [{ratio:4.2f}x]"
        print(f"{name:9s}{cells}")
    ref, new = outs
    d = divergence(ref["priors"], ref["wdl"], new["priors"], new["wdl"], ref["offsets"])
    print("candidate against baseline on 512 random-game positions: " + ", ".join(
        f"{k} {v:.1e}" if isinstance(v, float) else f"{k} {v}" for k, v in d.items()))


if __name__ == "__main__":
    main()
