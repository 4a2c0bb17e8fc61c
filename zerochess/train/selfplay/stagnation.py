"""Stagnation detection and the seed's interventions (risk 6, mitigation D).

After each evaluation the loop records the best network's rating. When the last
``stagnation_iters`` of them span less than ``stagnation_elo``, self-play is presumed stuck
on a narrow diet of its own games and gets more diversity: more random opening plies, a
hotter temperature schedule and more root noise (the seed's values). An intervention is
applied once; another one needs ``stagnation_iters`` further iterations. The changes are
config changes, stored in RUN_DIR/state.json, so a restart keeps them, and logged.
"""

from __future__ import annotations

from zerochess.train.selfplay.config import SelfPlayConfig


def is_stagnating(history: list[float], cfg: SelfPlayConfig, since: int = 0) -> bool:
    """``history``: the best network's rating after each iteration's evaluation; ``since``:
    the history length at the last intervention (it needs a fresh window)."""
    recent = history[max(since, len(history) - cfg.stagnation_iters):]
    if len(recent) < cfg.stagnation_iters:
        return False
    return max(recent) - min(recent) < cfg.stagnation_elo


def intervention(cfg: SelfPlayConfig) -> dict:
    """The config changes of the seed's ``get_intervention`` (only those that change)."""
    changes = {"random_opening_plies": max(cfg.random_opening_plies,
                                           cfg.stagnation_random_opening_plies),
               "temperature_multiplier": max(cfg.temperature_multiplier,
                                             cfg.stagnation_temperature_multiplier),
               "dirichlet_fraction": max(cfg.dirichlet_fraction,
                                         cfg.stagnation_dirichlet_fraction)}
    return {k: v for k, v in changes.items() if getattr(cfg, k) != v}
