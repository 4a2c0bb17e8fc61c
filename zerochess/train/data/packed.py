"""A data set split in memory: its shards concatenated into one, for fast batches.

``PositionSet.gather`` makes one pass per shard a batch touches; a batch of 256 random
samples of a 2,400-shard labelled set touches about 250, and those passes, not the copying,
were most of its time. Packed, the split is one shard held in memory (the arrays ``gather``
reads, the CSR groups re-based onto one offsets array), so a batch is one pass, and the
samples keep their indices: ``packed.gather(idx)`` equals ``unpacked.gather(idx)``, which is
what keeps a run's batches, and its exact resume, independent of the choice (tested).

The moves-left targets (``moves_left.py``) need each sample's game, ply, game arrays and
teacher score; packing computes them once, shard by shard, into one row array
``moves_left`` that ``gather`` reads instead, so a packed set does not hold the rest.

Sets larger than memory stay memory-mapped (``fits_in_memory`` decides for the trainer).
"""

from __future__ import annotations

import os

import numpy as np

from zerochess.train.data.format import Shard
from zerochess.train.data.moves_left import plies_left

#: The per-sample arrays ``gather`` reads, and the CSR groups (offsets, then row arrays).
ROWS = ("tokens", "wdl", "kind", "move", "teacher_best")
CSR = {"policy_offsets": ("policy_indices", "policy_weights"),
       "legal_offsets": ("legal_indices",)}
GATHERED = ROWS + tuple(CSR) + tuple(a for group in CSR.values() for a in group)
OPTIONAL = ("kind", "move", "teacher_best", "legal_offsets")


def memory_available() -> int | None:
    """Bytes of memory available to a new allocation without swapping (Linux's
    MemAvailable), or None where it cannot be read."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def fits_in_memory(nbytes: int, share: float = 0.5) -> bool:
    """Whether ``nbytes`` take at most ``share`` of the memory available now (the rest is
    left to the network, its optimizer and whatever else runs)."""
    avail = memory_available()
    return avail is not None and nbytes <= share * avail


def pack_shards(shards: list[Shard], skip: int = 0) -> Shard:
    """One in-memory shard holding the samples of ``shards`` in order, less the first
    ``skip`` of the first (``PositionSet``'s indexing). Every shard must hold the same
    optional arrays (one producer's data set does), else ValueError says which differ."""
    have = {a: sum(a in s for s in shards) for a in OPTIONAL}
    mixed = sorted(a for a, n in have.items() if 0 < n < len(shards))
    if mixed:
        raise ValueError(f"cannot pack shards that differ in holding {mixed} "
                         "(read them memory-mapped: in_memory false)")
    firsts = [skip] + [0] * (len(shards) - 1)
    arrays: dict[str, np.ndarray] = {}
    for name in ROWS:
        if name in shards[0]:
            arrays[name] = np.concatenate([np.asarray(s[name][f:]) for s, f in zip(shards, firsts)])
    for off_name, row_names in CSR.items():
        if off_name not in shards[0]:
            continue
        offsets, rows, base = [np.zeros(1, np.int64)], {r: [] for r in row_names}, 0
        for s, f in zip(shards, firsts):
            off = np.asarray(s[off_name], dtype=np.int64)
            offsets.append(off[f + 1:] - off[f] + base)
            base += int(off[-1] - off[f])
            for r in row_names:
                rows[r].append(np.asarray(s[r][off[f]:off[-1]]))
        arrays[off_name] = np.concatenate(offsets)
        arrays.update({r: np.concatenate(v) for r, v in rows.items()})
    arrays["moves_left"] = np.concatenate(
        [plies_left(s, np.arange(f, len(s))) for s, f in zip(shards, firsts)])
    n = len(arrays["tokens"])
    played = any(s.source.get("policy") == "played-move" for s in shards)
    header = {"samples": n, "games": 0, "split": shards[0].split,
              "source": {"kind": "packed", "shards": len(shards),
                         **({"policy": "played-move"} if played else {})}}
    return Shard(shards[0].path.parent, header, arrays)
