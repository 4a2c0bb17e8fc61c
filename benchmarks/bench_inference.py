"""Inference runtimes on this CPU: positions/s, faithfulness and the search's nodes/s.

    python benchmarks/bench_inference.py                     # shipped network, 1 and 2 threads
    python benchmarks/bench_inference.py --networks default,zero --repeats 7
    python benchmarks/bench_inference.py --runtimes torch-fp32,torch-bf16,onnx-fp32  # bf16 even if emulated

Each (runtime, threads) lives in its own worker process for the whole run (one runtime per
process, as in the engine), built by ``make_evaluator(..., runtime=R)``: what UCI
``Backend`` builds. The workers are driven round-robin, so that every repeat measures every
runtime at every batch size within seconds of each other: load from other processes on a
shared machine hits them alike. Printed per batch size: the median positions/s of
``evaluate`` (forward pass, legal-move gather and softmax on real positions) over the
repeats, and in brackets the median of the per-repeat ratios to torch-fp32 at the same
threads.

Faithfulness: KL(torch-fp32 || runtime) of the legal priors on 512 positions of random
python-chess games (mean: the criterion, < 1e-3; and max) and max |WDL difference|
(criterion < 1e-2).

Search: nodes/s of the engine's search (``Search`` with the engine's own parameters,
``ENGINE_PARAMS``: MinibatchSize 8, unless ``--minibatch``) for a fixed time on each of 4
positions without a forced mate, interleaved the same way; what the engine's ``info nps``
shows. With more than one thread count, a last table gives the median ratio of each count's
nodes/s to the first count's, per runtime: what more intra-op threads give one evaluator call
(UCI ``Threads`` is search threads now, each calling with one: benchmarks/bench_threads.py).

torch-bf16 is measured only where the CPU has native bf16 matmuls (AVX512-BF16/AMX);
elsewhere bf16 is emulated and several times slower than fp32, unless named in --runtimes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from bench_network import divergence, sample_batch  # noqa: E402

BASELINE = "torch-fp32"
#: The search's positions: OPEN_FENS less its third, a mate in one (Qxf7#), whose proven
#: root makes playouts free and the node count meaningless as a speed.
FAITH_POSITIONS, FAITH_SEED = 512, 20261123
SEARCH_FENS = (0, 1, 3, 4)


# -- worker: one runtime, one thread count ---------------------------------------------------
def serve(args) -> None:
    """Answer the driver's JSON commands on stdin with JSON lines on stdout."""
    from zerochess.neural.backends import make_evaluator
    from zerochess.chess.board import Board
    from zerochess.search.results import SearchLimits
    from zerochess.search.search import Search
    from zerochess.tools.bench import OPEN_FENS
    from zerochess.search.params import ENGINE_PARAMS

    ev = make_evaluator(args.network, device="cpu", threads=args.threads, runtime=args.worker)
    batches: dict[int, tuple] = {}
    reply = sys.__stdout__
    print(json.dumps({"ready": repr(ev)}), file=reply, flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "time":
            b = cmd["batch"]
            if b not in batches:
                batches[b] = sample_batch(b, seed=b)[:3]
                ev.evaluate(*batches[b])  # warm-up: first-call allocations
            calls, start = 0, time.perf_counter()
            while calls < 2 or time.perf_counter() - start < cmd["seconds"]:
                ev.evaluate(*batches[b])
                calls += 1
            out = {"rate": b * calls / (time.perf_counter() - start)}
        elif cmd["cmd"] == "faith":
            tokens, legal, offsets, _ = sample_batch(FAITH_POSITIONS, seed=FAITH_SEED)
            priors, wdl = ev.evaluate(tokens, legal, offsets)[:2]  # a third: plies left
            np.savez(cmd["out"], priors=priors, wdl=wdl, offsets=offsets)
            out = {"saved": cmd["out"]}
        elif cmd["cmd"] == "search":
            search = Search(ev, ENGINE_PARAMS.replace(seed=0, minibatch=cmd["minibatch"]))
            limit = cmd["seconds"]
            nodes = evals = 0
            elapsed = 0.0
            for fen in (OPEN_FENS[i] for i in SEARCH_FENS):
                search.new_game()
                start = time.perf_counter()
                result = search.search(Board(fen), limits=SearchLimits(
                    should_stop=lambda p: p.elapsed >= limit))
                elapsed += time.perf_counter() - start
                nodes, evals = nodes + result.nodes, evals + result.nn_evals
            out = {"nps": nodes / elapsed, "evals_s": evals / elapsed}
        else:
            return
        print(json.dumps(out), file=reply, flush=True)


# -- driver ------------------------------------------------------------------------------------
class Worker:
    def __init__(self, runtime: str, threads: int, network: str) -> None:
        self.runtime, self.threads = runtime, threads
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", runtime,
               "--threads", str(threads), "--networks", network]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def ask(self, **cmd) -> dict:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        return self.answer()

    def answer(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.runtime} worker ({self.threads} threads) died")
        return json.loads(line)

    def close(self) -> None:
        try:
            self.ask(cmd="quit")
        except (RuntimeError, BrokenPipeError, json.JSONDecodeError):
            pass
        self.proc.wait(timeout=30)


def cpu_description() -> str:
    import torch

    from zerochess.neural.torch_evaluator import native_bf16

    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    except OSError:
        pass
    return (f"CPU {model}, torch capability {torch.backends.cpu.get_cpu_capability()}, "
            f"native bf16: {'yes' if native_bf16() else 'no'}, {os.cpu_count()} cores")


