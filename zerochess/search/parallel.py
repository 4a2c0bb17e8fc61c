"""``Threads`` > 1: several threads search one tree, each with its own batch at the network.

The network takes nearly all of a search's time (gathering and backing up a batch cost about
0.1% of it), so the way to use more cores is to keep more batches at the evaluator at once,
as Leela Chess Zero's search threads do. Each of ``threads`` threads loops: gather a batch
from the tree (``mcts.gather``), evaluate it and back it up (``rounds.back_up``, shared with
self-play's forest: ONNX Runtime and torch release the GIL while they compute, so the
evaluations run in parallel). One lock guards the tree: a thread holds it only to gather and to
back up, never while its batch is at the network, so the threads rarely wait for it, and
no thread hands work to another (no wake-up between a batch's answer and the next batch).
Virtual loss keeps the batches apart: the leaves of a batch at the network stay PENDING,
so another thread that reaches one counts a collision instead of expanding it twice; a
thread that finds nothing to gather waits until another backs a batch up.

``after_batch`` (stopping rules, progress reports) runs under the lock after every batch,
on whichever thread backed it up: one at a time, and with the tree consistent (every batch
in flight still holds its virtual loss; ``pending_leaves`` lists them).

With ``threads`` 1 the search does not come here: ``Search`` runs its one-thread loop,
gather, evaluate, back up in turn on its own thread, deterministic.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Optional

from zerochess.search.mcts import Batch, abandon_batch, gather
from zerochess.search.rounds import back_up

__all__ = ["TreeWorkers"]


class TreeWorkers:
    """``threads`` threads (the caller's and ``threads - 1`` kept in a pool between
    searches) that search one tree together."""

    def __init__(self, threads: int, leaves: int = 64) -> None:
        if threads < 2:
            raise ValueError(f"TreeWorkers needs 2 threads or more, got {threads!r}")
        self.threads = threads
        self._batches = [Batch(leaves) for _ in range(threads)]
        self._pool = ThreadPoolExecutor(threads - 1, thread_name_prefix="zerochess-eval")
        self._lock = threading.Condition(threading.Lock())
        self._in_flight: set[int] = set()     # indices of the batches at the network
        self._stopping = False
        self._error: Optional[BaseException] = None
        self._released = _Released(self._lock)

    def run(self, tree, evaluator, after_batch: Callable[[float], bool]) -> None:
        """Search ``tree`` until ``after_batch(seconds the batch took)`` returns True, the
        tree reaches its target or has nothing left to gather; every batch is backed up
        (or abandoned, if its evaluation failed) before this returns. Raises the first
        exception an evaluation (or ``after_batch``) raised."""
        self._stopping, self._error = False, None
        helpers = [self._pool.submit(self._work, i, tree, evaluator, after_batch)
                   for i in range(1, self.threads)]
        try:
            self._work(0, tree, evaluator, after_batch)
        finally:
            for helper in helpers:
                helper.result()               # _work never raises: errors go to _error
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _work(self, i: int, tree, evaluator, after_batch) -> None:
        """One thread's loop; never raises: a failure is kept for ``run`` and stops all."""
        batch, lock = self._batches[i], self._lock
        with lock:
            try:
                while not self._stopping:
                    started = time.perf_counter()
                    if gather([tree], batch) == 0:
                        if not self._in_flight:   # nothing to gather, nothing to wait for
                            self._stop_all()
                            break
                        lock.wait()               # until another thread backs a batch up
                        continue
                    self._in_flight.add(i)
                    # the lock is released while the batch is at the network
                    back_up(batch, evaluator, unlocked=self._released)
                    self._in_flight.discard(i)
                    lock.notify_all()             # a waiting thread may find leaves again
                    if after_batch(time.perf_counter() - started):
                        self._stop_all()
            except BaseException as exc:
                if batch.leaves:                  # its virtual loss and PENDING leaves go
                    abandon_batch(batch)
                self._in_flight.discard(i)
                self._fail(exc)

    def _stop_all(self) -> None:
        self._stopping = True
        self._lock.notify_all()

    def _fail(self, exc: BaseException) -> None:
        if self._error is None:
            self._error = exc
        self._stop_all()

    def pending_leaves(self) -> list[tuple[int, int]]:
        """``[(node, row)]`` of every leaf of the batches at the network; call it from
        ``after_batch`` (under the lock), e.g. to check the virtual loss each node carries."""
        return [leaf for i in sorted(self._in_flight) for leaf in self._batches[i].leaf_nodes()]

    def close(self) -> None:
        """Let the pool's threads end (between searches)."""
        self._pool.shutdown(wait=False)


class _Released:
    """Held: ``lock`` is released (a thread's batch at the network); left: taken again."""

    def __init__(self, lock) -> None:
        self.lock = lock

    def __enter__(self) -> None:
        self.lock.release()

    def __exit__(self, *exc) -> None:
        self.lock.acquire()
