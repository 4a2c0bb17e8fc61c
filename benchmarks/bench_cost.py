"""Where a node's time goes: the engine's search with the shipped network, cut into its parts.

    python benchmarks/bench_cost.py                  # timings (about half a minute)
    python benchmarks/bench_cost.py --callgrind      # and instruction counts (valgrind, ~13 min)

What is measured is what the engine plays: ``make_evaluator(network, runtime="onnx-fp32")``
with one thread, searched by ``run_bench`` (``zerochess bench``'s eight positions, the
engine's ``ENGINE_PARAMS``: MinibatchSize 8). Printed:

1. The CPU, the instruction set ONNX Runtime's matmuls (MLAS) use on it, and its fp32 peak
   for one core: GHz x 2 FMA pipes x FMA lanes (8 with AVX2, 16 with AVX-512) x 2 FLOPs,
   with the clock read from lscpu / /proc/cpuinfo (a VM may show its base clock only), and
   for scale the dense fp32 matmul rate numpy's BLAS reaches on one core here.
2. The search's time, cut into ONNX Runtime's ``session.run``, the Python side of
   ``evaluate`` (``network_tokens``, ``gather_index``, ``legal_softmax``, the rest of the
   method), the search core (``run_round`` less ``evaluate``), the search's Python loop,
   and ``new_game`` (which clears the cache before each bench position; a game's moves
   don't): the functions are wrapped with clocks, so the search runs the real code, whose
   bench signature is printed with it. CPU time of the process (the search runs on its own
   thread; ONNX Runtime with one thread runs on the caller's), which load from other
   processes disturbs less than the wall time, and the wall time; medians over
   ``--repeats``. The clocks' own cost (measured) falls in "rest of evaluate".
3. ``session.run`` and the whole ``evaluate`` on random-game positions at batches 1, 8 and
   32, interleaved: a fixed cost per call plus a cost per position through B=1 and B=8,
   and the network's FLOPs (``flops_per_position``) over that time against the peak.
4. Inside ``session.run`` at B=8: ONNX Runtime's profiler (``enable_profiling``), the
   share of the kernels' time per operator type and the matmuls' FLOP/s from the shapes
   it records (wall clock per node, and profiling slows the call: shares, not speeds).
5. With ``--callgrind``: the cut of 2 and the fit of 3 in instructions, which do not depend
   on the machine's load: this script runs itself under ``valgrind --tool=callgrind`` and
   dumps the counts between markers (a call of ``Board.perft``), so one run gives a
   fixed-node search (``--cg-nodes`` per position) and ``--cg-calls`` bare calls at each
   batch size. ``session.run`` is every instruction under a call from outside ONNX
   Runtime's library into it; ``evaluate`` everything under the core's ``evaluate_batch``;
   the core ``run_round``, ``new_game`` the cache's and the tree's ``clear``.

Timings are only as good as the machine is quiet; the shares and the instruction counts
are what to compare across changes.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's matmul probe: one core
import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from bench_network import sample_batch  # noqa: E402

BATCHES = (1, 8, 32)
MARKER = "__pyx_pw_*Board_*perft"  # callgrind dumps its counts before each marker()
ORT_OBJECT = "onnxruntime_pybind11_state"


def marker() -> None:
    from zerochess.chess.board import Board

    Board().perft(1)


# -- the CPU ---------------------------------------------------------------------------------
def cpu_info() -> dict:
    flags, model, mhz = set(), "?", None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "flags" and not flags:
                    flags = set(value.split())
                elif key == "model name" and model == "?":
                    model = value.strip()
                elif key == "cpu MHz" and mhz is None:
                    mhz = float(value)
    except OSError:
        pass
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        found = re.search(r"CPU max MHz:\s*([\d.]+)", out)
        if found:
            mhz = float(found.group(1))
    except (OSError, subprocess.CalledProcessError):
        pass
    # MLAS (onnxruntime/core/mlas/lib/platform.cpp) picks its fp32 GEMM kernel from CPUID:
    # AVX-512F, else AVX2 with FMA3, else AVX, else SSE2.
    if "avx512f" in flags:
        isa, lanes = "AVX-512F", 16
    elif "avx2" in flags and "fma" in flags:
        isa, lanes = "AVX2 + FMA3", 8
    elif "avx" in flags:
        isa, lanes = "AVX (no FMA)", 4  # a multiply and an add per 8 lanes: 8 FLOPs a cycle
    else:
        isa, lanes = "SSE2", 2
    ghz = (mhz or 0.0) / 1000
    peak = ghz * 2 * lanes * 2  # 2 FMA pipes per core (Intel since Haswell, AMD since Zen 2)
    extra = sorted(f for f in flags if f in ("avx512_bf16", "amx_bf16", "amx_tile",
                                             "avx512_vnni", "avx_vnni"))
    return {"model": model, "ghz": ghz, "isa": isa, "lanes": lanes, "peak": peak * 1e9,
            "avx2_peak": ghz * 2 * 8 * 2 * 1e9, "extra": extra}


def matmul_rate(seconds: float = 2.0) -> float:
    """Dense fp32 FLOP/s of numpy's BLAS on one core (1024^3 matmuls, CPU time, best of 5)."""
    rng = np.random.default_rng(0)
    a = rng.random((1024, 1024), dtype=np.float32)
    b = rng.random((1024, 1024), dtype=np.float32)
    a @ b
    best = 0.0
    for _ in range(5):
        n, c0 = 0, time.process_time()
        while n < 2 or time.process_time() - c0 < seconds / 5:
            a @ b
            n += 1
        best = max(best, 2 * 1024 ** 3 * n / (time.process_time() - c0))
    return best


