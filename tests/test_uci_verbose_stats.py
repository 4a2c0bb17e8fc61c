"""VerboseMoveStats / LogLiveStats: Leela Chess Zero's per-move lines, read as Nibbler reads
them (rooklift/nibbler, files/src/renderer/80_info.js and InfoValMany in 20_utils.js)."""

import re

import chess
import numpy as np
import pytest
from search_helpers import one_full_cache_bucket
from uci_process import UciProcess

from zerochess.chess.board import Board
from zerochess.neural.export import read_onnx_network
from zerochess.neural.shipped import shipped_network_path
from zerochess.search.results import MoveStats, NodeStats
from zerochess.uci.format import verbose_move_stats_lines

NIBBLER_KEYS = ("string", "N:", "(D:", "(U:", "(Q+U:", "(S:", "(P:", "(Q:", "(V:", "(M:")


def nibbler_values(line: str) -> dict[str, str]:
    """Nibbler's InfoValMany: split on spaces, drop empty tokens, the token after each key,
    without a trailing ')'; '' when the key is missing."""
    tokens = [t for t in line.replace(",", ".").split(" ") if t != ""]
    values = {}
    for key in NIBBLER_KEYS:
        values[key] = ""
        for i in range(len(tokens) - 1):
            if tokens[i] == key:
                values[key] = tokens[i + 1][:-1] if tokens[i + 1].endswith(")") else tokens[i + 1]
                break
    return values


def parse_float(text: str):
    """JavaScript's parseFloat for what these lines hold: a leading number or NaN (None)."""
    match = re.match(r"[+-]?(\d+\.?\d*|\.\d+)", text)
    return float(match.group()) if match else None


def nibbler_table(lines: list[str]) -> tuple[dict[str, dict], int]:
    """(move -> Nibbler's fields, the node line's N) from the ``info string`` lines."""
    table, node_n = {}, None
    for line in lines:
        values = nibbler_values(line)
        if values["string"] == "node":
            node_n = int(values["N:"])
            continue
        table[values["string"]] = {
            "n": int(values["N:"]), "p": parse_float(values["(P:"]),
            "q": parse_float(values["(Q:"]), "u": parse_float(values["(U:"]),
            "s": parse_float(values["(S:"]), "v": parse_float(values["(V:"]),
            "m": parse_float(values["(M:"]), "order": len(table) + 1}
    return table, node_n


def test_one_line_has_lc0s_layout():
    move = MoveStats(move="d2d4", index=293, visits=12005, prior=0.2238, wl=0.0948, d=0.326,
                     q=0.0948, u=0.01211, v=0.0898, proven=0)
    unvisited = MoveStats(move="a7a8q", index=1800, visits=0, prior=1.0, wl=None, d=None,
                          q=-0.25, u=0.5, v=None, proven=0)
    root = NodeStats(visits=12006, n_moves=2, visited_policy=0.2238, wl=-0.0948, d=0.326, v=None)
    assert verbose_move_stats_lines([move, unvisited], root) == [
        "info string a7a8q (1800) N:       0 (+ 0) (P: 100.0%) (WL:  -.-----) (D: -.---) "
        "(Q: -0.25000) (U: 0.50000) (S:  0.25000) (V:  -.----)",
        "info string d2d4  (293 ) N:   12005 (+ 0) (P: 22.38%) (WL:  0.09480) (D: 0.326) "
        "(Q:  0.09480) (U: 0.01211) (S:  0.10691) (V:  0.0898)",
        "info string node  (2   ) N:   12006 (+ 0) (P: 22.38%) (WL: -0.09480) (D: 0.326) "
        "(Q: -0.09480) (V:  -.----)"]


@pytest.fixture(scope="module")
def engine():
    e = UciProcess()
    e.send("uci")
    e.expect("uciok", timeout=15)
    e.sync(timeout=60)                    # the shipped network
    yield e
    e.close()


def search_lines(engine, go: str, options: dict) -> list[str]:
    for name, value in options.items():
        engine.send(f"setoption name {name} value {value}")
    engine.send("ucinewgame")
    engine.send("position startpos moves e2e4 c7c5")
    engine.send(go)
    return engine.expect("bestmove", timeout=60)


