"""What the UCI loop plays with: the evaluator, the search and the opening book.

It turns option values into objects (loading the network when ``WeightsFile``/``Device``/
``Threads`` change, re-configuring the search otherwise) and plays one move per ``go``.
It prints nothing: reports go through the ``on_info`` callback the loop gives it.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Optional

from zerochess.engine import Board
from zerochess.search.params import SearchParams
from zerochess.search.results import PVLine, SearchInfo, SearchLimits, SearchStats
from zerochess.search.timeman import GoParams, Stopper
from zerochess.uci.options import DEFAULT, OptionValues

log = logging.getLogger("zerochess.uci")

SHIPPED_BOOK = Path(__file__).resolve().parent.parent / "data" / "book.bin"


class LoadError(RuntimeError):
    """Not even the fallback network loads: the engine has no evaluator to search with."""


def short_reason(exc: BaseException, limit: int = 160) -> str:
    """One line for the GUI out of an exception whose text may run over many lines (torch's
    load errors do): the first line, cut after its first sentence when it is long."""
    message = getattr(exc, "problem", None) or str(exc)  # CheckpointError: without the path
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    if len(text) > limit and ". " in text:
        text = text[:text.index(". ") + 1] + " [...]"
    if len(text) > limit:
        text = text[:limit] + " [...]"
    return text


class Player:
    def __init__(self):
        self.evaluator = None
        self.search = None
        self.book = None
        self._evaluator_key = None
        self._book_key = None
        self.rng = random.Random(0)

    # -- configuration ------------------------------------------------------------------
    def configure(self, options: OptionValues) -> list[str]:
        """Bring evaluator, search and book in line with the options.

        A network or book that cannot be loaded never leaves the engine without one: the
        previous network stays (or, if none has loaded yet, the shipped one is loaded), the
        failing option values are set back to the ones in use, and the returned list holds
        one one-line message per such fallback for the GUI. Raises ``LoadError`` only when
        not even the fallback network loads (a broken installation)."""
        problems: list[str] = []
        if self._evaluator_key_of(options) != self._evaluator_key:
            try:
                self._load_evaluator(options)
            except Exception as exc:  # torch raises many types for a bad file
                log.warning("cannot load the network (WeightsFile %r, Device %r)",
                            options["WeightsFile"], options["Device"], exc_info=True)
                problems.append(self._fall_back(options, exc))
        self._configure_search_and_book(options, problems)
        return problems

    @staticmethod
    def _evaluator_key_of(options: OptionValues) -> tuple:
        return (options["WeightsFile"], options["Device"], options["Threads"],
                options["PolicyTemperature"], options["MinibatchSize"])

    def _load_evaluator(self, options: OptionValues) -> None:
        key = self._evaluator_key_of(options)
        from zerochess.engine.backends import make_evaluator
        spec = options["WeightsFile"]
        started = time.perf_counter()
        kwargs = {} if spec == "uniform" else {"policy_temperature": options["PolicyTemperature"]}
        evaluator = make_evaluator(None if spec == DEFAULT else spec, device=options["Device"],
                                   threads=options["Threads"], **kwargs)
        log.info("evaluator %r ready in %.2f s", evaluator, time.perf_counter() - started)
        self.evaluator, self._evaluator_key = evaluator, key
        self.search = None

    def _fall_back(self, options: OptionValues, exc: Exception) -> str:
        """After a failed load: set WeightsFile and Device back to the network in use (the
        shipped one on auto if none loaded yet), load it if other options changed too, and
        return the one line that says so."""
        failed = f"cannot load WeightsFile {options['WeightsFile']}"
        if options["Device"] != "auto":
            failed += f" on Device {options['Device']}"
        failed += f": {short_reason(exc)}"
        if self._evaluator_key is not None:
            weights, device = self._evaluator_key[:2]
        else:
            weights, device = DEFAULT, "auto"
        options.values["WeightsFile"], options.values["Device"] = weights, device
        kept = "the shipped network" if weights == DEFAULT else f"WeightsFile {weights}"
        if self._evaluator_key_of(options) != self._evaluator_key:
            try:
                self._load_evaluator(options)
            except Exception as again:
                log.warning("the fallback network does not load either", exc_info=True)
                raise LoadError(f"{failed}; {kept} does not load either: {short_reason(again)}") from again
            verb = "using"
        else:
            verb = "keeping"
        return f"{failed}; {verb} {kept}"

    def _configure_search_and_book(self, options: OptionValues, problems: list[str]) -> None:
        params = SearchParams(
            cpuct_init=options["CPuct"], cpuct_factor=options["CPuctFactor"],
            cpuct_base=options["CPuctBase"], fpu_reduction=options["FpuReduction"],
            minibatch=options["MinibatchSize"], hash_mb=options["Hash"],
            multipv=options["MultiPV"])
        if self.search is None:
            from zerochess.search.search import Search
            self.search = Search(self.evaluator, params)
        elif params != self.search.params:
            self.search.configure(params)
        book_key = (options["OwnBook"], options["BookFile"])
        if book_key != self._book_key:
            book = None
            if options["OwnBook"]:
                from zerochess.book.polyglot import BookProber
                path = SHIPPED_BOOK if options["BookFile"] == DEFAULT else Path(options["BookFile"])
                try:
                    book = BookProber(path)
                except Exception as exc:
                    log.warning("cannot open BookFile %r", options["BookFile"], exc_info=True)
                    own, file = self._book_key or (False, DEFAULT)
                    options.values["OwnBook"], options.values["BookFile"] = own, file
                    kept = "no book" if not own else (
                        "the shipped book" if file == DEFAULT else f"BookFile {file}")
                    problems.append(f"cannot open BookFile {path}: {short_reason(exc)}; "
                                    f"keeping {kept}")
                    return
            self.book, self._book_key = book, book_key

    def new_game(self) -> None:
        if self.search is not None:
            self.search.new_game()
        self.rng = random.Random(0)

    # -- playing ------------------------------------------------------------------------
    def stop(self) -> None:
        if self.search is not None:
            self.search.stop()

    def play(self, board: Board, params: GoParams, get_stopper: Callable[[], Stopper],
             options: OptionValues, on_info: Callable[[SearchInfo], None],
             is_stopped: Callable[[], bool], clock_start: Callable[[], float] = time.perf_counter):
        """Search ``board`` and return (best move, ponder move), UCI strings or None."""
        legal = board.legal_moves()
        if not legal:
            # Checkmated or stalemated: say so, then `bestmove (none)`.
            mate = board.is_check()
            on_info(SearchInfo(nodes=0, nn_evals=0, cache_hits=0, hashfull=0, depth=0,
                               seldepth=0, time=0.0, lines=[PVLine(
                                   move="", visits=0, q=-1.0 if mate else 0.0,
                                   wdl=(1.0, 0.0, 0.0) if mate else (0.0, 1.0, 0.0), cp=0,
                                   mate=0 if mate else None, mate_plies=0 if mate else None, pv=[])]))
            return None, None
        if self.book is not None and not (params.ponder or params.infinite):
            move = self.book.probe(board.fen(), self.rng)
            if move is not None and move in legal:
                log.info("book move %s", move)
                return move, None

        def should_stop(stats: SearchStats) -> bool:
            stopper = get_stopper()
            if stopper.unlimited:
                return False
            # elapsed counts from `go` (or `ponderhit`), not from when the thread started
            return stopper.should_stop(replace(stats, elapsed=time.perf_counter() - clock_start()))

        search = self.search
        if search is None:
            raise LoadError("no network is loaded")
        search.set_position(board)
        limits = SearchLimits(nodes=None, should_stop=should_stop, root_moves=params.searchmoves)
        search.start(limits, on_info=on_info)
        if is_stopped():  # a stop that arrived while the search was starting
            search.stop()
        result = search.wait()
        best, ponder = result.best_move, result.ponder_move
        if params.searchmoves and best not in params.searchmoves:
            # only when the search was stopped before its first playout
            allowed = {m: v for m, v in result.root_visits.items() if m in params.searchmoves}
            best = max(allowed, key=allowed.get) if allowed else params.searchmoves[0]
            ponder = None
        temperature = options["Temperature"]
        if temperature > 0 and not params.searchmoves:
            best = self._sample(result.root_visits, temperature) or best
            if best != result.best_move:
                ponder = None
        return best, ponder

    def _sample(self, visits: dict[str, int], temperature: float) -> Optional[str]:
        """A move drawn with probability proportional to visits^(1/temperature)."""
        moves = [m for m, v in visits.items() if v > 0]
        if not moves:
            return None
        top = max(visits[m] for m in moves)
        weights = [(visits[m] / top) ** (1.0 / temperature) for m in moves]
        return self.rng.choices(moves, weights=weights)[0]
