"""Training on several data sets at once: their specs, snapshots, and batches mixed in a
fixed proportion.

A run names its data sets as specs ``PATH`` or ``PATH:WEIGHT`` (``--data`` repeated, or
``data = [...]`` in a config file). The weights are relative (0.85 and 0.15, or 17 and 3,
are the same mixture); a set without one weighs 1.

Each set keeps its own stream of samples: pass e over set i visits its n_i samples in the
order ``default_rng([seed, e, i]).permutation(n_i)``, and the stream runs on pass after
pass. Batch k takes, from every set, the next samples of its stream: after k batches of B
samples set i has given ``floor(k * B * w_i)`` of them (w normalised to sum 1), except the
set of largest weight, which gives the rest, so every batch holds exactly B samples and
every set's share stays within one sample of its weight however long the run. Both are
pure functions of (seed, k): a resumed run needs only its step to continue exactly, and no
batch ever needs more than its B samples in memory (a set stays memory-mapped where the
sets do not fit, ``hold_in_memory``).

    specs = parse_data_specs(["runs/label-d4:0.85", "runs/label-eg:0.15"])
    sets = [open_set(s, snapshot=True) for s in specs]
    mixed = MixedSet([s.train for s in sets], [s.spec.weight for s in sets])
    batch = mixed.batch(k, batch_size=512, seed=0)
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from zerochess.train.data.batches import Batch, PositionSet
from zerochess.train.data.dataset import (data_fingerprint, load_split, read_metadata,
                                          shards_fingerprint, split_names)
from zerochess.train.data.format import ShardError
from zerochess.train.data.packed import fits_in_memory

log = logging.getLogger("zerochess.train")

SPLITS = ("train", "val")


class DataSpecError(ValueError):
    """A ``--data`` spec that names no data set or has a bad weight; the message says which."""


@dataclass(frozen=True)
class DataSpec:
    """One data set of a run and its sampling weight (relative to the other sets')."""

    path: Path
    weight: float = 1.0

    def __str__(self) -> str:
        return f"{self.path}:{self.weight:g}"


def parse_data_spec(text: str | os.PathLike) -> DataSpec:
    """``PATH`` or ``PATH:WEIGHT`` -> DataSpec. A directory named by the whole text is a
    path (so a directory whose name holds a colon still works); otherwise the part after
    the last colon is the weight, a positive number."""
    text = str(text)
    if Path(text).is_dir():
        return DataSpec(Path(text))
    path, colon, weight = text.rpartition(":")
    if not colon or not path or "/" in weight or "\\" in weight:
        raise DataSpecError(f"--data {text}: no such data set directory")
    try:
        w = float(weight)
    except ValueError:
        raise DataSpecError(f"--data {text}: weight {weight!r} is not a number (write PATH or "
                            "PATH:WEIGHT, e.g. runs/label-eg:0.15)") from None
    if not math.isfinite(w) or w <= 0:
        raise DataSpecError(f"--data {text}: the weight must be a positive number, got {weight}")
    if not Path(path).is_dir():
        raise DataSpecError(f"--data {text}: no such data set directory {path!r}")
    return DataSpec(Path(path), w)


def parse_data_specs(items: str | os.PathLike | list | tuple | None) -> list[DataSpec]:
    """The data sets of a run, from one spec or a list of them; a set named twice, or none
    at all, is refused (DataSpecError)."""
    if isinstance(items, (str, os.PathLike)):
        items = [items]
    if not items:
        raise DataSpecError("no data set: give --data DIR (repeatable, DIR:WEIGHT to weigh "
                            "it) or `data` in the config file")
    specs = [s if isinstance(s, DataSpec) else parse_data_spec(s) for s in items]
    seen: dict[Path, DataSpec] = {}
    for s in specs:
        key = s.path.resolve()
        if key in seen:
            raise DataSpecError(f"--data {s}: the data set {s.path} is named twice")
        seen[key] = s
    return specs


def set_names(specs: list[DataSpec]) -> list[str]:
    """Short names of the sets in metrics (``label-eg/teacher_top1``): the directory's
    name, numbered where two sets share one."""
    base = [s.path.resolve().name or str(s.path) for s in specs]
    return [b if base.count(b) == 1 else f"{b}#{i}" for i, b in enumerate(base)]


@dataclass
class OpenedSet:
    """A data set of a run, loaded: its splits, and what ties the run to its contents."""

    spec: DataSpec
    name: str
    train: PositionSet | None  # None where only the val split was asked for
    val: PositionSet
    fingerprint: str
    #: The snapshot's shard names by split (a set still being written), else None: a
    #: complete set is read through its metadata and tied to it by ``fingerprint``.
    shards: dict[str, list[str]] | None

    def record(self) -> dict:
        """What a run stores of the set (config.json, resume.pt), to resume on the same data."""
        return {"path": str(self.spec.path), "weight": self.spec.weight,
                "fingerprint": self.fingerprint, "shards": self.shards}


def open_set(spec: DataSpec, name: str, snapshot: bool = False,
             recorded: dict | None = None, with_train: bool = True) -> OpenedSet:
    """Load ``spec``'s train and val splits. A complete set is read through its metadata;
    one still being written is refused unless ``snapshot``, which reads the shards finished
    now and records their names. ``recorded`` (a resumed run's ``OpenedSet.record``) with a
    shard list reads exactly those shards again, whatever the labeller added since (a
    record of another directory is ignored: the fingerprints then tell the caller the sets
    differ). ``with_train`` False loads only the val split (evaluation)."""
    same = recorded is not None and Path(recorded["path"]).resolve() == spec.path.resolve()
    shards = recorded.get("shards") if same else None
    if shards is None:
        meta = read_metadata(spec.path)
        if meta is not None and meta.get("status") != "complete" and snapshot:
            shards = {split: split_names(spec.path, split, snapshot=True) for split in SPLITS}
    if shards is None:
        fingerprint = data_fingerprint(spec.path)
        train = load_split(spec.path, "train") if with_train else None
        val = load_split(spec.path, "val")
    else:
        fingerprint = shards_fingerprint(spec.path, [n for split in SPLITS for n in shards[split]])
        train = load_split(spec.path, "train", names=shards["train"]) if with_train else None
        val = load_split(spec.path, "val", names=shards["val"])
    return OpenedSet(spec, name, train, val, fingerprint, shards)


def combined_fingerprint(sets: list[OpenedSet]) -> str:
    """One set's own fingerprint (what runs on one set always stored), or a hash of every
    set's fingerprint and weight."""
    if len(sets) == 1:
        return sets[0].fingerprint
    text = ";".join(f"{s.fingerprint}:{s.spec.weight!r}" for s in sets)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def describe_difference(saved: list[dict], now: list[OpenedSet]) -> str:
    """Why a run's recorded data sets are not the ones given now, in words."""
    if len(saved) != len(now):
        return f"the run was trained on {len(saved)} data set(s), {len(now)} given now"
    for i, (a, b) in enumerate(zip(saved, now)):
        same_dir = Path(a["path"]).resolve() == b.spec.path.resolve()
        if a["fingerprint"] != b.fingerprint and same_dir and a.get("shards"):
            return (f"shards the run recorded from its snapshot of {b.spec.path} changed since "
                    "(`train label` rewrites shards when it deduplicates at its end)")
        if a["fingerprint"] != b.fingerprint:
            return (f"data set {i + 1} ({b.spec.path}) is not the one the run was trained on "
                    f"({a['path']}), or its contents changed since")
        if a["weight"] != b.spec.weight:
            return f"data set {i + 1} ({b.spec.path}) had weight {a['weight']:g}, now {b.spec.weight:g}"
    return "the data sets differ"


def hold_in_memory(sets: list[PositionSet], in_memory: bool | None) -> list[PositionSet]:
    """The sets packed in memory (``PositionSet.in_memory``) when ``in_memory`` is True, or
    None and all of them together take at most half the memory available; else as they
    are, memory-mapped. Batches are the same either way."""
    if in_memory is False:
        return sets
    if in_memory is None and not fits_in_memory(sum(s.nbytes() for s in sets)):
        log.info("data stays memory-mapped: %.2f GB do not fit in half the memory available",
                 sum(s.nbytes() for s in sets) / 1e9)
        return sets
    out = []
    for s in sets:
        if len(s.shards) == 1:
            out.append(s)
            continue
        try:
            out.append(s.in_memory())
        except ValueError as e:  # shards of several producers in one set
            if in_memory:
                raise
            log.info("a set stays memory-mapped: %s", e)
            out.append(s)
    return out


def concat_batches(parts: list[Batch]) -> Batch:
    """One batch of the rows of ``parts``, in order (``best`` only where every part has it)."""
    def cat(name: str):
        arrays = [getattr(p, name) for p in parts]
        return None if any(a is None for a in arrays) else np.concatenate(arrays)
    return Batch(cat("tokens"), cat("move"), cat("wdl"), cat("kind"), cat("legal"),
                 cat("target"), best=cat("best"), moves_left=cat("moves_left"))


class MixedSet:
    """Training sets drawn from in proportion to their weights (module docstring)."""

    def __init__(self, sets: list[PositionSet], weights: list[float]) -> None:
        if len(sets) != len(weights) or not sets:
            raise ValueError("need one weight per set")
        self.sets = sets
        w = np.asarray(weights, dtype=np.float64)
        self.weights = w / w.sum()
        self.rest = int(np.argmax(self.weights))  # the set that gives the remainder
        self._orders: dict[tuple[int, int], np.ndarray] = {}

    def __len__(self) -> int:
        return sum(len(s) for s in self.sets)

    def check_batch_size(self, batch_size: int) -> None:
        """The rounding rule needs B * w_max >= sets - 1 (else a batch could owe the
        largest set a negative count)."""
        if batch_size * self.weights[self.rest] < len(self.sets) - 1:
            raise ValueError(f"batch size {batch_size} is too small to mix {len(self.sets)} "
                             "data sets; raise it")

    def given(self, k: int, batch_size: int) -> np.ndarray:
        """Samples each set has given to batches 0 .. k - 1 (int64, one per set)."""
        out = np.floor(k * batch_size * self.weights).astype(np.int64)
        out[self.rest] = 0
        out[self.rest] = k * batch_size - out.sum()
        return out

    def order(self, i: int, n_pass: int, seed: int) -> np.ndarray:
        """The order in which pass ``n_pass`` over set ``i`` visits its samples."""
        key = (i, n_pass)
        if key not in self._orders:
            for old in [k for k in self._orders if k[0] == i and k[1] < n_pass - 1]:
                del self._orders[old]  # only the current and next pass are needed
            self._orders[key] = np.random.default_rng([seed, n_pass, i]).permutation(len(self.sets[i]))
        return self._orders[key]

    def stream(self, i: int, begin: int, end: int, seed: int) -> np.ndarray:
        """Indices into set ``i`` of the samples at positions begin .. end - 1 of its stream."""
        n = len(self.sets[i])
        parts, t = [], begin
        while t < end:
            n_pass, at = divmod(t, n)
            take = min(end - t, n - at)
            parts.append(self.order(i, n_pass, seed)[at:at + take])
            t += take
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def batch(self, k: int, batch_size: int, seed: int, with_target: bool = False) -> Batch:
        """Batch ``k``: each set's next samples of its stream, set after set."""
        a, b = self.given(k, batch_size), self.given(k + 1, batch_size)
        parts = [s.gather(self.stream(i, int(a[i]), int(b[i]), seed), with_target)
                 for i, s in enumerate(self.sets) if b[i] > a[i]]
        return concat_batches(parts)


def iterate_mixed(data: MixedSet, batch_size: int, seed: int, start_step: int = 0,
                  with_target: bool = False) -> Iterator[Batch]:
    """Batches from ``start_step`` on, forever; a batch's ``epoch`` and ``index`` count
    passes over the sets' combined size (``len(data) // batch_size`` batches each)."""
    per_epoch = len(data) // batch_size
    if per_epoch == 0:
        raise ValueError(f"batch size {batch_size} exceeds the {len(data)} training samples")
    data.check_batch_size(batch_size)
    k = start_step
    while True:
        batch = data.batch(k, batch_size, seed, with_target)
        batch.epoch, batch.index = divmod(k, per_epoch)
        yield batch
        k += 1

