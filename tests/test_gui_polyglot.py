"""Debian's polyglot adapter (xboard to UCI, what xboard users and some bots put in front of
a UCI engine) plays a whole game with zerochess: the adapter's `go wtime ... btime ...`,
`position startpos moves ...` and `stop` lines, answered in time and legally, until the game
ends (python-chess judges; the opponent is a seeded random mover). Skipped where polyglot
is not installed (CI installs it: .ci/run)."""

import random
import shutil
import sys
import time
from pathlib import Path

import chess
import pytest

from uci_process import UciProcess

POLYGLOT = shutil.which("polyglot") or shutil.which("/usr/games/polyglot")
ROOT = Path(__file__).resolve().parent.parent
RESULTS = ("1-0", "0-1", "1/2-1/2")

pytestmark = pytest.mark.skipif(POLYGLOT is None, reason="polyglot is not installed")


def xboard(ini: Path) -> UciProcess:
    """The GUI's side of polyglot's pipes (the tests' raw-pipe driver; polyglot speaks xboard
    on them)."""
    return UciProcess([POLYGLOT, str(ini)], cwd=ini.parent)


def send(gui: UciProcess, *lines: str) -> None:
    for line in lines:
        gui.send(line)


def test_polyglot_plays_a_whole_game_with_zerochess(tmp_path):
    ini = tmp_path / "zerochess.ini"
    ini.write_text(f"[PolyGlot]\nEngineCommand = {sys.executable} -m zerochess\n"
                   f"EngineDir = {ROOT}\nLog = true\nLogFile = {tmp_path / 'polyglot.log'}\n"
                   "[Engine]\nWeightsFile = uniform\n")
    gui = xboard(ini)
    rng = random.Random(48)
    board = chess.Board()
    try:
        send(gui, "xboard", "protover 2")
        gui.read_until(lambda l: "done=1" in l, timeout=60)
        send(gui, "new", "level 0 0:10 0", "time 500", "otim 500", "go")   # zerochess: White
        result = None
        while result is None and board.ply() < 400:
            started = time.monotonic()
            lines = gui.read_until(lambda l: l.startswith("move ") or l.split()[:1] and
                                   l.split()[0] in RESULTS, timeout=20)
            last = lines[-1]
            if last.split()[0] in RESULTS:
                result = last.split()[0]
                break
            assert time.monotonic() - started < 3, lines   # 5 s left: it moves in time
            move = chess.Move.from_uci(last.split()[1])
            assert move in board.legal_moves, (last, board.fen())
            board.push(move)
            if board.is_game_over(claim_draw=True):
                result = board.result(claim_draw=True)
                break
            reply = rng.choice(list(board.legal_moves))
            board.push(reply)
            if board.is_game_over(claim_draw=True):
                result = board.result(claim_draw=True)
                break
            send(gui, "time 500", "otim 500", f"usermove {reply.uci()}")
        assert result in RESULTS, (board.ply(), board.fen())
        log = (tmp_path / "polyglot.log").read_text()
        assert "Engine->Adapter: bestmove" in log and "error" not in log.lower()
    finally:
        gui.close()
