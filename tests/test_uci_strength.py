"""UCI_LimitStrength / UCI_Elo: the options change play, deterministically, and the weakest
level still never allows a mate in one."""

import io
from pathlib import Path

import chess
import numpy as np
import pytest

from zerochess.chess.board import Board
from zerochess.neural.evaluator import UniformEvaluator
from zerochess.search.params import SearchParams
from zerochess.search.search import Search
from zerochess.uci.loop import UciLoop
from zerochess.uci.options import OPTIONS, OptionValues
from zerochess.uci.strength import (CALIBRATION, NODE_BAND_START, NODE_LADDER, STRENGTH_ELO_MAX,
                                    STRENGTH_ELO_MIN, Strength, allows_mate_in_one, ladder_fit,
                                    nodes_for_elo, skill_for_elo)

BOOK = Path(__file__).resolve().parent.parent / "books" / "balanced_2moves.epd"
POSITIONS = [" ".join(line.split()[:4]) + " 0 1" for line in BOOK.read_text().splitlines()[:12]]


def test_the_options_are_declared_as_stockfish_declares_them():
    lines = [o.uci_line() for o in OPTIONS]
    assert "option name UCI_LimitStrength type check default false" in lines
    assert (f"option name UCI_Elo type spin default {STRENGTH_ELO_MAX} "
            f"min {STRENGTH_ELO_MIN} max {STRENGTH_ELO_MAX}") in lines


def test_bad_values_are_refused_with_the_reason():
    out = io.StringIO()
    loop = UciLoop(out)
    for line in ("setoption name UCI_Elo value 1500", "setoption name UCI_Elo value 3000",
                 "setoption name UCI_Elo value strong", "setoption name UCI_Elo",
                 "setoption name UCI_LimitStrength value yes"):
        loop.handle(line)
    assert out.getvalue().splitlines() == [
        f"info string error: option UCI_Elo must be between {STRENGTH_ELO_MIN} and "
        f"{STRENGTH_ELO_MAX}, not 3000",
        "info string error: option UCI_Elo takes an integer, not 'strong'",
        "info string error: option UCI_Elo needs a value",
        "info string error: option UCI_LimitStrength takes true or false, not 'yes'"]
    assert loop.options["UCI_Elo"] == 1500 and loop.options["UCI_LimitStrength"] is False


def test_levels_search_less_and_choose_more_freely_the_lower_they_are():
    levels = [Strength.at(s) for s in range(1000, 1801, 100)]
    assert levels[0].nodes == 8 and levels[-2].nodes < 256
    assert all(a.nodes < b.nodes and a.temperature > b.temperature and a.share < b.share
               and a.max_drop > b.max_drop for a, b in zip(levels, levels[1:]))
    values = OptionValues()
    assert Strength.for_options(values) is None            # off by default
    values.set("UCI_LimitStrength", "true")
    assert Strength.for_options(values) is None            # the top is full strength
    values.set("UCI_Elo", str(STRENGTH_ELO_MIN))
    lowest = Strength.for_options(values)
    values.set("UCI_Elo", str(STRENGTH_ELO_MAX - 1))
    highest = Strength.for_options(values)
    assert lowest.nodes < highest.nodes and lowest.temperature > highest.temperature


def test_uci_elo_maps_through_the_measured_points():
    for skill, elo in CALIBRATION:                   # a measured rating asks for its skill
        assert skill_for_elo(elo) == pytest.approx(skill)
    skills = [skill_for_elo(e) for e in range(STRENGTH_ELO_MIN, STRENGTH_ELO_MAX + 1, 25)]
    assert all(a < b for a, b in zip(skills, skills[1:]))


def test_the_node_band_plays_its_own_best_move_with_more_nodes_the_higher_it_is():
    a, b = ladder_fit()
    assert b > 0                                     # more nodes, stronger: the fit says so
    for nodes, elo, err in NODE_LADDER:              # the line passes within each error bar
        assert abs(a + b * np.log2(nodes) - elo) <= err
    assert STRENGTH_ELO_MIN < NODE_BAND_START < STRENGTH_ELO_MAX
    values = OptionValues()
    values.set("UCI_LimitStrength", "true")
    band = []
    for elo in range(NODE_BAND_START, STRENGTH_ELO_MAX, 10):
        values.set("UCI_Elo", str(elo))
        band.append(Strength.for_options(values))
    assert all(level.temperature == 0 for level in band)
    fewest, most = NODE_LADDER[0][0], NODE_LADDER[-1][0]
    assert fewest <= band[0].nodes < 1.02 * fewest      # the band starts at the fewest nodes
    # and ends among the measured budgets, not extrapolated beyond them
    assert NODE_LADDER[-2][0] < band[-1].nodes < 1.1 * most
    assert all(x.nodes <= y.nodes for x, y in zip(band, band[1:]))
    values.set("UCI_Elo", str(NODE_BAND_START - 1))
    below = Strength.for_options(values)             # the top of the skill band
    assert below.temperature > 0 and below.nodes < band[0].nodes
    assert nodes_for_elo(NODE_BAND_START - 300) == NODE_LADDER[0][0]


