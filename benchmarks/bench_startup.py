"""Start-up of the engine as a GUI sees it: seconds from launch to ``uciok``, then what
``isready`` and the first ``go`` cost.

For each command (the pip-installed ``zerochess``, the one-folder build
dist/zerochess/zerochess, and the one-file build dist/zerochess-onefile when present), the
launches are interleaved round-robin so that machine load hits every command alike:

* ``uciok``: launch -> ``uci`` -> ``uciok``, median (min-max) of ``--launches`` launches;
* ``readyok``: ``isready`` -> ``readyok`` with the shipped network (onnxruntime is imported
  and the ``.onnx`` network loaded here, never before ``uciok`` and never inside ``go``;
  no torch), and ``launch -> readyok``, what a GUI waits for in all (sent right after
  ``uciok``);
* ``go 1`` / ``go 2``: ``go nodes N`` -> ``bestmove`` for the first search after
  ``isready`` and for a second one. If the first ``go`` waited for the network, ``go 1``
  would exceed ``go 2`` by the load time;
* CPU seconds (user + system, the process's own, from ``wait4``) of two more launches each,
  given all their input at once: ``uci``, ``quit`` and ``uci``, ``isready``, ``quit``. On a
  loaded machine the wall-clock figures measure the load as much as the engine; the CPU
  time is what they would be on an idle one, less the reading of files from disk. The
  load average is printed beside the figures.

    python benchmarks/bench_startup.py [--launches 10] [--nodes 64] [--command NAME=PATH ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def launch(command: list[str], nodes: int, timeout: float = 120.0) -> dict[str, float]:
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)
    times = {}

    def ask(line: str, answer: str) -> float:
        sent = time.perf_counter()
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        for out in proc.stdout:
            if out.startswith(answer):
                return time.perf_counter() - sent
            if time.perf_counter() - started > timeout:
                break
        raise RuntimeError(f"{command}: no {answer!r} after {line!r}")

    try:
        proc.stdin.write("uci\n")
        proc.stdin.flush()
        for out in proc.stdout:
            if out.startswith("uciok"):
                break
        times["uciok"] = time.perf_counter() - started
        times["readyok"] = ask("isready", "readyok")
        times["launch -> readyok"] = time.perf_counter() - started
        proc.stdin.write("position startpos\n")
        times["go 1"] = ask(f"go nodes {nodes}", "bestmove")
        proc.stdin.write("position startpos moves e2e4\n")
        times["go 2"] = ask(f"go nodes {nodes}", "bestmove")
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return times


def cpu_seconds(command: list[str], script: str, timeout: float = 120.0) -> float:
    """User + system CPU seconds of one launch fed ``script`` at once (to its end: ``quit``)."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write(script.encode())
        proc.stdin.close()
        deadline = time.monotonic() + timeout
        while True:  # wait4 reports the child's own CPU time, not the whole family's
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{command}: did not quit after {script!r}")
            time.sleep(0.005)
    finally:
        if proc.returncode is None:
            proc.kill()
            proc.wait()
    return usage.ru_utime + usage.ru_stime


CPU_SCRIPTS = {"CPU uci, quit": "uci\nquit\n", "CPU uci, isready, quit": "uci\nisready\nquit\n"}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--command", action="append", default=[], metavar="NAME=PATH",
                        help="an engine to time (default: pip command, folder and one-file builds)")
    args = parser.parse_args(argv)

    commands = {}
    for spec in args.command:
        name, _, path = spec.partition("=")
        commands[name] = path.split()
    if not commands:
        pip = shutil.which("zerochess")
        if pip:
            commands["pip-installed zerochess"] = [pip]
        for name, path in [("folder build", ROOT / "dist" / "zerochess" / "zerochess"),
                           ("one-file build", ROOT / "dist" / "zerochess-onefile")]:
            if path.is_file():
                commands[name] = [str(path)]
    results = {name: [] for name in commands}
    load_before = os.getloadavg()
    for _ in range(args.launches):
        for name, command in commands.items():
            times = launch(command, args.nodes)
            for key, script in CPU_SCRIPTS.items():
                times[key] = cpu_seconds(command, script)
            results[name].append(times)
    load_after = os.getloadavg()

    print(f"{args.launches} launches each, interleaved; seconds, median (min-max); go = go nodes {args.nodes}")
    print(f"load average (1 min) {load_before[0]:.2f} before, {load_after[0]:.2f} after, on "
          f"{os.cpu_count()} CPUs")
    keys = ("uciok", "readyok", "launch -> readyok", "go 1", "go 2")
    heads = ("launch -> uciok", "isready -> readyok", "launch -> readyok", "go 1 -> bestmove",
             "go 2 -> bestmove")
    def table(title, columns, keys, width):
        """One row per command: each key's median (min-max) over the launches."""
        print(f"{title:<26}" + "".join(f"{c:>{width}}" for c in columns))
        for name, runs in results.items():
            cells = []
            for key in keys:
                values = [r[key] for r in runs]
                cells.append(f"{statistics.median(values):.3f} ({min(values):.2f}-{max(values):.2f})")
            print(f"{name:<26}" + "".join(f"{c:>{width}}" for c in cells))

    table("command", heads, keys, 22)
    table("CPU seconds (user+sys)", [k[4:] for k in CPU_SCRIPTS], CPU_SCRIPTS, 26)
    folder, pip = results.get("folder build"), results.get("pip-installed zerochess")
    if folder and pip:
        ratio = statistics.median(r["uciok"] for r in folder) / statistics.median(r["uciok"] for r in pip)
        print(f"folder build / pip command, median launch -> uciok: {ratio:.2f}x")
    if folder:  # issue 29's targets for the executable
        uciok = statistics.median(r["uciok"] for r in folder)
        ready = statistics.median(r["launch -> readyok"] for r in folder)
        print(f"folder build targets: uciok {uciok:.3f} s (target < 0.3), readyok "
              f"{ready:.3f} s after launch (target < 0.5); CPU "
              f"{statistics.median(r['CPU uci, quit'] for r in folder):.3f} s and "
              f"{statistics.median(r['CPU uci, isready, quit'] for r in folder):.3f} s")


if __name__ == "__main__":
    main()
