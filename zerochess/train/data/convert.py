"""`zerochess train convert IN OUT`: rewrite training data of an older format as version 3.

Reading needs no conversion (``dataset.open_shard`` reads every format zerochess wrote);
converting makes a data set self-describing in the current format and lets tools that read
only version 3 (``format.load_shard``) use it. IN is a data set directory (with
``metadata.json``, copied with its shard entries) or a directory of shards without one (a
self-play run's ``games/``); every shard is validated again as it is written, and shards
already in OUT are kept, so an interrupted conversion finishes when run again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import numpy as np

from zerochess.train.data.dataset import finish_dataset, open_shard, read_metadata, shard_entry
from zerochess.train.data.format import (ShardError, load_shard, remove_partial, row_normalized,
                                         write_shard)


def convert_shard(src: str | os.PathLike, dst: str | os.PathLike) -> Path:
    """Write shard ``src`` (any readable format) as a version-3 shard ``dst``."""
    sh = open_shard(src)
    arrays = {k: np.asarray(v) for k, v in sh.arrays.items()}
    w = arrays["policy_weights"]
    if w.dtype != np.float32:  # legacy float16 sampler probabilities: exact sums of 1
        arrays["policy_weights"] = row_normalized(arrays["policy_offsets"], w)
    arrays["policy_indices"] = arrays["policy_indices"].astype(np.int16)
    info = {k: v for k, v in sh.header.items()
            if k not in ("format", "format_version", "samples", "games", "split", "source", "arrays")}
    pgn = Path(src) / "games.pgn"
    return write_shard(dst, arrays, sh.source, split=sh.split, info=info,
                       pgn=pgn.read_text() if pgn.is_file() else None)


def convert(src: str | os.PathLike, dst: str | os.PathLike,
            progress: Callable[[str], None] | None = None) -> list[str]:
    """Convert every shard of directory ``src`` into ``dst``; returns the shard names."""
    src, dst = Path(src), Path(dst)
    if src.resolve() == dst.resolve():
        raise ShardError(dst, "convert into another directory (the input stays as it is)")
    meta = read_metadata(src)
    if meta is not None and meta.get("status") != "complete":
        raise ShardError(src / "metadata.json", "data set is incomplete: finish it first")
    names = sorted(meta["shards"]) if meta else sorted(
        p.name for p in src.iterdir() if (p / "shard.json").is_file())
    if not names:
        raise ShardError(src, "no shards to convert")
    dst.mkdir(parents=True, exist_ok=True)
    remove_partial(dst)
    entries = {}
    for name in names:
        if not (dst / name).is_dir():
            convert_shard(src / name, dst / name)
        entries[name] = shard_entry(load_shard(dst / name, verify=False))
        if progress:
            progress(name)
    if meta is not None:
        finish_dataset(dst, {**meta, "converted_from": str(src.resolve())},
                       {n: {**meta["shards"][n], **e} for n, e in entries.items()})
    return names
