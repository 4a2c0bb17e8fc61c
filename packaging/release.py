"""Build the one-folder executable and write its versioned archive.

    python packaging/release.py               # build dist/zerochess/, check it, archive it
    python packaging/release.py --no-build    # archive the dist/zerochess/ already built

Steps: PyInstaller with packaging/zerochess.spec (the one-folder build: dist/zerochess/ with
the executable dist/zerochess/zerochess and everything it loads beside it), then a look at
what is inside (its size and largest entries; it fails if torch or another package of the
training stack slipped in), then a check of the built engine through its pipes (``uci`` -> ``uciok``, ``isready`` -> ``readyok`` with the
shipped network, ``go nodes 32`` -> a ``bestmove``), then the archive

    dist/zerochess-<version>-<system>-<machine>.tar.gz   (.zip on Windows)

holding one folder ``zerochess-<version>/`` (unpack it anywhere; the engine a GUI loads is
``zerochess-<version>/zerochess``, ``zerochess.exe`` on Windows), and its SHA-256 in a
``.sha256`` file beside it. Exit status non-zero if any step fails.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from zerochess._version import __version__  # noqa: E402  (no torch, no extensions)

EXE_NAME = "zerochess.exe" if os.name == "nt" else "zerochess"


def build(dist: Path, work: Path) -> None:
    command = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
               "--distpath", str(dist), "--workpath", str(work),
               str(ROOT / "packaging" / "zerochess.spec")]
    print("$ " + " ".join(command), flush=True)
    subprocess.run(command, check=True, cwd=ROOT)


#: Packages the executable must not carry (packaging/zerochess.spec excludes them).
FORBIDDEN = ("torch", "onnx", "ray", "scipy", "botocore", "boto3", "matplotlib")


def size_of(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def inspect(folder: Path, top: int = 10) -> int:
    """Print the build's size and its ``top`` largest entries of ``_internal/``; raise if a
    forbidden package is inside. Returns the size in bytes."""
    internal = folder / "_internal"
    total = size_of(folder)
    entries = sorted(((size_of(p), p.name) for p in internal.iterdir() if not p.is_symlink()),
                     reverse=True)
    print(f"size: {total / 2**20:.0f} MiB unpacked; largest entries of _internal/:")
    for size, name in entries[:top]:
        print(f"  {size / 2**20:7.1f} MiB  {name}")
    inside = sorted({name.lower() for _, name in entries} & set(FORBIDDEN))
    if inside:
        raise RuntimeError(f"the build carries {', '.join(inside)}: see EXCLUDED in the spec")
    return total


def smoke_test(exe: Path, timeout: float = 120.0) -> float:
    """Talk UCI to the built engine; return the seconds from launch to ``uciok``."""
    started = time.perf_counter()
    proc = subprocess.Popen([str(exe)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=exe.parent)
    try:
        def ask(command: str, answer: str) -> list[str]:
            proc.stdin.write(command + "\n")
            proc.stdin.flush()
            seen = []
            for line in proc.stdout:
                seen.append(line.strip())
                if line.startswith(answer):
                    return seen
                if time.perf_counter() - started > timeout:
                    break
            raise RuntimeError(f"no {answer!r} after {command!r}: {seen[-5:]!r}")

        ask("uci", "uciok")
        uciok = time.perf_counter() - started
        errors = [l for l in ask("isready", "readyok") if "error" in l]
        readyok = time.perf_counter() - started
        if errors:
            raise RuntimeError(f"the built engine reported {errors}")
        best = ask("position startpos\ngo nodes 32", "bestmove")[-1]
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait(timeout=30)
        print(f"check: uciok {uciok:.2f} s, readyok {readyok:.2f} s after launch (one "
              f"launch; benchmarks/bench_startup.py gives medians), {best}")
        return uciok
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def archive(folder: Path, dist: Path) -> Path:
    system = {"Darwin": "macos"}.get(platform.system(), platform.system().lower())
    machine = platform.machine().lower() or "unknown"
    top = f"zerochess-{__version__}"
    base = dist / f"{top}-{system}-{machine}"
    files = sorted(p for p in folder.rglob("*") if p.is_file() or p.is_symlink())
    if os.name == "nt":
        out = base.with_suffix(".zip")
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for path in files:
                z.write(path, f"{top}/{path.relative_to(folder).as_posix()}")
    else:
        out = Path(str(base) + ".tar.gz")
        with tarfile.open(out, "w:gz", compresslevel=6) as tar:
            tar.add(folder, arcname=top)  # keeps the executable bit and the symlinks
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    Path(str(out) + ".sha256").write_text(f"{digest}  {out.name}\n")
    print(f"archive: {out} ({out.stat().st_size / 2**20:.0f} MB, {len(files)} files), sha256 {digest}")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-build", action="store_true", help="archive the existing dist/zerochess/")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "pyinstaller")
    args = parser.parse_args(argv)
    folder = args.dist / "zerochess"
    if not args.no_build:
        build(args.dist, args.work)
    exe = folder / EXE_NAME
    if not exe.is_file():
        print(f"no executable at {exe}: build it first (without --no-build)")
        return 1
    inspect(folder)
    smoke_test(exe)
    archive(folder, args.dist)
    return 0


if __name__ == "__main__":
    sys.exit(main())
