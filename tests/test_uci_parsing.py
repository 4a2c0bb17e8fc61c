"""The UCI layer's pure parts: option declarations, command parsers, time allocation."""

import pytest

from zerochess.search.timeman import Budget, GoParams, SearchProgress, Stopper, allocate
from zerochess.uci.commands import UciError, parse_go, parse_position, parse_setoption
from zerochess.uci.options import OPTIONS, OptionError, OptionValues


def test_every_option_is_declared_once_and_advertised_in_a_form_guis_parse():
    names = [o.name.lower() for o in OPTIONS]
    assert len(names) == len(set(names))
    for option in OPTIONS:
        line = option.uci_line()
        assert line.startswith(f"option name {option.name} type ")
        kind = line.split(" type ")[1].split()[0]
        assert kind in ("check", "spin", "combo", "string", "button")
        if option.kind == "float":  # floats travel as strings that parse back to the default
            assert kind == "string"
            assert option.parse(line.split(" default ")[1]) == pytest.approx(option.default)


def test_required_options_exist():
    required = {"Hash", "Threads", "MinibatchSize", "WeightsFile", "Device", "Move Overhead",
                "MultiPV", "Ponder", "UCI_ShowWDL", "OwnBook", "BookFile", "Nodes", "Temperature",
                "CPuct"}
    assert required <= {o.name for o in OPTIONS}


def test_option_values_are_parsed_and_checked():
    values = OptionValues()
    values.set("hash", "128")                 # names are case-insensitive
    assert values["Hash"] == 128
    values.set("UCI_ShowWDL", "true")
    assert values["uci_showwdl"] is True
    values.set("Device", "CPU")
    assert values["Device"] == "cpu"
    values.set("CPuct", "2.5")
    assert values["CPuct"] == 2.5
    for name, text, message in [("Hash", "0", "between"), ("Hash", "lots", "integer"),
                                ("Ponder", "maybe", "true or false"), ("Device", "tpu", "one of"),
                                ("CPuct", "nan", "between"), ("CPuct", "x", "number"),
                                ("NoSuchOption", "1", "no such option")]:
        with pytest.raises(OptionError, match=message):
            values.set(name, text)
    assert values["Hash"] == 128 and values["Device"] == "cpu"  # unchanged by the failures


def test_parse_position():
    board = parse_position("startpos moves e2e4 e7e5 g1f3".split())
    assert board.move_stack == ["e2e4", "e7e5", "g1f3"]
    board = parse_position("fen 4k3/8/8/8/8/8/8/4K2R w K - 0 1 moves e1g1".split())
    assert board.fen() == "4k3/8/8/8/8/8/8/5RK1 b - - 1 1"
    for args, message in [("", "startpos"), ("fen", "invalid FEN"), ("middlegame", "startpos"),
                          ("startpos moves e2e5", "move 1"), ("startpos e2e4", "unexpected"),
                          ("fen 8/8/8/8/8/8/8/8 w - - 0 1", "king"),
                          ("startpos moves e2e4 e2e4", "move 2")]:
        with pytest.raises(UciError, match=message):
            parse_position(args.split())


def test_parse_go():
    p = parse_go("wtime 60000 btime 50000 winc 1000 binc 900 movestogo 20".split())
    assert (p.wtime, p.btime, p.winc, p.binc, p.movestogo) == (60000, 50000, 1000, 900, 20)
    p = parse_go("infinite searchmoves e2e4 d2d4".split(), parse_position(["startpos"]))
    assert p.infinite and p.searchmoves == ("e2e4", "d2d4")
    assert parse_go("ponder movetime 100".split()).ponder
    assert parse_go("wtime -30 btime 10".split()).wtime == 0
    for args, message in [("wtime", "needs a number"), ("nodes ten", "integer"),
                          ("depth 0", "positive"), ("sideways 3", "unknown"),
                          ("nodes 5 nodes 6", "twice"), ("searchmoves", "at least one")]:
        with pytest.raises(UciError, match=message):
            parse_go(args.split())
    with pytest.raises(UciError, match="not legal"):
        parse_go("searchmoves e2e5".split(), parse_position(["startpos"]))


def test_parse_setoption():
    assert parse_setoption("name Hash value 32".split()) == ("Hash", "32")
    assert parse_setoption("name Clear Hash".split()) == ("Clear Hash", None)
    assert parse_setoption("name WeightsFile value /a b/c.pt".split()) == ("WeightsFile", "/a b/c.pt")
    with pytest.raises(UciError):
        parse_setoption("Hash value 3".split())


def test_time_allocation_never_plans_to_flag():
    for clock in (50, 1000, 10_000, 60_000):
        for inc in (0, 10, 100):
            for mtg in (None, 1, 5, 40):
                b = allocate(GoParams(wtime=clock, btime=clock, winc=inc, binc=inc, movestogo=mtg),
                             True, overhead_ms=50)
                assert 0 <= b.optimum <= b.maximum
                assert b.maximum * 1000 <= max(0, clock - 50) * 0.8 + 1e-6
            for slow in (0.5, 2.0, 10.0):    # SlowMover scales the plan, never the caps
                b = allocate(GoParams(wtime=clock, btime=clock, movestogo=mtg), True, 50,
                             slow_mover=slow)
                assert b.maximum * 1000 <= max(0, clock - 50) * 0.8 + 1e-6
    go = GoParams(wtime=60_000, btime=60_000, winc=100, binc=100)
    assert allocate(go, True, 50, ply=10, slow_mover=2.0).optimum == \
        pytest.approx(2 * allocate(go, True, 50, ply=10).optimum)
    assert allocate(GoParams(movetime=500), True, 50, slow_mover=3.0) == Budget(0.45, 0.45)
    assert allocate(GoParams(), True, 50) is None
    assert allocate(GoParams(wtime=1000, btime=2000), False, 0).optimum > \
        allocate(GoParams(wtime=1000, btime=2000), True, 0).optimum


def _progress(**kw):
    base = dict(elapsed=0.0, nodes=0, depth=1.0, best_visits=0, second_visits=0,
                best_move_changes=0, last_batch_seconds=0.01)
    base.update(kw)
    return SearchProgress(**base)


def test_stoppers():
    nodes = Stopper(GoParams(nodes=100), None)
    assert not nodes.should_stop(_progress(nodes=99)) and nodes.should_stop(_progress(nodes=100))
    assert Stopper(GoParams(), None, fixed_nodes=50).should_stop(_progress(nodes=50))
    assert Stopper(GoParams(infinite=True), None).unlimited
    timed = Stopper(GoParams(), Budget(1.0, 3.0))
    assert not timed.should_stop(_progress(elapsed=0.5, nodes=50, best_visits=20, second_visits=15))
    assert timed.should_stop(_progress(elapsed=1.01, nodes=50))
    # an unstable best move earns more time, but never past the maximum
    assert not timed.should_stop(_progress(elapsed=1.2, nodes=50, best_move_changes=2))
    assert timed.should_stop(_progress(elapsed=2.95, nodes=50, best_move_changes=9,
                                       last_batch_seconds=0.1))
    # smart pruning: 1000 nodes/s with 0.5 s left cannot close a gap of 900 visits
    assert timed.should_stop(_progress(elapsed=0.5, nodes=500, best_visits=950, second_visits=50))
