"""The teacher's pipe transport: a teacher that cannot be started or configured is a clear
EngineStartError, in time (the labelling tests cover crashes, hangs and garbage in play)."""

import sys
import time
from pathlib import Path

import pytest

from zerochess.match.engines import EngineStartError
from zerochess.train.data.uci_pipe import UciPipe

HERE = Path(__file__).parent
FLAKY = [sys.executable, str(HERE / "flaky_teacher.py"), "crash", "1000"]


def test_an_engine_that_never_answers_uci_is_a_start_error_within_the_timeout():
    t0 = time.monotonic()
    with pytest.raises(EngineStartError, match="no answer within 1 s"):
        UciPipe([sys.executable, str(HERE / "broken_engine.py"), "mute"], {}, timeout=1.0)
    assert time.monotonic() - t0 < 10


def test_options_are_checked_against_what_the_engine_declares():
    with pytest.raises(EngineStartError, match="'Skill Level' is not one of"):
        UciPipe(FLAKY, {"Skill Level": 3}, timeout=10)
    with pytest.raises(EngineStartError, match="at most 16"):
        UciPipe(FLAKY, {"Hash": 64}, timeout=10)
    with pytest.raises(EngineStartError, match="MultiPV is set per position"):
        UciPipe(FLAKY, {"MultiPV": 2}, timeout=10)
    engine = UciPipe(FLAKY, {"threads": "1", "Hash": 8}, timeout=10)  # any case, text or int
    try:
        assert engine.name == "flaky-teacher" and engine.config["hash"] == 8
        lines, seconds = engine.ask("position startpos\ngo depth 1\n", time.monotonic() + 10)
        assert any(" pv " in ln for ln in lines) and seconds > 0
    finally:
        engine.quit()
    assert not engine.alive
