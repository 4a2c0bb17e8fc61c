"""Syzygy endgame tablebases (search/syzygy.py): the root keeps the tables' result and the
fastest conversion, the tree proves positions after captures and pawn moves, the fifty-move
rule counts as the tables count it, broken files and directories are reported and skipped,
and the options work through a real UCI process. python-chess's prober is the oracle.

The tables: the complete 3- and 4-piece set in ../shared/syzygy (or ZEROCHESS_SYZYGY);
every test here skips where it is absent."""

import os
import random
import shutil
from pathlib import Path

import chess
import chess.syzygy
import pytest

from zerochess.chess.board import Board
from zerochess.neural.evaluator import UniformEvaluator
from zerochess.search.params import ENGINE_PARAMS
from zerochess.search.results import CP_LIMIT, mate_in_moves
from zerochess.search.search import Search
from zerochess.search.syzygy import (TABLEBASE_PLIES, TB_WIN_CP, Tablebases, material_code,
                                     split_path, tablebase_cp)
from zerochess.tools.endgames import random_placement
from tests.uci_process import UciProcess

SYZYGY = Path(os.environ.get("ZEROCHESS_SYZYGY")
              or Path(__file__).resolve().parents[2] / "shared" / "syzygy")
needs_tables = pytest.mark.skipif(not (SYZYGY / "KRvK.rtbw").is_file(),
                                  reason=f"no Syzygy tables in {SYZYGY}")
pytestmark = needs_tables

KQvKR = "8/8/8/4k3/8/3r4/8/4KQ2 w - - 0 1"     # Qxd3 wins at once


@pytest.fixture(scope="module")
def tables():
    return Tablebases(str(SYZYGY))


@pytest.fixture(scope="module")
def oracle():
    with chess.syzygy.open_tablebase(str(SYZYGY)) as tb:
        yield tb


def random_positions(oracle, pieces: str, count: int, rng: random.Random, wdl=None,
                     halfmove: int = 0):
    """Random legal positions of ``pieces`` (White's upper case, Black's lower), side to
    move random, with python-chess's WDL in ``wdl`` (any if None)."""
    found = []
    while len(found) < count:
        board = random_placement(pieces, rng)
        board.turn = rng.random() < 0.5
        board.halfmove_clock = halfmove
        if not board.is_valid() or board.is_game_over():
            continue
        if wdl is not None and oracle.probe_wdl(board) not in wdl:
            continue
        found.append(board)
    return found


def child_wdl(oracle, board: chess.Board, uci: str) -> int:
    """WDL of the position after ``uci``, from the side that played it."""
    board.push(chess.Move.from_uci(uci))
    try:
        return 2 if board.is_checkmate() else -oracle.probe_wdl(board)
    finally:
        board.pop()


def child_dtz(oracle, board: chess.Board, uci: str) -> int:
    """Plies to the next zeroing move after ``uci`` for its mover (1: it zeroes or mates)."""
    board.push(chess.Move.from_uci(uci))
    try:
        if board.is_checkmate() or board.halfmove_clock == 0:
            return 1
        dtz = -oracle.probe_dtz(board)
        return dtz + (dtz > 0) - (dtz < 0)
    finally:
        board.pop()


# ----------------------------------------------------------------------------- opening

def test_the_tables_open_and_say_what_they_hold(tables):
    assert tables.n_tables == 35 and tables.max_pieces == 4 and tables.probe_limit == 4
    assert tables.take_problems() == []
    codes = tables.material_codes()
    assert material_code("KQ", "KR") in codes and material_code("KR", "KQ") in codes
    assert material_code("KQQ", "KQ") not in codes                      # 5 men: not held
    men = lambda code: 2 + sum((code >> (3 * i)) & 7 for i in range(10))
    assert Tablebases(str(SYZYGY), probe_limit=3).material_codes() == [
        c for c in codes if men(c) == 3]


def test_split_path_reads_stockfish_separators():
    assert split_path("") == [] and split_path("<empty>") == []
    assert split_path(os.pathsep.join(["a", " b ", ""])) == ["a", "b"]


# ----------------------------------------------------------------------------- the root

