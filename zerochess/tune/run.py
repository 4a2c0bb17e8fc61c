"""The tune loop: propose, play, update, save; and the plot of each parameter's path.

``run_tune`` never prints: it logs to the ``zerochess.tune`` logger and calls
``on_iteration`` after each iteration is saved (the CLI moves its progress bar there).
"""

from __future__ import annotations

import io
import logging
import os
import time
from pathlib import Path
from typing import Callable

from zerochess.atomic import write_atomic
from zerochess.tune.params import format_number
from zerochess.tune.spsa import Outcome, Probe, Schedule, propose, update
from zerochess.tune.state import PLOT, TuneState, describe

log = logging.getLogger("zerochess.tune")

Objective = Callable[[Probe, int], Outcome]   # (probe, games) -> outcome for the plus side
PLOT_EVERY_S = 60.0


def record(state: TuneState, probe: Probe, outcome: Outcome, theta: list[float]) -> dict:
    """One iteration's line of history.jsonl (deterministic: no clock in it)."""
    params = state.config.params

    def by_name(values, send=False):
        return {p.name: (p.send(v) if send else v) for p, v in zip(params, values)}

    return {"k": probe.k, "t": probe.t, "delta": by_name(probe.delta), "c": by_name(probe.c),
            "a": by_name(probe.a), "plus": by_name(probe.plus, True),
            "minus": by_name(probe.minus, True), "wins": outcome.wins, "draws": outcome.draws,
            "losses": outcome.losses, "forfeits": outcome.forfeits, "result": outcome.result,
            "theta": by_name(theta)}


def run_tune(state: TuneState, out: str | os.PathLike, objective: Objective,
             on_iteration: Callable[[TuneState, dict], None] | None = None,
             plot_every_s: float = PLOT_EVERY_S) -> TuneState:
    """Play the iterations from ``state.k`` to the end, saving the state after each; then
    the plot. A kill loses at most the iteration in flight."""
    config = state.config
    out = Path(out)
    schedule = Schedule(config.iterations * config.pairs)
    last_plot = time.monotonic()
    while not state.done:
        probe = propose(config.params, state.theta, state.k, config.pairs, schedule, config.seed)
        started = time.monotonic()
        outcome = objective(probe, 2 * config.pairs)
        theta = update(config.params, state.theta, probe, outcome.result)
        entry = record(state, probe, outcome, theta)
        state.theta, state.k = theta, state.k + 1
        state.history.append(entry)
        state.save(out)
        state.append_history(out, entry)
        log.info("iteration %d/%d: %s vs %s: +%d =%d -%d%s, result %+d; theta %s (%.1f s)",
                 state.k, config.iterations, _sent(entry["plus"]), _sent(entry["minus"]),
                 outcome.wins, outcome.draws,
                 outcome.losses, f" ({outcome.forfeits} forfeits)" if outcome.forfeits else "",
                 outcome.result, describe(config.params, theta), time.monotonic() - started)
        if on_iteration:
            on_iteration(state, entry)
        if time.monotonic() - last_plot >= plot_every_s and not state.done:
            plot(state, out / PLOT)
            last_plot = time.monotonic()
    plot(state, out / PLOT)
    return state


def _sent(values: dict[str, str]) -> str:
    return " ".join(f"{name}={value}" for name, value in values.items())


def plot(state: TuneState, path: str | os.PathLike) -> bool:
    """Each parameter's theta by iteration over the band it was probed in (theta +- c),
    with its bounds dashed where they are near, in one PNG; False (with a warning) when
    matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.warning("matplotlib is not installed: no %s (pip install matplotlib)", path)
        return False
    params = state.config.params
    iterations = [0] + [r["k"] + 1 for r in state.history]
    fig, axes = plt.subplots(len(params), 1, figsize=(7, 1.1 + 1.9 * len(params)),
                             sharex=True, squeeze=False)
    for ax, p in zip(axes[:, 0], params):
        values = [p.start] + [r["theta"][p.name] for r in state.history]
        low = [p.clamp(x - r["c"][p.name]) for x, r in zip(values, state.history)]
        high = [p.clamp(x + r["c"][p.name]) for x, r in zip(values, state.history)]
        if state.history:
            ax.fill_between(iterations, low + low[-1:], high + high[-1:], step="post",
                            color="tab:blue",
                            alpha=0.12, linewidth=0, label="theta +- c")
        ax.plot(iterations, values, color="tab:blue", linewidth=1.2, label="theta")
        bottom, top = min(values + low), max(values + high)
        pad = 0.1 * (top - bottom) or 0.05 * (p.max - p.min)
        bottom, top = max(p.min, bottom - pad), min(p.max, top + pad)
        for bound in (p.min, p.max):
            if bottom - pad <= bound <= top + pad:
                ax.axhline(bound, color="grey", linestyle="--", linewidth=0.8)
        ax.set_ylim(bottom - pad / 2, top + pad / 2)
        ax.set_ylabel(p.name)
        ax.set_title(f"{p.name}: {format_number(p.start)} -> {format_number(values[-1])}  "
                     f"[{format_number(p.min)}, {format_number(p.max)}]", fontsize=9, loc="left")
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel("iteration")
    axes[-1, 0].set_xlim(0, max(state.config.iterations, 1))
    fig.suptitle(f"zerochess tune: {state.k}/{state.config.iterations} iterations, "
                 f"{state.config.pairs} pair(s) each", fontsize=10)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    write_atomic(path, lambda f: f.write(buffer.getvalue()))
    return True
