"""Network speed and faithfulness on this machine's CPU, per preset, backend and batch size.

    python3 benchmarks/bench_network.py            # tiny, small, base; all backends
    python3 benchmarks/bench_network.py --quick    # tiny + small, fewer repeats, no compile
    python3 benchmarks/bench_network.py --threads 2 --presets small --backends fp32,bf16

For every (preset, backend) a fresh subprocess (so that process-wide state such as the
malloc tuning, torch.compile caches and thread pools cannot leak between backends):
  * times ``TorchEvaluator.evaluate`` (forward + legal-move masking, what the search pays)
    at each batch size, alternating each timed run with a sample of the machine's dense
    fp32 matmul rate on the same threads (the fastest square size of 512..2048), and
    reports the medians of positions/s and of
    efficiency = positions/s x FLOPs per position / matmul FLOP/s. Interleaving matters on
    a shared machine: other processes slow both measurements alike.
  * checks faithfulness against the fp32 reference: KL(fp32 || backend) of the legal-move
    priors, mean over positions (the criterion, < 1e-3) and max, and max |WDL difference|
    (criterion < 1e-2), on the seeded init weights and
    on "stress" weights (unit-scale activations, sharp policy: see ``stress_weights``),
    because an untrained network's near-uniform outputs would hide any numeric error.
    With ``--checkpoint`` a trained network's weights are checked as well.

Backends: eager (fp32, glibc malloc left at defaults: the naive baseline), fp32 (the
evaluator's fp32 path with malloc tuning), bf16, int8 (dynamic quantisation of Linear
layers), compile (fp32 + torch.compile; slow to start).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

BACKENDS = ("eager", "fp32", "bf16", "int8", "compile")


def median_time(fn, repeats: int, budget_s: float) -> float:
    """Median wall time of ``fn`` after one warm-up, at least 3 runs, at most ``repeats``."""
    fn()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < repeats and (len(times) < 3 or time.perf_counter() - start < budget_s):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def matmul_probe(repeats: int):
    """A callable returning one fresh sample of dense fp32 matmul FLOP/s on these threads.

    The square size is the fastest of 512..2048 (median of repeats). Samples are taken
    between the network's timed runs, so that load from other processes on a shared
    machine slows both alike and their ratio (the efficiency) stays meaningful.
    """
    import torch

    best_n, best = 0, 0.0
    for n in (512, 1024, 1536, 2048):
        a, b, c = torch.randn(n, n), torch.randn(n, n), torch.empty(n, n)
        rate = 2 * n**3 / median_time(lambda: torch.mm(a, b, out=c), repeats, 2.0)
        if rate > best:
            best_n, best = n, rate
    a, b, c = torch.randn(best_n, best_n), torch.randn(best_n, best_n), torch.empty(best_n, best_n)

    def sample() -> float:
        t = time.perf_counter()
        torch.mm(a, b, out=c)
        torch.mm(a, b, out=c)
        return 4 * best_n**3 / (time.perf_counter() - t)

    return sample


def interleaved(fn, batch: int, flops: int, probe, repeats: int, budget_s: float):
    """Median positions/s, efficiency and peak over rounds of (one timed run, one probe)."""
    fn()  # warm-up: first-call allocations, oneDNN primitive creation, compilation
    pos, eff, peaks = [], [], []
    start = time.perf_counter()
    while len(pos) < repeats and (len(pos) < 3 or time.perf_counter() - start < budget_s):
        t = time.perf_counter()
        fn()
        rate = batch / (time.perf_counter() - t)
        peak = probe()
        pos.append(rate)
        eff.append(rate * flops / peak)
        peaks.append(peak)
    return statistics.median(pos), statistics.median(eff), statistics.median(peaks)


def stress_weights(model, seed: int = 1) -> None:
    """Rescale weights so activations are O(1) and the policy is sharp, like a trained net.

    Linear weights ~ N(0, 1/fan_in) (variance-preserving), embeddings ~ N(0, 1), biases and
    LayerNorm affine parameters perturbed; the output layers of both heads are scaled x4 so
    that the legal-move priors are peaked (their entropy is printed next to the results).
    """
    import torch

    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g)
            if "embed" in name:
                p.copy_(noise)
            elif p.dim() == 2:
                p.copy_(noise / math.sqrt(p.shape[1]))
            elif name.endswith("weight"):  # LayerNorm gain
                p.copy_(1 + 0.1 * noise)
            else:
                p.copy_(0.1 * noise)
        head = model.policy_head
        if hasattr(head, "fc2"):  # pooled; the attention head's q.k is sharp enough as is
            head.fc2.weight.mul_(4)
        model.value_head[-1].weight.mul_(4)


def sample_batch(n: int, seed: int):
    """Tokens and CSR legal moves of ``n`` positions: real ones from random games when the
    native encoding is built, else random tokens with random legal-move sets."""
    rng = np.random.default_rng(seed)
    try:
        import chess

        from zerochess.chess.board import Board
        from zerochess.chess.encoding import encode_board, legal_move_indices
    except ImportError:
        from zerochess.chess.layout import POLICY_SIZE, SEQ_LEN, VOCAB_SIZE

        tokens = rng.integers(0, VOCAB_SIZE, (n, SEQ_LEN), dtype=np.uint8)
        counts = rng.integers(1, 60, n)
        legal = [rng.choice(POLICY_SIZE, c, replace=False) for c in counts]
        kind = "random tokens"
    else:
        tokens, legal, board = [], [], chess.Board()
        while len(tokens) < n:
            if board.is_game_over() or board.ply() > 120:
                board = chess.Board()
            b = Board(board.fen())
            tokens.append(encode_board(b))
            legal.append(legal_move_indices(b))
            board.push(rng.choice(list(board.legal_moves)))
        tokens = np.stack(tokens).astype(np.uint8)
        kind = "random-game positions"
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in legal])]).astype(np.int32)
    return tokens, np.concatenate(legal).astype(np.int32), offsets, kind


def faithfulness(model, precision: str, compile_: bool, batch) -> dict:
    """KL(fp32 || backend) of the legal priors (mean and max over positions), max |WDL diff|."""
    from zerochess.neural.torch_evaluator import TorchEvaluator

    tokens, legal, offsets, _ = batch
    ref_p, ref_w = TorchEvaluator(model, "cpu", precision="fp32").evaluate(
        tokens, legal, offsets)[:2]  # a network with a moves-left head returns a third
    p, w = TorchEvaluator(model, "cpu", precision=precision, compile=compile_).evaluate(
        tokens, legal, offsets)[:2]
    return divergence(ref_p, ref_w, p, w, offsets)


def divergence(ref_p, ref_w, p, w, offsets) -> dict:
    """KL(reference || other) of the legal priors per position (mean, max), max |WDL diff|,
    and the reference's mean entropy and top prior (how sharp the compared policy is)."""
    terms = ref_p * (np.log(np.maximum(ref_p, 1e-30)) - np.log(np.maximum(p, 1e-30)))
    kl = np.add.reduceat(terms.astype(np.float64), offsets[:-1])
    ent = -np.add.reduceat(ref_p * np.log(np.maximum(ref_p, 1e-30)), offsets[:-1])
    return {"kl_max": float(kl.max()), "kl_mean": float(kl.mean()),
            "wdl_max": float(np.abs(w - ref_w).max()), "ref_entropy": float(ent.mean()),
            "ref_top_prior": float(np.maximum.reduceat(ref_p, offsets[:-1]).mean())}


