"""The adaptive time manager's stopping rules (UCI `TimeManager adaptive`), and that the
classic one is untouched by them."""

import pytest

from uci_process import UciProcess
from zerochess.search.results import SearchProgress
from zerochess.search.timeman import (FALL_CAP, SHARE_MIN_VISITS, SHARE_RANGE, Budget, GoParams,
                                      Stopper, fall_factor, share_factor)

BUDGET = Budget(1.0, 4.0)


def progress(**kw):
    # nodes: this search's playouts, so many that smart pruning never stops these searches
    base = dict(elapsed=0.0, nodes=10**7, depth=3.0, best_visits=300, second_visits=250,
                best_move_changes=0, last_batch_seconds=0.01, q=0.2, root_visits=1000)
    base.update(kw)
    return SearchProgress(**base)


def stopper(adaptive=True):
    return Stopper(GoParams(wtime=60_000, btime=60_000), BUDGET, adaptive=adaptive)


def first_stop(s, times, **kw):
    """The first elapsed time in ``times`` at which ``s`` stops with these progress fields."""
    for t in times:
        if s.should_stop(progress(elapsed=t, **kw)):
            return t
    return None


TIMES = [round(0.05 * i, 2) for i in range(1, 81)]   # 0.05 .. 4.0 s


def test_the_factors_stay_in_their_bounds_and_move_the_right_way():
    assert fall_factor(None, 0.1) == fall_factor(0.3, None) == 1.0
    assert fall_factor(0.3, 0.3) == fall_factor(0.3, 0.6) == 1.0       # held or rose
    assert 1.0 < fall_factor(0.3, 0.25) < fall_factor(0.3, 0.1) <= 1.0 + FALL_CAP
    assert fall_factor(0.9, -0.9) == 1.0 + FALL_CAP
    lo, hi = SHARE_RANGE
    shares = [share_factor(v, 1000) for v in range(0, 1001, 50)]
    assert all(a >= b for a, b in zip(shares, shares[1:]))              # more share, less time
    assert shares[0] == hi and shares[-1] == lo and share_factor(500, 1000) == 1.0
    assert share_factor(SHARE_MIN_VISITS - 1, SHARE_MIN_VISITS - 1) == 1.0  # too few to judge
    assert share_factor(5000, 1000) == lo                               # reused visits counted


def test_classic_ignores_the_value_the_share_and_a_proven_root():
    classic = stopper(adaptive=False)
    assert first_stop(classic, TIMES) == 1.0
    assert first_stop(stopper(adaptive=False), TIMES, q=-0.5, best_visits=990) == 1.0
    assert not stopper(adaptive=False).should_stop(progress(elapsed=0.1, root_proven=True))


def test_a_best_move_with_most_visits_stops_early_and_a_split_one_later():
    assert first_stop(stopper(), TIMES, best_visits=900) == 0.5        # factor 0.5
    assert first_stop(stopper(), TIMES, best_visits=500) == 1.0        # neutral
    assert first_stop(stopper(), TIMES, best_visits=200, second_visits=190) == 1.4   # 1.375
    assert first_stop(stopper(), TIMES, best_visits=60, root_visits=60, nodes=60) == 1.0


def test_a_falling_value_earns_more_time_up_to_twice_the_optimum():
    s = stopper()
    assert not s.should_stop(progress(elapsed=0.1, q=0.30, best_visits=500))   # sets the start
    assert first_stop(s, TIMES[2:], q=0.20, best_visits=500) == 1.4           # 1 + 4 * 0.1
    s = stopper()
    s.should_stop(progress(elapsed=0.1, q=0.30, best_visits=500))
    assert first_stop(s, TIMES[2:], q=-0.6, best_visits=500) == 2.0           # capped
    s = stopper()
    s.should_stop(progress(elapsed=0.1, q=0.30, best_visits=500))
    assert first_stop(s, TIMES[2:], q=0.45, best_visits=500) == 1.0           # rose: no change


def test_every_rule_still_ends_before_the_maximum():
    s = stopper()
    s.should_stop(progress(elapsed=0.01, q=0.9, best_visits=100, second_visits=95))
    stop = first_stop(s, TIMES, q=-0.9, best_visits=100, second_visits=95, best_move_changes=4,
                      last_batch_seconds=0.2)
    assert stop is not None and stop + 1.2 * 0.2 >= BUDGET.maximum and stop < BUDGET.maximum


def test_a_proven_root_stops_at_once():
    s = stopper()
    assert not s.should_stop(progress(elapsed=0.01))
    assert s.should_stop(progress(elapsed=0.02, root_proven=True)) and s.reason == "root proven"


@pytest.mark.parametrize("manager,most", [("adaptive", 17), ("classic", None)])
def test_uci_time_manager_option_reaches_the_stopper(manager, most):
    # A mate in one on a long clock: the adaptive manager stops once the root is proven
    # (root expansion plus the first batch of 16 leaves), the classic one thinks on.
    engine = UciProcess()
    try:
        engine.send("uci")
        engine.expect("uciok")
        for option in ("WeightsFile value uniform", "MinibatchSize value 16",
                       f"TimeManager value {manager}"):
            engine.send(f"setoption name {option}")
        engine.sync()
        engine.send("position fen 6k1/5ppp/8/3N4/8/8/5PPP/R5K1 w - - 0 1")
        engine.send("go wtime 20000 btime 20000")
        lines = engine.expect("bestmove", timeout=30)
        nodes = [int(l.split(" nodes ")[1].split()[0]) for l in lines if " nodes " in l][-1]
        assert lines[-1].split()[1] == "a1a8"
        assert nodes <= most if most else nodes > 4 * 17
    finally:
        engine.close()