# -- the evaluator, with clocks --------------------------------------------------------------
class Clocks:
    """CPU (this thread) and wall seconds per part, summed over calls."""

    PARTS = ("session.run", "network_tokens", "gather_index", "legal_softmax", "evaluate",
             "run_round", "new_game")

    def __init__(self) -> None:
        self.cpu = dict.fromkeys(self.PARTS, 0.0)
        self.wall = dict.fromkeys(self.PARTS, 0.0)
        self.calls = 0
        self.positions = 0
        self.sizes: dict[int, int] = {}

    def wrap(self, name: str, fn):
        def timed(*args, **kwargs):
            c0, w0 = time.process_time(), time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.cpu[name] += time.process_time() - c0
                self.wall[name] += time.perf_counter() - w0
        return timed


class SessionClock:
    """An onnxruntime session whose run methods are timed as 'session.run'."""

    def __init__(self, session, clocks: Clocks) -> None:
        self._session = session
        for name in ("run", "run_with_iobinding", "run_with_ort_values"):
            if hasattr(session, name):
                setattr(self, name, clocks.wrap("session.run", getattr(session, name)))

    def __getattr__(self, name):
        return getattr(self._session, name)


def timed_evaluator(network: str):
    """The engine's evaluator with every part of ``evaluate`` on a clock, the search's rounds
    (``run_round``: gather, evaluate, back up) and ``new_game`` on clocks too; the clocks."""
    import zerochess.neural.onnx_evaluator as module
    import zerochess.search.search as search_module
    from zerochess.neural.backends import make_evaluator

    clocks = Clocks()
    ev = make_evaluator(network, device="cpu", threads=1, runtime="onnx-fp32")
    for name in ("network_tokens", "gather_index", "legal_softmax"):
        setattr(module, name, clocks.wrap(name, getattr(module, name)))
    search_module.run_round = clocks.wrap("run_round", search_module.run_round)
    search_module.Search.new_game = clocks.wrap("new_game", search_module.Search.new_game)
    ev.session = SessionClock(ev.session, clocks)
    inner = ev.evaluate

    def evaluate(tokens, legal_idx, offsets):
        clocks.calls += 1
        clocks.positions += tokens.shape[0]
        clocks.sizes[tokens.shape[0]] = clocks.sizes.get(tokens.shape[0], 0) + 1
        return clocks.wrap("evaluate", inner)(tokens, legal_idx, offsets)

    ev.evaluate = evaluate
    return ev, clocks


