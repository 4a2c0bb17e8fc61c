"""Data sets: a directory of shards with a ``metadata.json``, whatever produced them.

Layout of a data set directory::

    DIR/metadata.json        format "zerochess-dataset" version 1: status ("in-progress" |
                             "complete"), the producer's settings (compared on a restart),
                             "shards": {name: {"split", "samples", "games", ...}}, and
                             whatever statistics the producer adds
    DIR/<name>/              shards (format.py); a shard is wholly train or wholly val, and
                             the split is by game (``is_val_game``)

A producer (``train generate``, ``train label``, ``train convert``) calls
``open_dataset(out, settings)`` first (it creates the metadata, or checks that a restarted run
has the same settings, and removes half-written shards), writes shards, and ends with
``finish_dataset(out, meta, shards)``. Readers call ``load_split(dir, "train")``; any shard
of format version 3 or of the formats before it (``legacy.py``) loads through ``open_shard``.

    meta = open_dataset(out, settings)
    write_shard(out / "train-00000", arrays, source={"kind": "teacher", ...}, split="train")
    finish_dataset(out, meta, {"train-00000": shard_entry(load_shard(out / "train-00000"))})
    data = load_split(out, "train")          # a PositionSet: data.gather(np.arange(16))
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path

from zerochess.train.data.batches import PositionSet
from zerochess.train.data.format import (FORMAT, Shard, ShardError, load_shard, read_header,
                                         remove_partial, write_json_atomic)
from zerochess.train.data.legacy import is_legacy, load_legacy_shard

DATASET_FORMAT = "zerochess-dataset"
DATASET_VERSION = 1
METADATA = "metadata.json"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def is_val_game(game: int, share: float | Fraction) -> bool:
    """Whether game number ``game`` (0-based, run-wide) of a producer is a validation game,
    for a validation ``share`` of the games: ceil(game * share) > ceil((game - 1) * share).

    That is game 1, then one game in every 1/share (games 1, 11, 21, ... for 0.1; 1, 21,
    41, ... for 1/20), so a run of two or more games always holds one, whatever its size,
    and the rule needs neither the number of games nor the shards: a run that is resumed or
    grown decides every game as before. ``share`` is taken as the nearest fraction with a
    denominator up to a million (0.1 is 1/10 exactly, not its binary float)."""
    if game < 1 or share <= 0:
        return False
    share = Fraction(share).limit_denominator(1_000_000)
    return math.ceil(game * share) > math.ceil((game - 1) * share)


def read_metadata(data_dir: str | os.PathLike) -> dict | None:
    """``DIR/metadata.json``, or None when there is none; ShardError names a file that is
    unreadable or not a zerochess data set of a version this code reads."""
    path = Path(data_dir) / METADATA
    if not path.exists():
        return None
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ShardError(path, f"unreadable data set metadata: {e}") from e
    if not isinstance(meta, dict) or meta.get("format") != DATASET_FORMAT:
        raise ShardError(path, "not a zerochess data set")
    if meta.get("format_version") != DATASET_VERSION:
        raise ShardError(path, f"data set format version {meta.get('format_version')!r}; "
                         f"this zerochess reads version {DATASET_VERSION}")
    return meta


def write_metadata(data_dir: str | os.PathLike, meta: dict) -> None:
    """Write ``DIR/metadata.json`` atomically."""
    write_json_atomic(Path(data_dir) / METADATA, meta)


def open_dataset(out: str | os.PathLike, settings: dict) -> dict:
    """Start or continue producing the data set in ``out``; returns its metadata.

    A new directory gets metadata with status "in-progress" and ``settings``; an existing
    one must have been started with the same settings (a restart after a kill), else a
    ShardError refuses to mix two data sets. Half-written shards of a killed writer go."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    meta = read_metadata(out)
    if meta is not None and meta.get("settings") != settings:
        raise ShardError(out / METADATA, "the directory holds a data set made with other settings "
                         f"({meta.get('settings')}); choose another --out")
    if meta is None:
        meta = {"format": DATASET_FORMAT, "format_version": DATASET_VERSION,
                "status": "in-progress", "settings": settings, "created": now()}
        write_metadata(out, meta)
    remove_partial(out)
    return meta


def shard_entry(shard: Shard) -> dict:
    """The metadata entry of a written shard."""
    return {"split": shard.split, "samples": len(shard), "games": shard.games}


