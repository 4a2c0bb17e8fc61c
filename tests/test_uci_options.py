"""UCI options: tied to what they set, documented as declared, and cheap to change."""

import os
import re
from pathlib import Path

import pytest

from zerochess.chess.board import Board
from zerochess.search.params import ENGINE_PARAMS, SearchParams
from zerochess.search.timeman import GoParams, Stopper
from zerochess.uci.options import (OPTIONS, OptionValues, evaluator_settings,
                                   format_float, search_params)
from zerochess.uci.player import Player

README = Path(__file__).resolve().parent.parent / "README.md"


def documented_row(option) -> list[str]:
    """The README row an option's declaration calls for: name, type, default, range, help."""
    kind = "string (number)" if option.kind == "float" else option.kind
    if option.kind == "button":
        default = ""   # a button has no value
    elif option.kind == "check":
        default = "true" if option.default else "false"
    elif option.kind == "string" and option.default == "":
        default = "(empty)"
    else:
        default = format_float(option.default)
    if option.kind == "combo":
        values = " / ".join(option.choices)
    elif option.name == "Threads" and option.max == max(1, os.cpu_count() or 1) * 4:
        values = "1 .. 4 x CPU cores"  # the machine's count, written as the rule
    elif option.kind in ("spin", "float"):
        values = f"{format_float(option.min)} .. {format_float(option.max)}"
    else:
        values = ""
    return [f"`{option.name}`", kind, f"`{default}`" if default else "", values, option.help]


def readme_rows() -> list[list[str]]:
    text = README.read_text()
    table = text[text.index("### Options"):].split("\n\n")[2]
    rows = [[cell.strip() for cell in line.strip().strip("|").split(" | ")]
            for line in table.splitlines()[2:]]
    return rows


def test_the_readme_options_table_matches_the_declarations():
    assert readme_rows() == [documented_row(o) for o in OPTIONS]


def test_the_table_check_sees_a_wrong_default():
    rows = readme_rows()
    wrong = [documented_row(o) for o in OPTIONS]
    wrong[0][2] = "`65`"
    assert rows != wrong


def test_search_options_take_their_defaults_from_the_search_parameters():
    tied = [o for o in OPTIONS if o.sets.startswith("search.")]
    assert {o.name for o in tied} >= {"Hash", "MinibatchSize", "MultiPV", "CPuct", "CPuctFactor",
                                     "CPuctBase", "FpuReduction"}
    for option in tied:
        field = option.sets.partition(".")[2]
        assert option.default == getattr(ENGINE_PARAMS, field), option.name
    # every field but the cache size and the minibatch (small for a CPU at a clock, chosen
    # by match: docs/teacher.md) is the library's own default
    library = SearchParams()
    assert (ENGINE_PARAMS.hash_mb, ENGINE_PARAMS.minibatch) == (64, 8)
    assert ENGINE_PARAMS.replace(hash_mb=library.hash_mb, minibatch=library.minibatch) == library


def test_search_params_carry_the_option_values():
    values = OptionValues()
    assert search_params(values) == ENGINE_PARAMS
    values.set("CPuct", "2.5")
    values.set("MinibatchSize", "7")
    values.set("Hash", "3")
    params = search_params(values)
    assert (params.cpuct_init, params.minibatch, params.hash_mb) == (2.5, 7, 3)
    values.set("PolicyTemperature", "1.5")
    assert evaluator_settings(values) == {"policy_temperature": 1.5}


@pytest.fixture(scope="module")
def player():
    p = Player()
    assert p.configure(OptionValues()) == []   # the shipped network, on the CPU here
    return p


def _runner(evaluator):
    """What holds the network: the torch model, or the ONNX Runtime session."""
    return evaluator.model if hasattr(evaluator, "model") else evaluator.session


@pytest.mark.parametrize("backend", ["torch-fp32", "onnx-fp32"])
def test_minibatch_and_policy_temperature_leave_the_network_alone(player, backend):
    values = OptionValues()
    values.set("Backend", backend)
    player.configure(values)
    evaluator, runner, search = player.evaluator, _runner(player.evaluator), player.search
    weights = next(runner.parameters()) if hasattr(runner, "parameters") else None
    values.set("MinibatchSize", "5")
    values.set("PolicyTemperature", "1.6")
    assert player.configure(values) == []
    assert player.evaluator is evaluator and _runner(player.evaluator) is runner
    if weights is not None:
        assert next(runner.parameters()) is weights
    assert player.search is search and search.params.minibatch == 5
    assert evaluator.policy_temperature == 1.6
    # and the search still plays with them
    outcome = []
    player.start(Board(), GoParams(nodes=40), Stopper(GoParams(nodes=40), None), values,
                 on_info=lambda info: None, on_done=lambda *move: outcome.append(move),
                 on_error=lambda exc: outcome.append(exc))
    player.wait()
    assert len(outcome) == 1 and outcome[0][0] in Board().legal_moves()


def test_a_policy_temperature_change_forgets_the_cached_evaluations(player):
    values = OptionValues()
    player.configure(values)
    search = player.search
    search.new_game()   # a fresh tree: the root gets evaluated (and cached) again
    search.search(Board(), nodes=60)
    assert search.tt.lookup(Board()) is not None   # the root's evaluation is cached
    values.set("PolicyTemperature", "2")
    player.configure(values)
    assert player.search is search and search.tt.lookup(Board()) is None


def test_every_option_is_a_command_line_flag_of_one_name():
    from zerochess.uci.options import BY_FLAG, OptionError, flag_name, parse_flags
    keys = [flag_name(name).replace("-", "") for o in OPTIONS for name in (o.name, *o.aliases)]
    assert len(set(keys)) == len(OPTIONS)          # an alias shares its option's flag
    assert all(BY_FLAG[k] in OPTIONS for k in keys)
    assert [flag_name(n) for n in ("WeightsFile", "Move Overhead", "UCI_ShowWDL", "MultiPV",
                                   "CPuctBase", "UCI_Chess960")] == \
        ["--weights-file", "--move-overhead", "--uci-show-wdl", "--multi-pv", "--cpuct-base",
         "--uci-chess960"]
    parsed = parse_flags(["--threads=2", "--weights-file", "x.onnx", "--ponder", "--multipv", "3",
                          "--uci-show-wdl", "false", "--MoveOverhead=5", "--fpu-reduction", "-0.5"])
    assert [(o.name, v) for o, v in parsed] == [
        ("Threads", "2"), ("WeightsFile", "x.onnx"), ("Ponder", "true"), ("MultiPV", "3"),
        ("UCI_ShowWDL", "false"), ("Move Overhead", "5"), ("FpuReduction", "-0.5")]
    for argv, message in [(["--nope=1"], "no such option"), (["threads=2"], "not an option flag"),
                          (["--hash"], "needs a value"), (["--hash", "--threads=2"], "needs a value"),
                          (["--clear-hash"], "button")]:
        with pytest.raises(OptionError, match=message):
            parse_flags(argv)
