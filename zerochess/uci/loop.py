"""The UCI protocol loop: the only place in zerochess that writes UCI text.

The main thread reads commands; a ``go`` starts the search on its one worker thread (the
Cython core releases the GIL) and returns, so ``isready`` and ``stop`` are answered while it
thinks. The search reports through callbacks; this module alone turns them into text. Lessons from what GUI
users report against Leela Chess Zero:

* the network is loaded when ``isready`` is answered, never lazily inside the first ``go``
  (which would spend the first move's clock on loading);
* ``go ponder`` and ``go infinite`` never send ``bestmove`` before ``stop``/``ponderhit``,
  and pondering spends none of the engine's own time: the clock starts at ``ponderhit``;
* ``UCI_ShowWDL`` is off by default, and floats are advertised as strings.

Every ``go`` gets exactly one ``bestmove``: ``cmd_go`` hands each to a ``_SearchJob``, which
alone sends it, at once (no position, nothing to search, a failure) or when its search ends
(module docstring of ``_SearchJob``); ``stop`` after a ``go`` already answered sends nothing.
A command the engine half understands is obeyed in what it understood, the rest named in
``info string warning: ...`` (an unknown ``go`` word, a FEN field too many, the illegal tail
of a move list: what Stockfish reads, it reads); one it cannot use at all is answered with
``info string error: ...``, and a ``position`` that cannot be read leaves no position, so
that no ``go`` answers from an older one. Input that is not UTF-8 is reported and ignored,
but for ``go`` and ``position``, read with the bad bytes replaced. Nothing but UCI goes to stdout:
diagnostics go to stderr (and ``LogFile``).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import TYPE_CHECKING, BinaryIO, Optional, TextIO

from zerochess._version import __version__
from zerochess.uci.format import (bestmove_line, currmove_line, info_line,
                                  verbose_move_stats_lines)
from zerochess.uci.options import OPTIONS, OptionError, OptionValues, flag_name, parse_flags

if TYPE_CHECKING:  # imported for real by UciLoop._load_engine (numpy, python-chess, Cython)
    from zerochess.chess import Board
    from zerochess.search.results import SearchResult
    from zerochess.search.timeman import GoParams, Stopper, allocate
    from zerochess.uci.commands import UciError, parse_go, parse_position, parse_setoption
    from zerochess.uci.player import Player

log = logging.getLogger("zerochess.uci")

#: Answered before the engine is loaded: they need neither the board nor the player.
_HANDSHAKE = ("uci", "debug", "register", "quit")

#: ``currmove`` lines come once per info report from this many seconds of search on, as
#: Stockfish sends them only after 3 s.
CURRMOVE_AFTER = 3.0


class UciLoop:
    def __init__(self, out: TextIO, options: Optional[OptionValues] = None):
        """``options``: the values to start from (command-line flags); ``uci`` advertises
        them as the defaults, so a GUI that sends every option back keeps them."""
        self._out = out
        self._write_lock = threading.Lock()
        self.options = options if options is not None else OptionValues()
        self._advertised = dict(self.options.values)
        self.board: Optional[Board] = None    # both made by the first command after the
        self.player: Optional[Player] = None  # handshake (_load_engine)
        self._has_position = True             # False: the last `position` was unreadable
        self._job: Optional[_SearchJob] = None
        if self.options["LogFile"]:
            _attach_log_file(self.options["LogFile"])

    # -- output -------------------------------------------------------------------------
    def send(self, line: str) -> None:
        with self._write_lock:
            self._out.write(line + "\n")
            self._out.flush()

    def error(self, message: str) -> None:
        """One ``info string error:`` line, however many lines the message has (a GUI shows
        any other line as garbage); the whole text goes to the log."""
        log.warning("%s", message)
        self.send(f"info string error: {' '.join(str(message).split())}")

    def warn(self, message: str) -> None:
        """One ``info string warning:`` line: input read in part, what was left out."""
        log.info("%s", message)
        self.send(f"info string warning: {' '.join(str(message).split())}")

    # -- input --------------------------------------------------------------------------
    def run(self, infile: BinaryIO) -> None:
        """Read commands until ``quit`` or end of input."""
        try:
            for raw in iter(infile.readline, b""):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    line = self._not_utf8(raw)
                    if line is None:
                        continue
                if not self.handle(line):
                    break
        finally:
            self._stop_search(wait=True)

    def _not_utf8(self, raw: bytes) -> Optional[str]:
        """A line that is not UTF-8 is reported and ignored, except ``go`` and ``position``,
        read with the bad bytes replaced: a ``go`` still gets its ``bestmove``, and a
        ``position`` still replaces the old one (what cannot be read of it is reported)."""
        words = raw.split()
        if words and words[0] in (b"go", b"position"):
            self.error("input line is not valid UTF-8; read with the bad bytes replaced")
            return raw.decode("utf-8", errors="replace")
        self.error("input line is not valid UTF-8; ignored")
        return None

    def handle(self, line: str) -> bool:
        """Execute one command line; False means quit."""
        words = line.split()
        if not words:
            return True
        command, args = words[0], words[1:]
        log.debug("<< %s", line.rstrip()[:200])
        handler = _COMMANDS.get(command)
        if handler is None:
            shown = command if len(command) <= 40 else command[:40] + "..."
            self.error(f"unknown command {shown!r}")
            return True
        if self.player is None:
            if command in _HANDSHAKE:
                return handler(self, args) is not False
            self._load_engine()
        try:
            return handler(self, args) is not False
        except UciError as exc:
            self.error(str(exc))
        except Exception as exc:  # never die on a command: report and read on
            log.exception("command %r failed", command)
            self.error(f"{command} failed: {exc}")
        return True

    def _load_engine(self) -> None:
        """Import the board, the command parsers, the time manager and the player, and make
        the board and the player: on the first command after the handshake, so that ``uci``
        is answered without numpy, python-chess or the Cython extensions (issue 29: ``uciok``
        within 0.3 s of launch). The network, and ONNX Runtime with it, loads at ``isready``.
        The names become this module's globals, as if imported at its top."""
        global Board, SearchResult, GoParams, Stopper, allocate, UciError, parse_go, \
            parse_position, parse_setoption, Player
        from zerochess.chess import Board
        from zerochess.search.results import SearchResult
        from zerochess.search.timeman import GoParams, Stopper, allocate
        from zerochess.uci.commands import UciError, parse_go, parse_position, parse_setoption
        from zerochess.uci.player import Player

        self.board = Board(chess960=self.options["UCI_Chess960"])
        self.player = Player()

    # -- commands -----------------------------------------------------------------------
    def cmd_uci(self, args):
        self.send(f"id name zerochess {__version__}")
        self.send("id author the zerochess developers")
        for option in OPTIONS:
            self.send(option.uci_line(self._advertised[option.name]))
        self.send("uciok")

    def cmd_isready(self, args):
        if self._job is None:  # while searching the network is loaded already
            self._configure()
        self.send("readyok")

    def cmd_ucinewgame(self, args):
        self._stop_search(wait=True)
        self.player.new_game()

    def cmd_setoption(self, args):
        name, value = parse_setoption(args)
        if self._job is not None:
            raise UciError("setoption is not allowed while searching")
        try:
            option = self.options.set(name, value)
        except OptionError as exc:
            raise UciError(str(exc)) from None
        if option.name == "LogFile":
            _attach_log_file(self.options["LogFile"])
        elif option.name == "Clear Hash" and self.player.search is not None:
            self.player.search.new_game()   # the tree and the cache; options and RNGs stay
        elif option.name == "UCI_Chess960":
            self.board.chess960 = self.options["UCI_Chess960"]

    def cmd_position(self, args):
        """Set the position; one that cannot be read leaves none (never a stale one).
        Allowed while searching: the running search has its own copy of its position."""
        try:
            board, warnings = parse_position(args, self.options["UCI_Chess960"])
        except UciError as exc:
            self._has_position = False
            raise UciError(f"{exc}; no position until the next position command "
                           f"(a go answers bestmove (none))") from None
        for warning in warnings:
            self.warn(warning)
        self.board, self._has_position = board, True

    def cmd_go(self, args):
        """The one rule of ``go``: exactly one ``bestmove``, sent by the ``_SearchJob`` made
        here and by nothing else. A ``go`` while a search runs stops that search first (its
        own bestmove goes out before this one's); whatever fails after the job exists is
        answered by the job with a legal move (or ``(none)``)."""
        if self._job is not None:
            self.warn("go while searching: the running search is stopped first")
            self._stop_search(wait=True)
        job = self._job = _SearchJob(self)
        try:
            if not self._has_position:
                self.error("go without a position: the last position command could not be read")
                job.answer(None, None)
                return
            params, warnings = parse_go(args, self.board)
            for warning in warnings:
                self.warn(warning)
            self._configure()  # a no-op unless options changed
            # Even with no network at all the job answers: every go ends in a bestmove.
            job.start(self.board.copy(), params)
        except Exception as exc:
            log.exception("go failed")
            self.error(f"go failed: {exc}")
            job.fail(self.board if self._has_position else None)
        finally:
            if not (job.answered or job.started):   # the guard: never a go left unanswered
                log.error("a go was left without an answer; answering (none)")
                job.answer(None, None)

    def cmd_stop(self, args):
        self._stop_search(wait=True)

    def cmd_ponderhit(self, args):
        job = self._job
        if job is None or not job.params.ponder:
            raise UciError("ponderhit without a running go ponder")
        job.ponderhit()

    def cmd_quit(self, args):
        self._stop_search(wait=True)
        return False

    def cmd_d(self, args):
        """Debug display (as Stockfish's `d`): the position as info strings."""
        if not self._has_position:
            self.send("info string no position: the last position command could not be read")
            return
        for row in str(self.board).splitlines():
            self.send(f"info string {row}")
        self.send(f"info string fen {self.board.fen()}")
        self.send(f"info string key {self.board.zobrist():016x}")

    def _configure(self) -> None:
        """Apply the options; a file that does not load is reported in one line and the
        engine goes on with the network (and book) it had."""
        try:
            problems = self.player.configure(self.options)
        except Exception as exc:  # LoadError: not even the fallback network loads
            problems = [str(exc)]
        for problem in problems:
            self.error(problem)

    # -- search lifecycle ---------------------------------------------------------------
    def _stop_search(self, wait: bool) -> None:
        job = self._job
        if job is not None:
            job.stop()
            if wait:
                job.join()

    def _job_finished(self, job: "_SearchJob") -> None:
        if self._job is job:
            self._job = None


