"""The one-file PyInstaller executable: built from packaging/zerochess.spec, loaded by a real
UCI client (python-chess) and made to play a short game with its built-in network."""

import os
import subprocess
import sys
import time
from pathlib import Path

import chess
import chess.engine
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_pyinstaller_executable_plays_a_game(tmp_path):
    dist, work = tmp_path / "dist", tmp_path / "build"
    build = subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", str(dist), "--workpath", str(work), str(ROOT / "packaging" / "zerochess.spec")],
        cwd=tmp_path, capture_output=True, text=True, timeout=1500)
    assert build.returncode == 0, build.stderr[-3000:]
    exe = dist / ("zerochess.exe" if os.name == "nt" else "zerochess")
    assert exe.is_file()

    started = time.monotonic()
    engine = chess.engine.SimpleEngine.popen_uci([str(exe)], timeout=120)
    try:
        handshake = time.monotonic() - started
        assert engine.id["name"].startswith("zerochess ")
        board = chess.Board()
        for _ in range(12):  # the default network, a few nodes per move, both sides
            result = engine.play(board, chess.engine.Limit(nodes=64))
            assert result.move in board.legal_moves
            board.push(result.move)
        info = engine.analyse(board, chess.engine.Limit(nodes=200))
        assert info["nodes"] >= 200
    finally:
        engine.quit()
    print(f"executable {exe.stat().st_size / 2**20:.0f} MB, handshake {handshake:.1f} s")