def worker(args) -> dict:
    import torch

    from zerochess.neural.api import fresh_network
    from zerochess.neural.backends import network_path
    from zerochess.neural.checkpoint import load_checkpoint
    from zerochess.neural.torch_evaluator import TorchEvaluator
    from zerochess.neural.network import flops_per_position, param_count

    torch.set_num_threads(args.threads)
    backend = args.worker_backend
    model = fresh_network(args.worker_preset, seed=0, policy_head=args.policy_head)
    cfg = model.config
    precision = "fp32" if backend in ("eager", "compile") else backend
    ev = TorchEvaluator(model, "cpu", precision=precision, compile=backend == "compile",
                        malloc_tuning=backend != "eager")
    probe = matmul_probe(args.repeats)
    flops = flops_per_position(cfg)
    out = {"preset": args.worker_preset, "backend": backend, "params": param_count(model),
           "flops": flops, "batches": {}}
    for b in args.batches:
        tokens, legal, offsets, kind = sample_batch(b, seed=b)
        out["batches"][b] = interleaved(lambda: ev.evaluate(tokens, legal, offsets), b, flops,
                                        probe, args.repeats, args.budget)
    out["positions"] = kind
    if backend not in ("eager", "fp32"):
        batch = sample_batch(256, seed=7)
        out["faithful_init"] = faithfulness(model, precision, backend == "compile", batch)
        stress_weights(model)
        out["faithful_stress"] = faithfulness(model, precision, backend == "compile", batch)
        if args.checkpoint:
            trained, _ = load_checkpoint(network_path(args.checkpoint))
            out["faithful_trained"] = faithfulness(trained, precision, backend == "compile", batch)
    return out


