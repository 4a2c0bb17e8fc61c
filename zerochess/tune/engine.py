"""Ask the engine, before any game, which options it declares and whether it takes the values
the tune will send.

A plain pipe, not the match runner: the tune needs the ``uci`` answer itself and the ``info
string`` lines an engine sends after a ``setoption`` it refuses (zerochess answers
``info string error: option CPuct must be between 0 and 100, not 500``). An engine that
ignores a bad value in silence cannot be caught this way; UCI declares no range for a float.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time

from zerochess.tune.params import Param, UciOption, bind, parse_option_line


class ProbeError(RuntimeError):
    """The engine did not start, did not answer, or refused a value; the message says which."""


class _Pipe:
    def __init__(self, argv: list[str]):
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, text=True, bufsize=1)
        except OSError as exc:
            raise ProbeError(f"cannot start the engine {argv}: {exc}") from None
        self.argv = argv
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def send(self, line: str) -> None:
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise ProbeError(f"the engine {self.argv} exited (sending {line!r})") from None

    def until(self, token: str, timeout: float) -> list[str]:
        """The lines before the line ``token``."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            left = deadline - time.monotonic()
            try:
                line = self.lines.get(timeout=left) if left > 0 else self.lines.get_nowait()
            except queue.Empty:
                raise ProbeError(f"the engine {self.argv} sent no {token!r} within "
                                 f"{timeout:g} s") from None
            if line is None:
                raise ProbeError(f"the engine {self.argv} exited before {token!r}")
            if line.strip() == token:
                return seen
            seen.append(line)

    def close(self) -> None:
        try:
            self.send("quit")
            self.proc.wait(timeout=5)
        except (ProbeError, subprocess.TimeoutExpired):
            pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _refusal(lines: list[str]) -> str | None:
    for line in lines:
        low = line.lower()
        if (low.startswith("info string") and "error" in low) or low.startswith("no such option"):
            return line
    return None


def _options(lines: list[str]) -> dict[str, UciOption]:
    options = {}
    for line in lines:
        option = parse_option_line(line)
        if option is not None:
            options[option.name] = option
    return options


def probe(argv: list[str], fixed: dict[str, str], params: list[Param],
          timeout: float = 60.0) -> list[Param]:
    """``params`` bound to the engine's options (``params.bind``: ``ParamError`` for a name it
    does not declare or an option that is not a number), after checking that the engine
    accepts each of ``fixed`` and each parameter at its MIN, START and MAX (``ProbeError``
    naming the first it refuses)."""
    pipe = _Pipe(argv)
    try:
        pipe.send("uci")
        bound = bind(params, _options(pipe.until("uciok", timeout)))
        trials = list(fixed.items())
        for p in bound:
            trials += [(p.name, p.send(x)) for x in (p.min, p.start, p.max)]
        for name, value in trials:
            pipe.send(f"setoption name {name} value {value}")
            pipe.send("isready")  # zerochess loads its network here: a bad WeightsFile shows
            refused = _refusal(pipe.until("readyok", timeout))
            if refused:
                raise ProbeError(f"the engine refuses {name}={value}: {refused}")
        return bound
    finally:
        pipe.close()
