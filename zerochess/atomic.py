"""The package's one atomic file write (checkpoints, the ONNX cache, opening books, training
states, JSON and JSONL records): a temporary file in the same directory, fsync, then a rename
over the target.

A reader (or a run restarted after a kill) sees the old file or the whole new one, never half
of one, even when two processes or threads write the same path at once: each writer has its
own temporary name. Temporary names contain ``.tmp-``, so
``zerochess.train.data.format.remove_partial`` recognises the leftovers of a killed writer;
a directory written whole (a data shard) is built under ``temporary_name`` and renamed by its
writer. The temporary file is an ordinary one (the umask's permissions, unlike ``mkstemp``'s
private 0600), so the renamed file is too. No torch here.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import IO, Callable

__all__ = ["write_atomic", "write_text_atomic", "write_json_atomic", "temporary_name"]


def temporary_name(path: str | os.PathLike) -> Path:
    """The name a writer of ``path`` (a file or a directory) uses until its rename: unique per
    process, so a writer may delete what a killed run of itself left there."""
    path = Path(path)
    return path.with_name(f"{path.name}.tmp-{os.getpid()}")


def write_atomic(path: str | os.PathLike, write: Callable[[IO[bytes]], None]) -> Path:
    """Create ``path``'s directory, call ``write`` on a binary temporary file, rename it to
    ``path`` and return ``path``; on any error the temporary file is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(f"{temporary_name(path)}-{secrets.token_hex(4)}")
    f = open(tmp, "xb")  # "x": never another writer's file
    try:
        with f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """``text`` as UTF-8, atomically."""
    return write_atomic(path, lambda f: f.write(text.encode("utf-8")))


def write_json_atomic(path: str | os.PathLike, obj: dict) -> Path:
    """``obj`` as indented, key-sorted JSON, atomically."""
    return write_text_atomic(path, json.dumps(obj, indent=1, sort_keys=True))