def clock_cost() -> float:
    """CPU seconds one wrapped call adds to its caller (two clock pairs)."""
    clocks = Clocks()
    noop = clocks.wrap("evaluate", lambda: None)
    n, c0 = 20000, time.process_time()
    for _ in range(n):
        noop()
    return (time.process_time() - c0) / n


def search_breakdown(args) -> None:
    from zerochess.search.params import ENGINE_PARAMS
    from zerochess.tools.bench import run_bench

    params = ENGINE_PARAMS.replace(seed=0)
    rows: dict[str, list[tuple[float, float]]] = {}
    last = None
    ev, clocks = timed_evaluator(args.network)
    run_bench(ev, 16, params)  # warm-up: first calls at each shape
    for _ in range(args.repeats):
        clocks.__init__()
        c0, w0 = time.process_time(), time.perf_counter()
        nodes, evals, _, signature = run_bench(ev, args.nodes, params)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        shares = {
            "session.run (ONNX Runtime)": (clocks.cpu["session.run"], clocks.wall["session.run"]),
            "  network_tokens": (clocks.cpu["network_tokens"], clocks.wall["network_tokens"]),
            "  gather_index": (clocks.cpu["gather_index"], clocks.wall["gather_index"]),
            "  legal_softmax": (clocks.cpu["legal_softmax"], clocks.wall["legal_softmax"]),
        }
        parts = ("session.run", "network_tokens", "gather_index", "legal_softmax")
        shares["  rest of evaluate"] = (
            clocks.cpu["evaluate"] - sum(clocks.cpu[p] for p in parts),
            clocks.wall["evaluate"] - sum(clocks.wall[p] for p in parts))
        shares["evaluate, Python side (the four above)"] = (
            clocks.cpu["evaluate"] - clocks.cpu["session.run"],
            clocks.wall["evaluate"] - clocks.wall["session.run"])
        shares["search core (run_round less evaluate)"] = (
            clocks.cpu["run_round"] - clocks.cpu["evaluate"],
            clocks.wall["run_round"] - clocks.wall["evaluate"])
        shares["search's Python loop, set-up, results"] = (
            cpu - clocks.cpu["run_round"] - clocks.cpu["new_game"],
            wall - clocks.wall["run_round"] - clocks.wall["new_game"])
        shares["new_game (bench only: clears the cache)"] = (clocks.cpu["new_game"],
                                                             clocks.wall["new_game"])
        shares["total"] = (cpu, wall)
        for k, v in shares.items():
            rows.setdefault(k, []).append(v)
        last = (nodes, evals, signature, clocks)
    nodes, evals, signature, clocks = last
    total_cpu = statistics.median(c for c, _ in rows["total"])
    total_wall = statistics.median(w for _, w in rows["total"])
    mean_b = clocks.positions / max(clocks.calls, 1)
    print(f"\nsearch: run_bench, 8 positions x {args.nodes} nodes, ENGINE_PARAMS (MinibatchSize "
          f"{ENGINE_PARAMS.minibatch}), network {args.network}, 1 thread; signature {signature}")
    print(f"  {nodes} nodes, {evals} positions evaluated in {clocks.calls} calls (mean batch "
          f"{mean_b:.2f}; sizes {dict(sorted(clocks.sizes.items()))})")
    print(f"  median of {args.repeats}: CPU {total_cpu:.3f} s ({nodes / total_cpu:,.0f} nodes/s, "
          f"{total_cpu / clocks.calls * 1e3:.3f} ms a call), wall {total_wall:.3f} s "
          f"({nodes / total_wall:,.0f} nodes/s)")
    print(f"  the clocks: {clock_cost() * 1e6:.1f} us a wrapped call, 4 wrapped calls inside each "
          f"evaluate (in 'rest of evaluate')")
    print(f"  {'part':42s} {'CPU s':>8s} {'share':>7s} {'wall s':>8s} {'share':>7s}  "
          f"per call (CPU)")
    for k, v in rows.items():
        c = statistics.median(x for x, _ in v)
        w = statistics.median(x for _, x in v)
        print(f"  {k:42s} {c:8.3f} {c / total_cpu:7.1%} {w:8.3f} {w / total_wall:7.1%}  "
              f"{c / clocks.calls * 1e6:8.1f} us")


