"""Elo of every checkpoint from all evaluation games together (a Bradley-Terry fit).

The model: player i beats player j with probability ``1 / (1 + 10 ** ((r_j - r_i) / 400))``;
a draw counts as half a win for each (the usual logistic Elo). The ratings maximise the
likelihood of every game played so far, gating and pool games alike, so each new game
sharpens every rating it touches, unlike the seed's incremental K-factor update (§2.5.2),
whose result depends on game order. The first player (the initial network) is anchored at 0.

A weak Gaussian prior (mean 0, ``prior_sd`` Elo, on every rating but the anchor) keeps the
fit finite when a player has won or lost all its games (a 2-0 checkpoint would otherwise be
rated +infinity); at 1000 Elo it moves a rating backed by a few dozen games by a few Elo.
Error bars: the inverse of the observed Fisher information (the Hessian of the negative
log-posterior) gives each rating's variance relative to the anchor; ``error`` is
1.96 standard deviations (95%).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ELO = 400.0 / math.log(10.0)   # natural units -> Elo


@dataclass(frozen=True)
class Rating:
    name: str
    elo: float
    error: float      # half-width of the 95% interval, Elo (relative to the anchor)
    games: int
    score: float      # mean score over its games (nan without games)


def fit_ratings(players: list[str], games: list[tuple[str, str, float]],
                prior_sd: float = 1000.0, iterations: int = 100) -> dict[str, Rating]:
    """Ratings of ``players`` (``players[0]`` anchored at 0) from ``games``: tuples
    (white, black, score of white in {0, 0.5, 1}). Newton's method on the log-posterior."""
    index = {p: i for i, p in enumerate(players)}
    if len(index) != len(players):
        raise ValueError("player names must be unique")
    n = len(players)
    a = np.array([index[w] for w, _, _ in games], dtype=np.int64)
    b = np.array([index[bl] for _, bl, _ in games], dtype=np.int64)
    s = np.array([float(x) for _, _, x in games], dtype=np.float64)
    if np.any((s < 0) | (s > 1)):
        raise ValueError("game scores must lie in [0, 1]")
    lam = 1.0 / (prior_sd / ELO) ** 2
    r = np.zeros(n)
    free = np.arange(1, n)
    hess = np.eye(max(n - 1, 0)) * lam
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(r[b] - r[a]))   # P(white wins)
        g = np.zeros(n)                           # gradient of the log-likelihood
        np.add.at(g, a, s - p)
        np.add.at(g, b, p - s)
        g -= lam * r
        w = p * (1 - p)
        h = np.zeros((n, n))                      # negative Hessian
        np.add.at(h, (a, a), w)
        np.add.at(h, (b, b), w)
        np.add.at(h, (a, b), -w)
        np.add.at(h, (b, a), -w)
        h += lam * np.eye(n)
        hess = h[np.ix_(free, free)]
        if n == 1:
            break
        step = np.linalg.solve(hess, g[free])
        r[free] += step
        if np.max(np.abs(step)) < 1e-10:
            break
    cov = np.linalg.inv(hess) if n > 1 else np.zeros((0, 0))
    out = {}
    for i, name in enumerate(players):
        mine = (a == i) | (b == i)
        score = np.where(a[mine] == i, s[mine], 1 - s[mine])
        err = 0.0 if i == 0 else 1.96 * math.sqrt(cov[i - 1, i - 1]) * ELO
        out[name] = Rating(name, float(r[i] * ELO), err, int(mine.sum()),
                           float(score.mean()) if len(score) else float("nan"))
    return out
