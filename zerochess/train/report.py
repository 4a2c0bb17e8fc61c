"""`zerochess train report`: plots and a text summary of a run's metrics.jsonl.

Writes RUN_DIR/losses.png (training losses with the validation loss), RUN_DIR/validation.png
(one panel per validation metric, seed targets drawn as dashed lines), RUN_DIR/speed.png
(samples/s and the loader-wait share) and RUN_DIR/summary.txt, all against optimizer steps.

Any run directory: `train supervise` and `train selfplay` runs (records typed "train" and
"val"), and the older runs of experiments/distill.py, whose records have no type (train and
validation fields side by side, ``val_top1`` ...): ``read_metrics`` splits those into the
same two kinds under today's names. A field a run did not log is left out of its plots.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# Seed §1.5.3 targets: (comparison, value). Shown on the plots and checked in the summary.
TARGETS = {"legal_top1": (">", 0.95), "exact": (">", 0.15), "top5": (">", 0.40),
           "value_mse": ("<", 0.5), "illegal_mass": ("<", 0.01)}
LOSS_KEYS = ("loss", "policy_loss", "value_loss", "illegal_mass")


#: experiments/distill.py's untyped records: {its field: today's name} for the train part
#: and for the validation part (its top1 and value_err are the teacher metrics).
OLD_TRAIN = {"train_policy": "policy_loss", "train_value": "value_loss", "lr": "lr"}
OLD_VAL = {"val_policy_ce": "policy_loss", "val_value_ce": "value_loss",
           "val_top1": "teacher_top1", "val_value_err": "expected_score_error",
           "val_illegal_mass": "illegal_mass"}


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
        if not isinstance(rec, dict) or not isinstance(rec.get("step"), (int, float)):
            raise ReportError(f"{path}:{n}: not a metrics record (no step)")
        if "type" not in rec:  # experiments/distill.py
            for fields, out in ((OLD_TRAIN, train), (OLD_VAL, val)):
                part = {new: rec[old] for old, new in fields.items() if old in rec}
                if part:
                    out.append({"step": rec["step"], **part})
        elif rec["type"] in ("train", "val"):
            (val if rec["type"] == "val" else train).append(rec)
    if not train and not val:
        raise ReportError(f"{path}: empty")
    return train, val


def val_score(r: dict) -> float:
    """What a run's best.pt minimised: the validation loss, or for distill's runs the
    policy plus value cross-entropy."""
    return r["loss"] if "loss" in r else r.get("policy_loss", 0.0) + r.get("value_loss", 0.0)


def mean(records: list[dict], key: str) -> float | None:
    vals = [r[key] for r in records if key in r]
    return sum(vals) / len(vals) if vals else None


def summarize(train: list[dict], val: list[dict]) -> str:
    lines = []
    if train:
        t = train[-1]
        epoch = f" (epoch {t['epoch']})" if "epoch" in t else ""
        parts = ", ".join(f"{name} {t[k]:.4f}" for name, k in (
            ("loss", "loss"), ("policy", "policy_loss"), ("value", "value_loss"),
            ("illegal mass", "illegal_mass")) if k in t)
        lines.append(f"step {t['step']}{epoch}: train {parts}")
        speed, wait = mean(train, "samples_per_s"), mean(train, "loader_wait_share")
        if speed is not None:
            lines.append(f"speed: {speed:.0f} samples/s" + (
                f", loader wait {100 * wait:.1f}% of step time" if wait is not None else ""))
    if val:
        v = val[-1]
        best = min(val, key=val_score)
        lines.append(f"last validation (step {v['step']}):")
        for k in ("loss", "policy_loss", "value_loss", "teacher_top1", "expected_score_error",
                  "legal_top1", "exact", "top5", "mate_top1", "value_mse",
                  "illegal_mass", "legal_gen_raw_illegal", "legal_gen_masked_illegal"):
            if k in v:
                mark = ""
                if k in TARGETS:
                    op, target = TARGETS[k]
                    ok = v[k] > target if op == ">" else v[k] < target
                    mark = f"  (target {op} {target}: {'met' if ok else 'not met'})"
                lines.append(f"  {k:26s} {v[k]:.4f}{mark}")
        what = "loss" if "loss" in best else "policy + value CE"
        lines.append(f"best validation {what} {val_score(best):.4f} at step {best['step']}")
    return "\n".join(lines)


def make_report(run_dir: str | os.PathLike) -> tuple[str, list[Path]]:
    """Write the PNGs and summary.txt; return (summary text, PNG paths)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run_dir = Path(run_dir)
    train, val = read_metrics(run_dir)
    pngs = []

    keys = [k for k in LOSS_KEYS if any(k in r for r in train + val)]
    if keys:
        fig, axes = plt.subplots(1, len(keys), figsize=(4 * len(keys), 3.2), squeeze=False)
        for ax, key in zip(axes.flat, keys):
            for recs, style, label in ((train, "-", "train"), (val, "o-", "val")):
                pts = [(r["step"], r[key]) for r in recs if key in r]
                if pts:
                    ax.plot(*zip(*pts), style, label=label, ms=3, lw=1)
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
        keys = list(dict.fromkeys(k for r in val for k, v in r.items()
                                  if k not in ("type", "step", "epoch")
                                  and isinstance(v, (int, float))))
        cols = 4
        rows = -(-len(keys) // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
        for ax, key in zip(axes.flat, keys):
            pts = [(r["step"], r[key]) for r in val if isinstance(r.get(key), (int, float))]
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

    speed = [r for r in train if "samples_per_s" in r and "loader_wait_share" in r]
    if speed:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3.2))
        a1.plot([r["step"] for r in speed], [r["samples_per_s"] for r in speed])
        a1.set_title("samples/s")
        a2.plot([r["step"] for r in speed], [100 * r["loader_wait_share"] for r in speed])
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
