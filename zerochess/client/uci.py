"""A UCI engine as a child process, two ways over one set of rules: the match runner's, the
teacher's and the label pipeline's client.

* ``EngineProcess``: python-chess's asyncio protocol (``chess.engine.UciProtocol``), for
  the match runner, whose concurrent games run in one event loop and whose clocks need
  python-chess's ``go`` (clock times, Chess960 castling) and its ``info`` parsing.
* ``UciPipe``: plain pipes, synchronously, one question at a time, for the teacher. At low
  depth python-chess's asyncio command API (about eight loop iterations and a command
  object per position) took as much CPU as the teacher's search. Here a question is one
  ``os.write``, and the answer is read with ``os.read`` until a ``bestmove`` line, each
  wait bounded by ``poll`` against a deadline, so a hung engine is a ``TimeoutError``, a
  dead one an ``EOFError`` (or ``BrokenPipeError`` on writing).

Both start an engine the same way, python-chess's ``popen_uci`` + ``configure`` + ``ping``:
``uci``, a ``setoption`` for each option whose value differs from the engine's default
(checked against what the engine declares), ``isready``; an engine that cannot be started
or configured is an ``EngineStartError`` naming the engine and the reason, in time. Every
wait has a timeout: a client must never hang on an engine that stops answering.

    engine = UciPipe(["stockfish"], {"Threads": 1, "Hash": 16}, timeout=30)
    lines, seconds = engine.ask("position startpos\\ngo depth 4\\n", time.monotonic() + 30)
    best = last_info_lines(lines)[1]                  # the last full line of multipv 1
    cp = score_cp(*info_score(best.split()))          # a mate in n: +-(MATE_CP - n)
    engine.quit()

Scores: a mate in n is ``MATE_CP - n`` centipawns from the side that mates (python-chess's
``score(mate_score=MATE_CP)``), everywhere: the teacher's labels (``teacher_cp`` in the
data sets), their plies-left targets and the match's adjudication.
"""

from __future__ import annotations

import asyncio
import os
import re
import select
import subprocess
import time

import chess
import chess.engine
from chess.engine import EngineError, Option

__all__ = ["EngineStartError", "EngineProcess", "UciPipe", "MATE_CP", "MAX_MATE_MOVES", "score_cp",
           "info_score", "info_wdl", "last_info_lines"]

#: A mate in n scores +-(MATE_CP - n) centipawns: the teacher's labels (stored in data sets:
#: ``teacher_cp``, read back by ``train.data.moves_left``) and the match's adjudication.
MATE_CP = 32000
#: Scores beyond MATE_CP - MAX_MATE_MOVES (either sign) are mates, nearer ones centipawns.
MAX_MATE_MOVES = 500


class EngineStartError(RuntimeError):
    """The engine could not be started or configured; the message says which and why."""


# -- scores and info lines ---------------------------------------------------------------

def score_cp(kind: str, value: int) -> int | None:
    """Centipawns of an ``info ... score KIND VALUE``: ``cp`` as it is, ``mate n`` as
    +-(MATE_CP - |n|) (positive: the side to move mates); None for another kind."""
    if kind == "cp":
        return value
    if kind == "mate":
        return (MATE_CP - abs(value)) * (1 if value > 0 else -1)
    return None


def info_score(tokens: list[str]) -> tuple[str, int]:
    """``(kind, value)`` of an ``info`` line's ``score`` (its tokens); ValueError or
    IndexError when it has none or a malformed one."""
    i = tokens.index("score")
    return tokens[i + 1], int(tokens[i + 2])


def info_wdl(tokens: list[str]) -> tuple[float, float, float] | None:
    """``(loss, draw, win)`` shares of an ``info`` line's ``wdl W D L`` (``UCI_ShowWDL``),
    or None without one (or with all three zero); ValueError for one that is not numbers."""
    if "wdl" not in tokens:
        return None
    i = tokens.index("wdl")
    w, d, lo = (int(x) for x in tokens[i + 1:i + 4])
    total = w + d + lo
    return (lo / total, d / total, w / total) if total > 0 else None


