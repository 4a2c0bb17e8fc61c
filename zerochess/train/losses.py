"""The training loss (seed §1.5.1 with risk 3's masking) and the validation metrics (§1.5.3),
shared by supervised training and the self-play learner.

The value target is a WDL distribution (loss, draw, win): a game result's one-hot, or a
teacher's soft estimate; the value loss is the cross-entropy to it, which for a one-hot is
exactly the classification loss on the result. Callers may still pass class indices
(0 loss, 1 draw, 2 win) instead of a [B, 3] distribution.

Policy cross-entropy is taken over the legal moves only (illegal logits masked to -inf
before the softmax): the search only ever asks for priors over legal moves, so that is the
distribution worth fitting. Legality itself is taught by a separate penalty on the
probability mass M the raw (unmasked) softmax puts on illegal moves, so the network also
learns the rules, which the masked term alone would never reward. Two forms:

* ``"mass"``: M itself (the seed's form, weight 0.1). Its gradient is proportional to the
  probabilities involved, so it is tiny while M is near 1, i.e. at the start of training.
* ``"log"``: -log(1 - M), the cross-entropy of "the move is legal". Masked CE plus this at
  weight 1 is exactly the unmasked cross-entropy of the seed's §1.5.1 code, split into a
  "which legal move" and a "legal at all" part; its gradient stays large while M is large.
  But on a legal logit z_i its gradient is -M q_i (q: the legal-masked softmax): it raises
  every legal logit in proportion to its probability, i.e. it sharpens the legal policy
  away from its target while M is large. (Holding the legal logits constant in the penalty
  removes that, but then nothing holds them above the illegal ones while shared weights move
  both: in self-play training M rose from 22% to 98%; docs/selfplay.md.)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class LossWeights:
    policy: float = 1.0
    value: float = 1.0
    illegal: float = 1.0
    illegal_penalty: str = "log"  # "log" (-log(1 - M)) or "mass" (M, the seed's, with weight 0.1)
    moves_left: float = 1.0  # the moves-left head's loss; only networks with the head have it


def legal_log_softmax(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """log q over the legal moves (softmax of the legal logits only), 0 off them (B, P).

    The zeros make ``target * log_q`` well defined where target is 0 off the legal moves
    (0 * -inf would be NaN)."""
    log_q = torch.log_softmax(logits.masked_fill(~legal, float("-inf")), dim=-1)
    return log_q.masked_fill(~legal, 0.0)


def illegal_penalty(logits: torch.Tensor, legal: torch.Tensor, form: str
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """(penalty, mean illegal mass M) of the raw softmax over all P indices; ``form`` "mass"
    is M (the seed's), "log" is -log(1 - M) (module docstring). fp32 logits (B, P)."""
    log_p = torch.log_softmax(logits, dim=-1)  # (B, P)
    log_legal = torch.logsumexp(log_p.masked_fill(~legal, float("-inf")), dim=-1)  # (B,) log(1 - M)
    illegal_mass = (-torch.expm1(log_legal)).mean()
    return (illegal_mass if form == "mass" else -log_legal.mean()), illegal_mass


def wdl_value(wdl: torch.Tensor) -> torch.Tensor:
    """The value in [-1, 1], P(win) - P(loss), of (B, 3) WDL probabilities in (loss, draw,
    win) order (a network's or a target's) or of (B,) result classes (0 loss .. 2 win).

    The one place training turns a WDL into a value (the search does the same in C)."""
    return wdl[:, 2] - wdl[:, 0] if wdl.dim() == 2 else (wdl - 1).float()


#: Plies per unit of the moves-left loss: Huber on plies / 20, as Lc0 scales it, so a
#: miss of 20 plies costs about what a wrong value does and long games do not dominate.
MOVES_LEFT_UNIT = 20.0


def moves_left_loss(pred: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(Huber loss on plies / MOVES_LEFT_UNIT, absolute error in plies summed) over the
    samples with a target (``target`` >= 0; -1 marks none: moves_left.py); a batch without
    any gives a zero loss that still reaches the head's graph. pred, target (B,) plies."""
    have = target >= 0
    p, t = pred.float()[have], target.float()[have]
    if not len(t):
        return pred.float().sum() * 0.0, pred.new_zeros((), dtype=torch.float32)
    loss = F.huber_loss(p / MOVES_LEFT_UNIT, t / MOVES_LEFT_UNIT, delta=1.0)
    return loss, (p - t).abs().sum().detach()


def phase1_loss(policy_logits: torch.Tensor, wdl_logits: torch.Tensor, move: torch.Tensor,
                wdl: torch.Tensor, legal: torch.Tensor, w: LossWeights,
                target: torch.Tensor | None = None, moves_left: torch.Tensor | None = None,
                moves_left_target: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Total loss and its parts (detached) for one batch.

    policy_logits (B, P), wdl_logits (B, 3), move (B,) played move index (unused with a
    ``target``), wdl (B, 3) target distribution or (B,) class 0/1/2, legal (B, P) bool;
    target (B, P) optional policy target distribution (zero off the legal moves) replacing
    the one-hot on ``move``. With a network's ``moves_left`` (B,) plies and the batch's
    ``moves_left_target`` (B,), the moves-left loss (weight ``w.moves_left``) is added and
    reported as ``moves_left_loss``. Computed in fp32 even under autocast.
    """
    logits = policy_logits.float()  # (B, P)
    masked = logits.masked_fill(~legal, float("-inf"))  # (B, P)
    if target is None:
        policy_loss = F.cross_entropy(masked, move)
    else:
        policy_loss = -(target.float() * legal_log_softmax(logits, legal)).sum(-1).mean()
    penalty, illegal_mass = illegal_penalty(logits, legal, w.illegal_penalty)
    value_loss = F.cross_entropy(wdl_logits.float(), wdl.float() if wdl.dim() == 2 else wdl)
    total = w.policy * policy_loss + w.value * value_loss + w.illegal * penalty
    parts = {"policy_loss": policy_loss.detach(), "value_loss": value_loss.detach(),
             "illegal_mass": illegal_mass.detach()}
    if moves_left is not None and moves_left_target is not None:
        ml_loss, _ = moves_left_loss(moves_left, moves_left_target)
        total = total + w.moves_left * ml_loss
        parts["moves_left_loss"] = ml_loss.detach()
    return total, parts


class MetricSums:
    """Accumulates the §1.5.3 validation metrics over batches; ``result()`` averages them.

    legal_top1: the raw policy's argmax is a legal move.
    played_ce: the legal-masked cross-entropy of the played move, whatever the training
    target (so runs with different targets compare on one number).
    exact / top5: the played move is the masked (legal-only) policy's argmax / among its
    five largest, on kind-0 samples (random-play moves, and every sample of data without a
    kind); mate_top1 is exact accuracy on mate-in-1 samples (kind 1), absent without them.
    value_mse: (P(win) - P(loss) - the target's win - loss)^2, on all samples.
    illegal_mass: raw softmax mass on illegal moves.
    moves_left_loss / moves_left_mae: with a moves-left head, its loss (in ``loss`` too,
    weighted) and mean absolute error in plies over the samples that have a target.
    """

    def __init__(self, weights: LossWeights) -> None:
        self.w = weights
        self.s: dict[str, float] = {}
        self.n: dict[str, int] = {}

    def _add(self, name: str, total: float, count: int) -> None:
        self.s[name] = self.s.get(name, 0.0) + total
        self.n[name] = self.n.get(name, 0) + count

    @torch.no_grad()
    def update(self, policy_logits, wdl_logits, move, wdl, legal, kind, target=None,
               moves_left=None, moves_left_target=None) -> None:
        b = move.shape[0]
        logits = policy_logits.float()
        loss, parts = phase1_loss(logits, wdl_logits, move, wdl, legal, self.w, target,
                                  moves_left, moves_left_target)
        self._add("loss", float(loss) * b, b)
        for k, v in parts.items():
            if k != "moves_left_loss":
                self._add(k, float(v) * b, b)
        if "moves_left_loss" in parts:
            have = int((moves_left_target >= 0).sum())
            _, abs_sum = moves_left_loss(moves_left, moves_left_target)
            self._add("moves_left_loss", float(parts["moves_left_loss"]) * have, have)
            self._add("moves_left_mae", float(abs_sum), have)
        self._add("legal_top1", float(legal.gather(1, logits.argmax(1, keepdim=True)).sum()), b)
        masked = logits.masked_fill(~legal, float("-inf"))
        self._add("played_ce", float(F.cross_entropy(masked, move, reduction="sum")), b)
        top5 = masked.topk(5, dim=1).indices  # (B, 5)
        hit1 = top5[:, 0] == move
        hit5 = (top5 == move[:, None]).any(1)
        rnd, mate = kind == 0, kind == 1
        self._add("exact", float((hit1 & rnd).sum()), int(rnd.sum()))
        self._add("top5", float((hit5 & rnd).sum()), int(rnd.sum()))
        self._add("mate_top1", float((hit1 & mate).sum()), int(mate.sum()))
        value = wdl_value(torch.softmax(wdl_logits.float(), dim=-1))
        self._add("value_mse", float(((value - wdl_value(wdl).float()) ** 2).sum()), b)

    def result(self) -> dict[str, float]:
        return {k: self.s[k] / self.n[k] for k in self.s if self.n[k]}
