"""The UCI engine's search: one tree, one evaluator, one worker thread per ``go``.

The interface is Leela Chess Zero's (SetPosition / StartSearch / StopSearch / WaitSearch)
and Stockfish's rule that the search never prints: progress goes to ``on_info`` (at least
once a second and once at the end), the result to ``on_done`` and ``wait()``, a failure to
``on_error`` and ``wait()``. The callbacks run on the worker thread, which is the only thread
a ``go`` uses for the tree: the caller (the UCI loop) returns at once and formats what
they report. With ``params.threads`` > 1 (UCI ``Threads``) that many threads search the
tree together, each with its own batch at the network (``zerochess.search.parallel``); the
callbacks then run on whichever of them backed up the latest batch, one at a time.

    search = Search(UniformEvaluator(), SearchParams(seed=1))
    search.set_position(board)                  # keeps the subtree if board extends the last root
    search.start(SearchLimits(nodes=10_000), on_info=print)
    result = search.wait()                      # SearchResult: best_move, pv, q, wdl, cp, mate, ...

or synchronously: ``search.search(board, nodes=10_000)``.

Determinism: randomness (root noise) comes from a generator seeded with ``params.seed`` at
every search, and selection breaks ties by move order, so with a fresh tree (``new_game``)
the same position and node count give the same result every time, with ``threads`` 1.
With more, batches come back in whatever order the evaluations finish.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Optional

import numpy as np

from zerochess.chess.board import Board
from zerochess.search.forest import add_dirichlet_noise
from zerochess.search.mcts import Batch, run_round
from zerochess.search.parallel import TreeWorkers
from zerochess.search.params import SearchParams
from zerochess.search.results import (SearchInfo, SearchLimits, SearchProgress, SearchResult,
                                      build_info, build_result)
from zerochess.search.syzygy import annotate
from zerochess.search.tree import Tree
from zerochess.search.tt import TranspositionTable

__all__ = ["Search", "search", "SearchLimits", "SearchResult", "SearchInfo", "SearchProgress"]

UNLIMITED = 1 << 62
INFO_INTERVAL = 1.0      # seconds between on_info reports (the first comes after the first batch)


class Search:
    """A search over one tree for the UCI engine (and ``bench``, and matches)."""

    def __init__(self, evaluator, params: Optional[SearchParams] = None):
        self.params = params if params is not None else SearchParams()
        self.evaluator = evaluator
        self.tt = TranspositionTable(self.params.hash_mb)
        self.tree = Tree(self.params, self.tt)
        self.batch = Batch(self.params.minibatch)
        self.workers = self._workers_for(self.params)
        self._thread: Optional[threading.Thread] = None
        self._finished = threading.Event()  # the worker is past its search, in on_done at most
        self._stopping: tuple = (None, None)  # (should_stop, clock origin), swapped whole
        self._stop = threading.Event()
        self._result: Optional[SearchResult] = None
        self._error: Optional[BaseException] = None
        self._reused = False
        self._board: Optional[Board] = None
        self.tablebases = None              # search/syzygy.Tablebases (UCI SyzygyPath) or None

    # ------------------------------------------------------------------ set-up
    def configure(self, params: SearchParams) -> None:
        """Apply new parameters between searches (the TT is reallocated if Hash changed, the
        leaf buffers if the minibatch or the threads did); the evaluator is not touched."""
        self._check_idle()
        if params.hash_mb != self.params.hash_mb:
            self.tt.resize(params.hash_mb)
        if params.minibatch != self.params.minibatch:
            self.batch = Batch(params.minibatch)
        if (params.threads, params.minibatch) != (self.params.threads, self.params.minibatch):
            if self.workers is not None:
                self.workers.close()
            self.workers = self._workers_for(params)
        self.params = params
        self.tree.configure(params)

    @staticmethod
    def _workers_for(params: SearchParams) -> Optional[TreeWorkers]:
        return TreeWorkers(params.threads, params.minibatch) if params.threads > 1 else None

    def set_tablebases(self, tablebases) -> None:
        """Use Syzygy tables (a search/syzygy.Tablebases; None: none) at the root and at the
        leaves from the next search on; again after its probe limit changed."""
        self._check_idle()
        self.tablebases = tablebases
        self.tree.set_tablebase(tablebases)

    def new_game(self) -> None:
        """Forget the tree and the cache (UCI ``ucinewgame``)."""
        self._check_idle()
        self.tree.clear()
        self.tt.clear()
        self._board = None

    def clear_cache(self) -> None:
        """Forget the cached evaluations (after the evaluator's answers changed, e.g. its
        policy temperature); the tree keeps what it has learnt."""
        self._check_idle()
        self.tt.clear()

    def set_position(self, board: Board) -> bool:
        """Set the root; True when the previous tree's subtree under it was kept."""
        self._check_idle()
        self._board = board.copy()
        self._reused = self.tree.set_position(board)
        return self._reused

    # ------------------------------------------------------------------ running
    def start(self, limits: Optional[SearchLimits] = None,
              on_info: Optional[Callable[[SearchInfo], None]] = None,
              on_done: Optional[Callable[[SearchResult], None]] = None,
              on_error: Optional[Callable[[BaseException], None]] = None) -> None:
        """Search the position of the last ``set_position`` on a worker thread; return at once.

        ``on_info``, then ``on_done`` (or ``on_error``, with the exception the search raised)
        run on that thread; ``on_done`` may start the next search's caller going (a GUI
        answers ``bestmove`` with its next ``go``), which is why the search counts as idle
        from the moment ``on_done`` is called."""
        self._check_idle()
        if self._board is None:
            raise RuntimeError("set_position() must come before start()")
        self._stop.clear()
        self._finished.clear()
        self._result, self._error = None, None
        limits = limits if limits is not None else SearchLimits()
        self._stopping = (limits.should_stop, limits.started)
        self._thread = threading.Thread(target=self._run,
                                        args=(limits, on_info, on_done, on_error),
                                        name="zerochess-search", daemon=True)
        self._thread.start()

    def update_limits(self, should_stop: Optional[Callable[[SearchProgress], bool]],
                      started: Optional[float] = None) -> None:
        """Replace the running search's stopping rule, polled from its next batch on, with
        ``SearchProgress.elapsed`` counted from ``started`` (perf_counter; None: now).

        UCI ``ponderhit``: the opponent played the expected move, the engine's clock starts.
        """
        self._stopping = (should_stop, time.perf_counter() if started is None else started)

    def stop(self) -> None:
        """Ask the running search to stop after its current batch (returns at once); with
        several threads each backs its batch up first (one batch's time at most)."""
        self._stop.set()

    def join(self) -> None:
        """Block until the worker thread, its callbacks included, has ended."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
            self._thread = None

    def wait(self) -> SearchResult:
        """Block until the search ends; its result (re-raises the search's exception)."""
        self.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        if self._result is None:
            raise RuntimeError("no search was started")
        return self._result

    @property
    def running(self) -> bool:
        """True while a search works; False once it has reached its callbacks."""
        return (self._thread is not None and self._thread.is_alive()
                and not self._finished.is_set())

    def search(self, board: Board, nodes: Optional[int] = None,
               limits: Optional[SearchLimits] = None) -> SearchResult:
        """Synchronous convenience: set_position, start, wait."""
        self.set_position(board)
        self.start(limits if limits is not None else SearchLimits(nodes=nodes))
        return self.wait()

    def _check_idle(self) -> None:
        if self.running:
            raise RuntimeError("the search is running; stop() and wait() first")
        self.join()  # a finished worker may still be returning from on_done

    def _run(self, limits: SearchLimits, on_info, on_done, on_error) -> None:
        try:
            result = self._loop(limits, on_info)
        except BaseException as exc:       # handed to on_error and wait()
            self._error = exc
            self._finished.set()
            if on_error is not None:
                on_error(exc)
            return
        self._result = result
        self._finished.set()
        if on_done is not None:
            on_done(result)

    def _loop(self, limits: SearchLimits, on_info) -> SearchResult:
        tree, params = self.tree, self.params
        tree.begin(limits.nodes if limits.nodes is not None else UNLIMITED)
        # A root in the tablebases: only the moves that keep its result (search/syzygy.py).
        root_moves = limits.root_moves or ()
        root_tb = (self.tablebases.rank_root(self._board, root_moves)
                   if self.tablebases is not None else None)
        tree.restrict_root(root_tb.keep if root_tb is not None else root_moves)
        rng = np.random.default_rng(params.seed)
        start = time.perf_counter()
        last_info = float("-inf")  # the first batch reports at once: a GUI shows it within 100 ms
        changes, last_best = 0, -1
        # The root is expanded first even if stop() came early: there must be a move.
        if not tree.root_expanded and not tree.done:
            run_round([tree], self.evaluator, self.batch, 1)
        if params.dirichlet_fraction > 0:
            add_dirichlet_noise(tree, rng, params.dirichlet_alpha, params.dirichlet_fraction)

        def after_batch(batch_seconds: float) -> bool:
            """Poll the stopping rule, report progress once a second; True: stop now."""
            nonlocal changes, last_best, last_info
            now = time.perf_counter()
            should_stop, clock_start = self._stopping  # one read: update_limits swaps both
            if should_stop is not None:
                best_visits, second_visits, best = tree.root_top2_visits()
                if best != last_best:
                    changes += last_best >= 0
                    last_best = best
                stats = tree.stats()
                root = tree.root_wdl()              # (q, wdl) or None: timeman's value rule
                progress = SearchProgress(
                    elapsed=now - (start if clock_start is None else clock_start),
                    nodes=stats["playouts"], depth=stats["depth"],
                    best_visits=best_visits, second_visits=second_visits,
                    best_move_changes=changes, last_batch_seconds=batch_seconds,
                    nn_evals=stats["nn_evals"], tree_full=stats["tree_full"],
                    root_proven=tree.root_proven(), q=None if root is None else root[0],
                    root_visits=stats["root_visits"])
                if should_stop(progress):
                    return True
            if on_info is not None and now - last_info >= INFO_INTERVAL:
                on_info(annotate(build_info(tree, self.tt, now - start, params.multipv), root_tb))
                last_info = now
            return False

        if self.workers is None:                      # Threads 1: one batch at a time
            while not tree.done and not self._stop.is_set():
                t0 = time.perf_counter()
                if run_round([tree], self.evaluator, self.batch) == 0:
                    break
                if after_batch(time.perf_counter() - t0):
                    break
        elif not tree.done and not self._stop.is_set():
            self.workers.run(tree, self.evaluator,
                             lambda seconds: self._stop.is_set() or after_batch(seconds))
        elapsed = time.perf_counter() - start
        result = annotate(build_result(tree, self.tt, elapsed, params.multipv, self._reused),
                          root_tb)
        if on_info is not None:
            on_info(result)
        return result


def search(board: Board, nodes: int = 800, evaluator=None,
           params: Optional[SearchParams] = None) -> SearchResult:
    """One synchronous search with a fresh tree and cache (default: the uniform backend).

    >>> search(Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"), nodes=500).best_move
    'a1a8'
    """
    if evaluator is None:
        from zerochess.neural.evaluator import UniformEvaluator
        evaluator = UniformEvaluator()
    return Search(evaluator, params).search(board, nodes=nodes)