_COMMANDS = {
    "uci": UciLoop.cmd_uci, "isready": UciLoop.cmd_isready, "ucinewgame": UciLoop.cmd_ucinewgame,
    "setoption": UciLoop.cmd_setoption, "position": UciLoop.cmd_position, "go": UciLoop.cmd_go,
    "stop": UciLoop.cmd_stop, "ponderhit": UciLoop.cmd_ponderhit, "quit": UciLoop.cmd_quit,
    "d": UciLoop.cmd_d,
    # commands a GUI may send that need no action
    "debug": lambda self, args: None, "register": lambda self, args: None,
}


class _SearchJob:
    """One ``go`` and its one ``bestmove``: the only sender of ``bestmove``.

    ``cmd_go`` makes it before anything can fail. Either it is answered at once
    (``answer``: no position; ``fail``: the go could not be started) or ``start`` hands it
    to the player, which calls back exactly once with the outcome (``_done``, or
    ``_failed``, which still answers a legal move). No thread of its own: the search runs on
    its one worker thread, which calls back with info and the outcome; this object formats
    them. ``bestmove`` goes out once the outcome is known and, for ``go ponder``/``go
    infinite``, ``stop`` or ``ponderhit`` has come, whichever is last, on whichever thread
    that is, and never twice (``_send_if_due``).
    """

    def __init__(self, loop: UciLoop):
        self.loop = loop
        self.board: Optional[Board] = None
        self.params: Optional[GoParams] = None
        self.started = False            # handed to the player: it will call back once
        self._lock = threading.Lock()
        self._released = True           # bestmove may go out (not before stop for infinite)
        self._outcome: Optional[tuple] = None   # (best, ponder) once the search has ended
        self._sent = False
        self._clock_start = time.perf_counter()
        self._stopper: Optional[Stopper] = None
        self._last_visits: dict[str, int] = {}  # root visits at the last report (currmove)

    @property
    def answered(self) -> bool:
        return self._sent

    def _make_stopper(self) -> Stopper:
        opts = self.loop.options
        budget = None if self.params.ponder else allocate(
            self.params, self.board.turn, opts["Move Overhead"], len(self.board),
            slow_mover=opts["SlowMover"] / 100.0)
        searchable = self.params.searchmoves
        return Stopper(self.params, budget, fixed_nodes=opts["Nodes"],
                       adaptive=opts["TimeManager"] == "adaptive",
                       root_moves=len(searchable if searchable is not None
                                      else self.board.legal_moves()),
                       analyse=opts["UCI_AnalyseMode"])

    def start(self, board: Board, params: GoParams) -> None:
        """Search ``board`` with ``params``: the player answers through ``_done``."""
        self.board, self.params = board, params
        self._released = not (params.ponder or params.infinite)
        self._stopper = self._make_stopper()
        self.started = True
        loop = self.loop
        try:
            loop.player.start(
                self.board, self.params, self._stopper, loop.options,
                on_info=self._info,
                on_done=self._done, on_error=self._failed, started=self._clock_start)
        except Exception as exc:
            self._failed(exc)

    def answer(self, best: Optional[str], ponder: Optional[str]) -> None:
        """Answer now, without a search (nothing to search from)."""
        with self._lock:
            self._released = True
        self._done(best, ponder)

    def fail(self, board: Optional[Board]) -> None:
        """The go could not be started: a legal move of ``board`` if it has one."""
        if not self.started:
            moves = board.legal_moves() if board is not None else []
            self.answer(moves[0] if moves else None, None)

    def _info(self, info) -> None:
        """An info report; with ``LogLiveStats`` every report, with ``VerboseMoveStats`` the
        final one (the result, sent before bestmove) also carries the per-move lines; after
        ``CURRMOVE_AFTER`` seconds a ``currmove`` line follows each report."""
        opts = self.loop.options
        final = isinstance(info, SearchResult)
        text = info_line(info, opts["UCI_ShowWDL"], opts["ScoreType"])
        if opts["LogLiveStats"] or (opts["VerboseMoveStats"] and final):
            text = "\n".join([text, *verbose_move_stats_lines(info.moves, info.root)])
        current = None if final else self._currmove(info)
        if current is not None:
            text = "\n".join([text, current])
        self.loop.send(text)

    def _currmove(self, info) -> Optional[str]:
        """Stockfish's ``currmove`` for a search that works on every root move at once: the
        root move that took the most playouts since the last report (the one the search is
        busy with), numbered by its rank in visits (1: the most visited); from
        ``CURRMOVE_AFTER`` seconds on, as Stockfish."""
        allowed = self.params.searchmoves if self.params is not None else None
        visits = {m.move: m.visits for m in getattr(info, "moves", ())
                  if allowed is None or m.move in allowed}
        last, self._last_visits = self._last_visits, visits
        if info.time < CURRMOVE_AFTER or not visits:
            return None
        move = max(visits, key=lambda m: visits[m] - last.get(m, 0))
        ranked = sorted(visits, key=visits.get, reverse=True)
        return currmove_line(info.search_depth, move, ranked.index(move) + 1)

    def stop(self):
        self.loop.player.stop()
        self._release()

    def ponderhit(self):
        # The opponent played the expected move: from now on it is our clock.
        self.params.ponder = False
        self._clock_start = time.perf_counter()
        self._stopper = self._make_stopper()
        self.loop.player.ponderhit(self._stopper, self._clock_start)
        self._release()

    def join(self):
        """Wait until the search (and the bestmove it may send) is over."""
        self.loop.player.wait()

    def _failed(self, exc: BaseException):
        """Report, and still answer with a legal move."""
        log.error("search failed", exc_info=exc)
        self.loop.error(f"search failed: {exc}")
        moves = self.board.legal_moves() if self.board is not None else []
        if self.params is not None and self.params.searchmoves:
            moves = list(self.params.searchmoves)
        self._done(moves[0] if moves else None, None)

    def _done(self, best: Optional[str], ponder: Optional[str]):
        with self._lock:
            if self._outcome is not None:   # a second outcome would be a second bestmove
                log.error("a second outcome for one go (%s) ignored", best)
                return
            self._outcome = (best, ponder)
        self._send_if_due()

    def _release(self):
        with self._lock:
            self._released = True
        self._send_if_due()

    def _send_if_due(self):
        with self._lock:
            if self._sent or not self._released or self._outcome is None:
                return
            self._sent = True
        # Idle before bestmove goes out: a GUI may send its next command the moment it reads it.
        self.loop._job_finished(self)
        self.loop.send(bestmove_line(*self._outcome))


