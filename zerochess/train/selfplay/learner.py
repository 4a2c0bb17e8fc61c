"""The self-play learner: the seed's training step on the replay window (§2.4.1).

Loss per position: cross-entropy from the search's visit distribution to the policy,
taken over the legal moves (the same legal-only masking as phase 1, since the search only
asks for priors over legal moves), plus the WDL cross-entropy of the value head against
the game result (phase 1's value loss, not the seed's MSE on a scalar: the network's value
head is WDL), plus phase 1's illegal-move penalty so the network keeps the rules it learnt
(by default the seed's 0.1 x mass; SelfPlayConfig.illegal_penalty says why). A network
with a moves-left head also learns the plies left of the games that ended by a rule
(``zerochess.train.data.moves_left``; weight 1, the supervised default).

The learner trains its own weights continuously (AlphaGo Zero): the actors play the best
network, which the learner's checkpoints replace only by winning the gating match.
``learner.pt`` holds weights, AdamW state and counters, written atomically at the end of
each iteration's steps together with the checkpoint ``checkpoints/itIIII.pt``.

AdamW here keeps torch's default betas (0.9, 0.999), unlike supervised training's
(0.9, 0.95): the learner fine-tunes a trained network a few hundred steps at a time at a
tenth of phase 1's learning rate, where the longer second-moment memory averages over more
batches of a window that changes only between iterations. Every self-play result in
docs/selfplay.md was measured with it; a run's learner.pt carries its betas, so a
resumed run keeps them whatever this default says.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from zerochess.neural.checkpoint import load_checkpoint, save_checkpoint
from zerochess.chess.threats import network_tokens
from zerochess.train.common.jsonl import append_jsonl
from zerochess.train.common.optim import adamw, cosine
from zerochess.train.common.state import load_state, save_state
from zerochess.train.data.batches import Batch
from zerochess.train.data.replay import ReplayWindow
from zerochess.train.losses import LossWeights, phase1_loss
from zerochess.train.selfplay.config import SelfPlayConfig

log = logging.getLogger("zerochess.selfplay")

STATE_FORMAT = "zerochess-selfplay-learner"
STATE_VERSION = 1
BETAS = (0.9, 0.999)


def selfplay_loss(policy_logits: torch.Tensor, wdl_logits: torch.Tensor, target: torch.Tensor,
                  wdl: torch.Tensor, legal: torch.Tensor, w: LossWeights,
                  moves_left: torch.Tensor | None = None,
                  moves_left_target: torch.Tensor | None = None
                  ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Total loss and its parts (detached) for one batch.

    policy_logits (B, P), wdl_logits (B, 3), target (B, P) visit distribution (zero off the
    legal moves), wdl (B, 3) result distribution or (B,) class 0/1/2, legal (B, P) bool: the
    supervised loss with the visits as policy target, plus ``policy_kl``, the policy loss
    minus the targets' entropy: 0 when the network's priors equal the visit distribution.
    With a moves-left head, its plies (B,) and the games' plies left (B,; -1: none) add
    the moves-left loss (``phase1_loss``).
    """
    total, parts = phase1_loss(policy_logits, wdl_logits, None, wdl, legal, w, target,
                               moves_left, moves_left_target)
    entropy = -(target * torch.log(target.clamp_min(1e-12))).sum(-1).mean()
    parts["policy_kl"] = (parts["policy_loss"] - entropy).detach()
    return total, parts


