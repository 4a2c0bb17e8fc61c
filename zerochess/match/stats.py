"""Match statistics: score, logistic Elo with a 95% error bar, LOS and the SPRT log-likelihood.

The conventions are those of cutechess-cli and fishtest, so figures can be compared:

- score ``s = (W + D/2) / N``; Elo difference ``-400 log10(1/s - 1)`` (the logistic model).
- error bar: the standard error of the mean score, from the per-game variance
  ``sum((x_i - s)^2) / N`` over game scores x in {0, 1/2, 1}, or, when every opening was
  played with both colours, from the per-pair ("pentanomial") variance over pair scores in
  {0, 1/4, 1/2, 3/4, 1}, which removes the variance that the opening itself adds. The 95%
  interval of the score is ``s +- 1.96 SE``; the Elo error is half the width of that interval
  mapped to Elo (cutechess's ``elo +- err``).
- LOS (likelihood of superiority) ``0.5 (1 + erf((W - L) / sqrt(2 (W + L))))``.
- SPRT: the normal approximation of the generalized SPRT used by fishtest,
  ``LLR = N (s1 - s0)(2 s - s0 - s1) / (2 var)`` with ``s0, s1`` the scores of elo0, elo1, and
  bounds ``ln(beta / (1 - alpha))``, ``ln((1 - beta) / alpha)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

Z95 = 1.959963984540054  # two-sided 95% quantile of the normal distribution


def elo_from_score(score: float) -> float:
    """Logistic Elo difference of a score fraction; +-inf at 1 and 0."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


@dataclass(frozen=True)
class EloEstimate:
    """What the match report prints. ``error`` is the 95% half-width in Elo (may be inf)."""
    games: int
    wins: int
    draws: int
    losses: int
    score: float
    elo: float
    error: float
    los: float
    model: str  # "pentanomial" (per pair) or "trinomial" (per game)
    pairs: tuple[int, int, int, int, int] | None = None  # counts of pair scores 0, 1/2, 1, 3/2, 2

    def summary(self) -> str:
        """One line: ``Elo +12.3 +- 45.6 (95%), LOS 70.1%, pentanomial [0, 1, 2, 1, 0]``."""
        elo = f"{self.elo + 0.0:+.1f}" if math.isfinite(self.elo) else f"{self.elo:+}"  # no -0.0
        err = f"{self.error:.1f}" if math.isfinite(self.error) else "inf"
        text = f"Elo {elo} +- {err} (95%, {self.model}), LOS {100 * self.los:.1f}%"
        if self.pairs is not None:
            text += f", pairs (LL LD DD/WL WD WW) {list(self.pairs)}"
        return text


def _interval_error(score: float, stderr: float) -> float:
    low, high = score - Z95 * stderr, score + Z95 * stderr
    if low <= 0.0 or high >= 1.0:
        return math.inf
    return (elo_from_score(high) - elo_from_score(low)) / 2.0


def los(wins: int, losses: int) -> float:
    """Probability that the first engine is stronger, from decisive games only."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


def estimate(game_scores: Sequence[float], pair_scores: Sequence[float] | None = None
             ) -> EloEstimate:
    """Elo estimate from the first engine's game scores (1, 0.5, 0).

    ``pair_scores``: the sums of each completed colour-swapped pair (0 .. 2); when given and
    covering every game, the error bar uses the pentanomial model."""
    n = len(game_scores)
    wins = sum(1 for x in game_scores if x == 1.0)
    draws = sum(1 for x in game_scores if x == 0.5)
    losses = n - wins - draws
    if n == 0:
        return EloEstimate(0, 0, 0, 0, math.nan, math.nan, math.nan, 0.5, "trinomial")
    score = (wins + draws / 2.0) / n
    if pair_scores and 2 * len(pair_scores) == n:
        m = len(pair_scores)
        var = sum((p / 2.0 - score) ** 2 for p in pair_scores) / m
        stderr = math.sqrt(var / m)
        counts = tuple(sum(1 for p in pair_scores if p == k / 2.0) for k in range(5))
        model = "pentanomial"
    else:
        var = sum((x - score) ** 2 for x in game_scores) / n
        stderr = math.sqrt(var / n)
        counts, model = None, "trinomial"
    # One sample (a single game, or a single pair) has no spread to measure: the bar is
    # unknown, not zero (one pair won and drawn printed +190.8 +- 0.0).
    samples = len(pair_scores) if model == "pentanomial" else n
    error = _interval_error(score, stderr) if samples >= 2 else math.inf
    return EloEstimate(n, wins, draws, losses, score, elo_from_score(score),
                       error, los(wins, losses), model, counts)


@dataclass(frozen=True)
class Sprt:
    """A sequential probability ratio test of H0: elo = elo0 against H1: elo = elo1."""
    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    min_games: int = 20
    """The test decides only from this many games on. Its normal approximation needs a
    sample: with a wide elo1, a handful of colour-swapped pairs won twice have so small a
    variance that the LLR crosses a bound (a 400-node screen accepted H1 after 7 pairs, and
    40 games at the time control then found no difference: docs/search.md)."""

    @property
    def bounds(self) -> tuple[float, float]:
        return (math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha))

    def llr(self, game_scores: Sequence[float], pair_scores: Sequence[float] | None = None
            ) -> float:
        """Log-likelihood ratio; 0 until the results have some variance."""
        if pair_scores and 2 * len(pair_scores) == len(game_scores):
            xs = [p / 2.0 for p in pair_scores]
        else:
            xs = list(game_scores)
        n = len(xs)
        if n == 0:
            return 0.0
        mean = sum(xs) / n
        var = sum((x - mean) ** 2 for x in xs) / n
        if var <= 0.0:
            return 0.0
        s0, s1 = score_from_elo(self.elo0), score_from_elo(self.elo1)
        return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)

    def decision(self, llr: float, games: int) -> str | None:
        """'H1' (elo1 accepted), 'H0' (elo0 accepted) or None (keep playing, and always
        while fewer than ``min_games`` games are played)."""
        if games < self.min_games:
            return None
        low, high = self.bounds
        if llr >= high:
            return "H1"
        if llr <= low:
            return "H0"
        return None
