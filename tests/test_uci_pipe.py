"""The UCI client (zerochess.client.uci): the teacher's pipe transport, where an engine that
cannot be started or configured is a clear EngineStartError, in time (the labelling tests
cover crashes, hangs and garbage in play; the match tests the asyncio transport), and the
one reading of scores that labels and adjudication share."""

import sys
import time
from pathlib import Path

import chess.engine
import pytest

from zerochess.client.uci import (MATE_CP, EngineStartError, UciPipe, info_score, info_wdl,
                                  last_info_lines, score_cp)
from zerochess.match.game import _cp

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


def test_a_mate_is_the_same_centipawns_for_the_teacher_and_the_match():
    assert score_cp("cp", -35) == -35 and score_cp("lowerbound", 3) is None
    assert score_cp("mate", 3) == MATE_CP - 3 and score_cp("mate", -2) == -(MATE_CP - 2)
    for n in (3, -2):  # the match reads python-chess's scores with the same constant
        pov = chess.engine.PovScore(chess.engine.Mate(n), chess.WHITE)
        assert _cp(pov) == score_cp("mate", n)


def test_info_lines_give_each_multipv_its_last_full_line():
    text = ["info depth 1 seldepth 1 multipv 1 score cp 10 nodes 20 pv e2e4",
            "info depth 1 seldepth 1 multipv 2 score mate -3 wdl 0 10 990 nodes 20 pv a2a3",
            "info depth 2 seldepth 2 multipv 1 score cp 25 lowerbound nodes 40 pv d2d4",
            "info depth 2 seldepth 2 multipv 1 score cp 20 wdl 120 800 80 nodes 60 pv d2d4 d7d5",
            "info string hello", "info depth 3 currmove e2e4 currmovenumber 1"]
    lines = last_info_lines(text)
    assert sorted(lines) == [1, 2] and lines[1] == text[3]
    assert info_score(lines[1].split()) == ("cp", 20)
    assert info_wdl(lines[1].split()) == (0.08, 0.8, 0.12)
    assert info_score(lines[2].split()) == ("mate", -3) and info_wdl(lines[2].split()) == (0.99, 0.01, 0.0)
    assert info_wdl("info depth 1 score cp 1 pv e2e4".split()) is None
    with pytest.raises(ValueError):
        info_score("info depth 1 pv e2e4".split())