class Learner:
    """Weights, optimizer and counters of a run's learner (``RUN_DIR/learner.pt``)."""

    def __init__(self, cfg: SelfPlayConfig, run_dir: str | os.PathLike, init: str | os.PathLike,
                 device: torch.device) -> None:
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.device = device
        self.path = self.run_dir / "learner.pt"
        model, info = load_checkpoint(init)
        self.model = model.to(device)
        self.init_metadata = info["metadata"]
        self.opt = adamw(self.model, cfg.lr, cfg.weight_decay, BETAS)
        self.weights = LossWeights(1.0, cfg.value_weight, cfg.illegal_weight,
                                   cfg.illegal_penalty)
        self.step = 0
        self.iteration = 0   # the last iteration whose training finished
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        s = load_state(self.path, STATE_FORMAT, STATE_VERSION, "learner state")
        self.model.load_state_dict(s["model"])
        self.opt.load_state_dict(s["optimizer"])
        self.step, self.iteration = int(s["step"]), int(s["iteration"])

    def save(self, iteration: int, checkpoint: Path, metadata: dict) -> Path:
        """Write the network checkpoint, then the learner state (both atomic). A kill between
        the two leaves the old learner state, and the iteration's training runs again."""
        save_checkpoint(checkpoint, self.model, metadata)
        self.iteration = iteration
        save_state(self.path, STATE_FORMAT, STATE_VERSION,
                   {"model": self.model.state_dict(), "optimizer": self.opt.state_dict(),
                    "step": self.step, "iteration": iteration})
        return checkpoint

    def _lr(self, k: int, steps: int) -> float:
        return self.cfg.lr * cosine(k / max(1, steps - 1), self.cfg.min_lr_ratio)

    def _to_device(self, b: Batch):
        d = self.device
        return (torch.from_numpy(b.tokens).to(d), torch.from_numpy(b.target).to(d),
                torch.from_numpy(b.wdl).to(d), torch.from_numpy(b.legal).to(d))

    def train(self, window: ReplayWindow, iteration: int,
              progress: Callable[[int, dict], None] | None = None,
              metrics_path: Path | None = None, log_every: int = 20) -> dict:
        """Run ``steps_per_iteration`` steps on batches drawn from ``window``; returns the
        mean of each loss part over the steps. Batches are a function of (seed, iteration)."""
        cfg = self.cfg
        steps = cfg.steps_per_iteration
        rng = np.random.default_rng([cfg.seed, iteration, 7])
        amp = self.device.type == "cuda" and torch.cuda.is_bf16_supported()
        sums: dict[str, float] = {}
        window_t = window_wait = 0.0
        window_n = 0
        self.model.train()
        for k in range(steps):
            t0 = time.perf_counter()
            batch = window.gather(window.sample(rng, cfg.batch_size))
            batch.tokens = network_tokens(batch.tokens, self.model.config.threat_inputs)
            tokens, target, wdl, legal = self._to_device(batch)
            t1 = time.perf_counter()
            lr = self._lr(k, steps)
            for g in self.opt.param_groups:
                g["lr"] = lr
            with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=amp):
                policy, value, plies = self.model.forward_all(tokens)
            plies_target = (torch.from_numpy(batch.moves_left).to(self.device)
                            if plies is not None else None)  # games ended by a rule only
            loss, parts = selfplay_loss(policy, value, target, wdl, legal, self.weights,
                                        plies, plies_target)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            grad = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip))
            self.opt.step()
            self.step += 1
            out = {"loss": float(loss.detach()), **{n: float(v) for n, v in parts.items()},
                   "grad_total": grad}
            for n, v in out.items():
                sums[n] = sums.get(n, 0.0) + v
            window_t += time.perf_counter() - t0
            window_wait += t1 - t0
            window_n += 1
            if metrics_path is not None and ((k + 1) % log_every == 0 or k + 1 == steps):
                # The record `zerochess train report` plots (same keys as phase 1's).
                rec = {"type": "train", "step": self.step, "epoch": iteration, "lr": lr, **out,
                       "samples_per_s": window_n * cfg.batch_size / window_t,
                       "loader_wait_share": window_wait / window_t}
                append_jsonl(metrics_path, rec)
                window_t = window_wait = 0.0
                window_n = 0
            if progress:
                progress(k + 1, out)
        self.model.eval()
        return {n: v / steps for n, v in sums.items()} if steps else {}
