"""Plots of a self-play run's ratings (RUN_DIR/elo.jsonl -> RUN_DIR/elo.png).

``elo.jsonl`` has one JSON object per evaluation (iteration): the candidate, the gate's
score, the best network after it and the ratings of every checkpoint rated so far, refitted
from all evaluation games (``zerochess.train.selfplay.ratings``). `zerochess train report` calls
``plot_elo``; the self-play loop also calls it after every evaluation.
"""

from __future__ import annotations

import os
from pathlib import Path

from zerochess.train.common.jsonl import read_jsonl


def read_elo(run_dir: str | os.PathLike) -> list[dict]:
    return read_jsonl(Path(run_dir) / "elo.jsonl")


def plot_elo(run_dir: str | os.PathLike) -> list[Path]:
    """Write RUN_DIR/elo.png (nothing, and return [], for a run without elo.jsonl).

    Left: every checkpoint's rating from the latest fit, with 95% error bars, the
    checkpoints that became the best drawn filled. Right: each gate's score with the
    promotion line."""
    records = read_elo(run_dir)
    if not records:
        return []
    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    last = records[-1]
    ratings = sorted(last["ratings"], key=lambda r: r["iteration"])
    promoted = {r["candidate"] for r in records if r.get("promoted")} | {ratings[0]["name"]}
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.6))
    for filled in (True, False):
        rs = [r for r in ratings if (r["name"] in promoted) == filled]
        if rs:
            a1.errorbar([r["iteration"] for r in rs], [r["elo"] for r in rs],
                        yerr=[r["error"] for r in rs], fmt="o", capsize=3, ms=5,
                        mfc=None if filled else "white", label="became best" if filled else "not promoted")
    a1.set_xlabel("iteration")
    a1.set_ylabel(f"Elo (vs {ratings[0]['name']} = 0)")
    a1.set_title(f"ratings from {last['games_total']} evaluation games")
    a1.legend(fontsize=8)
    a2.plot([r["iteration"] for r in records], [100 * r["gate_score"] for r in records], "o-", ms=4)
    a2.axhline(100 * last["promote_score"], ls="--", c="gray", lw=1)
    a2.set_xlabel("iteration")
    a2.set_ylabel("score vs best, %")
    for a in (a1, a2):
        a.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    a2.set_title("gating matches")
    fig.tight_layout()
    out = Path(run_dir) / "elo.png"
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return [out]


def summarize_elo(run_dir: str | os.PathLike) -> str:
    """One line on the latest evaluation ('' without elo.jsonl)."""
    records = read_elo(run_dir)
    if not records:
        return ""
    last = records[-1]
    best = next(r for r in last["ratings"] if r["name"] == last["best"])
    return (f"iteration {last['iteration']}: {last['candidate']} scored "
            f"{100 * last['gate_score']:.1f}% vs {last['gate_opponent']}; best {last['best']} "
            f"at {best['elo']:+.0f} +- {best['error']:.0f} Elo")
