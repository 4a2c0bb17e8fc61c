"""`zerochess tune`: parameter specs, the SPSA gains and update, exact resume after SIGKILL,
and one real tiny tune through the match runner."""

import json
import math
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from zerochess.cli import main
from zerochess.tune.params import (
    Param, ParamError, UciOption, bind, parse_option_line, parse_param, parse_params,
)
from zerochess.tune.spsa import (
    ALPHA, GAMMA, Outcome, Schedule, SyntheticObjective, distance, perturbation, propose, update,
)
from zerochess.tune.state import StateError, TuneConfig, TuneState, load_state

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "books" / "balanced_2moves.epd"
ZEROCHESS = f"{shlex.quote(sys.executable)} -m zerochess"


# -- 1. parameter specs --------------------------------------------------------------------

def test_parse_param():
    p = parse_param("CPuct=1.5,0.5,4,0.15,0.002")
    assert p == Param("CPuct", 1.5, 0.5, 4.0, 0.15, 0.002, integer=False)
    assert parse_param(" Move Overhead = 100,0,500,20,0.002").name == "Move Overhead"
    assert parse_param(p.spec()) == p


@pytest.mark.parametrize("text, message", [
    ("CPuct", "expected NAME=START"),
    ("=1,0,2,0.1,0.002", "expected NAME=START"),
    ("CPuct=1,0,2", "expected 5 numbers"),
    ("CPuct=1,0,2,0.1,0.002,7", "expected 5 numbers"),
    ("CPuct=1,,2,0.1,0.002", "MIN is missing"),
    ("CPuct=x,0,2,0.1,0.002", "START must be a number"),
    ("CPuct=1,0,inf,0.1,0.002", "MAX must be finite"),
    ("CPuct=1,2,0,0.1,0.002", "MIN (2) must be below MAX (0)"),
    ("CPuct=1,1,1,0.1,0.002", "must be below MAX"),
    ("CPuct=3,0,2,0.1,0.002", "START (3) is outside"),
    ("CPuct=1,0,2,0,0.002", "must be positive"),
    ("CPuct=1,0,2,0.1,-1", "must be positive"),
])
def test_parse_param_errors(text, message):
    with pytest.raises(ParamError) as info:
        parse_param(text)
    assert message in str(info.value)


def test_parse_params_needs_one_and_no_repeats():
    with pytest.raises(ParamError, match="at least one"):
        parse_params([])
    with pytest.raises(ParamError, match="given twice"):
        parse_params(["CPuct=1,0,2,0.1,0.002", "cpuct=1,0,2,0.1,0.002"])


def test_integer_values_are_rounded_and_clamped_when_sent():
    p = Param("Hash", 64, 16, 128, 8, 0.002, integer=True)
    assert [p.send(x) for x in (63.5, 63.49, 70.2, 500, -3)] == ["64", "63", "70", "128", "16"]
    f = Param("CPuct", 1.5, 0.5, 4, 0.15, 0.002)
    assert f.send(1.2345678912) == "1.2345679" and f.send(9) == "4"


def test_option_lines_of_the_engine():
    from zerochess.uci.options import OPTIONS

    parsed = {o.name: o for o in map(parse_option_line, (o.uci_line() for o in OPTIONS)) if o}
    assert set(parsed) == {o.name for o in OPTIONS}
    assert parsed["Move Overhead"] == UciOption("Move Overhead", "spin", "100", 0, 10000)
    assert parsed["Device"].type == "combo" and parsed["Device"].vars == ("auto", "cpu", "cuda")
    assert parsed["CPuct"].type == "string" and float(parsed["CPuct"].default) > 0
    assert parsed["Clear Hash"].type == "button"
    assert parse_option_line("id name zerochess") is None
    assert parse_option_line("option name Skill Level type spin default 20 min 0 max 20") == \
        UciOption("Skill Level", "spin", "20", 0, 20)


