"""Training speed: positions generated per second per core, training samples per second
per preset with the share of step time the trainer waits for the data loader, and, on a
teacher-labelled set, the one trainer against the loop that made the shipped network.

    python benchmarks/bench_train.py                      # generation + tiny, both heads
    python benchmarks/bench_train.py --presets tiny small --steps 20 --threads 2
    python benchmarks/bench_train.py --teacher runs/label-small --threads 1   # trainer vs distill
    python benchmarks/bench_train.py --teacher runs/label-small --threads 1 --cpu-bf16  # and bf16

Generation is timed in one process (so the figure is per core); training runs the real
Trainer (loader thread, loss, AdamW, clipping) on a freshly generated data set, skipping
the first steps as warm-up. Validation is pushed past the end of the timed steps.

``--teacher DIR``: `zerochess train supervise`'s Trainer and experiments/distill.py's loop
(which trained r1-r7) on the same labelled set, the same threads, batch 256, all warm from
the shipped network, in one process. The baseline is distill as it was at commit 8b69a1d,
read with ``git show`` (its ``Packed`` data and ``losses``; its inner loop, a dozen lines of
its ``main``, is repeated here as it was), in train mode (96% of its steps) and in the eval
mode of its first 500 steps. The loops take turns, a window of steps each, so a shared
machine's changing load hits all of them alike; the ratios are medians of per-round ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import math
import platform
import statistics
import subprocess
import tempfile
import time
import types
from pathlib import Path

import numpy as np
import torch

from zerochess.train.data.generate import GenerateConfig, generate
from zerochess.train.data.randomplay import PlayConfig, play_game
from zerochess.train.supervised.config import SuperviseConfig
from zerochess.train.data.batches import Prefetcher, iterate_batches
from zerochess.train.supervised.trainer import Trainer

ROOT = Path(__file__).resolve().parent.parent
DISTILL_COMMIT = "8b69a1d"


def bench_generation(games: int, play: PlayConfig) -> dict:
    t = time.process_time()
    n = sum(len(g.move) for g in (play_game(0, i, play) for i in range(games)) if g is not None)
    dt = time.process_time() - t
    return {"games": games, "samples": n, "cpu_seconds": round(dt, 2),
            "samples_per_s_per_core": round(n / dt)}


def bench_training(data: Path, preset: str, head: str, steps: int, warmup: int, batch: int,
                   threads: int) -> dict:
    cfg = SuperviseConfig(preset=preset, policy_head=head, dropout=0.0, batch_size=batch,
                          steps=steps + warmup + 1, threads=threads, log_every_steps=1,
                          legal_gen_games=0, val_max_samples=batch, save_every_steps=10**9)
    with tempfile.TemporaryDirectory() as run:
        trainer = Trainer(cfg.replace(stop_after_steps=steps + warmup), data, run)
        trainer.run()
        recs = [json.loads(x) for x in (Path(run) / "metrics.jsonl").read_text().splitlines()]
    timed = [r for r in recs if r["type"] == "train"][warmup:]
    step_s = [batch / r["samples_per_s"] for r in timed]
    wait = sum(r["loader_wait_share"] * s for r, s in zip(timed, step_s)) / sum(step_s)
    return {"preset": preset, "policy_head": head, "batch_size": batch, "threads": threads,
            "samples_per_s": round(batch * len(step_s) / sum(step_s), 1),
            "loader_wait_share": round(wait, 4)}


def load_distill(commit: str = DISTILL_COMMIT) -> types.ModuleType:
    """experiments/distill.py as it was at ``commit`` (it left the tree with this benchmark's
    teacher mode), loaded as a module from git's copy."""
    try:
        src = subprocess.run(["git", "show", f"{commit}:experiments/distill.py"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"--teacher needs git and the repository's history ({e})") from e
    mod = types.ModuleType(f"distill_{commit}")
    exec(compile(src, f"distill.py@{commit}", "exec"), mod.__dict__)
    return mod


def distill_steps(mod, data: Path, init: Path, batch: int, total: int, train_mode: bool,
                  lr: float = 7e-4):
    """A function running step i of distill's main loop at 8b69a1d (lr schedule, batch,
    losses, AdamW, clip). ``train_mode``: distill's load_checkpoint left the network in eval
    mode until its first validation (step 500) called ``model.train()``, so its first 500
    steps took the CPU attention path of inference and the other 96% of r7's 12,000 the
    training path; both are timed."""
    from zerochess.neural.checkpoint import load_checkpoint

    torch.manual_seed(0)
    train = mod.Packed(data, "train")
    model, _ = load_checkpoint(init)
    model.train(train_mode)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                             {"params": rest, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.95))
    rng = np.random.default_rng(0)

    def step(i: int) -> None:
        frac = i / total
        lr_now = lr * (min(1.0, (i + 1) / 200) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac))))
        for g in opt.param_groups:
            g["lr"] = lr_now
        b = train.batch(rng.integers(0, len(train), batch))
        pol, val_loss, pen, mass, _, _ = mod.losses(model, b)
        loss = pol + val_loss + pen
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return step


