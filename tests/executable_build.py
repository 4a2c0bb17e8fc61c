"""The one-folder PyInstaller build for the slow tests, built once per test session.

``ZEROCHESS_EXECUTABLE=dist/zerochess/zerochess`` reuses a build made beforehand (with
``python packaging/release.py`` or the command in packaging/zerochess.spec); otherwise the
first caller builds into a temporary folder (a few minutes) and the later ones reuse it."""

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXE_NAME = "zerochess.exe" if os.name == "nt" else "zerochess"


@functools.lru_cache(maxsize=None)
def folder_build() -> Path:
    """The path of the built executable (dist/zerochess/zerochess of a fresh build)."""
    given = os.environ.get("ZEROCHESS_EXECUTABLE")
    if given:
        return Path(given).resolve()
    tmp = Path(tempfile.mkdtemp(prefix="zerochess-pyinstaller-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    build = subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", str(tmp / "dist"), "--workpath", str(tmp / "build"),
         str(ROOT / "packaging" / "zerochess.spec")],
        cwd=tmp, capture_output=True, text=True, timeout=1800)
    assert build.returncode == 0, build.stderr[-3000:]
    exe = tmp / "dist" / "zerochess" / EXE_NAME
    assert exe.is_file(), f"the folder build has no {exe}"
    return exe
