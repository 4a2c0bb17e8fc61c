"""Jobs over worker processes, written once for the data producers (generate, label)."""

from __future__ import annotations

import multiprocessing as mp
from typing import Callable, Iterator, Sequence


def map_jobs(fn: Callable, jobs: Sequence, workers: int, initializer: Callable | None = None,
             initargs: tuple = ()) -> Iterator:
    """``fn(job)`` for every job, in completion order: in this process for one worker or one
    job (``initializer`` runs here first), else in a process pool (fork where the platform has
    it, for a fast start; spawn elsewhere, e.g. Windows). The pool is terminated when the
    generator ends or is closed, so a consumer that raises or is interrupted leaves no
    workers behind."""
    if workers <= 1 or len(jobs) <= 1:
        if initializer is not None:
            initializer(*initargs)
        yield from map(fn, jobs)
        return
    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    pool = mp.get_context(method).Pool(min(workers, len(jobs)), initializer, initargs)
    try:
        yield from pool.imap_unordered(fn, jobs)
    finally:
        pool.terminate()
        pool.join()
