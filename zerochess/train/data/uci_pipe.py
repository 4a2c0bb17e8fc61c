"""A UCI engine over plain pipes, synchronously: the teacher's transport.

The labeller asks one question at a time and waits for the answer, so an event loop buys
it nothing and costs it much: at depth 4, python-chess's asyncio command API (about eight
loop iterations and a command object per position) took as much CPU as the teacher's
search. Here a question is one ``os.write``, and the answer is read with ``os.read`` until
a ``bestmove`` line, each wait bounded by ``poll`` against a deadline, so a hung engine is
a ``TimeoutError``, a dead one an ``EOFError`` (or ``BrokenPipeError`` on writing).

    engine = UciPipe(["stockfish"], {"Threads": 1, "Hash": 16}, timeout=30)
    lines, seconds = engine.ask("position startpos\\ngo depth 4\\n", time.monotonic() + 30)
    engine.quit()

Starting mirrors python-chess's ``popen_uci`` + ``configure`` + ``ping``, so the engine
gets the same commands as before: ``uci``, a ``setoption`` for each option whose value
differs from the engine's default (checked against what the engine declares), ``isready``.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import time

from chess.engine import EngineError, Option

from zerochess.match.engines import EngineStartError

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
