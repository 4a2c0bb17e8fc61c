"""The one reader: batches gathered from loaded shards (their large arrays memory-mapped),
for phase-1 training, its validation and the self-play replay window alike.

A set that fits in memory can be packed into one in-memory shard (``PositionSet.in_memory``,
``packed.py``): the same samples under the same indices, gathered in one pass instead of one
pass per shard a batch touches (a batch of 256 from a 2,400-shard set touches ~250).

``PositionSet`` indexes the samples of a list of shards (any source, any format version
``dataset.open_shard`` reads) as one array; ``gather(idx)`` copies the rows at ``idx``
into a ``Batch`` of dense arrays. Phase-1 batches are a pure function of (seed, epoch,
batch index): epoch e visits the samples in the order ``default_rng([seed, e]).permutation(n)``
and drops the last partial batch. That is what lets ``--resume`` continue from a saved data
position exactly, and it lets ``Prefetcher`` gather batch k + 1 on a side thread (numpy
releases the GIL while copying) while the trainer runs batch k.

Every batch carries the moves-left target of its samples (``moves_left.py``), computed from
the rows it gathers and the per-game arrays of the shards they come from.

Shards hold version-1 tokens (``encoding.pyx``); ``for_network`` turns a stream of batches
into what a network with threat inputs reads (version 2, ``threats.pyx``), batch by batch.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from zerochess.chess.layout import POLICY_SIZE, SEQ_LEN
from zerochess.train.data.format import Shard
from zerochess.train.data.moves_left import plies_left


@dataclass
class Batch:
    """A training batch as numpy arrays (the trainer moves them to the device)."""

    tokens: np.ndarray  # uint8 [B, SEQ_LEN]
    move: np.ndarray  # int64 [B]: the move played; without one, the target's likeliest move
    wdl: np.ndarray  # float32 [B, 3]: (loss, draw, win) target, rows sum to 1
    kind: np.ndarray  # uint8 [B]: random play's 0 move played / 1 mate-in-1; 0 for other data
    legal: np.ndarray  # bool [B, POLICY_SIZE], True at the legal moves
    target: np.ndarray | None = None  # float32 [B, POLICY_SIZE] policy target, rows sum to 1
    best: np.ndarray | None = None  # int64 [B]: a teacher's best move (labelled data only)
    #: float32 [B]: plies the game had left from the position (``moves_left.py``), -1 where
    #: the data cannot say (truncated or resigned games); the moves-left loss masks those.
    moves_left: np.ndarray | None = None
    epoch: int = 0
    index: int = 0  # batch index within the epoch


def csr_rows(offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gather of a CSR array: the flat positions of every entry of the given rows (row after
    row, in order) and each row's entry count, so ``values[flat]`` are their entries."""
    begin, lens = offsets[rows], offsets[rows + 1] - offsets[rows]
    return np.repeat(begin - np.cumsum(lens) + lens, lens) + np.arange(lens.sum()), lens


