"""Validation against a teacher: how often the network's move is the teacher's, and how far
its expected score is from the teacher's (the model card's two figures).

On teacher-labelled data (``zerochess train label``: ``teacher_best`` and the teacher's WDL
as the value target) the phase-1 metrics score the move the *game* played, which at mixed
strength is often not the teacher's choice. These two score the teacher itself:

* ``teacher_top1``: the legal-masked policy's argmax is the teacher's best move;
* ``expected_score_error``: mean |E_net - E_teacher|, E = P(win) + P(draw) / 2 of the
  network's WDL and of the teacher's (the value target).
"""

from __future__ import annotations

import torch


class TeacherSums:
    """Accumulates the two teacher metrics over batches; ``result()`` averages them."""

    def __init__(self) -> None:
        self.n = 0
        self.agree = 0.0
        self.error = 0.0

    @torch.no_grad()
    def update(self, policy_logits: torch.Tensor, wdl_logits: torch.Tensor, legal: torch.Tensor,
               wdl: torch.Tensor, best: torch.Tensor) -> None:
        """policy_logits (B, P), wdl_logits (B, 3), legal (B, P) bool, wdl (B, 3) the
        teacher's (loss, draw, win), best (B,) the teacher's move index."""
        pick = policy_logits.float().masked_fill(~legal, float("-inf")).argmax(1)  # (B,)
        self.agree += float((pick == best).sum())
        p = torch.softmax(wdl_logits.float(), dim=-1)  # (B, 3)
        e_net = p[:, 2] + 0.5 * p[:, 1]
        e_teacher = wdl[:, 2].float() + 0.5 * wdl[:, 1].float()
        self.error += float((e_net - e_teacher).abs().sum())
        self.n += best.shape[0]

    def result(self) -> dict[str, float]:
        if not self.n:
            return {}
        return {"teacher_top1": self.agree / self.n, "expected_score_error": self.error / self.n}