# -- per call: fixed cost and cost per position ----------------------------------------------
def per_call(args, info: dict) -> None:
    from zerochess.chess.threats import network_tokens
    from zerochess.neural.backends import make_evaluator
    from zerochess.neural.network import NetworkConfig, flops_per_position

    ev = make_evaluator(args.network, device="cpu", threads=1, runtime="onnx-fp32")
    flops = flops_per_position(NetworkConfig(**ev.config)) if isinstance(ev.config, dict) \
        else flops_per_position(ev.config)
    data = {b: sample_batch(b, seed=b)[:3] for b in BATCHES}
    feeds = {b: network_tokens(data[b][0], ev.threat_inputs) for b in BATCHES}
    runs = {
        "session.run": lambda b: ev.session.run(None, {"tokens": feeds[b]}),
        "evaluate": lambda b: ev.evaluate(*data[b]),
    }
    cpu: dict[tuple, list[float]] = {}
    wall: dict[tuple, list[float]] = {}
    for fn in runs.values():
        for b in BATCHES:
            fn(b)
    for _ in range(args.repeats):
        for name, fn in runs.items():
            for b in BATCHES:
                calls = max(4, int(args.slice / 0.0006 / b))  # about args.slice seconds
                c0, w0 = time.process_time(), time.perf_counter()
                for _ in range(calls):
                    fn(b)
                cpu.setdefault((name, b), []).append((time.process_time() - c0) / calls)
                wall.setdefault((name, b), []).append((time.perf_counter() - w0) / calls)
    print(f"\nper call, random-game positions, medians of {args.repeats} interleaved repeats: "
          f"CPU (wall) ms a call; CPU = fixed + B x per position through B=1 and B=8")
    print(f"  {'':12s}" + "".join(f"{'B=' + str(b):>20s}" for b in BATCHES)
          + f"{'fixed':>10s}{'per pos':>10s}{'fixed at B=8':>14s}")
    fits = {}
    for name in runs:
        ms = [statistics.median(cpu[(name, b)]) * 1e3 for b in BATCHES]
        wms = [statistics.median(wall[(name, b)]) * 1e3 for b in BATCHES]
        slope = (ms[1] - ms[0]) / (BATCHES[1] - BATCHES[0])  # B=1 and B=8: the engine's range
        fixed = ms[0] - slope * BATCHES[0]
        fits[name] = (fixed, slope)
        cells = "".join(f"{c:10.3f} ({w:6.3f})" for c, w in zip(ms, wms))
        print(f"  {name:12s}{cells}{fixed:10.3f}{slope:10.3f}{fixed / (fixed + 8 * slope):14.1%}")
    print(f"\nnetwork: {flops / 1e6:.2f} MFLOP a position (flops_per_position: every matmul, "
          f"2mkn)")
    print(f"  {'GFLOP/s (share of the peak)':28s}"
          + "".join(f"{'B=' + str(b):>15s}" for b in BATCHES) + f"{'fit per pos':>15s}")
    for name in runs:
        rates = [b * flops / statistics.median(cpu[(name, b)]) / 1e9 for b in BATCHES]
        rates.append(flops / (fits[name][1] / 1e3) / 1e9)  # the fit's cost per position
        print(f"  {name:28s}" + "".join(f"{r:8.1f} ({r * 1e9 / info['peak']:3.0%})"
                                         for r in rates))


