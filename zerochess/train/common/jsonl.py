"""JSON Lines files (one JSON object per line): metrics, evaluation games, ratings.

Appends are plain appends (a kill can at worst cut the last line short, and reading such a
file fails on that line rather than guessing); a rewrite that drops records (a resumed run
logging an interrupted stretch again) is atomic.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Iterable

from zerochess.atomic import write_text_atomic


def append_jsonl(path: str | os.PathLike, records: dict | Iterable[dict], sync: bool = False) -> None:
    """Append one record (a dict) or several; ``sync`` forces them to disk (records a
    restarted run must find, such as finished evaluation games)."""
    if isinstance(records, dict):
        records = [records]
    with open(path, "a") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
        if sync:
            f.flush()
            os.fsync(f.fileno())


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    """Every record of ``path``, in order; [] when the file does not exist."""
    path = Path(path)
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def keep_jsonl(path: str | os.PathLike, keep: Callable[[dict], bool]) -> int:
    """Rewrite ``path`` with only the records ``keep`` accepts; returns how many were dropped."""
    records = read_jsonl(path)
    kept = [r for r in records if keep(r)]
    if len(kept) != len(records):
        write_text_atomic(path, "".join(json.dumps(r) + "\n" for r in kept))
    return len(records) - len(kept)
