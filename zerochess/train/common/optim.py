"""The optimizer and learning-rate schedule both trainers use.

AdamW with nanoGPT's grouping: weight decay on matrices and embeddings (parameters with two
or more dimensions), none on biases and norm gains, whose decay would only shrink them
towards a meaningless zero.
"""

from __future__ import annotations

import math

import torch

__all__ = ["adamw", "cosine"]


def adamw(model: torch.nn.Module, lr: float, weight_decay: float,
          betas: tuple[float, float]) -> torch.optim.AdamW:
    """AdamW with decay on parameters of two or more dimensions only."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=betas)


def cosine(t: float, floor: float) -> float:
    """Cosine decay from 1 at ``t`` = 0 to ``floor`` at ``t`` = 1 (``t`` clipped to [0, 1]),
    so late steps still learn."""
    t = min(1.0, max(0.0, t))
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * t))