@pytest.mark.parametrize("pieces", ["KRk", "KQkr", "KPk", "KRkp", "kqKR", "KPkp"])
def test_a_won_root_keeps_only_winning_moves_with_the_fastest_dtz(tables, oracle, pieces):
    for cboard in random_positions(oracle, pieces, 6, random.Random(pieces), wdl=(2,)):
        probe = tables.rank_root(Board(cboard.fen()))
        assert probe is not None and probe.result == 1 and probe.by_dtz, cboard.fen()
        legal = [m.uci() for m in cboard.legal_moves]
        winning = {m: child_dtz(oracle, cboard, m) for m in legal
                   if child_wdl(oracle, cboard, m) == 2}
        assert set(probe.keep) <= set(winning), cboard.fen()
        assert {winning[m] for m in probe.keep} == {min(winning.values())}, cboard.fen()
        assert probe.hits == len(legal)


@pytest.mark.parametrize("pieces", ["KPk", "KRkp", "KQkp", "KPkp", "KRkr", "KBkp"])
def test_a_drawn_root_keeps_no_losing_move(tables, oracle, pieces):
    for cboard in random_positions(oracle, pieces, 6, random.Random(pieces), wdl=(0,)):
        probe = tables.rank_root(Board(cboard.fen()))
        assert probe is not None and probe.result == 0, cboard.fen()
        assert probe.keep and all(child_wdl(oracle, cboard, m) == 0 for m in probe.keep)
        assert probe.score(probe.keep[0])[2] == 0


def test_a_lost_root_holds_out_longest(tables, oracle):
    for cboard in random_positions(oracle, "kqKR", 5, random.Random(3), wdl=(-2,)):
        probe = tables.rank_root(Board(cboard.fen()))
        dtz = {m.uci(): child_dtz(oracle, cboard, m.uci()) for m in cboard.legal_moves}
        assert probe.result == -1 and {dtz[m] for m in probe.keep} == {min(dtz.values())}


def test_searchmoves_restrict_what_the_root_ranks(tables):
    probe = tables.rank_root(Board(KQvKR), ["e1e2", "f1f2"])
    assert set(probe.ranks) == {"e1e2", "f1f2"} and probe.hits == 2
    assert tables.rank_root(Board(KQvKR)).keep == ("f1d3",)


def test_not_in_the_tables_no_root_verdict(tables):
    assert tables.rank_root(Board()) is None                                # 32 men
    assert tables.rank_root(Board("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1")) is None  # castling
    assert tables.rank_root(Board("4k3/8/8/8/8/8/3PP3/4K2r w - - 0 1")) is None  # 5 men
    assert Tablebases(str(SYZYGY), probe_limit=2).rank_root(Board(KQvKR)) is None


def test_the_fifty_move_counter_makes_a_slow_win_a_draw(tables, oracle):
    # KRvK, a mate in 16 (DTZ 31 plies) with 80 plies already gone: no win within the rule
    fen = "8/8/8/4k3/8/8/8/4KR2 w - - 80 1"
    assert oracle.probe_dtz(chess.Board(fen)) > 100 - 80
    probe = tables.rank_root(Board(fen))
    assert probe.result == 0 and all(r[0] < 900 for r in probe.ranks.values())
    assert all(probe.ranks[m][0] > 0 for m in probe.keep)       # still the cursed "wins" first
    assert probe.score(probe.keep[0]) == (0.0, (0.0, 1.0, 0.0), 0)
    fresh = tables.rank_root(Board(fen.replace(" 80 ", " 0 ")))
    assert fresh.result == 1
    no_rule = Tablebases(str(SYZYGY), rule50=False).rank_root(Board(fen))
    assert no_rule.result == 1                                  # Syzygy50MoveRule false


def test_a_repetition_since_the_last_zeroing_ranks_wins_by_distance(tables):
    board = Board("8/8/8/4k3/8/8/8/4KR2 w - - 0 1")
    for uci in ("e1e2", "e5e6", "e2e1", "e6e5"):                   # back where it started
        board.push_uci(uci)
    probe = tables.rank_root(board)
    assert probe.result == 1 and all(r[0] < 1000 for r in probe.ranks.values() if r[2] == 1)


# ----------------------------------------------------------------------------- the tree

def search_with(tables, fen: str, nodes: int, **params):
    search = Search(UniformEvaluator(), ENGINE_PARAMS.replace(**params))
    search.set_tablebases(tables)
    result = search.search(Board(fen), nodes=nodes)
    search.tree.verify()
    return search, result


