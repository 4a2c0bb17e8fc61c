"""Labelling throughput and cost: positions per second per core, positions per CPU-second
(the labeller's own CPU plus the teacher's), and the share of wall time spent outside the
teacher's search, for `zerochess train label`.

    python benchmarks/bench_label.py [--depth 7] [--multipv 4] [--games 6] [--repeats 3]
    python benchmarks/bench_label.py --depth 4 --multipv 4 --games 12 --repeats 5 --baseline 97206bf

Each run labels the same teacher games (one worker, one teacher thread) into a fresh
directory, in a fresh process: its CPU is the process's own (``getrusage`` of itself: the
labeller) and its reaped children's (the teacher). Positions per second per core is the
labeller's own figure (positions / the chunk's wall time); on a machine shared with other
jobs, wall time also counts the waits for a core, so the CPU figures are the steadier ones.
The teacher's search time is the wait from ``go`` sent to ``bestmove`` read, on our clock
(not the engine's ``info ... time``: Stockfish reports whole milliseconds plus one), so the
outside share, 1 - teacher time / wall time, is the labeller's own work.

``--baseline REV`` measures another revision's labeller in the same run, interleaved with
today's (baseline, current, baseline, ...), on the same games: REV's ``zerochess`` is taken
with ``git archive`` into a temporary directory, with today's built extensions (the native
board is not what is compared; REV must have the same Cython sources), and the medians and
ratios current / baseline are printed. Medians over the repeats.

Measured on the development machine (2 cores shared with a training run: only same-run
ratios mean anything), the asyncio driver (97206bf) against the pipe driver and native
position text that replaced it (docs/teacher.md, "Speed"):

    $ python benchmarks/bench_label.py --depth 4 --multipv 4 --games 24 --repeats 5 \\
          --baseline 97206bf
    baseline: depth 4 multipv 4, medians: 902.7 positions/s per core, 922.5 positions per
      CPU-second (labeller 515 us + teacher 569 us a position), outside-teacher share 41.3%
    current: depth 4 multipv 4, medians: 1457.9 positions/s per core, 1496.0 positions per
      CPU-second (labeller 130 us + teacher 535 us a position), outside-teacher share 19.6%
    current / baseline 97206bf: positions/s per core x1.62, positions per CPU-second x1.62,
      labeller CPU a position x0.25

At depth 7 (6 games, 3 repeats) the same comparison gives x1.11: the search dominates.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_once(depth: int, multipv: int, games: int) -> dict:
    """One labelling run in this process (the child's side): its figures as a dict."""
    import zerochess
    from zerochess.train.data.label import LabelConfig, label
    from zerochess.train.data.teacher import TeacherConfig, default_teacher_command
    teacher = TeacherConfig(command=default_teacher_command(), depth=depth, multipv=multipv)
    cfg = LabelConfig(teacher=teacher, games=games, games_per_chunk=games, seed=11, max_plies=120)
    out = Path(tempfile.mkdtemp(prefix="bench-label-"))
    def cpu(who) -> float:
        r = resource.getrusage(who)
        return r.ru_utime + r.ru_stime

    me, kids = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
    meta = label(cfg, out / "d", workers=1)  # the teacher has quit and been reaped on return
    driver = cpu(resource.RUSAGE_SELF) - me
    teacher_cpu = cpu(resource.RUSAGE_CHILDREN) - kids
    shutil.rmtree(out, ignore_errors=True)
    t = meta["timing"]
    n = t["positions_made"]
    return {"positions": n, "positions_per_second_per_core": t["positions_per_second_per_core"],
            "positions_per_cpu_second": round(n / (driver + teacher_cpu), 1),
            "labeller_cpu_us": round(1e6 * driver / n, 1),
            "teacher_cpu_us": round(1e6 * teacher_cpu / n, 1),
            "outside_teacher_share": t["outside_teacher_share"],
            "label_wall_seconds": t["wall_seconds"], "teacher_failures": t["teacher_failures"],
            "positions_skipped": t["positions_skipped"],
            "code": str(Path(zerochess.__file__).parent)}


def baseline_tree(rev: str) -> Path:
    """REV's ``zerochess`` package in a temporary directory, with today's built extensions."""
    changed = subprocess.run(["git", "diff", "--quiet", rev, "--", "*.pyx", "*.pxd"], cwd=ROOT)
    if changed.returncode != 0:
        sys.exit(f"{rev}'s Cython sources differ from today's: build that revision yourself")
    tree = Path(tempfile.mkdtemp(prefix="bench-label-base-"))
    archive = subprocess.run(["git", "archive", rev, "zerochess"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    tar = tree / "rev.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as f:
        f.extractall(tree, filter="data")
    tar.unlink()
    for ext in (ROOT / "zerochess").rglob("*.so"):
        shutil.copy2(ext, tree / ext.relative_to(ROOT))
    return tree


def child(code: Path, a: argparse.Namespace) -> dict:
    """One run in a fresh interpreter whose ``zerochess`` is the one under ``code``."""
    path = os.pathsep.join([str(code), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    out = subprocess.run([sys.executable, __file__, "--child", "--depth", str(a.depth),
                          "--multipv", str(a.multipv), "--games", str(a.games)],
                         env=env, check=True, capture_output=True, text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    if Path(result["code"]) != code / "zerochess":
        sys.exit(f"the child ran {result['code']}, not {code / 'zerochess'}")
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depth", type=int, default=7)
    ap.add_argument("--multipv", type=int, default=4)
    ap.add_argument("--games", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--baseline", metavar="REV", help="git revision to compare against")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(run_once(a.depth, a.multipv, a.games)))
        return
    sides = {"current": ROOT}
    if a.baseline:
        sides = {"baseline": baseline_tree(a.baseline), **sides}
    runs: dict[str, list[dict]] = {side: [] for side in sides}
    try:
        for r in range(a.repeats):
            for side, code in sides.items():
                res = child(code, a)
                runs[side].append(res)
                print(json.dumps({"repeat": r, "side": side,
                                  **{k: v for k, v in res.items() if k != "code"}}), flush=True)
    finally:
        if a.baseline:
            shutil.rmtree(sides["baseline"], ignore_errors=True)
    keys = ("positions_per_second_per_core", "positions_per_cpu_second", "labeller_cpu_us",
            "teacher_cpu_us", "outside_teacher_share")
    med = {side: {k: statistics.median(x[k] for x in rs) for k in keys}
           for side, rs in runs.items()}
    for side, m in med.items():
        print(f"{side}: depth {a.depth} multipv {a.multipv}, medians: "
              f"{m['positions_per_second_per_core']:.1f} positions/s per core, "
              f"{m['positions_per_cpu_second']:.1f} positions per CPU-second (labeller "
              f"{m['labeller_cpu_us']:.0f} us + teacher {m['teacher_cpu_us']:.0f} us a position), "
              f"outside-teacher share {m['outside_teacher_share']:.1%}")
    if a.baseline:
        b, c = med["baseline"], med["current"]
        print(f"current / baseline {a.baseline}: positions/s per core x"
              f"{c['positions_per_second_per_core'] / b['positions_per_second_per_core']:.2f}, "
              f"positions per CPU-second x"
              f"{c['positions_per_cpu_second'] / b['positions_per_cpu_second']:.2f}, "
              f"labeller CPU a position x{c['labeller_cpu_us'] / b['labeller_cpu_us']:.2f}")


if __name__ == "__main__":
    main()
