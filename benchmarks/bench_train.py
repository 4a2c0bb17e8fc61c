"""Training speed: positions generated per second per core, training samples per second
per preset with the share of step time the trainer waits for the data loader, and, on a
teacher-labelled set, the one trainer against the loop that made the shipped network.

    python benchmarks/bench_train.py                      # generation + tiny, both heads
    python benchmarks/bench_train.py --presets tiny small --steps 20 --threads 2
    python benchmarks/bench_train.py --teacher runs/label-small --threads 1   # trainer vs distill

Generation is timed in one process (so the figure is per core); training runs the real
Trainer (loader thread, loss, AdamW, clipping) on a freshly generated data set, skipping
the first steps as warm-up. Validation is pushed past the end of the timed steps.

``--teacher DIR``: `zerochess train supervise`'s Trainer and experiments/distill.py's loop
(which trained r1-r7) on the same labelled set, the same threads, batch 256, both warm from
the shipped network. The baseline is distill as it was at commit 8b69a1d, read with
``git show`` (its ``Packed`` data and ``losses``; its inner loop, a dozen lines of its
``main``, is repeated here as it was). Runs alternate (trainer, distill, trainer, ...) so
load on a shared machine hits both; each run's figure is the median over windows of
``log_every`` steps (the trainer's own per-window samples/s, distill's timed the same
way), and the ratio is of the medians over runs.
"""

from __future__ import annotations

import argparse
import json
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


def windows(step_seconds: list[float], batch: int, every: int) -> float:
    """Median samples/s over consecutive windows of ``every`` steps."""
    w = [sum(step_seconds[i:i + every]) for i in range(0, len(step_seconds) - every + 1, every)]
    return statistics.median(every * batch / t for t in w)


def bench_distill(mod, data: Path, init: Path, steps: int, warmup: int, batch: int,
                  every: int, lr: float = 7e-4) -> float:
    """distill's main loop at 8b69a1d (lr schedule, batch, losses, AdamW, clip), timed."""
    from zerochess.engine.checkpoint import load_checkpoint

    torch.manual_seed(0)
    train = mod.Packed(data, "train")
    model, _ = load_checkpoint(init)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                             {"params": rest, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.95))
    rng = np.random.default_rng(0)
    total, times = warmup + steps, []
    for step in range(total):
        t = time.perf_counter()
        frac = step / total
        lr_now = lr * (min(1.0, (step + 1) / 200) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac))))
        for g in opt.param_groups:
            g["lr"] = lr_now
        b = train.batch(rng.integers(0, len(train), batch))
        pol, val_loss, pen, mass, _, _ = mod.losses(model, b)
        loss = pol + val_loss + pen
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        pol.item(), val_loss.item()  # distill read its losses every step too (for its log)
        times.append(time.perf_counter() - t)
    return windows(times[warmup:], batch, every)


def bench_trainer(data: Path, init: Path, steps: int, warmup: int, batch: int, every: int) -> float:
    """The one trainer, as `train supervise --config docs/configs/r7.toml` runs it."""
    cfg = SuperviseConfig.from_file(ROOT / "docs" / "configs" / "r7.toml")
    cfg = cfg.replace(init_from=str(init), batch_size=batch, log_every_steps=every,
                      steps=warmup + steps + 1, val_every_steps=10**9, save_every_steps=10**9,
                      stop_after_steps=warmup + steps, threads=torch.get_num_threads())
    with tempfile.TemporaryDirectory() as run:
        trainer = Trainer(cfg, data, run)
        if trainer.steps_per_epoch <= warmup + steps:
            raise SystemExit(f"{data}: too few samples for {warmup + steps} steps of {batch} "
                             "without an epoch end (validation); use --steps or a larger set")
        trainer.run()
        recs = [json.loads(x) for x in (Path(run) / "metrics.jsonl").read_text().splitlines()]
    timed = [r["samples_per_s"] for r in recs if r["type"] == "train" and r["step"] > warmup]
    return statistics.median(timed)


def bench_teacher(data: Path, init: Path, steps: int, warmup: int, batch: int, every: int,
                  repeats: int) -> dict:
    mod = load_distill()
    warmup = -(-warmup // every) * every  # whole windows
    ours, theirs = [], []
    for _ in range(repeats):
        ours.append(bench_trainer(data, init, steps, warmup, batch, every))
        theirs.append(bench_distill(mod, data, init, steps, warmup, batch, every))
    a, b = statistics.median(ours), statistics.median(theirs)
    return {"teacher_data": str(data), "init": str(init), "batch_size": batch,
            "threads": torch.get_num_threads(), "timed_steps": steps, "repeats": repeats,
            "trainer_samples_per_s": round(a, 1), f"distill_{DISTILL_COMMIT}_samples_per_s": round(b, 1),
            "runs_trainer": [round(x) for x in ours], "runs_distill": [round(x) for x in theirs],
            "ratio_trainer_over_distill": round(a / b, 3)}


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
    ap.add_argument("--repeats", type=int, default=3, help="--teacher: runs of each, alternated")
    ap.add_argument("--window", type=int, default=20, help="--teacher: steps per timing window")
    args = ap.parse_args()
    if args.teacher:
        torch.set_num_threads(args.threads)
        print(json.dumps(bench_teacher(args.teacher, args.init, args.steps, args.warmup, 256,
                                       args.window, args.repeats)), flush=True)
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
