"""One atomic file write for the engine's files (checkpoints, the ONNX cache): a unique
temporary file in the same directory, fsync, then a rename over the target.

A reader sees the old file or the whole new one, never half of one, even when two
processes write the same path at once (each has its own temporary file). No torch here.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import IO, Callable

__all__ = ["write_atomic"]


def write_atomic(path: str | os.PathLike, write: Callable[[IO[bytes]], None]) -> Path:
    """Create ``path``'s directory, call ``write`` on a binary temporary file, rename it to
    ``path`` and return ``path``; on any error the temporary file is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