def run_worker(args, preset: str, backend: str) -> dict | None:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker-preset", preset,
           "--worker-backend", backend, "--threads", str(args.threads),
           "--repeats", str(args.repeats), "--budget", str(args.budget),
           "--batches", ",".join(map(str, args.batches)), "--policy-head", args.policy_head]
    if args.checkpoint:
        cmd += ["--checkpoint", args.checkpoint]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        tail = (res.stderr.strip().splitlines() or ["?"])[-1]
        print(f"{preset:5s} {backend:7s} FAILED: {tail}")
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny+small, 3 repeats, no compile")
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    ap.add_argument("--presets", default=None, help="comma list (default tiny,small,base)")
    ap.add_argument("--backends", default=None, help=f"comma list of {','.join(BACKENDS)}")
    ap.add_argument("--batches", default="1,16,64,256")
    ap.add_argument("--policy-head", default="pooled", choices=("pooled", "attention"))
    ap.add_argument("--repeats", type=int, default=7, help="timed runs per figure (median)")
    ap.add_argument("--budget", type=float, default=8.0, help="seconds per figure, soft cap")
    ap.add_argument("--checkpoint", default=None,
                    help="also check faithfulness on this net: default, zero or a checkpoint path")
    ap.add_argument("--worker-preset", help=argparse.SUPPRESS)
    ap.add_argument("--worker-backend", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.batches = [int(b) for b in args.batches.split(",")]
    if args.worker_preset:
        print(json.dumps(worker(args)))
        return
    if args.quick:
        args.repeats = min(args.repeats, 3)
    presets = (args.presets or ("tiny,small" if args.quick else "tiny,small,base")).split(",")
    default_backends = "eager,fp32,bf16,int8" + ("" if args.quick else ",compile")
    backends = (args.backends or default_backends).split(",")

    import torch

    print(f"torch {torch.__version__}, {args.threads} threads, policy head {args.policy_head}, "
          f"median of up to {args.repeats} runs; eff = pos/s x FLOPs / peak fp32 matmul FLOP/s")
    cols = "".join(f"{'B=' + str(b):>15s}" for b in args.batches)
    print(f"{'preset':6s} {'backend':8s} {'params':>8s} {'MFLOP':>7s} {'peak GF/s':>9s}{cols}"
          f"   faithfulness: KL mean/max, |dWDL| max (init, stress[, trained])")
    notes: set[str] = set()
    for preset in presets:
        for backend in backends:
            r = run_worker(args, preset, backend)
            if r is None:
                continue
            figs = "".join(f"{r['batches'][str(b)][0]:8.0f} ({r['batches'][str(b)][1]:4.0%})"
                           for b in args.batches)
            peak = statistics.median(r["batches"][str(b)][2] for b in args.batches)
            faith = ""
            for key in ("faithful_init", "faithful_stress", "faithful_trained"):
                if key in r:
                    f = r[key]
                    faith += f"  {f['kl_mean']:.1e}/{f['kl_max']:.1e}/{f['wdl_max']:.1e}"
            print(f"{preset:6s} {backend:8s} {r['params'] / 1e6:7.2f}M {r['flops'] / 1e6:7.1f} "
                  f"{peak / 1e9:9.1f}{figs} {faith}", flush=True)
            notes.add(f"positions: {r['positions']}")
            if "faithful_stress" in r:
                s = r["faithful_stress"]
                notes.add(f"{preset} stress net: mean legal-prior entropy {s['ref_entropy']:.2f} "
                          f"nats, mean top prior {s['ref_top_prior']:.2f}")
    for note in sorted(notes):
        print(note)


if __name__ == "__main__":
    main()