def test_bind_checks_names_types_and_ranges():
    options = {o.name: o for o in [
        UciOption("CPuct", "string", "1.745"), UciOption("Hash", "spin", "64", 1, 65536),
        UciOption("WeightsFile", "string", "<default>"), UciOption("Ponder", "check", "false"),
        UciOption("Device", "combo", "auto", vars=("auto", "cpu"))]}
    bound = bind(parse_params(["cpuct=1.5,0.5,4,0.15,0.002", "HASH=64,16,128,8,0.002"]), options)
    assert [(p.name, p.integer) for p in bound] == [("CPuct", False), ("Hash", True)]
    for spec, message in [("Foo=1,0,2,0.1,0.002", "declares no option 'Foo'"),
                          ("WeightsFile=1,0,2,0.1,0.002", "not numeric (type string"),
                          ("Ponder=1,0,2,0.1,0.002", "not numeric (type check)"),
                          ("Device=1,0,2,0.1,0.002", "not numeric (type combo)"),
                          ("Hash=64,0,128,8,0.002", "outside the engine's range [1, 65536]")]:
        with pytest.raises(ParamError) as info:
            bind([parse_param(spec)], options)
        assert message in str(info.value)


@pytest.mark.parametrize("spec, message", [
    ("CPuct=1,0,2", "expected 5 numbers"),
    ("CPuct=3,0,2,0.1,0.002", "is outside"),
    ("CPuct=1,2,0,0.1,0.002", "must be below MAX"),
])
def test_cli_param_errors_are_one_line(tmp_path, spec, message):
    result = CliRunner().invoke(main, ["tune", "--objective", "synthetic", "--param", spec,
                                       "--iterations", "2", "--out", str(tmp_path / "t")])
    assert result.exit_code == 2 and message in result.output
    assert "Traceback" not in result.output


def test_cli_checks_names_against_the_engine(tmp_path):
    """Unknown and non-numeric names, and a float the engine refuses, before any game."""
    cases = [("Foo=1,0,2,0.1,0.002", "declares no option 'Foo'"),
             ("WeightsFile=1,0,2,0.1,0.002", "is not numeric"),
             ("CPuct=1,0,500,10,0.002", "refuses CPuct=500")]
    for k, (spec, message) in enumerate(cases):
        out = tmp_path / f"t{k}"
        proc = tune_process(["--engine", ZEROCHESS, "--option", "WeightsFile=uniform",
                             "--param", spec, "--iterations", "2", "--nodes", "16",
                             "--openings", str(BOOK), "--out", str(out)])
        assert proc.returncode != 0 and message in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
        assert not (out / "state.json").exists()


def test_cli_settings_errors(tmp_path):
    base = ["tune", "--param", "CPuct=1,0,2,0.1,0.002", "--iterations", "1",
            "--out", str(tmp_path / "t")]
    for extra, message in [(["--openings", str(BOOK)], "exactly one of --nodes"),
                           (["--nodes", "5"], "--openings is required"),
                           (["--nodes", "5", "--openings", str(BOOK), "--engine", '"x'],
                            "cannot split"),
                           (["--nodes", "5", "--openings", str(BOOK), "--engine",
                             str(tmp_path / "no-such-engine")], "cannot start the engine")]:
        result = CliRunner().invoke(main, [*base, *extra])
        assert result.exit_code in (1, 2) and message in result.output, result.output
        assert not (tmp_path / "t" / "state.json").exists()


# -- 2. the update rule ------------------------------------------------------------------

def test_gain_schedules_match_their_formulas():
    p = Param("x", 5, 0, 10, 0.5, 0.002)
    s = Schedule(total=1000)
    assert s.big_a == 100
    assert s.c(p, 999) == pytest.approx(0.5) and s.a(p, 999) == pytest.approx(0.002 * 0.25)
    for t in (0, 7, 500):
        assert s.c(p, t) == pytest.approx(0.5 * 1000 ** GAMMA / (t + 1) ** GAMMA)
        assert s.a(p, t) == pytest.approx(0.002 * 0.25 * 1100 ** ALPHA / (100 + t + 1) ** ALPHA)
    assert s.c(p, 0) > s.c(p, 10) > s.c(p, 999) and s.a(p, 0) > s.a(p, 999)


