"""Labelling throughput: positions per second per core, and the share of wall time spent
outside the teacher's search (target < 10%), for `zerochess train label`.

    python benchmarks/bench_label.py [--depth 7] [--multipv 4] [--games 6] [--repeats 3]

Each repeat labels the same teacher games (one worker, one teacher thread) into a fresh
directory. The teacher's search time is the wait from ``go`` sent to ``bestmove`` read, on
our clock (not the engine's ``info ... time``: Stockfish reports whole milliseconds plus one,
more than the whole search at depth 4), so the outside share, 1 - teacher time / wall time,
is the labeller's own work: python-chess, the native board, the records, the shards. The
baseline, measured in the same run, is that wait.
Medians over the repeats.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from zerochess.train.data.label import LabelConfig, label
from zerochess.train.data.teacher import TeacherConfig, default_teacher_command


def run_label(cfg: LabelConfig) -> tuple[dict, Path]:
    out = Path(tempfile.mkdtemp(prefix="bench-label-"))
    t = time.perf_counter()
    meta = label(cfg, out / "d", workers=1)
    meta["timing"]["total_wall"] = time.perf_counter() - t
    return meta, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depth", type=int, default=7)
    ap.add_argument("--multipv", type=int, default=4)
    ap.add_argument("--games", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    teacher = TeacherConfig(command=default_teacher_command(), depth=a.depth, multipv=a.multipv)
    cfg = LabelConfig(teacher=teacher, games=a.games, games_per_chunk=a.games, seed=11, max_plies=120)
    rates, outside = [], []
    for r in range(a.repeats):
        meta, out = run_label(cfg)
        t = meta["timing"]
        n = t["positions_made"]
        rates.append(t["positions_per_second_per_core"])
        outside.append(t["outside_teacher_share"])
        print(json.dumps({"repeat": r, "positions": n, "positions_per_second_per_core": rates[-1],
                          "outside_teacher_share": outside[-1],
                          "label_wall_seconds": t["wall_seconds"]}), flush=True)
        shutil.rmtree(out, ignore_errors=True)
    print(f"depth {a.depth} multipv {a.multipv}: median {statistics.median(rates):.1f} positions/s "
          f"per core, outside-teacher share {statistics.median(outside):.1%} (target < 10%)")


if __name__ == "__main__":
    main()