# -- inside session.run: ONNX Runtime's own profile ------------------------------------------
MATMULS = ("Gemm", "FusedGemm", "MatMul", "FusedMatMul")


def ort_profile(args, info: dict, batch: int = 8) -> None:
    """Kernel time per operator type of the engine's session at ``batch`` (ONNX Runtime's
    profiler: wall clock per node), and the matmuls' FLOP/s from the shapes it records."""
    import json

    import onnxruntime as ort

    from zerochess.chess.threats import network_tokens
    from zerochess.neural.backends import make_evaluator
    from zerochess.neural.onnx_network import session_options

    ev = make_evaluator(args.network, device="cpu", threads=1, runtime="onnx-fp32")
    with tempfile.TemporaryDirectory() as tmp:
        options = session_options(1)
        options.enable_profiling = True
        options.profile_file_prefix = os.path.join(tmp, "ort")
        path = ev.source if str(ev.source).endswith(".onnx") else None
        if path is None:
            print("\n(ONNX Runtime profile: needs a .onnx network)")
            return
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        feed = {"tokens": network_tokens(sample_batch(batch, seed=batch)[0], ev.threat_inputs)}
        for _ in range(args.profile_calls):
            session.run(None, feed)
        with open(session.end_profiling()) as f:
            events = json.load(f)
    by_op: dict[str, float] = {}
    flops: dict[str, float] = {}
    runs = run_us = 0.0
    for e in events:
        if e.get("cat") == "Session" and e["name"] == "model_run":
            runs, run_us = runs + 1, run_us + e["dur"]
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        op = e["args"]["op_name"]
        by_op[op] = by_op.get(op, 0.0) + e["dur"]
        if op in MATMULS:
            k = next(iter(e["args"]["input_type_shape"][0].values()))[-1]
            out = next(iter(e["args"]["output_type_shape"][0].values()))
            flops[op] = flops.get(op, 0.0) + 2.0 * k * float(np.prod(out))
    kernels = sum(by_op.values())
    print(f"\ninside session.run at B={batch}: ONNX Runtime's profiler, {args.profile_calls} calls "
          f"(wall clock, so load inflates it): {run_us / runs / 1e3:.3f} ms a call, kernels "
          f"{kernels / run_us:.1%} of it, the rest the runtime's own work between kernels")
    print(f"  {'operator':20s} {'share of kernels':>17s}   GFLOP/s (of the peak)")
    for op, us in sorted(by_op.items(), key=lambda kv: -kv[1]):
        rate = f"{flops[op] / us / 1e3:8.1f} ({flops[op] / us * 1e6 / info['peak']:3.0%})" \
            if op in flops else ""
        print(f"  {op:20s} {us / kernels:17.1%}   {rate}")
    mm_us = sum(by_op.get(op, 0.0) for op in MATMULS)
    print(f"  matmuls together: {mm_us / kernels:.1%} of the kernels' time, "
          f"{sum(flops.values()) / runs / batch / 1e6:.2f} MFLOP a position")


# -- callgrind -------------------------------------------------------------------------------
#: Functions whose calls callgrind's counts are summed over (inclusive), by name.
CALLEES = {
    "evaluate": re.compile(r"evaluate_batch"),            # the core's call of the evaluator
    "run_round": re.compile(r"pw_.*mcts.*run_round"),      # gather, evaluate, back up
    "new_game": re.compile(r"pw_.*(TranspositionTable|Tree)_\d+clear$"),  # the cache cleared
}


