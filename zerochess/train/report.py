"""`zerochess train report`: plots and a text summary of a run's metrics.jsonl.

Writes RUN_DIR/losses.png (training losses with the validation loss), RUN_DIR/validation.png
(one panel per validation metric, seed targets drawn as dashed lines), RUN_DIR/speed.png
(samples/s and the loader-wait share) and RUN_DIR/summary.txt, all against optimizer steps.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# Seed §1.5.3 targets: (comparison, value). Shown on the plots and checked in the summary.
TARGETS = {"legal_top1": (">", 0.95), "exact": (">", 0.15), "top5": (">", 0.40),
           "value_mse": ("<", 0.5), "illegal_mass": ("<", 0.01)}
LOSS_KEYS = ("loss", "policy_loss", "value_loss", "illegal_mass")


class ReportError(ValueError):
    """The run directory has nothing to report; the message names the file."""


def read_metrics(run_dir: str | os.PathLike) -> tuple[list[dict], list[dict]]:
    path = Path(run_dir) / "metrics.jsonl"
    if not path.is_file():
        raise ReportError(f"{path}: no metrics (is this a `train supervise` run directory?)")
    train, val = [], []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as e:
            raise ReportError(f"{path}:{n}: not JSON ({e})") from e
        (val if rec.get("type") == "val" else train).append(rec)
    if not train and not val:
        raise ReportError(f"{path}: empty")
    return train, val


def summarize(train: list[dict], val: list[dict]) -> str:
    lines = []
    if train:
        t = train[-1]
        speed = sum(r["samples_per_s"] for r in train) / len(train)
        wait = sum(r["loader_wait_share"] for r in train) / len(train)
        lines.append(f"step {t['step']} (epoch {t['epoch']}): train loss {t['loss']:.4f} "
                     f"(policy {t['policy_loss']:.4f}, value {t['value_loss']:.4f}, "
                     f"illegal mass {t['illegal_mass']:.4f})")
        lines.append(f"speed: {speed:.0f} samples/s, loader wait {100 * wait:.1f}% of step time")
    if val:
        v = val[-1]
        best = min(val, key=lambda r: r["loss"])
        lines.append(f"last validation (step {v['step']}):")
        for k in ("loss", "legal_top1", "exact", "top5", "mate_top1", "value_mse",
                  "illegal_mass", "legal_gen_raw_illegal", "legal_gen_masked_illegal"):
            if k in v:
                mark = ""
                if k in TARGETS:
                    op, target = TARGETS[k]
                    ok = v[k] > target if op == ">" else v[k] < target
                    mark = f"  (target {op} {target}: {'met' if ok else 'not met'})"
                lines.append(f"  {k:26s} {v[k]:.4f}{mark}")
        lines.append(f"best validation loss {best['loss']:.4f} at step {best['step']}")
    return "\n".join(lines)


def make_report(run_dir: str | os.PathLike) -> tuple[str, list[Path]]:
    """Write the PNGs and summary.txt; return (summary text, PNG paths)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run_dir = Path(run_dir)
    train, val = read_metrics(run_dir)
    pngs = []

    fig, axes = plt.subplots(1, len(LOSS_KEYS), figsize=(4 * len(LOSS_KEYS), 3.2))
    for ax, key in zip(axes, LOSS_KEYS):
        ax.plot([r["step"] for r in train], [r[key] for r in train], label="train", lw=1)
        if val and key in val[0]:
            ax.plot([r["step"] for r in val], [r[key] for r in val], "o-", label="val", ms=3)
        ax.set_title(key)
        ax.set_xlabel("step")
        ax.legend()
        if key == "illegal_mass":
            ax.set_yscale("log")
    fig.tight_layout()
    pngs.append(run_dir / "losses.png")
    fig.savefig(pngs[-1], dpi=90)
    plt.close(fig)

    if val:
        keys = [k for k in val[-1] if k not in ("type", "step", "epoch")]
        cols = 4
        rows = -(-len(keys) // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
        for ax, key in zip(axes.flat, keys):
            pts = [(r["step"], r[key]) for r in val if key in r]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3)
            if key in TARGETS:
                ax.axhline(TARGETS[key][1], ls="--", c="gray", lw=1)
            ax.set_title(key)
            ax.set_xlabel("step")
        for ax in list(axes.flat)[len(keys):]:
            ax.axis("off")
        fig.tight_layout()
        pngs.append(run_dir / "validation.png")
        fig.savefig(pngs[-1], dpi=90)
        plt.close(fig)

    if train:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3.2))
        a1.plot([r["step"] for r in train], [r["samples_per_s"] for r in train])
        a1.set_title("samples/s")
        a2.plot([r["step"] for r in train], [100 * r["loader_wait_share"] for r in train])
        a2.set_title("loader wait, % of step time")
        for a in (a1, a2):
            a.set_xlabel("step")
        fig.tight_layout()
        pngs.append(run_dir / "speed.png")
        fig.savefig(pngs[-1], dpi=90)
        plt.close(fig)

    from zerochess.train.selfplay.elo_report import plot_elo  # self-play runs: elo.png
    pngs += plot_elo(run_dir)
    text = summarize(train, val)
    (run_dir / "summary.txt").write_text(text + "\n")
    return text, pngs
