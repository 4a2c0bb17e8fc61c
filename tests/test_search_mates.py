"""The weightless search must still play exact chess where the rules decide: forced
mates, the faster mate, the slower loss, no stalemate when winning, draw rules."""

import chess
import numpy as np
import pytest

from search_helpers import mates_within
from zerochess.chess.board import Board, move_to_uci
from zerochess.chess.encoding import move_to_index
from zerochess.neural.evaluator import UniformEvaluator
from zerochess.search.params import SearchParams
from zerochess.search.search import Search

# (FEN, mate in N moves, node budget). Budgets are about 3x what the uniform search needs.
MATES = [
    ("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", 1, 1000),
    ("k7/8/1K6/8/8/8/8/6Q1 w - - 0 1", 1, 1000),
    ("8/8/8/8/7Q/4K3/8/6k1 w - - 0 1", 2, 3000),
    ("1Q6/8/8/3K4/k7/8/8/8 w - - 0 1", 2, 10000),
    ("6k1/8/7K/4R3/8/8/8/8 w - - 0 1", 2, 3000),
    ("r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1", 2, 10000),
    ("8/8/8/8/5K2/1Q6/5k2/8 w - - 0 1", 3, 300000),
    ("8/8/8/8/8/4K2k/8/Q7 w - - 0 1", 3, 300000),
    ("6R1/8/8/3K4/k7/8/8/8 w - - 0 1", 3, 100000),
    ("3k4/8/8/4K3/8/8/8/Q7 w - - 0 1", 3, 100000),
]


def search(fen, nodes, **params):
    return Search(UniformEvaluator(), SearchParams(**params)).search(Board(fen), nodes=nodes)


@pytest.mark.parametrize("fen,n,nodes", MATES)
def test_finds_forced_mate(fen, n, nodes):
    result = search(fen, nodes)
    assert result.mate == n and result.mate_plies == 2 * n - 1
    board = chess.Board(fen)
    assert not mates_within(board, n - 1) if n > 1 else True   # the puzzle is really mate in n
    for move in result.pv:
        board.push_uci(move)
    assert len(result.pv) == 2 * n - 1 and board.is_checkmate()
    if n <= 2:                                                 # the chosen move forces it
        board = chess.Board(fen)
        board.push_uci(result.best_move)
        assert board.is_checkmate() if n == 1 else all(
            mates_within(_after(board, r), 1) for r in board.legal_moves)
    assert result.cp > 10000 and result.q == 1.0


def _after(board, move):
    b = board.copy()
    b.push(move)
    return b


class FavourEvaluator:
    """Uniform values; prior 0.8 on one policy index when legal (a misleading network)."""

    max_batch = 256

    def __init__(self, index):
        self.index = index

    def evaluate(self, tokens, legal_idx, offsets):
        priors, wdl = UniformEvaluator().evaluate(tokens, legal_idx, offsets)
        for b in range(len(offsets) - 1):
            lo, hi = offsets[b], offsets[b + 1]
            hit = legal_idx[lo:hi] == self.index
            if hit.any() and hi - lo > 1:
                priors[lo:hi] = np.where(hit, 0.8, 0.2 / (hi - lo - 1))
        return priors, wdl


def test_prefers_the_faster_mate():
    # Qg8 mates at once; the network insists on a move that mates in 2 instead, so that
    # move gets most visits and its mate is proven too: the faster mate must still win.
    fen = "k7/8/1K6/8/8/8/8/6Q1 w - - 0 1"
    board = chess.Board(fen)
    slow = sorted(m.uci() for m in board.legal_moves
                  if not _after(board, m).is_game_over()
                  and all(mates_within(_after(_after(board, m), r), 1)
                          for r in _after(board, m).legal_moves))
    assert slow
    favoured = move_to_index(Board(fen), slow[0])
    # KQvK is a known win, whose search asks no network (test_search_known_endgames.py):
    # the favouring network needs that knowledge off
    s = Search(FavourEvaluator(favoured), SearchParams(multipv=2, known_endgames=False))
    result = s.search(Board(fen), nodes=20000)
    lines = {line.move: line for line in result.lines}
    assert result.best_move == "g1g8" and result.mate == 1
    assert slow[0] in lines and lines[slow[0]].mate == 2
    assert lines[slow[0]].visits > lines["g1g8"].visits


