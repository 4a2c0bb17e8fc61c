"""What a GUI waits for at launch: ``uci`` is answered without importing torch (the network
and torch load at ``isready``), so start-up is the Python interpreter plus the native board.
The seconds themselves are measured by benchmarks/bench_startup.py, not asserted here."""

import subprocess
import sys

PROBE = r"""
import io, sys
from zerochess.cli import main  # the entry point the `zerochess` command and the executable run
from zerochess.uci.loop import UciLoop
out = io.StringIO()
loop = UciLoop(out)
loop.run(io.BytesIO(b"uci\n"))
print("uciok" in out.getvalue().splitlines(), "torch" in sys.modules)
loop.run(io.BytesIO(b"isready\n"))
print(out.getvalue().splitlines()[-1], "torch" in sys.modules, loop.player.evaluator is not None)
"""


def test_uci_is_answered_before_torch_is_imported_and_isready_loads_the_network():
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    after_uci, after_isready = result.stdout.splitlines()[-2:]
    assert after_uci == "True False", result.stdout       # uciok sent, torch not imported
    assert after_isready == "readyok True True", result.stdout  # the network loaded at isready