def parse_callgrind(path: str) -> dict:
    """Of one callgrind dump: total Ir; Ir under calls entering ONNX Runtime's library from
    outside it ("ort"); Ir under calls of each of ``CALLEES`` (from a function that does not
    match); self Ir per object file ("by_object")."""
    names: dict[str, dict[str, str]] = {"ob": {}, "fn": {}}
    found = dict.fromkeys(CALLEES, 0)
    total = ort = 0
    by_object: dict[str, int] = {}
    ob = fn = cob = cfn = ""
    after_calls = False

    def name(kind: str, text: str) -> str:
        m = re.match(r"\((\d+)\)(?:\s+(.*))?", text)
        if not m:
            return text
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), m.group(1))

    with open(path) as f:
        for line in f:
            if not line or line[0] == "#":
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                cost = line.split()
                ir = int(cost[1]) if len(cost) > 1 else 0
                if after_calls:  # the inclusive cost of the call just named
                    if ORT_OBJECT in (cob or ob) and ORT_OBJECT not in ob:
                        ort += ir
                    for key, pattern in CALLEES.items():
                        if pattern.search(cfn) and not pattern.search(fn):
                            found[key] += ir
                    after_calls, cob = False, ""
                else:
                    by_object[ob] = by_object.get(ob, 0) + ir
                continue
            key, _, value = line.rstrip("\n").partition("=")
            if key == "ob":
                ob = name("ob", value)
            elif key == "cob":
                cob = name("ob", value)
            elif key == "fn":
                fn = name("fn", value)
            elif key == "cfn":
                cfn = name("fn", value)
            elif key == "calls":
                after_calls = True
            elif line.startswith(("summary:", "totals:")):
                total = max(total, int(line.split()[1]))
    return {"total": total, "ort": ort, "by_object": by_object, **found}


def callgrind_child(args) -> None:
    """Run under callgrind: warm up, then marker-separated segments (see ``callgrind``)."""
    from zerochess.chess.threats import network_tokens
    from zerochess.search.params import ENGINE_PARAMS
    from zerochess.tools.bench import run_bench
    from zerochess.neural.backends import make_evaluator

    ev = make_evaluator(args.network, device="cpu", threads=1, runtime="onnx-fp32")
    params = ENGINE_PARAMS.replace(seed=0)
    data = {b: sample_batch(b, seed=b)[:3] for b in BATCHES}
    feeds = {b: network_tokens(data[b][0], ev.threat_inputs) for b in BATCHES}
    for b in BATCHES:
        ev.evaluate(*data[b])
        ev.session.run(None, {"tokens": feeds[b]})
    run_bench(ev, 4, params)
    marker()                                            # dump 1: start-up and warm-up
    signature = run_bench(ev, args.cg_nodes, params)[3]
    marker()                                            # dump 2: the search
    for b in BATCHES:
        for _ in range(args.cg_calls):
            ev.session.run(None, {"tokens": feeds[b]})
        marker()                                        # dumps 3-5: session.run at B
    for _ in range(args.cg_calls):
        ev.evaluate(*data[8])
    marker()                                            # dump 6: evaluate at B=8
    print(f"signature {signature}", flush=True)