def measure_network(network: str, args) -> None:
    from zerochess.neural.torch_evaluator import native_bf16

    runtimes = args.runtimes.split(",") if args.runtimes else (
        [BASELINE] + (["torch-bf16"] if native_bf16() else []) + ["onnx-fp32"])
    if BASELINE not in runtimes:
        runtimes.insert(0, BASELINE)
    workers = [Worker(r, t, network) for t in args.threads for r in runtimes]
    try:
        for w in workers:
            w.answer()  # ready: network loaded (and exported to ONNX, or taken from the cache)
        timing: dict[tuple, list[float]] = {}
        nps: dict[tuple, list[dict]] = {}
        for rep in range(args.repeats):
            for b in args.batches:
                for i in range(len(workers)):  # rotate who goes first
                    w = workers[(i + rep) % len(workers)]
                    rate = w.ask(cmd="time", batch=b, seconds=args.slice)["rate"]
                    timing.setdefault((w.runtime, w.threads, b), []).append(rate)
            if args.search_seconds > 0:
                for i in range(len(workers)):
                    w = workers[(i + rep) % len(workers)]
                    nps.setdefault((w.runtime, w.threads), []).append(
                        w.ask(cmd="search", seconds=args.search_seconds,
                              minibatch=args.minibatch))
        faith = {}
        with tempfile.TemporaryDirectory() as tmp:
            outputs = {}
            for w in workers:
                if w.threads == args.threads[0]:
                    path = os.path.join(tmp, f"{w.runtime}.npz")
                    w.ask(cmd="faith", out=path)
                    outputs[w.runtime] = dict(np.load(path))
            ref = outputs[BASELINE]
            for runtime, o in outputs.items():
                faith[runtime] = divergence(ref["priors"], ref["wdl"], o["priors"], o["wdl"],
                                            ref["offsets"])
    finally:
        for w in workers:
            w.close()

    print(f"\nnetwork {network}: positions/s of evaluate, median of {args.repeats} interleaved "
          f"repeats ({args.slice:g} s each); [median ratio to {BASELINE}, same threads]")
    print(f"{'threads':>7s}  {'runtime':11s}" + "".join(f"{'B=' + str(b):>17s}" for b in args.batches))
    for t in args.threads:
        for r in runtimes:
            cells = ""
            for b in args.batches:
                rates, base = timing[(r, t, b)], timing[(BASELINE, t, b)]
                ratio = statistics.median(x / y for x, y in zip(rates, base))
                cells += f"{statistics.median(rates):9,.0f} [{ratio:4.2f}x]"
            print(f"{t:7d}  {r:11s}{cells}")
    print(f"faithfulness vs {BASELINE} ({FAITH_POSITIONS} random-game positions, "
          f"{args.threads[0]} thread(s)): KL mean / max, max |dWDL|  (bars: 1e-3, 1e-2)")
    for r, f in faith.items():
        ok = f["kl_mean"] < 1e-3 and f["wdl_max"] < 1e-2
        print(f"  {r:11s} {f['kl_mean']:.1e} / {f['kl_max']:.1e}, {f['wdl_max']:.1e}  "
              f"{'faithful' if ok else 'NOT faithful'}")
    if nps:
        print(f"search: nodes/s, 4 positions x {args.search_seconds:g} s, MinibatchSize {args.minibatch}, "
              f"median of {args.repeats}; [ratio to {BASELINE}]; network evaluations/s")
        for t in args.threads:
            base = [x["nps"] for x in nps[(BASELINE, t)]]
            for r in runtimes:
                runs = nps[(r, t)]
                ratio = statistics.median(x["nps"] / y for x, y in zip(runs, base))
                print(f"{t:7d}  {r:11s}{statistics.median(x['nps'] for x in runs):9,.0f} "
                      f"[{ratio:4.2f}x] {statistics.median(x['evals_s'] for x in runs):9,.0f}")
        if len(args.threads) > 1:
            first = args.threads[0]
            print(f"search: median ratio of nodes/s to {first} intra-op thread(s), same runtime")
            for t in args.threads[1:]:
                cells = ""
                for r in runtimes:
                    ratio = statistics.median(x["nps"] / y["nps"]
                                              for x, y in zip(nps[(r, t)], nps[(r, first)]))
                    cells += f"  {r} {ratio:4.2f}x"
                print(f"{t:7d} threads{cells}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--networks", default="default", help="comma list: default, zero, paths")
    ap.add_argument("--runtimes", default=None,
                    help="comma list (default: torch-fp32, torch-bf16 where native, onnx-fp32)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batches", default="1,8,32,64,128")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--slice", type=float, default=0.25, help="seconds per timed figure")
    ap.add_argument("--search-seconds", type=float, default=0.5,
                    help="per position and repeat; 0: no search figures")
    ap.add_argument("--minibatch", type=int, default=0,
                    help="search figures: leaves per evaluator call (default: the engine's)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    args.batches = [int(b) for b in args.batches.split(",")]
    if args.worker:
        args.network, args.threads = args.networks, args.threads[0]
        serve(args)
        return
    import onnxruntime
    import torch

    from zerochess.search.params import ENGINE_PARAMS
    args.minibatch = args.minibatch or ENGINE_PARAMS.minibatch  # resolved once, sent to workers

    print(f"{cpu_description()}; torch {torch.__version__}, onnxruntime {onnxruntime.__version__}")
    for network in args.networks.split(","):
        measure_network(network, args)


if __name__ == "__main__":
    main()