def trainer_steps(data: Path, init: Path, batch: int, total: int, run: str,
                  cpu_bf16: bool = False):
    """A function running step i of the one trainer as `train supervise --config
    docs/configs/r7.toml` does: its loader (the data packed in memory, a prefetch thread)
    and its ``train_step`` (loss, backward, clip, AdamW, schedule; gradient norms every
    ``log_every_steps``): the body of ``Trainer.run`` without its bookkeeping."""
    cfg = SuperviseConfig.from_file(ROOT / "docs" / "configs" / "r7.toml")
    cfg = cfg.replace(init_from=str(init), batch_size=batch, steps=total,
                      threads=torch.get_num_threads(), cpu_bf16=cpu_bf16)
    trainer = Trainer(cfg, data, run)
    loader = Prefetcher(iterate_batches(trainer.train_set, batch, cfg.seed,
                                        with_target=trainer.sampler_target), depth=cfg.prefetch)

    def step(i: int) -> None:
        trainer.train_step(next(loader), with_norms=(i + 1) % cfg.log_every_steps == 0)
    step.close = loader.close
    return step


def bench_teacher(data: Path, init: Path, window: int, rounds: int, batch: int = 256,
                  cpu_bf16: bool = False) -> dict:
    """Windows of ``window`` steps of each loop in turn (the order rotating), ``rounds``
    times after one warm-up round; per loop the median samples/s over its windows, and the
    median over rounds of the per-round ratios (a shared machine's load changes slowly
    compared with a round, so pairing removes most of it). ``cpu_bf16``: also the trainer
    with bf16 autocast on the CPU, and its ratio to the fp32 trainer."""
    mod = load_distill()
    total = window * (rounds + 1)
    with tempfile.TemporaryDirectory() as run:
        loops = {"trainer": trainer_steps(data, init, batch, total, run),
                 "distill_train_mode": distill_steps(mod, data, init, batch, total, True),
                 "distill_eval_mode": distill_steps(mod, data, init, batch, total, False)}
        if cpu_bf16:
            loops["trainer_cpu_bf16"] = trainer_steps(data, init, batch, total, os.path.join(run, "bf16"),
                                                      cpu_bf16=True)
        speed: dict[str, list[float]] = {k: [] for k in loops}
        names = list(loops)
        for r in range(rounds + 1):
            for name in names[r % len(names):] + names[:r % len(names)]:
                t = time.perf_counter()
                for i in range(r * window, (r + 1) * window):
                    loops[name](i)
                if r:  # round 0 warms up
                    speed[name].append(window * batch / (time.perf_counter() - t))
        for name in loops:
            if name.startswith("trainer"):
                loops[name].close()
    out = {"teacher_data": str(data), "init": str(init), "batch_size": batch,
           "threads": torch.get_num_threads(), "window_steps": window, "rounds": rounds,
           "baseline": f"experiments/distill.py at {DISTILL_COMMIT} (git show)"}
    for name, v in speed.items():
        out[f"{name}_samples_per_s"] = round(statistics.median(v), 1)
    for base in ("distill_train_mode", "distill_eval_mode"):
        ratios = [a / b for a, b in zip(speed["trainer"], speed[base])]
        out[f"ratio_trainer_over_{base}"] = round(statistics.median(ratios), 3)
    if cpu_bf16:
        ratios = [a / b for a, b in zip(speed["trainer_cpu_bf16"], speed["trainer"])]
        out["ratio_cpu_bf16_over_fp32_trainer"] = round(statistics.median(ratios), 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=200, help="games for the generation figure")
    ap.add_argument("--presets", nargs="+", default=["tiny"])
    ap.add_argument("--heads", nargs="+", default=["pooled", "attention"])
    ap.add_argument("--steps", type=int, default=20, help="timed training steps per preset")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--teacher", type=Path, default=None,
                    help="a `train label` data set: time the trainer against distill's loop")
    ap.add_argument("--init", type=Path, default=ROOT / "zerochess" / "data" / "network.pt",
                    help="--teacher: the network both start from")
    ap.add_argument("--rounds", type=int, default=5, help="--teacher: timed rounds of windows")
    ap.add_argument("--window", type=int, default=10, help="--teacher: steps per timing window")
    ap.add_argument("--cpu-bf16", action="store_true",
                    help="--teacher: also the trainer with bf16 autocast on the CPU")
    args = ap.parse_args()
    if args.teacher:
        torch.set_num_threads(args.threads)
        print(json.dumps(bench_teacher(args.teacher, args.init, args.window, args.rounds,
                                       cpu_bf16=args.cpu_bf16)), flush=True)
        return

    print(json.dumps({"cpu": platform.processor() or platform.machine(),
                      "torch": torch.__version__, "threads": args.threads}))
    for name, play in (("biased+mates", PlayConfig()),
                       ("pure random", PlayConfig(capture_weight=1, check_weight=1, mate_in_one=False))):
        print(json.dumps({"generation": name, **bench_generation(args.games, play)}), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        need = args.batch_size * (args.steps + args.warmup + 2)
        games = max(20, need // 150)
        generate(GenerateConfig(games=games, games_per_shard=max(1, games // 10)), tmp)
        for preset in args.presets:
            for head in args.heads:
                print(json.dumps(bench_training(Path(tmp), preset, head, args.steps, args.warmup,
                                                args.batch_size, args.threads)), flush=True)


if __name__ == "__main__":
    main()
