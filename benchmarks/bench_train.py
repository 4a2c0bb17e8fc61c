"""Phase-1 pipeline speed: positions generated per second per core, and training samples
per second per preset with the share of step time the trainer waits for the data loader.

    python benchmarks/bench_train.py                      # generation + tiny, both heads
    python benchmarks/bench_train.py --presets tiny small --steps 20 --threads 2

Generation is timed in one process (so the figure is per core); training runs the real
Trainer (loader thread, loss, AdamW, clipping) on a freshly generated data set, skipping
the first steps as warm-up. Validation is pushed past the end of the timed steps.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

import torch

from zerochess.train.data.generate import GenerateConfig, generate
from zerochess.train.data.randomplay import PlayConfig, play_game
from zerochess.train.supervised.config import SuperviseConfig
from zerochess.train.supervised.trainer import Trainer


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=200, help="games for the generation figure")
    ap.add_argument("--presets", nargs="+", default=["tiny"])
    ap.add_argument("--heads", nargs="+", default=["pooled", "attention"])
    ap.add_argument("--steps", type=int, default=20, help="timed training steps per preset")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = ap.parse_args()

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
