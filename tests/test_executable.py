"""The one-folder PyInstaller executable (packaging/zerochess.spec): loaded by a real UCI
client (python-chess) and made to play a short game with its built-in network, given a
WeightsFile that does not load through raw pipes, and without torch inside."""

import chess
import chess.engine
import pytest

from executable_build import folder_build
from uci_process import UciProcess


@pytest.mark.slow
def test_folder_build_holds_network_book_and_extensions():
    exe = folder_build()
    internal = exe.parent / "_internal"
    assert (internal / "zerochess" / "data" / "network.onnx").is_file()
    assert (internal / "zerochess" / "data" / "zero.onnx").is_file()
    assert (internal / "zerochess" / "data" / "book.bin").is_file()
    extensions = {p.name.split(".")[0] for p in (internal / "zerochess").rglob("*.so")} | \
                 {p.name.split(".")[0] for p in (internal / "zerochess").rglob("*.pyd")}
    assert {"board", "encoding", "threats", "mcts", "tree", "tt"} <= extensions, extensions


@pytest.mark.slow
def test_folder_build_carries_no_training_stack():
    """It plays; it does not train: no torch, exporter, Ray, SciPy or checkpoints inside."""
    internal = folder_build().parent / "_internal"
    present = {p.name.lower() for p in internal.iterdir()}
    for package in ("torch", "onnx", "ray", "scipy", "botocore", "matplotlib"):
        assert package not in present, sorted(present)
    assert not list(internal.rglob("libtorch*")), "torch's libraries are inside"
    assert not list((internal / "zerochess" / "data").glob("*.pt"))
    assert (internal / "onnxruntime").is_dir()


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
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"PK\x03\x04 not really a network")
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
def test_folder_build_plays_onnx_files_and_names_the_extra_for_torch(tmp_path, monkeypatch):
    monkeypatch.setenv("ZEROCHESS_CACHE_DIR", str(tmp_path / "cache"))
    log = tmp_path / "engine.log"
    e = UciProcess([str(folder_build())])
    try:
        e.send("uci")
        e.expect("uciok", timeout=30)
        e.send(f"setoption name LogFile value {log}")
        e.send("setoption name WeightsFile value zero")
        assert e.sync(timeout=120) == []
        assert "evaluator OnnxEvaluator(" in log.read_text()
        assert not (tmp_path / "cache").exists()  # the .onnx file runs as it is: no export
        e.send("setoption name Backend value torch-fp32")
        lines = e.sync(timeout=60)
        assert lines == ["info string error: cannot load WeightsFile zero with Backend "
                         "torch-fp32: Backend torch-fp32 needs torch, which is not installed: "
                         "pip install 'zerochess[train]'; keeping WeightsFile zero"], lines
        e.send("position startpos")
        e.send("go nodes 64")
        assert e.expect("bestmove", timeout=60)[-1].split()[1] != "(none)"
    finally:
        e.close()