def last_info_lines(text: list[str]) -> dict[int, str]:
    """Each multipv index's last ``info`` line with a score and a PV (not a bound): the
    lines worth parsing, not every depth's. The index is the token after the first
    ``multipv`` token (1 without one), read from the line's first nine tokens where it is
    among them (Stockfish's lines: ``info depth D seldepth S multipv K ...``), which is
    the same token as a whole split would give, at a quarter of its cost."""
    raw: dict[int, str] = {}
    for line in text:
        if line.startswith("info ") and " pv " in line and " score " in line \
                and "bound" not in line:
            head = line.split(None, 8)
            if "multipv" in head[:7]:
                k = int(head[head.index("multipv") + 1])
            else:
                tokens = line.split()
                k = int(tokens[tokens.index("multipv") + 1]) if "multipv" in tokens else 1
            raw[k] = line
    return raw


# -- python-chess's asyncio protocol: the match runner's engines -------------------------

class EngineProcess:
    """One running engine on python-chess's asyncio protocol. ``play`` is timed by the
    caller; ``new_game`` is untimed. An engine that timed out, crashed or broke the
    protocol is killed; the caller starts a fresh one."""

    def __init__(self, name: str, command: list[str], options: dict | None = None,
                 start_timeout: float = 30.0, stderr: bool = False, chess960: bool = False):
        self.name = name
        self.command = list(command)
        self.options = dict(options or {})
        # Chess960 games need the engine's UCI_Chess960; python-chess sets it before every
        # `go` from the board (and writes castling as king takes rook), we check it is there.
        self.chess960 = chess960
        self.start_timeout = start_timeout
        self.stderr = stderr
        self.transport: asyncio.SubprocessTransport | None = None
        self.protocol: chess.engine.UciProtocol | None = None
        # python-chess sends ucinewgame itself when the `game` token changes; we keep it
        # constant and send ucinewgame in new_game(), outside the timed region.
        self._game_token = object()

    @property
    def alive(self) -> bool:
        return self.protocol is not None and self.protocol.returncode.done() is False

    async def start(self) -> None:
        """Start the process, wait for ``uciok``, set the options, wait for ``readyok``."""
        name = self.name
        popen_args = {} if self.stderr else {"stderr": subprocess.DEVNULL}
        try:
            # popen_uci's two steps, so that we hold the transport while waiting for uciok.
            loop = asyncio.get_running_loop()
            self.transport, self.protocol = await loop.subprocess_exec(
                chess.engine.UciProtocol, *self.command, **popen_args)
            await asyncio.wait_for(self.protocol.initialize(), self.start_timeout)
        except asyncio.TimeoutError:
            await self.kill()
            raise EngineStartError(f"engine {name}: no 'uciok' within {self.start_timeout:g} s "
                                   f"from {self.command}") from None
        except (OSError, chess.engine.EngineError, chess.engine.EngineTerminatedError) as exc:
            await self.kill()
            raise EngineStartError(f"engine {name}: cannot start {self.command}: {exc}") from None
        if self.chess960 and "UCI_Chess960" not in self.protocol.options:
            await self.kill()
            raise EngineStartError(f"engine {name} does not declare UCI_Chess960, so it cannot "
                                   "play Chess960 openings")
        try:
            await asyncio.wait_for(self.protocol.configure(self.options), self.start_timeout)
            await asyncio.wait_for(self.protocol.ping(), self.start_timeout)
        except asyncio.TimeoutError:
            await self.kill()
            raise EngineStartError(f"engine {name}: no 'readyok'' within {self.start_timeout:g} s "
                                   "after setting its options") from None
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as exc:
            await self.kill()
            raise EngineStartError(f"engine {name}: options {self.options}: {exc}") from None

    async def new_game(self) -> None:
        """``ucinewgame`` + ``isready``, so that clearing hash tables is not on the clock."""
        assert self.protocol is not None
        self.protocol._ucinewgame()  # python-chess's own helper; also resets its first_game
        await asyncio.wait_for(self.protocol.ping(), self.start_timeout)

    async def play(self, board: chess.Board, limit: chess.engine.Limit,
                   info: chess.engine.Info = chess.engine.INFO_BASIC | chess.engine.INFO_SCORE
                   ) -> chess.engine.PlayResult:
        """The engine's move for ``board`` under ``limit``, with the ``info`` it reported
        last (by default depth, time, nodes and score)."""
        assert self.protocol is not None
        return await self.protocol.play(board, limit, info=info, game=self._game_token)

    async def kill(self) -> None:
        """Stop the process now (no ``quit`` handshake: it may not be listening) and wait
        briefly for it to be reaped, so that no zombie or child-watcher warning is left."""
        transport, protocol = self.transport, self.protocol
        self.transport = self.protocol = None
        if transport is None:
            return
        try:
            transport.kill()
        except ProcessLookupError:
            pass
        if protocol is not None:
            try:
                await asyncio.wait_for(asyncio.shield(protocol.returncode), 5.0)
            except asyncio.TimeoutError:
                pass
        transport.close()

    async def quit(self) -> None:
        """``quit`` and wait a moment for the process to exit, then kill it regardless."""
        if self.protocol is not None and self.alive:
            try:
                await asyncio.wait_for(self.protocol.quit(), 2.0)
            except (asyncio.TimeoutError, chess.engine.EngineError,
                    chess.engine.EngineTerminatedError):
                pass
        await self.kill()


