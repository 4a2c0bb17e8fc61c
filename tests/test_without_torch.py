"""Playing needs numpy, ONNX Runtime and python-chess alone: the engine, ``bench`` and
``perft`` run where ``import torch`` (and ``import onnx``, the exporter) fail, and what
needs torch says so in one line naming the extra.

The blocking is real: a directory put first on ``PYTHONPATH`` holds ``torch`` and ``onnx``
packages whose import raises the ModuleNotFoundError Python raises where they are not
installed."""

import os
import subprocess
import sys

import chess
import pytest

from uci_process import UciProcess


@pytest.fixture(scope="module")
def no_torch_env(tmp_path_factory):
    shim = tmp_path_factory.mktemp("no-torch")
    for name in ("torch", "onnx"):
        (shim / name).mkdir()
        (shim / name / "__init__.py").write_text(
            f'raise ModuleNotFoundError("No module named {name!r} (blocked by the test)", '
            f'name={name!r})\n')
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(shim), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["ZEROCHESS_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    return env


def test_the_blocker_blocks(no_torch_env):
    run = subprocess.run([sys.executable, "-c", "import torch"], env=no_torch_env,
                         capture_output=True, text=True)
    assert run.returncode == 1 and "blocked by the test" in run.stderr


def _engine(env):
    e = UciProcess([sys.executable, "-m", "zerochess"], env=env)
    e.send("uci")
    assert e.expect("uciok", timeout=30)[-1] == "uciok"
    return e


def _legal_bestmove(e, moves=()):
    e.send("position startpos" + (" moves " + " ".join(moves) if moves else ""))
    e.send("go nodes 64")
    lines = e.expect("bestmove", timeout=60)
    board = chess.Board()
    for m in moves:
        board.push_uci(m)
    assert chess.Move.from_uci(lines[-1].split()[1]) in board.legal_moves, lines[-1]
    return lines


@pytest.mark.parametrize("weights", [None, "zero"])
def test_the_engine_plays_its_shipped_networks_without_torch(no_torch_env, weights, tmp_path):
    log = tmp_path / "engine.log"
    e = _engine(no_torch_env)
    try:
        e.send(f"setoption name LogFile value {log}")
        if weights:
            e.send(f"setoption name WeightsFile value {weights}")
        assert e.sync(timeout=60) == []
        _legal_bestmove(e)
        _legal_bestmove(e, ["e2e4", "c7c5"])
        assert not [l for l in e.stderr if "Traceback" in l], e.stderr
        loaded = [l for l in log.read_text().splitlines() if " evaluator OnnxEvaluator(" in l]
        assert len(loaded) == 1, log.read_text()[-2000:]
    finally:
        e.close()


@pytest.mark.parametrize("setting, asked", [
    ("Backend value torch-fp32", "with Backend torch-fp32: Backend torch-fp32 needs torch"),
    ("Device value cuda", "on Device cuda: Device cuda needs torch"),
    ("WeightsFile value {pt}", "cannot load WeightsFile {pt}: the .pt checkpoint {pt} needs torch"),
])
def test_what_needs_torch_says_so_in_one_line_and_play_goes_on(no_torch_env, setting, asked):
    from zerochess.neural.shipped import shipped_network_path

    pt = shipped_network_path("zero", ".pt")
    e = _engine(no_torch_env)
    try:
        assert e.sync(timeout=60) == []
        e.send(f"setoption name {setting.format(pt=pt)}")
        lines = e.sync(timeout=60)
        assert len(lines) == 1 and lines[0].startswith("info string error: cannot load WeightsFile"), lines
        assert asked.format(pt=pt) in lines[0], lines[0]
        assert lines[0].endswith(", which is not installed: pip install 'zerochess[train]'; "
                                 "keeping the shipped network"), lines[0]
        played = _legal_bestmove(e, ["d2d4"])
        assert not [l for l in played if l.startswith("info string")], played
    finally:
        e.close()


def _zerochess(env, *args, timeout=300):
    return subprocess.run([sys.executable, "-m", "zerochess", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_bench_with_the_shipped_network_runs_without_torch(no_torch_env):
    run = _zerochess(no_torch_env, "bench", "--backend", "default", "--nodes", "64")
    assert run.returncode == 0, run.stderr[-2000:]
    nodes, signature, *stockfish_style = run.stdout.splitlines()
    assert nodes.startswith("nodes ") and int(nodes.split()[1]) >= 64 * 8
    assert signature.startswith("signature ")
    assert [line.split(":")[0].strip() for line in stockfish_style] == [
        "=" * 27, "Total time (ms)", "Nodes searched", "Nodes/second"]  # as Stockfish prints


def test_perft_runs_without_torch(no_torch_env):
    run = _zerochess(no_torch_env, "perft", chess.STARTING_FEN, "3")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "8902" in run.stdout


def test_training_and_export_without_torch_name_the_extra(no_torch_env, tmp_path):
    from zerochess.neural.shipped import shipped_network_path

    data = tmp_path / "data"
    made = _zerochess(no_torch_env, "train", "generate", "--games", "1", "--out", str(data))
    assert made.returncode == 0, made.stderr[-2000:]  # random-play data needs no torch
    for command in (["train", "evaluate", str(shipped_network_path("zero")), "--data", str(data)],
                    ["export", "zero", str(tmp_path / "x.onnx")]):
        run = _zerochess(no_torch_env, *command, timeout=120)
        assert run.returncode == 1
        assert run.stderr.strip().splitlines() == [
            f"Error: zerochess {command[0]} needs torch, which is not installed: "
            "pip install 'zerochess[train]'"], run.stderr[-2000:]
    assert not (tmp_path / "x.onnx").exists()
