"""A raw-pipe UCI driver for tests: send lines, read lines with deadlines, never hang."""

import os
import queue
import subprocess
import sys
import threading
import time

import pytest

from zerochess.train.data.teacher import default_teacher_command


class UciProcess:
    def __init__(self, command=None, env=None, cwd=None):
        self.proc = subprocess.Popen(
            command or [sys.executable, "-m", "zerochess"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
        self.lines: "queue.Queue[str]" = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr.append), daemon=True).start()

    @staticmethod
    def _pump(stream, sink):
        for raw in iter(stream.readline, b""):
            sink(raw.decode("utf-8", "replace").rstrip("\n"))

    def send(self, line, raw: bytes = None):
        self.proc.stdin.write(raw if raw is not None else (line + "\n").encode())
        self.proc.stdin.flush()

    def read_until(self, predicate, timeout=10.0):
        """Lines up to and including the first that satisfies predicate (AssertionError on timeout)."""
        seen = []
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out after {timeout}s; got {seen!r}; stderr {self.stderr[-5:]!r}")
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            seen.append(line)
            if predicate(line):
                return seen

    def expect(self, prefix, timeout=10.0):
        return self.read_until(lambda l: l.startswith(prefix), timeout)

    def sync(self, timeout=30.0):
        """isready/readyok round trip; returns the lines before readyok."""
        self.send("isready")
        return self.expect("readyok", timeout)[:-1]

    def close(self):
        try:
            self.send("quit")
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def stockfish_path() -> str:
    """Stockfish as the package finds it (PATH, then Debian's games directory); a test that
    needs it fails, not skips, without it: CI installs it."""
    path = default_teacher_command()[0]
    if not os.access(path, os.X_OK):
        pytest.fail("Stockfish is needed for the match tests (apt-get install stockfish)")
    return path