def callgrind(args) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(args.cg_dir or tmp, "cg.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
               f"--dump-before={MARKER}", sys.executable, os.path.abspath(__file__),
               "--cg-child", "--network", args.network, "--cg-nodes", str(args.cg_nodes),
               "--cg-calls", str(args.cg_calls)]
        print(f"\ncallgrind: valgrind --tool=callgrind --dump-before={MARKER} "
              f"{os.path.basename(__file__)} --cg-child ... (about 13 minutes)", flush=True)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"valgrind failed:\n{proc.stderr[-3000:]}")
        signature = re.search(r"signature (\w+)", proc.stdout).group(1)
        dumps = sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
        # --dump-before writes <out>.1, .2, ... for each marker; the end of the program <out>
        parts = [parse_callgrind(p) for p in dumps]
    if len(parts) < 6:
        raise SystemExit(f"expected 6 dumps, got {len(parts)}")
    search = parts[1]
    total, ort, evaluate = search["total"], search["ort"], search["evaluate"]
    print(f"search: run_bench, 8 positions x {args.cg_nodes} nodes (signature {signature}): "
          f"{total / 1e9:.2f} G instructions; without new_game "
          f"{(total - search['new_game']) / 1e9:.2f} G (the shares below)")
    play = total - search["new_game"]  # what a search in a game runs (no cleared cache)
    for label, n in (("session.run (ONNX Runtime)", ort),
                     ("evaluate, Python side", evaluate - ort),
                     ("search core (run_round less evaluate)", search["run_round"] - evaluate),
                     ("search's Python loop, set-up, results",
                      play - search["run_round"])):
        print(f"  {label:42s} {n / 1e6:10.1f} M {n / play:7.1%}")
    print(f"  {'new_game (clearing the cache; bench only)':42s} "
          f"{search['new_game'] / 1e6:10.1f} M {search['new_game'] / total:7.1%} of all")
    print("  self instructions by object file, whole search:")
    for ob, n in sorted(search["by_object"].items(), key=lambda kv: -kv[1])[:8]:
        print(f"    {os.path.basename(ob) or '?':60s} {n / 1e6:10.1f} M {n / total:7.1%}")
    print(f"per call, {args.cg_calls} calls each: M instructions a call; fixed + B x per position "
          f"through B=1 and B=8")
    print(f"  {'':12s}" + "".join(f"{'B=' + str(b):>10s}" for b in BATCHES)
          + f"{'fixed':>10s}{'per pos':>10s}{'fixed at B=8':>14s}")
    per = [parts[2 + i]["total"] / args.cg_calls / 1e6 for i in range(len(BATCHES))]
    slope = (per[1] - per[0]) / (BATCHES[1] - BATCHES[0])
    fixed = per[0] - slope * BATCHES[0]
    print(f"  {'session.run':12s}" + "".join(f"{x:10.2f}" for x in per)
          + f"{fixed:10.2f}{slope:10.2f}{fixed / (fixed + 8 * slope):14.1%}")
    whole = parts[5]["total"] / args.cg_calls / 1e6
    print(f"  {'evaluate':12s}{'':10s}{whole:10.2f}   (B=8: {whole - per[1]:.2f} M outside "
          f"session.run)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--network", default="default", help="default, zero, or a .onnx path")
    ap.add_argument("--nodes", type=int, default=1000, help="per position, timed search")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--slice", type=float, default=0.3, help="seconds per timed per-call figure")
    ap.add_argument("--profile-calls", type=int, default=200,
                    help="calls profiled by ONNX Runtime (0: no profile)")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions")
    ap.add_argument("--cg-nodes", type=int, default=100, help="per position, under callgrind")
    ap.add_argument("--cg-calls", type=int, default=5, help="calls per batch size, callgrind")
    ap.add_argument("--cg-dir", help="keep callgrind's files in this folder (default: none kept)")
    ap.add_argument("--cg-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--skip-timing", action="store_true", help="callgrind figures only")
    args = ap.parse_args()
    if args.cg_child:
        callgrind_child(args)
        return
    import onnxruntime

    info = cpu_info()
    print(f"CPU {info['model']}, {os.cpu_count()} cores, {info['ghz']:.2f} GHz (as the OS "
          f"reports it); onnxruntime {onnxruntime.__version__}, MLAS fp32 kernels: {info['isa']}"
          + (f"; also {', '.join(info['extra'])}" if info["extra"] else ""))
    print(f"fp32 peak, one core: {info['ghz']:.2f} GHz x 2 FMA pipes x {info['lanes']} lanes x 2 "
          f"= {info['peak'] / 1e9:.1f} GFLOP/s (an AVX2 core at this clock: "
          f"{info['avx2_peak'] / 1e9:.1f})")
    if not args.skip_timing:
        blas = matmul_rate()
        print(f"numpy BLAS fp32 matmul, 1024^3, one core: {blas / 1e9:.1f} GFLOP/s (CPU time)"
              + (" (near or over the peak: the core runs faster than the clock the OS "
                 "reports, so the shares of the peak below are upper bounds)"
                 if blas > 0.9 * info["peak"] else ""))
        search_breakdown(args)
        per_call(args, info)
        if args.profile_calls:
            ort_profile(args, info)
    if args.callgrind:
        callgrind(args)


if __name__ == "__main__":
    main()