def test_leaf_probes_agree_with_python_chess(tables, oracle):
    rng = random.Random(11)
    for pieces in ("KQkr", "KPkp", "KRkp", "KBNk", "kpPK"):
        for cboard in random_positions(oracle, pieces, 25, rng):
            if cboard.ep_square is not None:
                continue
            bb = (cboard.occupied_co[chess.WHITE], cboard.occupied_co[chess.BLACK], cboard.pawns,
                  cboard.knights, cboard.bishops, cboard.rooks, cboard.queens, cboard.kings,
                  cboard.turn, None)
            expected = oracle.probe_wdl(cboard)
            expected = 2 if expected == 2 else (-2 if expected == -2 else 0)
            assert tables.probe_leaf(chess.polyglot.zobrist_hash(cboard), bb) == expected


def test_a_capture_into_a_won_table_position_is_a_proven_win_not_a_mate(tables):
    # five men: not in the tables at the root; Qxd7 leaves KQPvK, a win the tables know
    search, result = search_with(tables, "7k/3r4/8/8/8/8/P2Q4/2K5 w - - 0 1", 200)
    assert result.best_move == "d2d7" and result.mate is None and result.tbhits > 0
    assert result.cp == TB_WIN_CP - 1 and result.q == 1.0 and CP_LIMIT < result.cp
    assert search.tree.root_proven()
    edges = search.tree.root_edges()
    i = edges["moves"].index("d2d7")
    assert edges["proven"][i] == 1 and edges["plies"][i] == TABLEBASE_PLIES + 1


def test_tree_proofs_match_the_tables(tables, oracle):
    # every root move of a 5-man position that captures or moves a pawn into the tables is
    # proven by them, with python-chess's result
    fen = "4k3/3r4/1p6/8/3Q4/8/2K5/8 w - - 0 1"             # Qxd7+ and Qxb6
    search, result = search_with(tables, fen, 600)
    edges = search.tree.root_edges()
    cboard = chess.Board(fen)
    checked = 0
    for i, move in enumerate(edges["moves"]):
        if edges["plies"][i] != TABLEBASE_PLIES + 1:
            continue
        wdl = child_wdl(oracle, cboard, move)
        assert edges["proven"][i] == {2: 1, 0: 2, -2: 3}[wdl], move
        checked += 1
    assert checked == 2 and result.tbhits >= checked


def test_a_root_in_the_tables_reports_its_score_and_its_probes(tables):
    search, result = search_with(tables, KQvKR, 200)
    assert result.best_move == "f1d3" and result.cp == TB_WIN_CP and result.mate is None
    assert result.tbhits > 15 and result.wdl == (0.0, 0.0, 1.0)
    lost = search_with(tables, KQvKR.replace(" w ", " b "), 200)[1]
    assert lost.cp == -TB_WIN_CP and lost.best_move in {"e5e4", "d3d4", "d3d5", "d3d6"}


def test_a_mate_stays_a_mate(tables):
    # KRvK with a mate in one: the root is in the tables, the mate is what is shown
    result = search_with(tables, "6k1/8/6K1/8/8/8/8/R7 w - - 0 1", 100)[1]
    assert result.best_move == "a1a8" and result.mate == 1


def test_scores_of_table_proofs():
    assert mate_in_moves(1, TABLEBASE_PLIES + 3) == (None, None)
    assert mate_in_moves(1, 3) == (2, 3)
    assert tablebase_cp(1, TABLEBASE_PLIES + 3) == TB_WIN_CP - 3
    assert tablebase_cp(3, TABLEBASE_PLIES + 2) == -(TB_WIN_CP - 2)
    assert tablebase_cp(2, TABLEBASE_PLIES + 1) == 0
    assert TB_WIN_CP - 100 > CP_LIMIT            # above any score from Q, however deep
    from types import SimpleNamespace
    from zerochess.uci.format import centipawns
    assert centipawns(SimpleNamespace(cp=TB_WIN_CP - 3, q=1.0), "centipawn_lc0") == TB_WIN_CP - 3
    assert centipawns(SimpleNamespace(cp=CP_LIMIT, q=1.0), "centipawn_lc0") == 12780  # Lc0's


