"""The UCI loop in-process: a ``go`` uses the search's one worker thread and nothing else."""

import io
import threading
import time

from zerochess.uci.loop import UciLoop


class Output(io.StringIO):
    def lines(self) -> list[str]:
        return self.getvalue().splitlines()


def wait_for(predicate, timeout=10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def loop_with_uniform() -> tuple[UciLoop, Output]:
    out = Output()
    loop = UciLoop(out)
    for line in ("uci", "setoption name WeightsFile value uniform", "isready",
                 "position startpos"):
        loop.handle(line)
    return loop, out


def test_go_starts_exactly_one_thread_and_stop_gets_one_bestmove():
    loop, out = loop_with_uniform()
    before = set(threading.enumerate())
    loop.handle("go infinite")
    started = set(threading.enumerate()) - before
    assert len(started) == 1
    ready = out.lines().count("readyok")
    loop.handle("isready")
    assert out.lines().count("readyok") == ready + 1
    loop.handle("stop")
    bestmoves = [l for l in out.lines() if l.startswith("bestmove ")]
    assert len(bestmoves) == 1 and not started.pop().is_alive()


def test_ponderhit_puts_the_search_on_the_clock():
    loop, out = loop_with_uniform()
    loop.handle("go ponder wtime 1000 btime 1000")
    time.sleep(0.2)
    assert not any(l.startswith("bestmove") for l in out.lines())   # pondering never ends alone
    loop.handle("ponderhit")
    assert wait_for(lambda: any(l.startswith("bestmove") for l in out.lines()))
    loop.handle("quit")
    assert sum(l.startswith("bestmove") for l in out.lines()) == 1


def test_a_go_right_after_bestmove_is_accepted():
    loop, out = loop_with_uniform()
    for _ in range(3):
        loop.handle("go nodes 50")
        assert wait_for(lambda: loop._job is None)
    assert sum(l.startswith("bestmove") for l in out.lines()) == 3
    assert not any("error" in l for l in out.lines())
