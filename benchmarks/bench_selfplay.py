"""Self-play speed: positions per second of one actor worker, and the share of its wall time
spent outside the network (tree search, move choice, recording, shard + PGN writing).

    python benchmarks/bench_selfplay.py --quick                  # tiny preset, CPU, ~30 s
    python benchmarks/bench_selfplay.py                          # tiny, 256 games, CPU
    python benchmarks/bench_selfplay.py --preset small --device cuda --games 512

It runs the real worker (``zerochess.train.selfplay.worker.run_worker``: the Actor over
``games`` concurrent games, one evaluator call per round for all of them, shards written
to a temporary directory) on a freshly initialised network of the preset (the speed of a
network does not depend on its weights) or on ``--checkpoint``. All games start together
and are cut at ``--plies``, so the batch stays full until the end. Figures:

* plies/s: moves played (every move is searched, fast or full); positions/s: recorded
  training positions (full searches only, ``full_search_probability`` of the moves);
* nodes/s: search playouts; mean batch and batch fill (mean leaves per evaluator call /
  games x leaves_per_tree);
* outside network: 1 - (seconds inside evaluator.evaluate) / (worker wall time).
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

import torch

from zerochess.neural.api import fresh_network
from zerochess.neural.backends import network_path
from zerochess.neural.checkpoint import save_checkpoint
from zerochess.train.selfplay.config import SelfPlayConfig
from zerochess.train.selfplay.worker import WorkerJob, run_worker


def bench(args) -> dict:
    cfg = SelfPlayConfig(games_per_worker=args.games, games_per_shard=args.games,
                         full_search_nodes=args.full_nodes, fast_search_nodes=args.fast_nodes,
                         leaves_per_tree=args.leaves, max_game_plies=args.plies,
                         device=args.device, threads=args.threads, resign_threshold=-1.0,
                         self_play_ratio=1.0)
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = None if args.checkpoint is None else network_path(args.checkpoint)
        if ckpt is None:
            ckpt = Path(tmp) / "net.pt"
            save_checkpoint(ckpt, fresh_network(args.preset, seed=1))
        job = WorkerJob(tmp, 1, 0, args.games, str(ckpt), "bench", [], cfg.to_dict())
        t0 = time.perf_counter()
        c = run_worker(job, lambda msg: None)
        wall = time.perf_counter() - t0
    return {
        "preset": args.preset if args.checkpoint is None else str(args.checkpoint),
        "device": args.device, "threads": args.threads, "games": args.games,
        "plies_per_game": args.plies, "full_nodes": args.full_nodes, "fast_nodes": args.fast_nodes,
        "leaves_per_tree": args.leaves, "wall_s": round(wall, 2),
        "plies_per_s": round(c["plies"] / wall, 1),
        "positions_per_s": round(c["positions"] / wall, 1),
        "nodes_per_s": round(c["nodes"] / wall),
        "eval_calls": c["eval_calls"],
        "mean_batch": round(c["eval_positions"] / c["eval_calls"], 1),
        "batch_fill": round(c["eval_positions"] / c["eval_calls"] / (args.games * args.leaves), 3),
        "network_s": round(c["network_s"], 2),
        "outside_network_share": round(1 - c["network_s"] / c["wall_s"], 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--checkpoint", default=None,
                    help="a network instead of --preset: default, zero or a checkpoint path")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--games", type=int, default=256, help="concurrent games")
    ap.add_argument("--plies", type=int, default=40, help="plies per game")
    ap.add_argument("--full-nodes", type=int, default=200)
    ap.add_argument("--fast-nodes", type=int, default=40)
    ap.add_argument("--leaves", type=int, default=8, help="leaves per tree per evaluator call")
    ap.add_argument("--quick", action="store_true", help="64 games x 20 plies")
    args = ap.parse_args()
    if args.quick:
        args.games, args.plies = 64, 20
    torch.set_num_threads(args.threads)
    result = bench(args)
    result["machine"] = f"{platform.processor() or platform.machine()}, torch {torch.__version__}"
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