class PositionSet:
    """The samples of a list of shards by global index, skipping the first ``skip`` samples
    of the first shard (the replay window cuts into its oldest shard)."""

    def __init__(self, shards: list[Shard], skip: int = 0) -> None:
        self.shards = shards
        self.skip = skip
        sizes = np.array([len(s) for s in shards], dtype=np.int64)
        if len(sizes):
            sizes[0] -= skip
        self.starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        #: Every shard holds a teacher's best move (``train label`` data): batches carry
        #: ``best``, and validation scores agreement with the teacher.
        self.has_teacher = bool(shards) and all("teacher_best" in s for s in shards)

    def __len__(self) -> int:
        return int(self.starts[-1])

    @property
    def names(self) -> list[str]:
        return [s.path.name for s in self.shards]

    def nbytes(self) -> int:
        """Bytes of the arrays ``gather`` reads, i.e. what ``in_memory`` would hold."""
        from zerochess.train.data.packed import GATHERED

        return (sum(s[a].nbytes for s in self.shards for a in GATHERED if a in s)
                + 4 * len(self))  # the packed moves-left targets, float32

    def in_memory(self) -> "PositionSet":
        """The same samples, by the same indices, as one shard in memory (``packed.py``);
        ValueError when the shards disagree on which arrays they hold."""
        from zerochess.train.data.packed import pack_shards

        return PositionSet([pack_shards(self.shards, self.skip)])

    @property
    def has_policy_distribution(self) -> bool:
        """Whether every shard's policy target is a distribution, not just the played move
        (only phase-1 shards of format version 1, read through ``legacy``, are the latter)."""
        return all(s.source.get("policy") != "played-move" for s in self.shards)

    def gather(self, idx: np.ndarray, with_target: bool = False) -> Batch:
        """The samples at global indices ``idx`` (any order), in that order; with
        ``with_target`` also their dense policy targets."""
        b = len(idx)
        tokens = np.empty((b, SEQ_LEN), np.uint8)
        move = np.empty(b, np.int64)
        wdl = np.empty((b, 3), np.float32)
        kind = np.zeros(b, np.uint8)
        legal = np.zeros((b, POLICY_SIZE), dtype=bool)
        target = np.zeros((b, POLICY_SIZE), dtype=np.float32) if with_target else None
        best = np.empty(b, np.int64) if self.has_teacher else None
        moves_left = np.empty(b, np.float32)
        which = np.searchsorted(self.starts, idx, side="right") - 1
        for s in np.unique(which):
            rows = np.nonzero(which == s)[0]
            local = idx[rows] - self.starts[s] + (self.skip if s == 0 else 0)
            sh = self.shards[s]
            tokens[rows] = sh["tokens"][local]
            wdl[rows] = sh["wdl"][local]
            if "kind" in sh:
                kind[rows] = sh["kind"][local]
            need_policy = with_target or "move" not in sh or "legal_offsets" not in sh
            if need_policy:
                flat, lens = csr_rows(sh["policy_offsets"], local)
                at = (np.repeat(rows, lens), sh["policy_indices"][flat])
                dense = target if target is not None else np.zeros((b, POLICY_SIZE), np.float32)
                dense[at] = sh["policy_weights"][flat]
            if "legal_offsets" in sh:
                flat, lens = csr_rows(sh["legal_offsets"], local)  # every legal move of every sample
                legal[np.repeat(rows, lens), sh["legal_indices"][flat]] = True
            else:  # the policy target covers every legal move (self-play's root moves)
                legal[at] = True
            move[rows] = sh["move"][local] if "move" in sh else dense[rows].argmax(1)
            if best is not None:
                best[rows] = sh["teacher_best"][local]
            # a packed shard holds the targets of its samples (packed.py) as a row array
            moves_left[rows] = (sh["moves_left"][local] if "moves_left" in sh
                                else plies_left(sh, local))
        if target is not None:  # rows sum to exactly 1 (float16 legacy weights included)
            target /= target.sum(1, keepdims=True)
        return Batch(tokens, move, wdl, kind, legal, target, best=best, moves_left=moves_left)


def for_network(batches: Iterator[Batch], threat_inputs: bool) -> Iterator[Batch]:
    """``batches`` as a network reads them: unchanged, or with version-2 tokens when it has
    threat inputs. The flags are added in place to each batch's own token array (``gather``
    made it), as the batch streams by: on the loader's thread when prefetched, and without
    the GIL, so no copy of the data set is made and the trainer does not wait for it."""
    if not threat_inputs:
        yield from batches
        return
    from zerochess.chess.threats import add_threats_inplace

    for batch in batches:
        add_threats_inplace(batch.tokens)
        yield batch


def epoch_order(n: int, seed: int, epoch: int) -> np.ndarray:
    """The order in which epoch ``epoch`` visits the ``n`` samples."""
    return np.random.default_rng([seed, epoch]).permutation(n)


def iterate_batches(data: PositionSet, batch_size: int, seed: int, start_epoch: int = 0,
                    start_index: int = 0, with_target: bool = False) -> Iterator[Batch]:
    """Batches from (start_epoch, start_index) on, forever; deterministic in seed."""
    per_epoch = len(data) // batch_size
    if per_epoch == 0:
        raise ValueError(f"batch size {batch_size} exceeds the {len(data)} training samples")
    epoch, index = start_epoch, start_index
    while True:
        order = epoch_order(len(data), seed, epoch)
        while index < per_epoch:
            batch = data.gather(order[index * batch_size:(index + 1) * batch_size], with_target)
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
