"""Per-engine limits in matches (time or node odds, `--limit NAME.nodes=N`): parsing, the
``go`` each side is sent, the PGN's per-side tags, and a real match with one Stockfish on a
clock and the other on fixed nodes."""

import io
import os

import chess
import chess.engine
import chess.pgn
import pytest
from click.testing import CliRunner

from uci_process import stockfish_path
from zerochess.cli import main
from zerochess.match import EngineSpec, Limit, MatchConfig, MatchConfigError, TimeControl
from zerochess.match.config import apply_limit
from zerochess.match.game import GameRecord, MoveRecord, _limit
from zerochess.match.openings import Opening
from zerochess.match.pgn import game_pgn

BOOKS = os.path.join(os.path.dirname(__file__), "..", "books")


def engines():
    return [EngineSpec("zc", ["zerochess"]), EngineSpec("sf", ["stockfish"])]


def test_limit_parsing_and_errors():
    assert Limit.parse("nodes=2500") == Limit(nodes=2500)
    assert Limit.parse("tc=40/60+0.6") == Limit(tc=TimeControl(60.0, 0.6, 40))
    assert Limit.parse(" movetime = 0.5 ") == Limit(movetime=0.5)
    assert Limit(nodes=2500).describe() == "nodes=2500" and Limit(nodes=1).pgn() == "-"
    assert Limit(tc=TimeControl(10, 0.1)).describe() == "10+0.1"
    assert Limit(movetime=0.5).describe() == "movetime=0.5s"
    for bad, message in [("nodes=abc", "takes a number"), ("depth=5", "must be tc="),
                         ("nodes", "must be tc="), ("nodes=0", "at least 1"),
                         ("movetime=-1", "positive"), ("tc=fast", "time control")]:
        with pytest.raises(MatchConfigError, match=message):
            Limit.parse(bad)
    with pytest.raises(MatchConfigError, match="exactly one"):
        Limit(tc=TimeControl(1), nodes=5)


def test_limits_attach_to_named_engines_and_fill_in_the_match_limit():
    specs = engines()
    apply_limit(specs, "zc.nodes=2500")
    config = MatchConfig(specs, tc=TimeControl(10, 0.1))
    config.validate()
    assert config.limit_of("zc") == Limit(nodes=2500)
    assert config.limit_of("sf") == Limit(tc=TimeControl(10, 0.1))
    assert config.odds
    with pytest.raises(MatchConfigError, match="no engine named 'nobody'"):
        apply_limit(specs, "nobody.nodes=1")
    with pytest.raises(MatchConfigError, match="ENGINE.nodes=N"):
        apply_limit(specs, "nodes=1")
    # without a match limit, every engine needs its own
    with pytest.raises(MatchConfigError, match="a --limit for each engine"):
        MatchConfig(specs).validate()
    apply_limit(specs, "sf.movetime=0.1")
    MatchConfig(specs).validate()
    # the same limit twice is no odds
    same = engines()
    apply_limit(same, "zc.nodes=100")
    assert not MatchConfig(same, nodes=100).odds
    assert not MatchConfig(engines()).odds  # no limits at all: games read back by `rate`


def test_each_side_gets_its_own_go():
    tc = TimeControl(10, 0.1)
    limits = {chess.WHITE: Limit(nodes=2500), chess.BLACK: Limit(tc=tc)}
    clocks = {chess.WHITE: 0.0, chess.BLACK: 7.5}
    moves_left = {chess.WHITE: 0, chess.BLACK: 0}
    assert _limit(limits, clocks, moves_left, chess.WHITE) == chess.engine.Limit(nodes=2500)
    go = _limit(limits, clocks, moves_left, chess.BLACK)
    # the clock side hears its own clock only: the nodes side has none
    assert go == chess.engine.Limit(black_clock=7.5, black_inc=0.1)
    both = {c: Limit(tc=tc) for c in chess.COLORS}
    assert _limit(both, clocks, moves_left, chess.WHITE) == chess.engine.Limit(
        white_clock=0.001, black_clock=7.5, white_inc=0.1, black_inc=0.1)


def test_pgn_tags_say_each_sides_limit_under_odds():
    specs = engines()
    apply_limit(specs, "zc.nodes=2500")
    config = MatchConfig(specs, tc=TimeControl(10, 0.1))
    record = GameRecord(1, 1, 0, "sf", "zc", Opening(chess.STARTING_FEN, ()), result="1/2-1/2",
                        termination="adjudication", reason="Draw by adjudication")
    record.moves = [MoveRecord("e2e4", 0.3, 9.8), MoveRecord("e7e5", 0.2, None)]
    game = chess.pgn.read_game(io.StringIO(str(game_pgn(record, config))))
    h = game.headers
    assert h["WhiteTimeControl"] == "10+0.1" and "WhiteLimit" not in h
    assert h["BlackTimeControl"] == "-" and h["BlackLimit"] == "nodes=2500"
    first, second = game.mainline()
    assert first.clock() == pytest.approx(9.8) and second.clock() is None


@pytest.mark.skipif(not stockfish_path(), reason="stockfish is not installed")
def test_match_with_node_odds(tmp_path):
    """Stockfish on a clock against Stockfish on 300 nodes a move and no clock: the
    nodes side never loses on time however long it thinks, the report names both limits
    and the PGN has a clock on the clock side's moves only."""
    sf = stockfish_path()
    pgn_path = tmp_path / "odds.pgn"
    result = CliRunner().invoke(main, [
        "match", "--engine", f"clock={sf}", "--engine", f"nodes={sf}",
        "--option", "clock.Move Overhead=100", "--limit", "nodes.nodes=300",
        "--games", "2", "--tc", "2+0.05", "--maxmoves", "40",
        "--openings", os.path.join(BOOKS, "balanced_2moves.epd"), "--concurrency", "2",
        "--pgn", str(pgn_path), "--no-progress", "--fail-on-forfeit"])
    assert result.exit_code == 0, result.output
    assert "limits: clock 2+0.05, nodes nodes=300" in result.output
    assert "forfeits: 0" in result.output
    with open(pgn_path) as f:
        games = [g for g in iter(lambda: chess.pgn.read_game(f), None)]
    assert len(games) == 2
    for game in games:
        clock_side = chess.WHITE if game.headers["White"] == "clock" else chess.BLACK
        side = "White" if clock_side == chess.WHITE else "Black"
        other = "Black" if side == "White" else "White"
        assert game.headers[f"{side}TimeControl"] == "2+0.05"
        assert game.headers[f"{other}Limit"] == "nodes=300"
        played = [n for n in game.mainline()]
        assert played, "no moves"
        for node in played:
            mover = not node.board().turn
            assert (node.clock() is not None) == (mover == clock_side)
