"""zerochess in a real GUI: PyChess (Debian's package) under Xvfb plays a blitz game with the
one-folder build on both sides, checked in PyChess's own log (benchmarks/gui_pychess.py has
the details). Slow: the build (shared with tests/test_executable.py) and about a minute of
GUI time; skipped when Xvfb, xdotool or PyChess is not installed (.ci/run installs them)."""

import shutil
import sys
from pathlib import Path

import pytest

from executable_build import folder_build

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import gui_pychess  # noqa: E402


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("Xvfb") and shutil.which("xdotool") and Path(gui_pychess.PYCHESS).is_file()),
                    reason="needs Xvfb, xdotool and PyChess: apt-get install xvfb xdotool pychess")
def test_pychess_plays_a_game_with_the_folder_build(tmp_path, capsys):
    shot = tmp_path / "pychess.png"
    status = gui_pychess.main(["--engine", str(folder_build()), "--screenshot", str(shot),
                               "--moves", "6", "--seconds", "150"])
    report = capsys.readouterr().out
    assert status == 0, report
    assert "PASSED" in report
    assert shot.stat().st_size > 10_000  # a real screen, not an empty image