def test_verbose_move_stats_come_once_before_bestmove_and_add_up(engine):
    lines = search_lines(engine, "go nodes 300",
                         {"VerboseMoveStats": "true", "LogLiveStats": "false"})
    stats = [l for l in lines if l.startswith("info string ")]
    last_info = max(i for i, l in enumerate(lines) if l.startswith("info depth"))
    assert lines[last_info + 1:-1] == stats          # after the last info, right before bestmove
    table, node_n = nibbler_table(stats)
    board = chess.Board()
    board.push_uci("e2e4"), board.push_uci("c7c5")
    assert set(table) == {m.uci() for m in board.legal_moves}   # every root move, once
    assert stats[-1].startswith("info string node ")
    # the root's visits: its own first visit (the evaluation that expanded it) + its moves'
    nodes = int(lines[last_info].split(" nodes ")[1].split()[0])
    assert node_n == 1 + sum(row["n"] for row in table.values()) == nodes   # a fresh tree
    assert sum(row["p"] for row in table.values()) == pytest.approx(100, abs=0.2)
    rows = sorted(table.values(), key=lambda r: r["order"])
    assert [r["n"] for r in rows] == sorted(r["n"] for r in rows)   # Lc0's order: best last
    best = lines[-1].split()[1]
    assert table[best]["n"] == max(r["n"] for r in rows)
    # (M: ) on every line exactly when the shipped network has a moves-left head
    has_head = read_onnx_network(shipped_network_path("default", ".onnx")).moves_left
    assert all(("(M: " in line) == has_head for line in stats)
    # S = Q + U, plus the moves-left term with the head (not printed; at most its max effect)
    from zerochess.search.params import SearchParams
    mu_max = SearchParams().moves_left_max_effect if has_head else 0.0
    for row in rows:
        assert abs(row["s"] - (row["q"] + row["u"])) <= mu_max + 2e-5
        if row["n"]:
            assert row["v"] is not None and -1 <= row["v"] <= 1   # evaluated: cached
            assert (row["m"] is not None and row["m"] >= 0) if has_head else row["m"] is None
    assert all(not l.startswith("info string error") for l in lines)


def test_without_the_options_there_are_no_such_lines(engine):
    lines = search_lines(engine, "go nodes 100", {"VerboseMoveStats": "false", "LogLiveStats": "false"})
    assert not [l for l in lines if l.startswith("info string ")]


def test_log_live_stats_sends_them_with_every_info_update(engine):
    lines = search_lines(engine, "go movetime 2500",
                         {"VerboseMoveStats": "false", "LogLiveStats": "true"})
    infos = [i for i, l in enumerate(lines) if l.startswith("info depth")]
    node_lines = [i for i, l in enumerate(lines) if l.startswith("info string node ")]
    assert len(infos) >= 2 and len(node_lines) == len(infos)
    for info, node in zip(infos, node_lines):         # each report: info, its moves, node
        table, node_n = nibbler_table(lines[info + 1:node + 1])
        assert len(table) == node - info - 1 == 30    # 1.e4 c5: White has 30 moves
        assert node_n == 1 + sum(row["n"] for row in table.values())


def test_reading_the_cache_for_a_report_leaves_its_replacement_order_alone():
    tt, boards = one_full_cache_bucket()
    assert tt.lookup(boards[0], touch=False) is not None   # read, not touched: still the oldest
    tt.store(boards[4], np.full(20, 0.05, np.float32), np.zeros(3, np.float32))
    assert tt.lookup(boards[0]) is None
    assert all(tt.lookup(boards[i]) is not None for i in (1, 2, 3, 4))


def test_a_proven_move_shows_its_exact_value_as_the_selection_uses_it():
    from zerochess.neural.evaluator import UniformEvaluator
    from zerochess.search.search import search
    scholar = "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4"
    result = search(Board(scholar), nodes=2, evaluator=UniformEvaluator())
    mate = next(m for m in result.moves if m.move == "f3f7")
    assert mate.proven == 1 and mate.q == 1.0 and mate.s == pytest.approx(1.0 + mate.u)
    line = next(l for l in verbose_move_stats_lines(result.moves, result.root) if " f3f7 " in l)
    assert "(Q:  1.00000)" in line and line.endswith("(T)")
    others = [m for m in result.moves if not m.proven and not m.visits]
    assert others and all(m.q < 1.0 for m in others)     # unproven, unvisited: the FPU value
