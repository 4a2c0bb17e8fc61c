"""Which illegal-move penalty should the self-play learner use? An equal-compute comparison.

Trains the learner from the same start network on the same replay window (a finished
self-play run's games, all but the newest shard) with each penalty, then scores every
result on the held-out newest shard: the raw policy's illegal mass M and the legal-masked
cross-entropy to the search's visit distribution (what the engine uses).

    python experiments/selfplay_penalty.py --run runs/selfplay-cpu \
        --init runs/selfplay-demo-init/best.pt --steps 600
"""

from __future__ import annotations

import argparse
import json
import tempfile

import numpy as np
import torch

from zerochess.neural.checkpoint import load_checkpoint
from zerochess.train.data.dataset import open_shard
from zerochess.train.data.replay import ReplayWindow, list_shards
from zerochess.train.losses import LossWeights
from zerochess.train.selfplay.config import SelfPlayConfig
from zerochess.train.selfplay.learner import Learner, selfplay_loss

VARIANTS = {"mass": ("mass", 0.1), "log": ("log", 1.0)}


def held_out_scores(model, window: ReplayWindow) -> dict[str, float]:
    b = window.gather(np.arange(len(window)))
    with torch.inference_mode():
        policy, value = model(torch.from_numpy(b.tokens))
        _, parts = selfplay_loss(policy, value, torch.from_numpy(b.target), torch.from_numpy(b.wdl),
                                 torch.from_numpy(b.legal), LossWeights())
    return {"illegal_mass": float(parts["illegal_mass"]),
            "visit_ce_legal": float(parts["policy_loss"]), "policy_kl": float(parts["policy_kl"])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", required=True, help="a self-play run directory (its games/)")
    ap.add_argument("--init", required=True, help="start network checkpoint")
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS),
                    help="mass: the seed's 0.1 x M; log: 1 x -log(1 - M)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    shards = [open_shard(p, verify=False) for p in list_shards(f"{args.run}/games")]
    train, held = ReplayWindow(shards[:-1], 10**9), ReplayWindow(shards[-1:], 10**9)
    print(f"train window {len(train)} positions, held-out {len(held)} ({held.names[0]})")
    cfg0 = SelfPlayConfig(steps_per_iteration=args.steps, batch_size=256, lr=3e-4, device="cpu")
    with tempfile.TemporaryDirectory() as tmp:
        start, _ = load_checkpoint(args.init)
        print(json.dumps({"variant": "start", **held_out_scores(start, held)}))
        for name in args.variants:
            form, weight = VARIANTS[name]
            cfg = cfg0.replace(illegal_penalty=form, illegal_weight=weight)
            learner = Learner(cfg, f"{tmp}/{form}", args.init, torch.device("cpu"))
            learner.train(train, iteration=1)
            print(json.dumps({"variant": name, **held_out_scores(learner.model, held)}))


if __name__ == "__main__":
    main()
