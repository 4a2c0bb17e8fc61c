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

Every malformed command is answered with ``info string error: ...``; the engine keeps its
last valid state and reads on. Input that is not UTF-8 is reported and ignored. Nothing but
UCI goes to stdout: diagnostics go to stderr (and ``LogFile``).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import TYPE_CHECKING, BinaryIO, Optional, TextIO

from zerochess._version import __version__
from zerochess.uci.format import bestmove_line, info_line, verbose_move_stats_lines
from zerochess.uci.options import OPTIONS, OptionError, OptionValues

if TYPE_CHECKING:  # imported for real by UciLoop._load_engine (numpy, python-chess, Cython)
    from zerochess.chess import Board
    from zerochess.search.results import SearchResult
    from zerochess.search.timeman import GoParams, Stopper, allocate
    from zerochess.uci.commands import UciError, parse_go, parse_position, parse_setoption
    from zerochess.uci.player import Player

log = logging.getLogger("zerochess.uci")

#: Answered before the engine is loaded: they need neither the board nor the player.
_HANDSHAKE = ("uci", "debug", "register", "quit")


class UciLoop:
    def __init__(self, out: TextIO):
        self._out = out
        self._write_lock = threading.Lock()
        self.options = OptionValues()
        self.board: Optional[Board] = None    # both made by the first command after the
        self.player: Optional[Player] = None  # handshake (_load_engine)
        self._job: Optional[_SearchJob] = None

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

    # -- input --------------------------------------------------------------------------
    def run(self, infile: BinaryIO) -> None:
        """Read commands until ``quit`` or end of input."""
        try:
            for raw in iter(infile.readline, b""):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    self.error("input line is not valid UTF-8; ignored")
                    continue
                if not self.handle(line):
                    break
        finally:
            self._stop_search(wait=True)

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

        self.board = Board()
        self.player = Player()

    # -- commands -----------------------------------------------------------------------
    def cmd_uci(self, args):
        self.send(f"id name zerochess {__version__}")
        self.send("id author the zerochess developers")
        for option in OPTIONS:
            self.send(option.uci_line())
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
        # Allowed while searching: the running search has its own copy of its position.
        self.board = parse_position(args, self.options["UCI_Chess960"])

    def cmd_go(self, args):
        if self._job is not None:
            raise UciError("a search is already running; send stop first")
        params = parse_go(args, self.board)
        self._configure()  # a no-op unless options changed
        # Even with no network at all the job answers: every go ends in a bestmove.
        self._job = _SearchJob(self, self.board.copy(), params)
        self._job.start()

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
    """One ``go``: starts the search and sends exactly one ``bestmove``.

    No thread of its own: the search runs on its one worker thread, which calls back with
    info and the outcome; this object formats them. ``bestmove`` goes out once the outcome
    is known and, for ``go ponder``/``go infinite``, ``stop`` or ``ponderhit`` has come,
    whichever is last, on whichever thread that is.
    """

    def __init__(self, loop: UciLoop, board: Board, params: GoParams):
        self.loop = loop
        self.board = board
        self.params = params
        self._lock = threading.Lock()
        self._released = not (params.ponder or params.infinite)  # bestmove may go out
        self._outcome: Optional[tuple] = None   # (best, ponder) once the search has ended
        self._sent = False
        self._clock_start = time.perf_counter()
        self._stopper = self._make_stopper()

    def _make_stopper(self) -> Stopper:
        opts = self.loop.options
        budget = None if self.params.ponder else allocate(
            self.params, self.board.turn, opts["Move Overhead"], len(self.board),
            slow_mover=opts["SlowMover"] / 100.0)
        return Stopper(self.params, budget, fixed_nodes=opts["Nodes"],
                       adaptive=opts["TimeManager"] == "adaptive")

    def start(self):
        loop = self.loop
        try:
            loop.player.start(
                self.board, self.params, self._stopper, loop.options,
                on_info=self._info,
                on_done=self._done, on_error=self._failed, started=self._clock_start)
        except Exception as exc:
            self._failed(exc)

    def _info(self, info) -> None:
        """An info report; with ``LogLiveStats`` every report, with ``VerboseMoveStats`` the
        final one (the result, sent before bestmove) also carries the per-move lines."""
        opts = self.loop.options
        text = info_line(info, opts["UCI_ShowWDL"])
        if opts["LogLiveStats"] or (opts["VerboseMoveStats"] and isinstance(info, SearchResult)):
            text = "\n".join([text, *verbose_move_stats_lines(info.moves, info.root)])
        self.loop.send(text)

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
        moves = self.board.legal_moves()
        self._done(moves[0] if moves else None, None)

    def _done(self, best: Optional[str], ponder: Optional[str]):
        with self._lock:
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


def main() -> None:
    """Entry point: UCI on the process's stdin/stdout.

    The real stdout is kept for UCI alone; file descriptor 1 is pointed at stderr so that
    anything a library prints (a warning from C code, say) cannot corrupt the protocol."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="zerochess %(levelname)s: %(message)s")
    uci_out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1, encoding="utf-8")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    UciLoop(uci_out).run(sys.stdin.buffer)
