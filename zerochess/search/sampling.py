"""The one temperature sampler: a root move drawn by its visit count.

Self-play (``Tree.choose_move``) and the UCI ``Temperature`` option both play a move drawn
with probability proportional to visits ** (1 / T) (AlphaZero's move selection), so they
share this function and its numpy ``Generator``: the same seed plays the same moves.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

__all__ = ["sample_by_visits"]


def sample_by_visits(visits, temperature: float, rng: np.random.Generator) -> Optional[int]:
    """Index of a move drawn with probability proportional to ``visits ** (1 / temperature)``.

    None when ``temperature`` <= 0 or no move has a visit: the caller plays its best move
    then (which may rank proven wins and Q, not just visits). Weights are taken relative
    to the largest count, so a low temperature cannot overflow.
    """
    visits = np.asarray(visits, dtype=np.float64)
    if temperature <= 0 or visits.sum() <= 0:
        return None
    weights = np.power(visits / visits.max(), 1.0 / temperature)
    return int(rng.choice(len(weights), p=weights / weights.sum()))
