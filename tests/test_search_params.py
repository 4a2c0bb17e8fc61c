"""SearchParams accepts every value its UCI option declares (a tuner probes the ends)."""

import math

import pytest

from zerochess.chess.board import Board
from zerochess.neural.evaluator import UniformEvaluator
from zerochess.search.params import ENGINE_PARAMS
from zerochess.search.search import Search
from zerochess.uci.options import OPTIONS


@pytest.mark.parametrize("option", [o for o in OPTIONS if o.sets.startswith("search.")],
                         ids=lambda o: o.name)
def test_every_search_option_value_in_its_range_is_a_valid_parameter(option):
    field = option.sets.partition(".")[2]
    for value in (option.min, option.default, option.max):
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            continue
        value = int(value) if option.kind == "spin" else float(value)
        if field in ("hash_mb", "threads", "minibatch", "multipv") and value > 1024:
            continue  # a legal value, but not one to allocate in a test
        assert getattr(ENGINE_PARAMS.replace(**{field: value}), field) == value


def test_optimistic_first_play_urgency_searches():
    """A negative FpuReduction (optimistic FPU) is a setting, not an error."""
    params = ENGINE_PARAMS.replace(fpu_reduction=-0.5, fpu_reduction_root=-0.25, seed=0)
    result = Search(UniformEvaluator(), params).search(Board(), nodes=200)
    assert result.nodes == 200 and result.best_move in Board().legal_moves()
    with pytest.raises(ValueError, match="finite"):
        ENGINE_PARAMS.replace(fpu_reduction=float("inf"))
