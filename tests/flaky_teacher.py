"""A UCI teacher that fails on purpose, for the labelling tests.

    python tests/flaky_teacher.py MODE EVERY

It answers ``go`` with one ``info ... multipv k score cp S pv MOVE`` line per requested line
(the first legal moves in sorted UCI order, scores falling by 30 cp) and ``bestmove``; but
every EVERY-th ``go`` of the process it fails by MODE: ``crash`` exits, ``hang`` never
answers, ``garbage`` answers with a move that is not legal. A restarted process counts
from zero again, so a retry of the same position succeeds. ``slow`` never fails: it takes
EVERY milliseconds over each ``go`` and still reports ``time 1``.
"""

import sys
import time

from broken_engine import apply_position  # this directory is on sys.path when run as a script

mode = sys.argv[1] if len(sys.argv) > 1 else "crash"
every = int(sys.argv[2]) if len(sys.argv) > 2 else 5
board = apply_position(["position", "startpos"])
multipv = 1
goes = 0
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "uci":
        print("id name flaky-teacher\noption name MultiPV type spin default 1 min 1 max 500\n"
              "option name Threads type spin default 1 min 1 max 1\n"
              "option name Hash type spin default 16 min 1 max 16\nuciok", flush=True)
    elif words[0] == "isready":
        print("readyok", flush=True)
    elif words[:3] == ["setoption", "name", "MultiPV"]:
        multipv = int(words[-1])
    elif words[0] == "position":
        board = apply_position(words)
    elif words[0] == "go":
        goes += 1
        if mode == "slow":
            time.sleep(every / 1000)
        elif goes % every == 0:
            if mode == "crash":
                sys.exit(3)
            if mode == "hang":
                continue
            if mode == "garbage":
                print("info depth 1 multipv 1 score cp 0 pv e2e5\nbestmove e2e5", flush=True)
                continue
        legal = sorted(m.uci() for m in board.legal_moves)
        for k, uci in enumerate(legal[:multipv]):
            print(f"info depth 1 multipv {k + 1} score cp {50 - 30 * k} nodes 1 time 1 pv {uci}",
                  flush=True)
        print(f"bestmove {legal[0]}", flush=True)
    elif words[0] == "quit":
        break
