"""SPSA as fishtest runs it for Stockfish: pure functions, no games, no files.

Each iteration draws a random sign vector ``delta`` (each entry +1 or -1), plays the engine at
``theta + c_t * delta`` against ``theta - c_t * delta`` and moves every parameter by

    theta_i <- clamp(theta_i + a_t,i / c_t,i * result * delta_i)

where ``result`` is the first side's wins minus losses (its score minus the other's, in game
points). The gains count game pairs played, as fishtest's do, so ``C_END`` and ``R_END`` mean
what they mean there: with ``total`` pairs in the whole tune, ``t`` the pairs played before
this iteration, ``A = 0.1 * total``, ``alpha = 0.602`` and ``gamma = 0.101``,

    c_t = c / (t + 1)^gamma          with c = c_end * total^gamma          (c_t = c_end at the end)
    a_t = a / (A + t + 1)^alpha      with a = r_end * c_end^2 * (A + total)^alpha
                                                                 (a_t = r_end * c_end^2 at the end)

so the step per game point at the end is ``r_end * c_end``. With one pair per iteration
``t`` is the iteration number; with P pairs ``t = k * P`` and the P pairs share one
``delta`` (a fishtest worker's batch).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from zerochess.tune.params import Param

ALPHA = 0.602
GAMMA = 0.101
A_FRACTION = 0.1


@dataclass(frozen=True)
class Schedule:
    """The gains of a tune of ``total`` game pairs (``iterations * pairs``)."""
    total: int
    alpha: float = ALPHA
    gamma: float = GAMMA
    a_fraction: float = A_FRACTION

    @property
    def big_a(self) -> float:
        """Spall's stability constant A: a share of the whole tune."""
        return self.a_fraction * self.total

    def c(self, param: Param, t: int) -> float:
        """The perturbation for the pair ``t`` (0-based): ``c_end`` at ``t = total - 1``."""
        return param.c_end * self.total ** self.gamma / (t + 1) ** self.gamma

    def a(self, param: Param, t: int) -> float:
        """The step gain for the pair ``t``: ``r_end * c_end^2`` at ``t = total - 1``."""
        a = param.r_end * param.c_end ** 2 * (self.big_a + self.total) ** self.alpha
        return a / (self.big_a + t + 1) ** self.alpha


def perturbation(seed: int, k: int, n: int) -> list[int]:
    """The sign vector of iteration ``k``: a function of (seed, k) alone, so a resumed tune
    draws exactly what an uninterrupted one would."""
    rng = random.Random(f"zerochess-tune:{seed}:{k}")
    return [1 if rng.random() < 0.5 else -1 for _ in range(n)]


@dataclass(frozen=True)
class Probe:
    """What iteration ``k`` plays: ``plus`` (theta + c delta) against ``minus``, both
    clamped to the parameters' bounds."""
    k: int
    t: int
    delta: tuple[int, ...]
    c: tuple[float, ...]
    a: tuple[float, ...]
    plus: tuple[float, ...]
    minus: tuple[float, ...]


def propose(params: list[Param], theta: list[float], k: int, pairs: int, schedule: Schedule,
            seed: int) -> Probe:
    """Iteration ``k``'s perturbation, gains and the two parameter vectors to play."""
    t = k * pairs
    delta = perturbation(seed, k, len(params))
    c = [schedule.c(p, t) for p in params]
    a = [schedule.a(p, t) for p in params]
    plus = [p.clamp(x + ci * d) for p, x, ci, d in zip(params, theta, c, delta)]
    minus = [p.clamp(x - ci * d) for p, x, ci, d in zip(params, theta, c, delta)]
    return Probe(k, t, tuple(delta), tuple(c), tuple(a), tuple(plus), tuple(minus))


def update(params: list[Param], theta: list[float], probe: Probe, result: float) -> list[float]:
    """theta after ``result`` (plus's wins minus losses over the iteration's games)."""
    return [p.clamp(x + a / c * result * d)
            for p, x, a, c, d in zip(params, theta, probe.a, probe.c, probe.delta)]


@dataclass(frozen=True)
class Outcome:
    """The games of one iteration from the ``plus`` side's view."""
    wins: int
    draws: int
    losses: int
    forfeits: int = 0

    @property
    def result(self) -> int:
        return self.wins - self.losses


class SyntheticObjective:
    """Games replaced by a seeded noisy quadratic, for tests and for trying a schedule:
    a vector ``x`` is worth ``-elo_scale * sum(((x_i - opt_i) / (max_i - min_i))^2)`` Elo,
    and each game between two vectors is a draw with probability ``draw`` or else won by
    the side the logistic Elo model favours. ``optimum`` defaults to 70% of each range."""

    def __init__(self, params: list[Param], seed: int, optimum: list[float] | None = None,
                 elo_scale: float = 2000.0, draw: float = 0.4):
        self.params = params
        self.seed = seed
        self.optimum = optimum or [p.min + 0.7 * (p.max - p.min) for p in params]
        self.elo_scale = elo_scale
        self.draw = draw

    def elo(self, x) -> float:
        return -self.elo_scale * sum(((xi - o) / (p.max - p.min)) ** 2
                                     for p, xi, o in zip(self.params, x, self.optimum))

    def __call__(self, probe: Probe, games: int) -> Outcome:
        rng = random.Random(f"zerochess-tune-synthetic:{self.seed}:{probe.k}")
        win = 1.0 / (1.0 + 10.0 ** ((self.elo(probe.minus) - self.elo(probe.plus)) / 400.0))
        w = d = l = 0
        for _ in range(games):
            if rng.random() < self.draw:
                d += 1
            elif rng.random() < win:
                w += 1
            else:
                l += 1
        return Outcome(w, d, l)


def distance(params: list[Param], x, y) -> float:
    """Euclidean distance with each parameter measured in its range (for reports, tests)."""
    return math.sqrt(sum(((a - b) / (p.max - p.min)) ** 2 for p, a, b in zip(params, x, y)))
