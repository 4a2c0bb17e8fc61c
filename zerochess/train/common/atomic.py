"""Atomic file writes: a temporary name in the same directory, fsync, then a rename.

A reader (or a run restarted after a kill) sees the old file or the new one, never half of
one. Temporary names contain ``.tmp-`` so ``zerochess.train.data.format.remove_partial``
recognises the leftovers of a killed writer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, IO


def temporary_name(path: Path) -> Path:
    """The name a writer of ``path`` uses until its rename (unique per process)."""
    return path.with_name(f"{path.name}.tmp-{os.getpid()}")


def _replace(path: str | os.PathLike, mode: str, write: Callable[[IO], None]) -> None:
    path = Path(path)
    tmp = temporary_name(path)
    with open(tmp, mode) as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_json_atomic(path: str | os.PathLike, obj: dict) -> None:
    """Write ``obj`` as indented, key-sorted JSON."""
    _replace(path, "w", lambda f: json.dump(obj, f, indent=1, sort_keys=True))


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    _replace(path, "w", lambda f: f.write(text))


def save_torch_atomic(path: str | os.PathLike, obj: dict) -> None:
    """``torch.save`` into place (training states: resume.pt, learner.pt)."""
    import torch

    _replace(path, "wb", lambda f: torch.save(obj, f))