def test_the_node_band_keeps_the_search_choice():
    # uniform priors, where a skill level draws among many moves (the test below)
    search = Search(UniformEvaluator(), SearchParams(seed=0, hash_mb=1))
    result = search.search(Board(BACK_RANK), nodes=200)
    level = Strength.best_move_within(NODE_BAND_START + 50)
    rng = np.random.default_rng(0)
    chosen = {level.choose(result, Board(BACK_RANK), rng) for _ in range(50)}
    assert chosen == {(result.best_move, result.ponder_move)}


def play(elo, go="go nodes 200"):
    """The moves zerochess (shipped network) plays in POSITIONS, and the node count of each
    final info line; UCI_LimitStrength at ``elo``, or full strength for None."""
    out = io.StringIO()
    loop = UciLoop(out)
    for line in ("uci", "setoption name Threads value 1", "isready", "ucinewgame",
                 f"setoption name UCI_LimitStrength value {'false' if elo is None else 'true'}",
                 f"setoption name UCI_Elo value {elo or STRENGTH_ELO_MAX}"):
        loop.handle(line)
    moves, nodes = [], []
    for fen in POSITIONS:
        loop.handle(f"position fen {fen}")
        loop.handle(go)
        loop.player.wait()
        lines = out.getvalue().splitlines()
        moves.append(lines[-1].split()[1])
        nodes.append(int(lines[-2].split(" nodes ")[1].split()[0]))
    return moves, nodes


@pytest.fixture(scope="module")
def full_strength():
    return play(None)


def test_the_lowest_level_plays_other_moves_with_a_small_search_and_repeats_itself(full_strength):
    low, low_nodes = play(STRENGTH_ELO_MIN)
    assert play(STRENGTH_ELO_MIN) == (low, low_nodes)      # seeded: the same game twice
    assert all(n <= Strength.at(skill_for_elo(STRENGTH_ELO_MIN)).nodes for n in low_nodes)
    assert all(n >= 200 for n in full_strength[1])      # the clock (go nodes) decides there
    differ = sum(a != b for a, b in zip(full_strength[0], low))
    assert differ >= 4, (full_strength[0], low)
    for fen, move in zip(POSITIONS, low):
        assert chess.Move.from_uci(move) in chess.Board(fen).legal_moves


def test_a_middle_level_stays_closer_to_full_strength_than_the_lowest(full_strength):
    differ = lambda moves: sum(a != b for a, b in zip(full_strength[0], moves))
    assert differ(play(1700)[0]) < differ(play(STRENGTH_ELO_MIN)[0])


# White's rook on d1 alone holds the back rank: Rd2 .. Rd7 each allow Re1 mate.
BACK_RANK = "4r1k1/5ppp/8/8/8/2N5/5PPP/3R2K1 w - - 0 1"


def python_chess_allows_mate_in_one(fen, move):
    board = chess.Board(fen)
    board.push_uci(move)
    for reply in list(board.legal_moves):
        board.push(reply)
        mate = board.is_checkmate()
        board.pop()
        if mate:
            return True
    return False


def test_the_lowest_level_never_allows_a_mate_in_one():
    legal = Board(BACK_RANK).legal_moves()
    losing = {m for m in legal if python_chess_allows_mate_in_one(BACK_RANK, m)}
    assert losing >= {"d1d2", "d1d7"}
    assert {m for m in legal if allows_mate_in_one(Board(BACK_RANK), m)} == losing
    # uniform priors: every move is as likely a candidate as any other, mate or not
    level = Strength.at(1000)
    search = Search(UniformEvaluator(), SearchParams(seed=0, hash_mb=1))
    result = search.search(Board(BACK_RANK), nodes=level.nodes)
    rng = np.random.default_rng(0)
    chosen = [level.choose(result, Board(BACK_RANK), rng)[0] for _ in range(200)]
    assert len(set(chosen)) >= 4                            # it does choose freely...
    assert not set(chosen) & losing                         # ...but never those,
    assert set(chosen) <= {m.move for m in result.moves if m.visits}   # nor an unsearched one
