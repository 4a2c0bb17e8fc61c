"""`zerochess match --resume`: a match killed at any moment goes on from its PGN, plays only
the games it lacks, and reports what an uninterrupted match reports; a PGN of another match
is refused with a clear error. The engines are tests/broken_engine.py's deterministic
first-legal-move players, so every game has one possible result."""

import os
import shutil
import signal
import subprocess
import sys
import time

import chess.pgn
import pytest

from zerochess.match import EngineSpec, MatchConfig, MatchConfigError, Sprt, run_match
from zerochess.match.cli import report

HERE = os.path.dirname(__file__)
BOOK = os.path.join(HERE, "..", "books", "balanced_2moves.epd")
ENGINE = [sys.executable, os.path.join(HERE, "broken_engine.py")]


def config(pgn, games=6, mode="first", names=("a", "b"), resume=True, commands=None, **kw):
    kw = {"nodes": 10, "maxmoves": 12, "openings": BOOK, "openings_start": 11,
          "concurrency": 2, **kw}
    commands = commands or (ENGINE + [mode], ENGINE + ["first"])
    return MatchConfig([EngineSpec(names[0], commands[0]), EngineSpec(names[1], commands[1])],
                       games=games, pgn_out=pgn, resume=resume, **kw)


NO_ENGINES = (["/nonexistent/engine"], ["/nonexistent/engine"])  # starting one raises MatchError


def games_in(path):
    """``{round: result}`` of the whole games in the file (as many moves as ``PlyCount``
    says), their rounds in file order, and the file's text cut at each ``[Event``."""
    text = open(path).read()
    rounds, out = [], {}
    with open(path) as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            if int(game.headers.get("PlyCount", -1)) == len(list(game.mainline_moves())):
                rounds.append(int(game.headers["Round"]))
                out[rounds[-1]] = game.headers["Result"]
    return out, rounds, ["[Event " + c for c in text.split("[Event ")[1:]]


def without_resumed(lines):
    return [line for line in lines if not line.startswith("resumed:")]


def test_resume_plays_only_the_missing_games_and_reports_all(tmp_path):
    full = run_match(config(tmp_path / "full.pgn", resume=False))
    results, order, chunks = games_in(tmp_path / "full.pgn")
    assert sorted(order) == list(range(1, 7))
    by_round = dict(zip(order, chunks))
    # A file as a kill leaves it: games 1, 2 and 5 whole, game 4 cut in the middle of a move list.
    partial = tmp_path / "partial.pgn"
    cut = by_round[4][: len(by_round[4]) * 2 // 3]
    partial.write_text(by_round[1] + by_round[5] + by_round[2] + cut)
    played = []
    result = run_match(config(partial), played.append)
    assert (result.resumed, result.dropped) == (3, 1)
    assert sorted(r.round for r in played) == [1, 2, 3, 4, 5, 6]  # the bar counts them all
    assert [r.round for r in played[:3]] == [1, 2, 5]            # read back first
    again, order_again, _ = games_in(partial)
    assert sorted(order_again) == list(range(1, 7)) and again == results
    assert [g.round for g in result.games] == list(range(1, 7))
    assert without_resumed(report(result)) == report(full)
    assert "resumed: 3 games read back from the PGN, 1 cut short there played again" in report(result)
    # Nothing left to play: the engines are not even started.
    done = run_match(config(partial, commands=NO_ENGINES))
    assert done.resumed == 6 and without_resumed(report(done)) == report(full)


def test_resume_without_a_file_is_a_fresh_match(tmp_path):
    result = run_match(config(tmp_path / "new.pgn", games=2))
    assert result.resumed == 0 and len(result.games) == 2
    assert sorted(games_in(tmp_path / "new.pgn")[1]) == [1, 2]


@pytest.fixture(scope="module")
def four_games(tmp_path_factory):
    """The PGN of a finished 4-game match (played once for the tests that only read it)."""
    pgn = tmp_path_factory.mktemp("four") / "four.pgn"
    run_match(config(pgn, games=4, resume=False))
    return pgn


@pytest.mark.parametrize("change, message", [
    ({"names": ("a", "c")}, "game 1: it has a against b, this match a against c"),
    ({"openings_start": 12}, "game 1: it starts from another opening"),
    ({"nodes": 20}, "game 1: its Limit is 'nodes=10', this match's 'nodes=20'"),
    ({"games": 2}, "a game has Round '3', this match has games 1-2"),
])
def test_a_pgn_of_another_match_is_refused(tmp_path, four_games, change, message):
    pgn = shutil.copy(four_games, tmp_path / "other.pgn")
    before = open(pgn).read()
    with pytest.raises(MatchConfigError, match="was not written by this match") as err:
        run_match(config(pgn, **{"games": 4, **change}))
    assert message in str(err.value)
    assert open(pgn).read() == before  # nothing lost, nothing appended


def test_a_chess960_match_resumes_too(tmp_path):
    """Chess960 starts come back from the PGN (X-FEN, Variant tag) as the same openings."""
    frc = os.path.join(HERE, "..", "books", "DFRC_openings_500.epd")
    pgn = tmp_path / "dfrc.pgn"
    both = (ENGINE + ["first960"], ENGINE + ["first960"])
    run_match(config(pgn, games=2, openings=frc, openings_start=7, commands=both))
    result = run_match(config(pgn, games=4, openings=frc, openings_start=7, commands=both))
    assert result.resumed == 2 and sorted(games_in(pgn)[1]) == [1, 2, 3, 4]
    assert all(g.opening.chess960 for g in result.games)


def test_resume_needs_a_pgn():
    with pytest.raises(MatchConfigError, match="--resume needs --pgn"):
        run_match(config(None))


def test_an_sprt_the_games_read_back_decided_plays_no_more(tmp_path, four_games):
    class Decided(Sprt):
        def llr(self, game_scores, pair_scores=None):
            return 3.0

    pgn = shutil.copy(four_games, tmp_path / "sprt.pgn")
    result = run_match(config(pgn, games=8, commands=NO_ENGINES, sprt=Decided(min_games=3)))
    assert result.resumed == 4 and len(result.games) == 4
    assert result.stopped == "SPRT accepts H1"


def test_the_cli_killed_with_sigkill_goes_on_where_it_stopped(tmp_path):
    """The acceptance of resume: SIGKILL the whole match (runner and engines) once games are
    in the file, run the same command again, and get what one uninterrupted match gives."""
    pgn = tmp_path / "killed.pgn"
    command = [sys.executable, "-m", "zerochess", "match",
               "--engine", "a=" + " ".join(ENGINE + ["slow"]), "--engine", "b=" + " ".join(ENGINE + ["first"]),
               "--games", "8", "--nodes", "10", "--maxmoves", "12", "--openings", BOOK,
               "--openings-start", "11", "--concurrency", "2", "--pgn", str(pgn), "--resume",
               "--no-progress"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if pgn.exists() and pgn.read_text().count("[Round ") >= 2:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the match ended before it could be killed: " + proc.stdout.read().decode()
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    kept = len(games_in(pgn)[0])
    assert 1 <= kept < 8
    out = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"resumed: {kept} games read back from the PGN" in out.stdout
    whole = run_match(config(tmp_path / "whole.pgn", games=8, mode="slow", resume=False))
    results, order, _ = games_in(pgn)
    assert sorted(order) == list(range(1, 9))
    assert results == games_in(tmp_path / "whole.pgn")[0]
    assert report(whole)[0] in out.stdout  # the same W/D/L and score line
