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
    board, warnings = parse_position("startpos moves e2e4 e7e5 g1f3".split())
    assert board.move_stack == ["e2e4", "e7e5", "g1f3"] and warnings == []
    board, warnings = parse_position("fen 4k3/8/8/8/8/8/8/4K2R w K - 0 1 moves e1g1".split())
    assert board.fen() == "4k3/8/8/8/8/8/8/5RK1 b - - 1 1" and warnings == []
    for args, message in [("", "startpos"), ("fen", "without a FEN"), ("middlegame", "startpos"),
                          ("fen 8/8/8/8/8/8/8/8 w - - 0 1", "king"), ("fen w KQkq", "8 ranks")]:
        with pytest.raises(UciError, match=message):
            parse_position(args.split())
    # read as Stockfish reads them, with a warning: the legal start of the moves, extra words
    for args, played, message in [("startpos moves e2e5", [], "move 1 ('e2e5')"),
                                  ("startpos moves e2e4 e2e4", ["e2e4"], "move 2"),
                                  ("startpos e2e4", [], "after startpos ignored"),
                                  ("startpos moves e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5c6 d7c6 e1h1 "
                                   "c6d5", ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5c6",
                                            "d7c6", "e1g1"], "move 10")]:
        board, warnings = parse_position(args.split())
        assert board.move_stack == played and len(warnings) == 1 and message in warnings[0]
    board, warnings = parse_position("fen 8/8/8/8/8/8/8/K1k5".split())
    assert board.fen() == "8/8/8/8/8/8/8/K1k5 w - - 0 1" and "taken as w - - 0 1" in warnings[0]


def test_parse_go():
    p, warnings = parse_go("wtime 60000 btime 50000 winc 1000 binc 900 movestogo 20".split())
    assert (p.wtime, p.btime, p.winc, p.binc, p.movestogo) == (60000, 50000, 1000, 900, 20)
    assert warnings == [] and not p.at_once
    p, _ = parse_go("infinite searchmoves e2e4 d2d4".split(), parse_position(["startpos"])[0])
    assert p.infinite and p.searchmoves == ("e2e4", "d2d4")
    assert parse_go("ponder movetime 100".split())[0].ponder
    assert parse_go("wtime -30 btime 10".split())[0].wtime == 0
    assert parse_go("mate 3".split())[0].mate == 3 and parse_go([])[0] == GoParams()
    for args, message, value in [("wtime", "needs an integer, got nothing", None),
                                 ("nodes ten", "integer", None), ("depth 0", "taken as 1", 1),
                                 ("sideways 3", "unknown word", None),
                                 ("nodes 5 nodes 6", "twice", 6), ("searchmoves", "without a move", None)]:
        p, warnings = parse_go(args.split())
        assert any(message in w for w in warnings), (args, warnings)
        if value is not None:
            assert value in (p.depth, p.nodes)
    # a go that asked for limits it cannot have moves at once rather than search for ever
    assert parse_go("wtime abc".split())[0].at_once and parse_go("nodes 0".split())[0].at_once
    assert not parse_go("sideways".split())[0].at_once   # a bare go: until stop, as Stockfish
    black = parse_position("startpos moves e2e4".split())[0]
    p, warnings = parse_go("wtime 1000 winc 10".split(), black)
    assert p.at_once and "a clock for White only, with Black to move" in warnings[0]
    p, warnings = parse_go("searchmoves e2e5 e2e4 E7E8Q".split(), parse_position(["startpos"])[0])
    assert p.searchmoves == ("e2e4",) and "e2e5 E7E8q" in warnings[-1]
    p, warnings = parse_go("searchmoves e2e5".split(), parse_position(["startpos"])[0])
    assert p.searchmoves == () and "no move left to search" in warnings[0]


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


def test_depth_and_mate_stoppers_end_on_a_proven_root():
    depth = Stopper(GoParams(depth=3), None)
    assert not depth.should_stop(_progress(depth=2.9))      # the reported depth: rounded down
    assert depth.should_stop(_progress(depth=3.0)) and depth.reason == "depth"
    assert depth.should_stop(_progress(depth=1.0, root_proven=True))
    assert depth.reason == "root proven"
    single = Stopper(GoParams(depth=30), None, root_moves=1)
    assert single.should_stop(_progress(depth=1.0)) and single.reason == "one move to search"
    assert not Stopper(GoParams(depth=30), None, root_moves=2).should_stop(_progress(depth=1.0))
    mate = Stopper(GoParams(mate=2), None)
    assert not mate.unlimited
    assert not mate.should_stop(_progress(depth=40.0, nodes=10**7))   # until stop, as Stockfish
    assert mate.should_stop(_progress(root_proven=True))
    assert not Stopper(GoParams(), None, root_moves=1).should_stop(_progress(root_proven=True))
    at_once = Stopper(GoParams(at_once=True), None)
    assert not at_once.unlimited and at_once.should_stop(_progress())


def test_analysis_spends_its_time():
    play = Stopper(GoParams(movetime=1000), Budget(1.0, 1.0), adaptive=True)
    analysis = Stopper(GoParams(movetime=1000), Budget(1.0, 1.0), adaptive=True, analyse=True)
    decided = _progress(elapsed=0.5, nodes=500, best_visits=950, second_visits=50)
    assert play.should_stop(decided) and not analysis.should_stop(decided)
    assert not analysis.should_stop(_progress(elapsed=0.5, root_proven=True))
    assert analysis.should_stop(_progress(elapsed=1.0))
