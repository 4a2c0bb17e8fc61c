"""The one-folder PyInstaller executable (packaging/zerochess.spec): loaded by a real UCI
client (python-chess) and made to play a short game with its built-in network, and given a
WeightsFile that does not load, through raw pipes."""

import chess
import chess.engine
import pytest

from executable_build import folder_build
from uci_process import UciProcess


@pytest.mark.slow
def test_folder_build_holds_network_book_and_extensions():
    exe = folder_build()
    internal = exe.parent / "_internal"
    assert (internal / "zerochess" / "data" / "network.pt").is_file()
    assert (internal / "zerochess" / "data" / "book.bin").is_file()
    extensions = {p.name.split(".")[0] for p in (internal / "zerochess").rglob("*.so")} | \
                 {p.name.split(".")[0] for p in (internal / "zerochess").rglob("*.pyd")}
    assert {"board", "encoding", "mcts", "tree", "tt"} <= extensions, extensions


@pytest.mark.slow
def test_folder_build_plays_a_game_with_its_network():
    exe = folder_build()
    engine = chess.engine.SimpleEngine.popen_uci([str(exe)], timeout=60)
    try:
        assert engine.id["name"].startswith("zerochess ")
        engine.configure({"OwnBook": True})  # the shipped book, from inside the folder
        board = chess.Board()
        for _ in range(12):  # the default network, a few nodes per move, both sides
            result = engine.play(board, chess.engine.Limit(nodes=64))
            assert result.move in board.legal_moves
            board.push(result.move)
        info = engine.analyse(board, chess.engine.Limit(nodes=200))
        assert info["nodes"] >= 200
    finally:
        engine.quit()


@pytest.mark.slow
def test_folder_build_keeps_its_network_when_weights_file_is_bad(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    e = UciProcess([str(folder_build())])
    try:
        e.send("uci")
        e.expect("uciok", timeout=30)
        e.send(f"setoption name WeightsFile value {bad}")
        lines = e.sync(timeout=60)
        assert len(lines) == 1 and lines[0].startswith(f"info string error: cannot load WeightsFile {bad}: ")
        assert lines[0].endswith("; using the shipped network"), lines
        e.send("position startpos")
        e.send("go nodes 32")
        assert e.expect("bestmove", timeout=60)[-1].split()[1] != "(none)"
    finally:
        e.close()


@pytest.mark.slow
def test_folder_build_ships_the_onnx_runtime(tmp_path, monkeypatch):
    monkeypatch.setenv("ZEROCHESS_CACHE_DIR", str(tmp_path / "cache"))
    log = tmp_path / "engine.log"
    e = UciProcess([str(folder_build())])
    try:
        e.send("uci")
        e.expect("uciok", timeout=30)
        e.send(f"setoption name LogFile value {log}")
        e.send("setoption name Backend value onnx-fp32")
        assert e.sync(timeout=120) == []  # exported, checked against torch, cached
        assert "evaluator OnnxEvaluator(" in log.read_text()
        assert list((tmp_path / "cache").glob("*.onnxc"))
        e.send("position startpos")
        e.send("go nodes 64")
        assert e.expect("bestmove", timeout=60)[-1].split()[1] != "(none)"
    finally:
        e.close()
