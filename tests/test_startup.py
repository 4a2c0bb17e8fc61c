"""What a GUI waits for at launch: ``uci`` is answered with nothing heavy imported (no torch,
numpy, python-chess, ONNX Runtime, Cython extension or click: issue 29's ``uciok`` within
0.3 s), and ``isready`` loads the network (never the first ``go``). The seconds themselves
are measured by benchmarks/bench_startup.py, not asserted here."""

import json
import subprocess
import sys

PROBE = r"""
import io, json, sys
from zerochess.__main__ import run  # the entry point of the `zerochess` command and the executable
from zerochess.uci.loop import UciLoop
HEAVY = ("torch", "numpy", "chess", "onnxruntime", "zerochess.chess.board",
         "zerochess.chess.encoding", "zerochess.search.mcts", "click")
out = io.StringIO()
loop = UciLoop(out)
loop.run(io.BytesIO(b"uci\n"))
after_uci = {"last": out.getvalue().splitlines()[-1],
             "heavy": [name for name in HEAVY if name in sys.modules]}
loop.run(io.BytesIO(b"isready\n"))
evaluator = loop.player.evaluator
after_isready = {"last": out.getvalue().splitlines()[-1], "torch": "torch" in sys.modules,
                 "onnxruntime": "onnxruntime" in sys.modules,
                 "evaluator": type(evaluator).__name__,
                 "network": str(getattr(evaluator, "source", ""))}
print(json.dumps([after_uci, after_isready]))
"""


def run_probe() -> tuple[dict, dict]:
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return tuple(json.loads(result.stdout.splitlines()[-1]))


def test_uci_is_answered_before_anything_heavy_is_imported_and_isready_loads_the_network():
    after_uci, after_isready = run_probe()
    assert after_uci == {"last": "uciok", "heavy": []}
    assert after_isready["last"] == "readyok"
    assert not after_isready["torch"]                    # the shipped network plays without it
    assert after_isready["onnxruntime"]
    assert after_isready["evaluator"] == "OnnxEvaluator"
    assert after_isready["network"].endswith(".onnx")


def test_options_as_flags_start_the_uci_loop_without_click():
    """`zerochess --threads=2` (lichess-bot's engine_options) goes the bare command's fast way."""
    probe = ("import sys; sys.argv = ['zerochess', '--threads=2', '--uci-show-wdl']\n"
             "from zerochess.__main__ import run\nrun()\n"
             "sys.stderr.write('CLICK %s\\n' % ('click' in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", probe], input="uci\nquit\n",
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "option name UCI_ShowWDL type check default true" in result.stdout
    assert result.stdout.splitlines()[-1] == "uciok" and "CLICK False" in result.stderr
