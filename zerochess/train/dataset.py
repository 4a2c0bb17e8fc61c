"""Reading a generated data set: one split as one indexable set, batches on a side thread.

Batches are a pure function of (seed, epoch, batch index): epoch e visits the samples in
the order ``default_rng([seed, e]).permutation(n)`` and drops the last partial batch. That
is what lets ``--resume`` continue from a saved data position exactly, and it lets a
background thread gather batch k + 1 from the memory-mapped shards (numpy releases the GIL
while copying) while the trainer runs batch k.
"""

from __future__ import annotations

import hashlib
import os
import queue
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from zerochess.train.generate import _read_metadata
from zerochess.train.shards import Shard, ShardError, csr_rows, load_shard

POLICY_SIZE = 4168


@dataclass
class Batch:
    """A training batch as numpy arrays (the trainer moves them to the device)."""

    tokens: np.ndarray  # uint8 [B, 72]
    move: np.ndarray  # int64 [B]
    wdl: np.ndarray  # int64 [B] outcome class: 0 loss, 1 draw, 2 win (outcome + 1)
    kind: np.ndarray  # uint8 [B]
    legal: np.ndarray  # bool [B, POLICY_SIZE], True at the legal moves
    target: np.ndarray | None = None  # float32 [B, POLICY_SIZE] sampler_prob target, rows sum to 1
    epoch: int = 0
    index: int = 0  # batch index within the epoch


class PositionSet:
    """The samples of one split of a data set, across its shards, by global index."""

    def __init__(self, shards: list[Shard]) -> None:
        if not shards:
            raise ValueError("no shards")
        self.shards = shards
        sizes = np.array([len(s) for s in shards], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(sizes)])

    def __len__(self) -> int:
        return int(self.starts[-1])

    @property
    def has_sampler_prob(self) -> bool:
        """Whether every shard stores the sampler's distribution (shard format version >= 2)."""
        return all("sampler_prob" in s for s in self.shards)

    def gather(self, idx: np.ndarray, sampler_target: bool = False) -> Batch:
        """The samples at global indices ``idx`` (any order), in that order; with
        ``sampler_target`` also their dense sampler_prob policy targets."""
        b = len(idx)
        tokens = np.empty((b, 72), np.uint8)
        move = np.empty(b, np.int64)
        outcome = np.empty(b, np.int8)
        kind = np.empty(b, np.uint8)
        legal = np.zeros((b, POLICY_SIZE), dtype=bool)
        target = np.zeros((b, POLICY_SIZE), dtype=np.float32) if sampler_target else None
        which = np.searchsorted(self.starts, idx, side="right") - 1
        for s in np.unique(which):
            rows = np.nonzero(which == s)[0]
            local = idx[rows] - self.starts[s]
            sh = self.shards[s]
            tokens[rows] = sh["tokens"][local]
            move[rows] = sh["move"][local]
            outcome[rows] = sh["outcome"][local]
            kind[rows] = sh["kind"][local]
            flat, lens = csr_rows(sh["legal_offsets"], local)  # every legal move of every sample
            at = (np.repeat(rows, lens), sh["legal_indices"][flat])
            legal[at] = True
            if target is not None:
                target[at] = sh["sampler_prob"][flat]
        if target is not None:  # undo float16 rounding: each row sums to exactly 1 again
            target /= target.sum(1, keepdims=True)
        return Batch(tokens, move, outcome.astype(np.int64) + 1, kind, legal, target)


def load_split(data_dir: str | os.PathLike, split: str, verify: bool = True) -> PositionSet:
    """The ``split`` ('train' or 'val') of a complete data set; ShardError names any bad file."""
    data_dir = Path(data_dir)
    meta_path = data_dir / "metadata.json"
    meta = _read_metadata(meta_path)
    if meta is None:
        raise ShardError(meta_path, "missing: not a data set directory (run `zerochess train generate`)")
    if meta.get("status") != "complete":
        raise ShardError(meta_path, "data set is incomplete: rerun the same generate command to finish it")
    names = sorted(n for n, s in meta["shards"].items() if s["split"] == split)
    if not names:
        raise ShardError(meta_path, f"no {split} shards")
    shards = [load_shard(data_dir / n, verify=verify) for n in names]
    for name, sh in zip(names, shards):
        if len(sh) != meta["shards"][name]["samples"]:
            raise ShardError(sh.path / "shard.json", "sample count differs from metadata.json")
    return PositionSet([s for s in shards if len(s)])


def data_fingerprint(data_dir: str | os.PathLike) -> str:
    """A short hash of metadata.json, stored in checkpoints to tie a run to its data."""
    return hashlib.sha256((Path(data_dir) / "metadata.json").read_bytes()).hexdigest()[:16]


def epoch_order(n: int, seed: int, epoch: int) -> np.ndarray:
    """The order in which epoch ``epoch`` visits the ``n`` samples."""
    return np.random.default_rng([seed, epoch]).permutation(n)


def iterate_batches(data: PositionSet, batch_size: int, seed: int, start_epoch: int = 0,
                    start_index: int = 0, sampler_target: bool = False) -> Iterator[Batch]:
    """Batches from (start_epoch, start_index) on, forever; deterministic in seed."""
    per_epoch = len(data) // batch_size
    if per_epoch == 0:
        raise ValueError(f"batch size {batch_size} exceeds the {len(data)} training samples")
    epoch, index = start_epoch, start_index
    while True:
        order = epoch_order(len(data), seed, epoch)
        while index < per_epoch:
            batch = data.gather(order[index * batch_size:(index + 1) * batch_size], sampler_target)
            batch.epoch, batch.index = epoch, index
            yield batch
            index += 1
        epoch, index = epoch + 1, 0


class Prefetcher:
    """Runs an iterator on a daemon thread, ``depth`` items ahead of the consumer."""

    _DONE = object()

    def __init__(self, it: Iterator, depth: int = 3) -> None:
        self._q: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(it,), daemon=True)
        self._thread.start()

    def _run(self, it: Iterator) -> None:
        try:
            for item in it:
                while not self._stop.is_set():
                    try:
                        self._q.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if self._stop.is_set():
                    return
        except BaseException as e:  # hand the error to the consumer
            self._q.put(e)
            return
        self._q.put(self._DONE)

    def __iter__(self) -> "Prefetcher":
        return self

    def __next__(self):
        item = self._q.get()
        if item is self._DONE:
            raise StopIteration
        if isinstance(item, BaseException):
            raise item
        return item

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