def test_without_tables_the_search_is_unchanged(tables):
    fen = "4k3/8/8/8/8/8/3PP3/4K2r w - - 0 1"
    plain = Search(UniformEvaluator(), ENGINE_PARAMS).search(Board(fen), nodes=300)
    assert plain.tbhits == 0
    off = Search(UniformEvaluator(), ENGINE_PARAMS)
    off.set_tablebases(Tablebases(str(SYZYGY), probe_limit=0))
    assert off.search(Board(fen), nodes=300).root_visits == plain.root_visits
    start = Search(UniformEvaluator(), ENGINE_PARAMS)
    start.set_tablebases(tables)                 # nothing in the tables below the start
    same = start.search(Board(), nodes=300)
    assert same.tbhits == 0
    assert same.root_visits == Search(UniformEvaluator(), ENGINE_PARAMS).search(
        Board(), nodes=300).root_visits


def test_tables_with_several_threads(tables):
    search, result = search_with(tables, "4k3/8/8/8/8/8/3PP3/4K2r w - - 0 1", 400, threads=2)
    assert result.tbhits > 0 and result.nodes >= 400


# ----------------------------------------------------------------------------- bad files

def broken_copy(tmp_path: Path) -> Path:
    """A copy of the tables with one truncated, one empty, one with a wrong header."""
    for name in ("KQvKR", "KQvK", "KRvK", "KPvK", "KQvKP", "KRvKP"):
        for ext in (".rtbw", ".rtbz"):
            shutil.copy(SYZYGY / (name + ext), tmp_path / (name + ext))
    data = (tmp_path / "KQvKR.rtbw").read_bytes()
    (tmp_path / "KQvKR.rtbw").write_bytes(data[:len(data) // 2])     # truncated
    (tmp_path / "KPvK.rtbz").write_bytes(b"")                          # empty
    raw = bytearray((tmp_path / "KRvKP.rtbw").read_bytes())
    raw[:4] = b"\0\0\0\0"                                              # not a Syzygy header
    (tmp_path / "KRvKP.rtbw").write_bytes(bytes(raw))
    return tmp_path


def test_broken_files_and_directories_are_reported_and_skipped(tmp_path):
    (tmp_path / "tb").mkdir()
    directory = broken_copy(tmp_path / "tb")
    missing = tmp_path / "nowhere"
    tables = Tablebases(os.pathsep.join([str(directory), str(missing)]))
    problems = tables.take_problems()
    assert tables.take_problems() == []                                # handed over once
    assert len(problems) == 4, problems
    for name in ("KQvKR.rtbw", "KPvK.rtbz", "KRvKP.rtbw", str(missing)):
        assert sum(name in p for p in problems) == 1, (name, problems)
    assert tables.n_tables == 4                           # 6 less KQvKR's and KRvKP's WDL
    assert tables.probe_wdl(Board("8/8/8/4k3/8/8/2r5/4KQ2 w - - 0 1")) is None   # KQvKR
    assert tables.probe_wdl(Board("8/8/8/4k3/8/8/8/4KR2 w - - 0 1")) == 2
    # play goes on: the search still searches, with what is left
    search = Search(UniformEvaluator(), ENGINE_PARAMS)
    search.set_tablebases(tables)
    assert search.search(Board(KQvKR), nodes=100).best_move is not None
    probe = tables.rank_root(Board("8/8/8/8/8/2k5/4P3/4K3 w - - 0 1"))    # KPvK: WDL only
    assert probe is not None and not probe.by_dtz


def test_a_file_truncated_to_a_plausible_size_is_found_when_read(tmp_path):
    for name in ("KQvKR", "KQvK", "KRvK"):
        shutil.copy(SYZYGY / (name + ".rtbw"), tmp_path / (name + ".rtbw"))
    data = (tmp_path / "KQvKR.rtbw").read_bytes()
    cut = (len(data) // 2) // 64 * 64 + 16                            # passes the size check
    (tmp_path / "KQvKR.rtbw").write_bytes(data[:cut])
    tables = Tablebases(str(tmp_path))
    assert tables.take_problems() == [] and tables.n_tables == 3
    search = Search(UniformEvaluator(), ENGINE_PARAMS)
    search.set_tablebases(tables)
    # the tree meets KQvKR after Rxd1... or the root does: either way it reads the table
    result = search.search(Board("8/8/8/4k3/8/8/3r4/3QK3 w - - 0 1"), nodes=100)
    assert result.best_move is not None
    problems = tables.take_problems()
    assert len(problems) == 1 and "KQvKR.rtbw" in problems[0] and "truncated" in problems[0]
    assert material_code("KQ", "KR") not in tables.material_codes()


# ----------------------------------------------------------------------------- UCI

def test_the_options_through_a_uci_process(tmp_path):
    engine = UciProcess()
    try:
        engine.send("uci")
        lines = engine.expect("uciok")
        assert "option name SyzygyPath type string default <empty>" in lines
        assert "option name SyzygyProbeLimit type spin default 7 min 0 max 7" in lines
        engine.send("setoption name WeightsFile value uniform")
        engine.send(f"setoption name SyzygyPath value {SYZYGY}")
        assert not [l for l in engine.sync() if "error" in l]
        engine.send(f"position fen {KQvKR}")
        engine.send("go nodes 200")
        lines = engine.expect("bestmove", timeout=60)
        assert lines[-1].split()[1] == "f1d3"
        hits = [int(l.split(" tbhits ")[1].split()[0]) for l in lines if " tbhits " in l]
        assert hits and hits[-1] > 0
        assert f"score cp {TB_WIN_CP}" in [l for l in lines if l.startswith("info depth")][-1]
        engine.send("setoption name SyzygyProbeLimit value 9")
        assert "SyzygyProbeLimit" in engine.expect("info string error:")[-1]
        broken = broken_copy(tmp_path)
        engine.send(f"setoption name SyzygyPath value {broken}{os.pathsep}{tmp_path / 'nowhere'}")
        errors = [l for l in engine.sync() if l.startswith("info string error:")]
        assert len(errors) == 4 and any("KQvKR.rtbw" in l for l in errors)
        engine.send(f"position fen {KQvKR}")
        engine.send("go nodes 50")                         # plays on without the bad table
        assert engine.expect("bestmove", timeout=60)[-1].split()[1] != "(none)"
        engine.send("setoption name SyzygyPath value <empty>")
        engine.sync()
        engine.send("go nodes 50")
        lines = engine.expect("bestmove", timeout=60)
        assert all(" tbhits 0 " in l for l in lines if " tbhits " in l)
    finally:
        engine.close()


# ----------------------------------------------------------------------------- games

@pytest.mark.slow
def test_won_positions_are_won_and_a_drawn_one_held_against_stockfish():
    """Three games against Stockfish 15.1 (no tables) at 5+0.1, zerochess to move with the
    tables: two won positions mated within the fifty-move rule, a drawn one not lost
    (benchmarks/bench_syzygy_games.py plays 60; docs/syzygy.md has its table)."""
    import asyncio
    import sys

    from zerochess.client.uci import EngineProcess
    from zerochess.match.config import EngineSpec, MatchConfig, TimeControl
    from zerochess.match.game import GameRecord, play_game
    from zerochess.match.openings import Opening

    from zerochess.train.data.teacher import default_teacher_command

    stockfish = default_teacher_command()[0]
    if not os.access(stockfish, os.X_OK):
        pytest.skip("no Stockfish")
    zc = EngineSpec("zerochess", [sys.executable, "-m", "zerochess"],
                    {"SyzygyPath": str(SYZYGY)})
    sf = EngineSpec("stockfish", [stockfish],
                    {"Threads": "1", "Hash": "16", "Move Overhead": "100"})
    config = MatchConfig(engines=[zc, sf], tc=TimeControl.parse("5+0.1"))
    games = [("8/3K1Q2/6r1/8/8/6k1/8/8 w - - 0 1", 1.0),      # KQvKR
             ("k7/8/7K/8/8/8/3R1p2/8 w - - 0 1", 1.0),        # KRvKP, the pawn one step away
             ("8/5r2/8/6PK/8/4k3/8/8 w - - 0 1", 0.5)]        # KPvKR, drawn; Kg6? loses

    async def play():
        engines = {s.name: EngineProcess(s.name, s.command, s.options, 30.0) for s in (zc, sf)}
        records = []
        try:
            for proc in engines.values():
                await proc.start()
            for number, (fen, _) in enumerate(games, start=1):
                record = GameRecord(number, number, number - 1, "zerochess", "stockfish",
                                    Opening(fen))
                await play_game(record, {chess.WHITE: engines["zerochess"],
                                         chess.BLACK: engines["stockfish"]}, config)
                records.append(record)
        finally:
            for proc in engines.values():
                await proc.quit()
        return records

    for (fen, wanted), record in zip(games, asyncio.run(play())):
        score = record.score_of("zerochess")
        assert score >= wanted, (fen, record.result, record.reason)
        if wanted == 1.0:
            assert record.reason.endswith("mates"), (fen, record.reason)