def test_update_rule():
    params = [Param("x", 5, 0, 10, 0.5, 0.002), Param("y", 9.9, 0, 10, 0.5, 0.002)]
    s = Schedule(total=20)
    probe = propose(params, [5.0, 9.9], k=3, pairs=2, schedule=s, seed=11)
    assert probe.t == 6 and probe.delta == tuple(perturbation(11, 3, 2))
    assert set(probe.delta) <= {-1, 1}
    c = s.c(params[0], 6)
    assert probe.plus[0] == pytest.approx(5 + c * probe.delta[0])
    assert probe.minus[0] == pytest.approx(5 - c * probe.delta[0])
    assert max(probe.plus[1], probe.minus[1]) == 10.0   # clamped to MAX
    theta = update(params, [5.0, 9.9], probe, result=3)
    for i, p in enumerate(params):
        step = s.a(p, 6) / s.c(p, 6) * 3 * probe.delta[i]
        assert theta[i] == pytest.approx(p.clamp([5.0, 9.9][i] + step))
    assert update(params, [5.0, 9.9], probe, 0) == [5.0, 9.9]
    assert Outcome(3, 2, 1).result == 2


def test_perturbations_depend_on_seed_and_k_only():
    assert perturbation(1, 5, 8) == perturbation(1, 5, 8)
    draws = [tuple(perturbation(1, k, 8)) for k in range(50)]
    assert len(set(draws)) > 40
    signs = [d for draw in draws for d in draw]
    assert 150 < signs.count(1) < 250


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spsa_converges_on_a_noisy_quadratic(seed):
    params = parse_params(["x=1,0,10,0.5,0.05", "y=9,0,10,0.5,0.05"])
    optimum = [7.0, 3.0]
    iterations, pairs = 400, 2
    schedule = Schedule(iterations * pairs)
    objective = SyntheticObjective(params, seed, optimum=optimum)
    theta = [p.start for p in params]
    before = distance(params, theta, optimum)
    for k in range(iterations):
        probe = propose(params, theta, k, pairs, schedule, seed)
        theta = update(params, theta, probe, objective(probe, 2 * pairs).result)
    after = distance(params, theta, optimum)
    assert after < before / 4, (before, after, theta)


# -- 3. state and resume -----------------------------------------------------------------

SYNTHETIC = ["--objective", "synthetic", "--param", "x=1,0,10,0.5,0.05",
             "--param", "Move Overhead=150,0,200,10,0.05", "--param", "y=9,0,10,0.5,0.05",
             "--iterations", "40", "--pairs-per-iteration", "2", "--seed", "5", "--no-progress"]


