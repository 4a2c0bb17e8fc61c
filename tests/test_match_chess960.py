"""Chess960 matches: suites read in X-FEN and Shredder-FEN, the variant taken from the suite
or from --variant, UCI_Chess960 required of both engines, and a PGN that says Chess960."""

import os
import sys

import chess
import chess.pgn
import pytest
from click.testing import CliRunner

from uci_process import stockfish_path
from zerochess.cli import main
from zerochess.match import EngineSpec, MatchConfig, MatchConfigError, MatchError, run_match
from zerochess.match.openings import load_openings

HERE = os.path.dirname(__file__)
BOOKS = os.path.join(HERE, "..", "books")
FRC = os.path.join(BOOKS, "FRC_openings.epd")
DFRC = os.path.join(BOOKS, "DFRC_openings_500.epd")
BROKEN = [sys.executable, os.path.join(HERE, "broken_engine.py")]


def test_suites_say_whether_they_are_chess960():
    frc = load_openings(FRC)
    assert len(frc) == 960 and all(o.chess960 for o in frc)
    dfrc = load_openings(DFRC)
    assert dfrc[0].fen == "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"
    # Shredder-FEN rights survive: both castlings of both sides are there
    board = dfrc[0].board()
    assert board.chess960 and board.castling_rights == chess.BB_F1 | chess.BB_H1 | chess.BB_F8 | chess.BB_H8
    standard = load_openings(os.path.join(BOOKS, "balanced_2moves.epd"))
    assert not any(o.chess960 for o in standard)
    assert all(o.chess960 for o in load_openings(os.path.join(BOOKS, "balanced_2moves.epd"),
                                                 variant="chess960"))
    with pytest.raises(MatchConfigError, match="--variant chess960"):
        load_openings(DFRC, variant="standard")


def test_a_chess960_match_needs_openings_and_engines_that_declare_uci_chess960():
    with pytest.raises(MatchConfigError, match="needs --openings"):
        MatchConfig([EngineSpec("a", ["x"]), EngineSpec("b", ["y"])], nodes=10,
                    variant="chess960").validate()
    config = MatchConfig([EngineSpec("sf", [stockfish_path()]),
                          EngineSpec("first", BROKEN + ["first"])],  # no UCI_Chess960
                         games=2, nodes=10, openings=DFRC)
    with pytest.raises(MatchError, match="first does not declare UCI_Chess960"):
        run_match(config)


def test_zerochess_plays_double_fischer_random_against_stockfish(tmp_path):
    pgn_path = tmp_path / "dfrc.pgn"
    result = CliRunner().invoke(main, [
        "match", "--engine", f"zc={sys.executable} -m zerochess uci",
        "--engine", f"sf={stockfish_path()}", "--option", "zc.WeightsFile=uniform",
        "--option", "sf.UCI_LimitStrength=true", "--option", "sf.UCI_Elo=1350",
        "--games", "4", "--nodes", "200", "--openings", DFRC, "--openings-start", "7",
        "--variant", "fischerandom", "--maxmoves", "60", "--pgn", str(pgn_path),
        "--no-progress", "--fail-on-forfeit"])
    assert result.exit_code == 0, result.output
    assert "zc vs sf: 4 games" in result.output and "forfeits: 0" in result.output
    assert "variant: Chess960" in result.output
    with open(pgn_path) as f:
        games = [chess.pgn.read_game(f) for _ in range(4)]
    for game in games:
        assert game.headers["Variant"] == "Chess960" and game.headers["SetUp"] == "1"
        assert not game.errors  # every move replays legally on a Chess960 board
        board = game.board()
        assert board.chess960 and board.has_chess960_castling_rights()
        assert len(list(game.mainline_moves())) > 0