def test_prefers_the_slower_loss():
    # Black to move is mated in 2 at best; Kc8 allows mate in 1, Ke8 does not.
    fen = "3k4/8/3K4/8/8/8/8/Q7 b - - 1 1"
    board = chess.Board(fen)
    quick = [m.uci() for m in board.legal_moves if mates_within(_after(board, m), 1)]
    assert quick and len(quick) < board.legal_moves.count()
    result = search(fen, 50000)
    assert result.mate == -2 and result.best_move not in quick


@pytest.mark.parametrize("fen", ["8/8/8/8/7Q/4K3/8/6k1 w - - 0 1", "1Q6/8/k7/8/8/1K6/8/8 w - - 0 1"])
def test_does_not_stalemate_when_winning(fen):
    board = chess.Board(fen)
    stalemating = [m.uci() for m in board.legal_moves if _after(board, m).is_stalemate()]
    assert stalemating
    result = search(fen, 5000, multipv=40)
    assert result.best_move not in stalemating and result.mate is not None and result.mate > 0
    for line in result.lines:
        if line.move in stalemating and line.visits:
            assert line.q == 0.0 and line.wdl[1] == 1.0


def test_twofold_repetition_with_game_history_is_a_draw():
    board = Board()
    for move in ("g1f3", "g8f6", "f3g1"):
        board.push_uci(move)
    s = Search(UniformEvaluator())
    s.search(board, nodes=3000)
    edges = s.tree.root_edges()
    i = edges["moves"].index("f6g8")          # back to the starting position
    assert edges["visits"][i] > 0 and edges["proven"][i] == 2
    assert sum(edges["proven"] == 2) == 1     # no other reply repeats anything


def test_repetition_inside_the_tree_is_a_draw():
    fen = "7k/8/8/8/8/8/6P1/K7 w - - 0 1"        # few moves: kings shuffle back quickly
    s = Search(UniformEvaluator())
    s.search(Board(fen), nodes=20000)
    nodes = s.tree.node_arrays()
    draws = np.flatnonzero((nodes["state"] == 3) & (nodes["proven"] == 2))
    assert len(draws) > 0
    repetitions = 0
    for idx in draws[:200]:                      # replay each path with python-chess
        path = []
        while nodes["parent"][idx] >= 0:
            path.append(move_to_uci(int(nodes["move"][idx])))
            idx = nodes["parent"][idx]
        board = chess.Board(fen)
        for move in reversed(path):
            board.push_uci(move)
        other_rule = board.is_insufficient_material() or board.is_stalemate()
        assert other_rule or board.is_repetition(2)
        repetitions += not other_rule
    assert repetitions > 0


def test_fifty_move_rule():
    # Halfmove clock 99: every move (no captures or pawn moves exist) draws.
    result = search("8/8/8/8/8/4k3/8/R3K3 w - - 99 80", 2000, multipv=30)
    visited = [line for line in result.lines if line.visits]
    assert visited and all(line.q == 0.0 and line.wdl[1] == 1.0 for line in visited)
    # One ply earlier the clock leaves room: a move is not scored as a draw by itself.
    s = Search(UniformEvaluator())
    s.search(Board("8/8/8/8/8/4k3/8/R3K3 w - - 90 80"), nodes=2000)
    assert not (s.tree.root_edges()["proven"] == 2).all()


def test_capture_into_insufficient_material_is_a_draw():
    s = Search(UniformEvaluator())
    s.search(Board("8/8/8/8/8/5k2/1r6/1K6 w - - 0 1"), nodes=2000)
    edges = s.tree.root_edges()
    assert edges["proven"][edges["moves"].index("b1b2")] == 2
    assert edges["proven"][edges["moves"].index("b1a1")] == 0


@pytest.mark.parametrize("fen", ["7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"])
def test_game_over_root_has_no_best_move(fen):
    result = search(fen, 100)
    assert result.best_move is None and result.nodes == 0