def tune_process(args, **kwargs):
    return subprocess.run([sys.executable, "-m", "zerochess", "tune", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, **kwargs)


def state_k(out: Path) -> int:
    try:
        return json.loads((out / "state.json").read_text())["k"]
    except (OSError, ValueError):
        return -1


def kill_when(args, out: Path, k: int) -> int:
    """Start the tune, SIGKILL it once its state has reached iteration ``k``."""
    proc = subprocess.Popen([sys.executable, "-m", "zerochess", "tune", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while state_k(out) < k and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    return state_k(out)


def test_resume_after_sigkill_equals_an_uninterrupted_run(tmp_path):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    first = tune_process([*SYNTHETIC, "--out", str(whole)])
    assert first.returncode == 0, first.stderr
    assert "setoption name Move Overhead value" in first.stdout

    slow = [*SYNTHETIC, "--synthetic-delay", "0.05", "--out", str(killed)]
    at = kill_when(slow, killed, 8)
    assert 8 <= at < 40
    at2 = kill_when([*slow, "--resume"], killed, at + 10)
    assert at + 10 <= at2 < 40
    last = tune_process(["--out", str(killed), "--resume", "--no-progress"])
    assert last.returncode == 0, last.stderr

    a, b = (json.loads((d / "state.json").read_text()) for d in (whole, killed))
    assert a["k"] == b["k"] == 40
    assert a["theta"] == b["theta"] and a["history"] == b["history"]
    assert (whole / "history.jsonl").read_text() == (killed / "history.jsonl").read_text()
    assert first.stdout.splitlines()[1:] == last.stdout.splitlines()[1:]
    assert (killed / "params.png").exists() or "matplotlib" in last.stderr
    assert "resumed at iteration" in (killed / "tune.log").read_text()


def test_resume_refusals(tmp_path):
    out = tmp_path / "t"
    assert tune_process([*SYNTHETIC, "--iterations", "3", "--out", str(out)]).returncode == 0
    again = tune_process([*SYNTHETIC, "--iterations", "3", "--out", str(out)])
    assert again.returncode == 2 and "already holds a tune" in again.stderr
    other = tune_process(["--objective", "synthetic", "--param", "x=1,0,10,0.5,0.1",
                          "--out", str(out), "--resume"])
    assert other.returncode == 2 and "different parameter set" in other.stderr
    longer = tune_process(["--iterations", "50", "--out", str(out), "--resume"])
    assert longer.returncode == 2 and "--iterations 50 differs" in longer.stderr

    state = out / "state.json"
    text = state.read_text()
    for corrupt, message in [(text[: len(text) // 2], "corrupt tune state, not readable JSON"),
                             ('{"format": "zerochess-tune", "format_version": 1}',
                              "corrupt tune state"),
                             ('{"format": "something else"}', "not a zerochess tune state")]:
        state.write_text(corrupt)
        proc = tune_process(["--out", str(out), "--resume"])
        assert proc.returncode == 1 and message in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    missing = tune_process(["--out", str(tmp_path / "none"), "--resume"])
    assert missing.returncode == 1 and "no tune state to resume" in missing.stderr


def test_state_round_trip(tmp_path):
    config = TuneConfig(parse_params(["x=1,0,10,0.5,0.05"]), iterations=3, pairs=1, seed=2,
                        objective="synthetic")
    state = TuneState.new(config)
    state.theta, state.k, state.history = [1.25], 1, [{"k": 0}]
    state.save(tmp_path)
    loaded = load_state(tmp_path)
    assert loaded.theta == [1.25] and loaded.k == 1 and loaded.config.as_dict() == config.as_dict()
    (tmp_path / "state.json").write_text(json.dumps({**state.as_dict(), "k": 2}))
    with pytest.raises(StateError, match="disagree"):
        load_state(tmp_path)


# -- 4. a real tiny tune -----------------------------------------------------------------

def test_real_tiny_tune(tmp_path):
    """Two iterations of one pair at 16 nodes with the weightless evaluator; the printed
    SPRT command is one `zerochess match` accepts (played here for 2 games)."""
    out = tmp_path / "tune"
    proc = tune_process(["--engine", ZEROCHESS, "--option", "WeightsFile=uniform",
                         "--param", "CPuct=1.5,0.5,4,0.3,0.5",
                         "--param", "MinibatchSize=8,1,16,2,0.5",
                         "--iterations", "2", "--pairs-per-iteration", "1", "--nodes", "16",
                         "--openings", str(BOOK), "--concurrency", "2", "--out", str(out),
                         "--resign-adjudication", "movecount=3,score=600", "--maxmoves", "80",
                         "--no-progress"])
    assert proc.returncode == 0, proc.stderr
    state = json.loads((out / "state.json").read_text())
    assert state["k"] == 2 and len(state["history"]) == 2
    assert [p["integer"] for p in state["config"]["params"]] == [False, True]
    for record in state["history"]:
        assert record["wins"] + record["draws"] + record["losses"] == 2
        assert record["plus"]["MinibatchSize"].isdigit()
    cpuct, minibatch = state["theta"]
    assert 0.5 <= cpuct <= 4 and 1 <= minibatch <= 16
    assert len((out / "history.jsonl").read_text().splitlines()) == 2
    try:
        import matplotlib  # noqa: F401
        assert (out / "params.png").stat().st_size > 1000
    except ImportError:
        pass
    lines = proc.stdout.splitlines()
    assert lines[2].startswith("setoption name CPuct value ")
    assert lines[3] == f"setoption name MinibatchSize value {math.floor(minibatch + 0.5)}"
    assert any(line.startswith("flags for zerochess match: --option new.CPuct=") for line in lines)
    command = next(line for line in lines if line.startswith("zerochess match "))
    assert "--sprt elo0=0,elo1=5" in command and "--nodes 16" in command
    assert "--resign-adjudication movecount=3,score=600 --maxmoves 80" in command
    words = shlex.split(command)
    words[words.index("--games") + 1] = "2"
    match = subprocess.run([sys.executable, "-m", *words], cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
    assert match.returncode == 0, match.stderr
    assert "new vs old: 2 games" in match.stdout