# -- plain pipes: the teacher's engine ---------------------------------------------------

#: Options python-chess manages itself and refuses to set; so do we (MultiPV is per position).
MANAGED = {"uci_chess960", "uci_variant", "multipv", "ponder"}
_OPTION_WORDS = re.compile(r"\s*\b(name|type|default|min|max|var)\b\s*")


class UciPipe:
    """One engine process, started and configured by the constructor (EngineStartError with
    the reason if it cannot be)."""

    def __init__(self, command: list[str], options: dict, timeout: float, label: str = "teacher"):
        self.command = list(command)
        self.label = label
        self.timeout = timeout
        self.name = ""
        self.options: dict[str, Option] = {}   # by lower-case name
        self.config: dict[str, object] = {}    # current values, by lower-case name
        self._buf = b""
        try:
            self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         bufsize=0)
        except OSError as exc:
            raise EngineStartError(f"engine {label}: cannot start {self.command}: {exc}") from None
        self._in, self._out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        self._poll = select.poll()
        self._poll.register(self._out, select.POLLIN)
        try:
            self._handshake(options)
        except EngineStartError:
            self.kill()
            raise

    def _handshake(self, options: dict) -> None:
        deadline = time.monotonic() + self.timeout
        try:
            self.send("uci\n")
            for line in self._lines_until(lambda ln: ln.strip() == "uciok", deadline):
                if line.startswith("id name "):
                    self.name = line[8:].strip()
                elif line.startswith("option "):
                    self._declare(line[7:])
            self.set_options(options)
            self.send("isready\n")
            self._lines_until(lambda ln: ln.strip() == "readyok", deadline)
            self._buf = b""  # output after readyok: no question awaits it
        except TimeoutError:
            raise EngineStartError(f"engine {self.label}: no answer within {self.timeout:g} s "
                                   f"from {self.command}") from None
        except (EOFError, OSError) as exc:
            raise EngineStartError(f"engine {self.label}: {self.command} exited while starting"
                                   f" ({type(exc).__name__})") from None

    def _declare(self, text: str) -> None:
        """An ``option name N type T [default D] [min a] [max b] [var v]...`` line; one that
        python-chess could not read either is left out (setting it is then refused)."""
        parts: dict[str, str] = {}
        var: list[str] = []
        key = None
        for token in _OPTION_WORDS.split(text.strip()):
            if token == "var" or (token in ("name", "type", "default", "min", "max")
                                  and token not in parts):
                key = token
                parts.setdefault(key, "")
            elif key == "var":
                var.append(token)
            elif key:
                parts[key] = token
        limits = [int(parts[k]) if parts.get(k, "").lstrip("-").isdigit() else None
                  for k in ("min", "max")]
        try:
            name, kind = parts.get("name", ""), parts.get("type", "")
            default = Option(name, kind, None, *limits, var).parse(parts.get("default", ""))
            opt = Option(name, kind, default, *limits, var)
        except EngineError:
            return
        self.options[opt.name.lower()] = opt
        if opt.default is not None:
            self.config[opt.name.lower()] = opt.default

    def set_options(self, options: dict) -> None:
        """``setoption`` for each value that differs from the engine's current one, checked
        against the engine's declaration (python-chess's rules and text: refused if unknown,
        out of range or managed, sent under the caller's spelling)."""
        for name, value in options.items():
            opt = self.options.get(name.lower())
            if opt is None:
                raise EngineStartError(f"engine {self.label}: option {name!r} is not one of "
                                       f"{sorted(o.name for o in self.options.values())}")
            if name.lower() in MANAGED:
                raise EngineStartError(f"engine {self.label}: option {name} is set per position")
            try:
                value = opt.parse(value)
            except EngineError as exc:
                raise EngineStartError(f"engine {self.label}: {exc}") from None
            if value is None or value != self.config.get(name.lower()):
                text = (" value false" if value is False else " value true" if value is True
                        else "" if value is None else f" value {value}")
                self.send(f"setoption name {name}{text}\n")
                self.config[name.lower()] = value

    def send(self, text: str) -> None:
        os.write(self._in, text.encode())

    def _read(self, deadline: float) -> bytes:
        """The next bytes the engine writes; TimeoutError past ``deadline``, EOFError at exit."""
        left = deadline - time.monotonic()
        if left <= 0 or not self._poll.poll(left * 1000):
            raise TimeoutError(f"engine {self.label}: no answer within {self.timeout:g} s")
        data = os.read(self._out, 65536)
        if not data:
            raise EOFError(f"engine {self.label} exited")
        return data

    def _lines_until(self, last, deadline: float) -> list[str]:
        """Lines up to the first for which ``last`` is true (startup: not the hot path)."""
        out: list[str] = []
        while True:
            while b"\n" not in self._buf:
                self._buf += self._read(deadline)
            line, self._buf = self._buf.split(b"\n", 1)
            out.append(line.rstrip(b"\r").decode("utf-8", "replace"))
            if last(out[-1]):
                return out

    def ask(self, commands: str, deadline: float) -> tuple[list[str], float]:
        """Send ``commands`` (the last one a ``go``), read to the ``bestmove`` line; returns
        the lines before it and the seconds from sending to reading it. Output that no
        question awaits (before it, or after ``bestmove``) is dropped, as python-chess does."""
        t0 = time.perf_counter()
        os.write(self._in, commands.encode())
        buf = self._read(deadline)
        while (at := _bestmove_line(buf)) < 0:
            buf += self._read(deadline)
        seconds = time.perf_counter() - t0
        head = buf[:at]
        try:
            return head.decode("utf-8").split("\n"), seconds
        except UnicodeDecodeError:  # python-chess skips a line it cannot decode
            return [ln.decode("utf-8") for ln in head.split(b"\n") if _decodes(ln)], seconds

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """Stop the process now (it may not be listening) and reap it."""
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(5.0)
        except subprocess.TimeoutExpired:
            pass
        for f in (self.proc.stdin, self.proc.stdout):
            f.close()

    def quit(self) -> None:
        """``quit`` and a moment to exit, then kill regardless."""
        try:
            self.send("quit\n")
            self.proc.wait(2.0)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()


def _bestmove_line(buf: bytes) -> int:
    """Where a complete ``bestmove`` line starts in ``buf``, else -1."""
    if buf.startswith(b"bestmove"):
        at = 0
    else:
        at = buf.find(b"\nbestmove")
        if at < 0:
            return -1
        at += 1
    return at if buf.find(b"\n", at) >= 0 else -1


def _decodes(line: bytes) -> bool:
    try:
        line.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False
