"""What the UCI loop plays with: the evaluator, the search and the opening book.

It turns option values into objects (loading the network only when an option declared
``sets="network.*"`` (``WeightsFile``, ``Device``, ``Backend``) changes; ``Threads``,
``MinibatchSize``, ``PolicyTemperature`` and the other search options re-configure the
search and the loaded evaluator without touching the network) and plays one move per
``go`` on the search's worker thread. It prints nothing: reports go through the callbacks
the loop gives it.
"""

from __future__ import annotations

import logging
import random
import time
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from zerochess.chess import Board
from zerochess.search.results import PVLine, SearchInfo, SearchLimits, SearchResult
from zerochess.search.sampling import sample_by_visits
from zerochess.search.timeman import GoParams, Stopper
from zerochess.uci.options import (DEFAULT, OPTIONS, OptionValues, evaluator_settings,
                                   network_settings, search_params)
from zerochess.uci.strength import Strength

log = logging.getLogger("zerochess.uci")

#: The options whose change reloads the network (``sets="network.*"``).
NETWORK_OPTIONS = tuple(o for o in OPTIONS if o.sets.startswith("network."))

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
        self._network_values: dict = {}  # the network.* option values of the loaded evaluator
        self._book_key = None
        self.tablebases = None                   # search/syzygy.Tablebases of SyzygyPath
        self._tablebase_key = ("", True)
        self.rng = random.Random(0)              # book moves (BookProber's choice)
        self.move_rng = np.random.default_rng(0)  # Temperature's draw by visits

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
            except Exception as exc:  # torch and onnxruntime raise many types for a bad file
                log.warning("cannot load the network (WeightsFile %r, Device %r, Backend %r)",
                            options["WeightsFile"], options["Device"], options["Backend"],
                            exc_info=True)
                problems.append(self._fall_back(options, exc))
        self._configure_search_and_book(options, problems)
        return problems

    @staticmethod
    def _evaluator_key_of(options: OptionValues) -> tuple:
        """What the loaded evaluator depends on: the ``network.*`` options (declared in
        uci/options.py)."""
        return tuple(network_settings(options).items())

    def _load_evaluator(self, options: OptionValues) -> None:
        key = self._evaluator_key_of(options)
        from zerochess.neural.backends import make_evaluator
        started = time.perf_counter()
        # one intra-op thread per call: Threads runs that many calls at once (search threads)
        evaluator = make_evaluator(**network_settings(options), threads=1)
        log.info("evaluator %r ready in %.2f s", evaluator, time.perf_counter() - started)
        self.evaluator, self._evaluator_key = evaluator, key
        self._network_values = {o.name: options[o.name] for o in NETWORK_OPTIONS}
        self.search = None

    def _fall_back(self, options: OptionValues, exc: Exception) -> str:
        """After a failed load: set the ``network.*`` options (WeightsFile, Device, Backend)
        back to the network in use (their defaults, the shipped network, if none loaded
        yet), load it if other options changed too, and return the one line that says so."""
        failed = f"cannot load WeightsFile {options['WeightsFile']}"
        if options["Device"] != "auto":
            failed += f" on Device {options['Device']}"
        if options["Backend"] != "auto":
            failed += f" with Backend {options['Backend']}"
        failed += f": {short_reason(exc)}"
        in_use = self._network_values or {o.name: o.default for o in NETWORK_OPTIONS}
        options.values.update(in_use)
        weights = in_use["WeightsFile"]
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
        params = search_params(options)
        if self.search is None:
            from zerochess.search.search import Search
            self.search = Search(self.evaluator, params)
        elif params != self.search.params:
            self.search.configure(params)
        changed = False
        for name, value in evaluator_settings(options).items():
            if hasattr(self.evaluator, name) and getattr(self.evaluator, name) != value:
                setattr(self.evaluator, name, value)
                changed = True
        if changed:  # the cached evaluations are the old settings' answers
            self.search.clear_cache()
        self._configure_tablebases(options, problems)
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

    def _configure_tablebases(self, options: OptionValues, problems: list[str]) -> None:
        """SyzygyPath and Syzygy50MoveRule open the tables anew when they change; a file or
        directory that cannot be used is one line in ``problems``, and play goes on with
        the rest (search/syzygy.py). SyzygyProbeLimit only tells the search."""
        key = (options["SyzygyPath"], options["Syzygy50MoveRule"])
        if key != self._tablebase_key:
            from zerochess.search.syzygy import Tablebases, split_path
            tablebases = None
            if split_path(options["SyzygyPath"]):
                tablebases = Tablebases(options["SyzygyPath"], options["SyzygyProbeLimit"],
                                        options["Syzygy50MoveRule"])
                if not tablebases.n_tables and not tablebases.problems:
                    problems.append(f"SyzygyPath {options['SyzygyPath']}: no Syzygy tables there")
                log.info("SyzygyPath %r: %d tables", options["SyzygyPath"], tablebases.n_tables)
            self.tablebases, self._tablebase_key = tablebases, key
        if self.tablebases is not None:
            problems.extend(self.tablebases.take_problems())
            self.tablebases.limit = options["SyzygyProbeLimit"]
        if self.tablebases is not None or self.search.tablebases is not None:
            self.search.set_tablebases(self.tablebases)

    def new_game(self) -> None:
        if self.search is not None:
            self.search.new_game()
        self.rng = random.Random(0)
        self.move_rng = np.random.default_rng(0)

    # -- playing ------------------------------------------------------------------------
    def stop(self) -> None:
        if self.search is not None:
            self.search.stop()

    def start(self, board: Board, params: GoParams, stopper: Stopper, options: OptionValues,
              on_info: Callable[[SearchInfo], None],
              on_done: Callable[[Optional[str], Optional[str]], None],
              on_error: Callable[[BaseException], None], started: Optional[float] = None) -> None:
        """Start playing ``board`` and return at once.

        ``on_done(best, ponder)`` (UCI strings or None) is called exactly once, or else
        ``on_error``: here for a position without moves, ``searchmoves`` without a legal
        move (best None: ``bestmove (none)``) or a book move, otherwise on the
        search's worker thread, with ``stopper`` polled after each batch and its clock
        running from ``started`` (perf_counter; the moment ``go`` arrived)."""
        legal = board.legal_moves()
        if params.searchmoves == ():
            # searchmoves named no legal move: nothing to search, as Stockfish answers
            on_done(None, None)
            return
        if not legal:
            # Checkmated or stalemated: say so, then `bestmove (none)`.
            mate = board.is_check()
            on_info(SearchInfo(nodes=0, nn_evals=0, cache_hits=0, hashfull=0, depth=0,
                               seldepth=0, time=0.0, lines=[PVLine(
                                   move="", visits=0, q=-1.0 if mate else 0.0,
                                   wdl=(1.0, 0.0, 0.0) if mate else (0.0, 1.0, 0.0), cp=0,
                                   mate=0 if mate else None, mate_plies=0 if mate else None, pv=[])]))
            on_done(None, None)
            return
        if self.book is not None and not (params.ponder or params.infinite
                                          or options["UCI_AnalyseMode"]):
            move = self.book.probe(board.fen(), self.rng, chess960=board.chess960)
            if move is not None and move in legal:
                log.info("book move %s", move)
                on_done(move, None)
                return
        search = self.search
        if search is None:
            raise LoadError("no network is loaded")
        temperature = options["Temperature"]
        level = Strength.for_options(options)   # None: full strength

        def finished(result: SearchResult) -> None:
            try:
                best, ponder = self._choose(result, params, temperature)
                if level is not None and params.searchmoves is None:
                    best, ponder = level.choose(result, board, self.move_rng)
            except Exception as exc:
                on_error(exc)
                return
            on_done(best, ponder)

        search.set_position(board)
        limits = SearchLimits(nodes=level.nodes if level else None, should_stop=stopper.should_stop,
                              root_moves=params.searchmoves or (), started=started)
        search.start(limits, on_info=on_info, on_done=finished, on_error=on_error)

    def ponderhit(self, stopper: Stopper, started: float) -> None:
        """The running ``go ponder`` becomes a normal search on our clock from ``started``."""
        if self.search is not None:
            self.search.update_limits(stopper.should_stop, started)

    def wait(self) -> None:
        """Until the running search, its callbacks included, has ended."""
        if self.search is not None:
            self.search.join()

    def _choose(self, result: SearchResult, params: GoParams,
                temperature: float) -> tuple[Optional[str], Optional[str]]:
        """The move to play and the move to ponder on, from a finished search."""
        best, ponder = result.best_move, result.ponder_move
        if params.searchmoves and best not in params.searchmoves:
            # only when the search was stopped before its first playout
            allowed = {m: v for m, v in result.root_visits.items() if m in params.searchmoves}
            best = max(allowed, key=allowed.get) if allowed else params.searchmoves[0]
            ponder = None
        if temperature > 0 and params.searchmoves is None:
            moves = list(result.root_visits)
            drawn = sample_by_visits([result.root_visits[m] for m in moves], temperature,
                                     self.move_rng)
            if drawn is not None and moves[drawn] != result.best_move:
                best, ponder = moves[drawn], None
        return best, ponder
