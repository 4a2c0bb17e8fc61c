"""Names other engines use: Stockfish's ``Move Overhead`` (lichess-bot and many GUIs'
presets set it) with our older ``MoveOverhead`` still accepted, and a ``Clear Hash`` button."""

import io

import chess
import chess.engine
import pytest

from zerochess.chess.board import Board
from zerochess.uci.loop import UciLoop
from zerochess.uci.options import OPTIONS, OptionValues


def test_move_overhead_is_declared_once_and_advertised_by_stockfishs_name():
    lines = [o.uci_line() for o in OPTIONS]
    assert "option name Move Overhead type spin default 100 min 0 max 10000" in lines
    assert not any("MoveOverhead" in line for line in lines)
    assert sum(o.name == "Move Overhead" or "MoveOverhead" in o.aliases for o in OPTIONS) == 1


@pytest.mark.parametrize("name", ["Move Overhead", "MoveOverhead", "move overhead", "MOVEOVERHEAD"])
def test_either_name_sets_the_same_value(name):
    values = OptionValues()
    assert values.set(name, "350").name == "Move Overhead"
    assert values["Move Overhead"] == values["MoveOverhead"] == 350


def loop() -> tuple[UciLoop, io.StringIO]:
    out = io.StringIO()
    uci = UciLoop(out)
    for line in ("uci", "setoption name WeightsFile value uniform", "isready"):
        uci.handle(line)
    return uci, out


def test_the_old_name_reaches_the_clock_and_a_bad_value_names_the_option():
    uci, out = loop()
    uci.handle("setoption name MoveOverhead value 2500")
    assert uci.options["Move Overhead"] == 2500
    uci.handle("setoption name MoveOverhead value -5")
    uci.handle("setoption name Move Overhead value lots")
    errors = [l for l in out.getvalue().splitlines() if l.startswith("info string error:")]
    assert errors == ["info string error: option Move Overhead must be between 0 and 10000, not -5",
                      "info string error: option Move Overhead takes an integer, not 'lots'"]
    assert uci.options["Move Overhead"] == 2500   # the last valid value stays


def test_python_chess_clients_set_move_overhead_by_stockfishs_name():
    # python-chess (lichess-bot, zerochess match) only sends names the engine declared
    engine = chess.engine.SimpleEngine.popen_uci(["python", "-m", "zerochess"])
    try:
        assert "Move Overhead" in engine.options
        engine.configure({"WeightsFile": "uniform", "Move Overhead": 400})
        engine.ping()
        result = engine.play(chess.Board(), chess.engine.Limit(nodes=20))
        assert result.move in chess.Board().legal_moves
    finally:
        engine.quit()


def test_clear_hash_forgets_the_tree_and_the_cache():
    uci, out = loop()
    uci.handle("position startpos")
    uci.handle("go nodes 200")
    uci.player.wait()
    search = uci.player.search
    assert search.tt.lookup(Board()) is not None and search.tree.stats()["tree_nodes"] > 1
    uci.handle("setoption name Clear Hash")
    assert search.tt.lookup(Board()) is None and search.tt.hashfull() == 0
    assert search.tree.stats()["tree_nodes"] <= 1
    uci.handle("go nodes 50")            # and it searches on afterwards
    uci.player.wait()
    assert out.getvalue().splitlines()[-1].startswith("bestmove ")
    assert "error" not in out.getvalue()