def finish_dataset(out: str | os.PathLike, meta: dict, shards: dict[str, dict] | None = None) -> dict:
    """Mark the data set complete (with ``shards``' entries, when given) and write it."""
    if shards is not None:
        meta["shards"] = shards
    meta["status"] = "complete"
    meta["completed"] = now()
    write_metadata(out, meta)
    return meta


def open_shard(path: str | os.PathLike, verify: bool = True) -> Shard:
    """Any training shard: format version 3 (``format.load_shard``) or one of the formats
    before it (``legacy.py``); ShardError names the file of anything else."""
    path = Path(path)
    header = read_header(path)
    if is_legacy(header):
        return load_legacy_shard(path, header, verify)
    if header.get("format") != FORMAT:
        raise ShardError(path / "shard.json", "not a zerochess shard header")
    return load_shard(path, verify)


def finished_shards(data_dir: str | os.PathLike) -> dict[str, dict]:
    """The shards written completely so far in ``data_dir`` (a shard appears only through
    an atomic rename, so a directory with a ``shard.json`` and no ``.tmp-`` in its name is
    whole), by name: {"split", "samples"}. What a snapshot of a data set still being
    written reads."""
    data_dir = Path(data_dir)
    out = {}
    for p in sorted(data_dir.iterdir()):
        if p.is_dir() and ".tmp-" not in p.name and (p / "shard.json").is_file():
            header = read_header(p)
            out[p.name] = {"split": header.get("split", ""), "samples": int(header.get("samples", 0))}
    return out


def split_names(data_dir: str | os.PathLike, split: str, snapshot: bool = False) -> list[str]:
    """Names of the ``split`` ('train' or 'val') shards of a complete data set, sorted;
    with ``snapshot``, of a data set still being written, the shards finished so far
    (``finished_shards``; a complete one's are its metadata's)."""
    data_dir = Path(data_dir)
    meta = read_metadata(data_dir)
    meta_path = data_dir / METADATA
    if meta is None:
        raise ShardError(meta_path, "missing: not a data set directory (run `zerochess train "
                         "generate` or `zerochess train label`)")
    if meta.get("status") == "complete":
        listed = meta.get("shards", {})
    elif snapshot:
        listed = finished_shards(data_dir)
    else:
        raise ShardError(meta_path, "data set is incomplete: rerun the command that made it "
                         "to finish it, or train on the shards finished so far with --snapshot")
    names = sorted(n for n, s in listed.items() if s["split"] == split)
    if not names:
        raise ShardError(meta_path, f"no {split} shards")
    return names


def load_split(data_dir: str | os.PathLike, split: str, verify: bool = True,
               names: list[str] | None = None, snapshot: bool = False) -> PositionSet:
    """The ``split`` of a complete data set as one PositionSet (with ``snapshot``, of the
    shards finished so far; with ``names``, of exactly those shards, as a snapshot
    recorded them); ShardError names any bad or missing file."""
    data_dir = Path(data_dir)
    meta = read_metadata(data_dir)
    if meta is None:
        raise ShardError(data_dir / METADATA, "missing: not a data set directory")
    listed = meta.get("shards", {}) if meta.get("status") == "complete" else {}
    shards = []
    for name in names if names is not None else split_names(data_dir, split, snapshot):
        if not (data_dir / name).is_dir():
            raise ShardError(data_dir / name, "missing: the shard was removed or renamed since "
                             "the run recorded it")
        sh = open_shard(data_dir / name, verify=verify)
        if name in listed and len(sh) != listed[name]["samples"]:
            raise ShardError(sh.path / "shard.json", f"sample count differs from {METADATA}")
        if len(sh):
            shards.append(sh)
    if not shards:
        raise ShardError(data_dir / METADATA, f"no {split} samples")
    return PositionSet(shards)


def shards_fingerprint(data_dir: str | os.PathLike, names: list[str]) -> str:
    """A short hash of the named shards' headers (each lists its arrays' SHA-256): ties a
    run on a snapshot to exactly those shards, so a shard rewritten later (``train label``
    deduplicates when it finishes) is noticed."""
    h = hashlib.sha256()
    for name in names:
        header = Path(data_dir) / name / "shard.json"
        if not header.is_file():
            raise ShardError(header, "missing: the shard was removed since the run recorded it")
        h.update(name.encode() + b"\0" + header.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def data_fingerprint(data_dir: str | os.PathLike) -> str:
    """A short hash of metadata.json, stored in checkpoints to tie a run to its data."""
    return hashlib.sha256((Path(data_dir) / METADATA).read_bytes()).hexdigest()[:16]