def _attach_log_file(path: str) -> None:
    root = logging.getLogger("zerochess")
    for handler in list(root.handlers):
        if getattr(handler, "_zerochess_logfile", False):
            root.removeHandler(handler)
    if path:
        handler = logging.FileHandler(path)
        handler._zerochess_logfile = True
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.DEBUG)


def options_from_flags(argv: list[str]) -> OptionValues:
    """The option values that command-line flags set (``--threads=2 --weights-file x.onnx``:
    options.parse_flags); OptionError names the flag that is wrong."""
    values = OptionValues()
    for option, text in parse_flags(argv):
        try:
            values.set(option.name, text)
        except OptionError as exc:
            raise OptionError(f"{flag_name(option.name)}={text}: {exc}") from None
    return values


def main(argv: Optional[list[str]] = None) -> None:
    """Entry point: UCI on the process's stdin/stdout, the options set by ``argv``'s flags
    first (exit status 2 and one line on stderr for a flag that is wrong).

    The real stdout is kept for UCI alone; file descriptor 1 is pointed at stderr so that
    anything a library prints (a warning from C code, say) cannot corrupt the protocol."""
    try:
        options = options_from_flags(list(argv or []))
    except OptionError as exc:
        sys.stderr.write(f"zerochess: {exc}\n")
        sys.exit(2)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="zerochess %(levelname)s: %(message)s")
    uci_out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1, encoding="utf-8")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    UciLoop(uci_out, options).run(sys.stdin.buffer)
