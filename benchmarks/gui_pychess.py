"""zerochess inside a real chess GUI: Debian's PyChess under Xvfb.

PyChess is started on a private X display (Xvfb, no TCP listener) with a fresh user profile
in which zerochess is a configured UCI engine (as the engines dialog leaves it: name,
protocol, path; PyChess starts it at launch to read its options) and a one-game PGN to open.
The script then clicks through PyChess's own dialog with xdotool as a user would: open the
game, choose zerochess for White and for Black, a 5-minute blitz clock, Start Game. PyChess
then has zerochess play on from move 5.

The check is made from the GUI's side, in PyChess's debug log of the engine's pipes: PyChess
sent ``uci``, ``isready``, ``position`` and ``go wtime ... btime ...``; zerochess answered
``uciok``, ``readyok``, ``info`` lines with a ``pv`` and at least ``--moves`` ``bestmove``s
that PyChess applied to its board; no ``info string error`` and no failed discovery. A
screenshot of the screen goes to ``--screenshot``.

    apt-get install xvfb xdotool pychess
    python benchmarks/gui_pychess.py --engine dist/zerochess/zerochess --screenshot docs/gui-pychess.png

Exit status 0 when every check passed, 1 when one failed, 2 when PyChess, Xvfb or xdotool is
missing. tests/test_gui_pychess.py (slow) runs it against the folder build. The click
positions are those of PyChess 1.0.3 (Debian bookworm) on a 1280x800 screen.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYCHESS = "/usr/games/pychess"
GAME = """[Event "zerochess GUI test"]
[Site "Xvfb"]
[Date "2024.01.01"]
[Round "1"]
[White "White"]
[Black "Black"]
[Result "*"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 *
"""


def md5_of(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def write_profile(home: Path, engine: Path) -> None:
    """A PyChess profile as a user leaves it after adding zerochess in the engines dialog
    (name, protocol, command; PyChess re-reads the options on start) and choosing it as the
    hint analyser; no start-up dialogs."""
    config_dir = home / ".config" / "pychess"
    config_dir.mkdir(parents=True)
    (home / ".local" / "share" / "pychess").mkdir(parents=True)
    entry = {"name": "zerochess", "protocol": "uci", "command": str(engine),
             "workingDirectory": str(engine.parent), "recheck": True,
             "country": "unknown", "comment": "", "level": 20}
    (config_dir / "engines.json").write_text(json.dumps([entry], indent=1))
    (config_dir / "config").write_text(
        "[General]\n"
        "show_tip_at_startup = False\n"
        "dont_show_externals_at_startup = True\n"
        "analyzer_check = True\n"
        f"ana_combobox = {md5_of(engine)}\n"
        "inv_analyzer_check = False\n"
        "[FICS]\n[ICC]\n")


# Where PyChess 1.0.3 (Debian bookworm) puts things on a 1280x800 screen with no window
# manager: the main window at (320, 5), the "Enter Game Notation" dialog over it.
GAME_ROW = (380, 153)          # first game in the database view (double-click opens the dialog)
BLACK_PLAYER = (634, 173)      # the Black player's combo box ...
BLACK_ZEROCHESS = (600, 239)   # ... and its "zerochess" entry
WHITE_PLAYER = (634, 135)      # the dialog grows a strength slider under Black: White's combo
WHITE_ZEROCHESS = (600, 201)
BLITZ = (457, 333)             # "Blitz 5 min": PyChess sends go wtime/btime
START_GAME = (903, 565)


def start_engine_game(env: dict) -> None:
    """Open the game from the database view and start it with zerochess playing both sides
    on a 5-minute clock, by clicking through PyChess's dialog as a user does."""
    xdotool = shutil.which("xdotool")
    steps = [(GAME_ROW, 2), (BLACK_PLAYER, 1), (BLACK_ZEROCHESS, 1), (WHITE_PLAYER, 1),
             (WHITE_ZEROCHESS, 1), (BLITZ, 1), (START_GAME, 1)]
    for (x, y), clicks in steps:
        subprocess.run([xdotool, "mousemove", str(x), str(y), "click", "--repeat", str(clicks),
                        "--delay", "120", "1"], env=env, capture_output=True, timeout=30)
        time.sleep(1.5)


def free_display() -> int:
    for n in range(90, 200):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return n
    raise RuntimeError("no free X display number")


def engine_lines(log_text: str) -> list[str]:
    """The engine's pipe traffic as PyChess logged it (the task column is the engine's
    file name, capitalised)."""
    return [line for line in log_text.splitlines() if "Zerochess" in line]


def applied_moves(log_text: str) -> list[str]:
    """The zerochess moves PyChess applied to its board."""
    return re.findall(r"Zerochess.*__parseLine: applied move=(\S+)", log_text)


def check(log_text: str, moves: int = 6) -> list[str]:
    """Failed checks (an empty list: all passed)."""
    lines = engine_lines(log_text)
    text = "\n".join(lines)
    failures = []
    for what, pattern in [
        ("PyChess sent uci", r"DEBUG: uci$"),
        ("zerochess answered uciok", r"DEBUG: uciok$"),
        ("zerochess declared WeightsFile", r"option name WeightsFile type string"),
        ("PyChess sent isready", r"DEBUG: isready$"),
        ("zerochess answered readyok", r"DEBUG: readyok$"),
        ("PyChess sent a position", r"DEBUG: position (startpos|fen) "),
        ("PyChess sent go with the clocks", r"DEBUG: go wtime \d+ .*btime \d+"),
        ("zerochess sent a principal variation", r"DEBUG: info .*\bpv [a-h][1-8][a-h][1-8]"),
    ]:
        if not re.search(pattern, text, re.MULTILINE):
            failures.append(what)
    played = applied_moves(log_text)
    if len(played) < moves:
        failures.append(f"PyChess applied {len(played)} zerochess moves, fewer than {moves}")
    if "info string error" in text:
        failures.append("zerochess reported an error: " + next(
            l for l in lines if "info string error" in l))
    if re.search(r"Engine zerochess failed discovery|not went well on engine zerochess", log_text):
        failures.append("PyChess says the engine failed discovery")
    return failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", type=Path, default=ROOT / "dist" / "zerochess" / "zerochess",
                        help="the UCI engine executable PyChess runs (default: the folder build)")
    parser.add_argument("--screenshot", type=Path, default=ROOT / "docs" / "gui-pychess.png")
    parser.add_argument("--seconds", type=float, default=120.0,
                        help="the most PyChess runs (it stops once every check has passed)")
    parser.add_argument("--moves", type=int, default=6, help="zerochess moves PyChess must apply")
    parser.add_argument("--keep", type=Path, help="copy PyChess's profile and logs here")
    args = parser.parse_args(argv)

    xvfb = shutil.which("Xvfb")
    if not (xvfb and shutil.which("xdotool") and Path(PYCHESS).is_file()):
        print("skip: needs Xvfb, xdotool and PyChess (apt-get install xvfb xdotool pychess)")
        return 2
    engine = args.engine.resolve()
    if not os.access(engine, os.X_OK):
        print(f"no engine executable at {engine}")
        return 1

    with tempfile.TemporaryDirectory(prefix="zerochess-pychess-") as tmp:
        home = Path(tmp)
        write_profile(home, engine)
        game = home / "game.pgn"
        game.write_text(GAME)
        display = free_display()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "DBUS_", "WAYLAND"))}
        env.update(HOME=str(home), DISPLAY=f":{display}", LANG="C.UTF-8", LC_ALL="C.UTF-8",
                   NO_AT_BRIDGE="1", GTK_A11Y="none",
                   # the engine is found by its path, as a GUI user adds it: no other engines
                   PATH="/usr/bin:/bin")
        server = subprocess.Popen([xvfb, f":{display}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        gui = None
        try:
            deadline = time.monotonic() + 20
            while not Path(f"/tmp/.X11-unix/X{display}").exists():
                if time.monotonic() > deadline or server.poll() is not None:
                    print("Xvfb did not start")
                    return 1
                time.sleep(0.1)
            started = time.monotonic()
            gui_out = open(home / "pychess-stdout.txt", "w")
            gui = subprocess.Popen(["/usr/bin/python3", PYCHESS, "--log-debug", "--no-version-check",
                                    "--no-gettext", str(game)],
                                   env=env, cwd=tmp, stdout=gui_out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
            logs = home / ".local" / "share" / "pychess"
            log_text, failures = "", ["PyChess wrote no log"]
            clicked = False
            while time.monotonic() - started < args.seconds:
                time.sleep(1.0)
                if gui.poll() is not None:
                    break
                log_text = "".join(p.read_text(errors="replace") for p in sorted(logs.glob("*.log")))
                # PyChess opens a file given on its command line in its database view, once
                # it has discovered its engines (started each and read its options).
                if not clicked and "INSERT INTO game" in log_text and "Engine finished zerochess" in log_text:
                    time.sleep(2.0)
                    start_engine_game(env)
                    clicked = True
                failures = check(log_text, args.moves)
                if not failures:
                    break  # enough moves played: look at the board and the engines' output
            time.sleep(3.0)
            args.screenshot.parent.mkdir(parents=True, exist_ok=True)
            from PIL import ImageGrab
            screen = ImageGrab.grab(xdisplay=f":{display}")
            box = screen.convert("L").getbbox()  # the windows, without the empty black screen
            (screen.crop(box) if box else screen).save(args.screenshot)
            log_text = "".join(p.read_text(errors="replace") for p in sorted(logs.glob("*.log")))
            failures = check(log_text, args.moves)
            if gui.poll() is not None:
                failures.append(f"PyChess exited early with status {gui.returncode}")
        finally:
            if gui is not None and gui.poll() is None:
                os.killpg(gui.pid, signal.SIGTERM)
                try:
                    gui.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(gui.pid, signal.SIGKILL)
                    gui.wait()
            server.terminate()
            server.wait(timeout=10)
            if args.keep:
                shutil.copytree(home, args.keep, dirs_exist_ok=True)

    lines = engine_lines(log_text)
    sent = sum(1 for l in lines if re.search(r"\binfo .*\bpv ", l))
    played = applied_moves(log_text)
    print(f"PyChess logged {len(lines)} lines of zerochess traffic, {sent} info lines with a pv; "
          f"zerochess moves applied by PyChess: {' '.join(played)}")
    for line in [l for l in lines if re.search(r"DEBUG: (uciok|readyok|position|go|bestmove)\b", l)][:14]:
        print("  " + line.strip()[:160])
    print(f"screenshot: {args.screenshot}")
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    print("PASSED: zerochess played in PyChess")
    return 0


if __name__ == "__main__":
    sys.exit(main())
