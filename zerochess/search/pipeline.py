"""Batches in flight: how ``Threads`` puts every core to work on one tree.

The network takes nearly all of a search's time (gathering and backing up a batch cost
about 0.1% of it), so, as the issue that asked for ``Threads`` suggests, one thread owns the
tree and the network runs on ``threads`` evaluator threads at once: the owner gathers a
batch (``mcts.gather``), hands it to a free evaluator thread (``mcts.evaluate_batch``:
ONNX Runtime and torch release the GIL while they compute), gathers the next one while that
runs, and backs each batch up (``mcts.apply_batch``) when its answers come back, in the
order they come. Virtual loss keeps the batches apart: the leaves of a batch in flight stay
PENDING, so a later batch that reaches one counts a collision instead of expanding it
twice. No lock guards the tree, because no other thread touches it; an evaluator thread
reads only its batch's buffers, and each batch in flight has its own.

With ``threads`` 1 nothing runs on another thread: each batch is gathered, evaluated and
backed up in turn, exactly as ``mcts.run_round`` does, so the search stays deterministic.

    pipeline = BatchPipeline(threads=2)
    pipeline.fill(tree, evaluator)          # up to 2 batches gathered and at the evaluator
    while pipeline.in_flight:
        pipeline.next()                     # back one batch up; then fill again, or stop
    pipeline.drain()                        # before the tree is read or reused
"""

from __future__ import annotations

import queue
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Optional

from zerochess.search.mcts import Batch, abandon_batch, apply_batch, evaluate_batch, gather

__all__ = ["BatchPipeline"]


class BatchPipeline:
    """Up to ``threads`` batches of one tree at the evaluator; the caller's thread owns the
    tree (every method must be called from it)."""

    def __init__(self, threads: int = 1, leaves: int = 64) -> None:
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads!r}")
        self.threads = threads
        self._all = [Batch(leaves) for _ in range(threads)]
        self._free = list(self._all)
        # (batch, its evaluation or None to evaluate here, perf_counter when gathering began)
        self._done: "queue.SimpleQueue[tuple[Batch, Optional[Future], float]]" = queue.SimpleQueue()
        self._pool = (ThreadPoolExecutor(threads, thread_name_prefix="zerochess-eval")
                      if threads > 1 else None)
        self.in_flight = 0

    def fill(self, tree, evaluator) -> int:
        """Gather batches from ``tree`` until ``threads`` are in flight or the tree has
        nothing to give now (its playout target is covered, the tree is full, or every new
        path ends at a leaf already in flight); return how many batches are in flight."""
        while self._free:
            started = time.perf_counter()
            batch = self._free.pop()
            if gather([tree], batch) == 0:
                self._free.append(batch)
                break
            self.in_flight += 1
            if self._pool is None or batch.rows == 0:   # evaluated (if at all) by next()
                self._done.put((batch, None, started))
            else:
                future = self._pool.submit(evaluate_batch, evaluator, batch)
                future.add_done_callback(
                    lambda f, b=batch, t=started: self._done.put((b, f, t)))
        return self.in_flight

    def next(self, evaluator) -> float:
        """Back up the first batch whose answers are in (waiting for one if need be; with
        ``threads`` 1 evaluate the batch now); return the seconds since it was gathered.

        An evaluation that failed is abandoned (its virtual loss and PENDING leaves
        undone) and its exception raised; ``drain`` then settles the other batches."""
        if self.in_flight == 0:
            raise RuntimeError("no batch is in flight")
        batch, future, started = self._done.get()
        self.in_flight -= 1
        try:
            priors, wdl = (future.result() if future is not None
                           else evaluate_batch(evaluator, batch))
        except BaseException:
            abandon_batch(batch)
            self._free.append(batch)
            raise
        apply_batch(batch, priors, wdl)
        self._free.append(batch)
        return time.perf_counter() - started

    def drain(self, evaluator, apply: bool = True) -> None:
        """Wait for every batch in flight and back it up (``apply``) or abandon it: after
        this no evaluator thread reads a batch and the tree holds no virtual loss. The
        first failure is raised after every batch is settled."""
        error: Optional[BaseException] = None
        while self.in_flight:
            if apply and error is None:
                try:
                    self.next(evaluator)
                except BaseException as exc:
                    error = exc
                continue
            batch, future, _ = self._done.get()
            self.in_flight -= 1
            if future is not None:
                future.exception()          # wait: the evaluator thread may still read it
            abandon_batch(batch)
            self._free.append(batch)
        if error is not None:
            raise error

    def close(self) -> None:
        """Let the evaluator threads end (after ``drain``)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None

    def pending_leaves(self) -> list[tuple[int, int]]:
        """``[(node, row)]`` of every leaf of the batches in flight (tests: the virtual loss
        each node must carry). Only safe to call when the caller's thread owns the tree."""
        held = {id(b) for b in self._free}
        return [leaf for b in self._all if id(b) not in held for leaf in b.leaf_nodes()]
