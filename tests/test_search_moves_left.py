"""The search's use of a moves-left head (Lc0's moves-left utility): among moves of equal
value the winning side prefers the one that ends the game sooner, the losing side the one
that lasts longer; without plies left from the evaluator the search is exactly what it was."""

import chess
import numpy as np
import pytest

from zerochess.chess.board import Board
from zerochess.neural.evaluator import UniformEvaluator
from zerochess.search.mcts import Batch, evaluate_batch, gather
from zerochess.search.params import SearchParams
from zerochess.search.search import Search
from zerochess.search.tree import Tree

#: White to move, a pawn endgame (no known-endgame valuation): exd5 is the only capture.
FEN = "4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1"
CAPTURE = "e4d5"
#: Strong enough to show in a few hundred nodes, whatever the noise of equal values.
STRONG = dict(moves_left_max_effect=0.3, moves_left_slope=0.05)


class FlatEvaluator:
    """Uniform priors; every position is the same win for ``winner`` (WDL 0.1 / 0.1 / 0.8
    from the winner's side); plies left 10 + 4 per piece on the board, so a capture
    shortens every line below it. ``with_m`` False: the two outputs of a network without
    a moves-left head."""

    max_batch = 256

    def __init__(self, winner=chess.WHITE, with_m=True):
        self.winner, self.with_m = winner, with_m

    def evaluate(self, tokens, legal_idx, offsets):
        priors, _ = UniformEvaluator().evaluate(tokens, legal_idx, offsets)
        wins = (tokens[:, 64] == 13) == (self.winner == chess.WHITE)  # 13: White to move
        wdl = np.where(wins[:, None], [0.1, 0.1, 0.8], [0.8, 0.1, 0.1]).astype(np.float32)
        if not self.with_m:
            return priors, wdl
        plies = 10.0 + 4.0 * (tokens[:, :64] != 0).sum(axis=1)
        return priors, wdl, plies.astype(np.float32)


def root_visits(evaluator, nodes=600, **params) -> dict[str, int]:
    search = Search(evaluator, SearchParams(minibatch=8, seed=1, **params))
    search.search(Board(FEN), nodes=nodes)
    edges = search.tree.root_edges()
    return dict(zip(edges["moves"], edges["visits"].tolist()))


def test_the_winning_side_prefers_the_move_that_ends_the_game_sooner():
    plain = root_visits(FlatEvaluator(with_m=False), **STRONG)
    faster = root_visits(FlatEvaluator(), **STRONG)
    assert max(faster, key=faster.get) == CAPTURE
    assert faster[CAPTURE] > 2 * plain[CAPTURE]
    # Lc0's default strength pulls the same way, less.
    default = root_visits(FlatEvaluator(), nodes=1500)
    assert default[CAPTURE] > root_visits(FlatEvaluator(with_m=False), nodes=1500)[CAPTURE]


def test_the_losing_side_prefers_the_move_that_lasts_longer():
    plain = root_visits(FlatEvaluator(chess.BLACK, with_m=False), **STRONG)
    longer = root_visits(FlatEvaluator(chess.BLACK), **STRONG)
    assert longer[CAPTURE] < plain[CAPTURE] / 2
    assert max(longer, key=longer.get) != CAPTURE


def test_without_plies_left_the_search_is_unchanged():
    """No M from the evaluator, or the utility off: the same tree, node for node, as the
    search without the feature (the third output is then ignored entirely)."""
    def tree_of(evaluator, **params):
        search = Search(evaluator, SearchParams(minibatch=8, seed=1, **params))
        result = search.search(Board(FEN), nodes=600)
        arrays = search.tree.node_arrays()
        return result.best_move, {k: np.asarray(v) for k, v in arrays.items() if k != "m"}

    best, reference = tree_of(FlatEvaluator(with_m=False))
    for evaluator, params in ((FlatEvaluator(with_m=False), STRONG),
                              (FlatEvaluator(), dict(moves_left_max_effect=0.0))):
        other_best, other = tree_of(evaluator, **params)
        assert other_best == best and other.keys() == reference.keys()
        for key, value in reference.items():
            assert np.array_equal(value, other[key]), key


def test_moves_left_travel_through_the_cache_and_back_up_one_ply_per_level():
    search = Search(FlatEvaluator(), SearchParams(minibatch=8, seed=1, **STRONG))
    search.search(Board(FEN), nodes=300)
    edges = search.tree.root_edges()
    i = edges["moves"].index(CAPTURE)
    # the capture's position has 3 pieces: 22 plies from it by the network, its subtree's
    # leaves one ply deeper each, all with 3 pieces or fewer
    assert 20 < edges["m"][i] < 40
    assert np.isnan(edges["m"]).sum() == (edges["visits"] == 0).sum()
    quiet = [m for j, m in enumerate(edges["m"]) if edges["moves"][j] != CAPTURE]
    assert min(quiet) > edges["m"][i]
    # A second search from the same position: the root's answer comes from the cache,
    # with its plies left, and the utility still steers.
    again = Search(FlatEvaluator(with_m=False), SearchParams(minibatch=8, seed=1, **STRONG))
    again.tt = search.tt
    again.tree = Tree(again.params, search.tt)
    again.search(Board(FEN), nodes=1)
    assert again.tree.root_edges()["visits"].sum() == 0 and again.tree.moves_left_seen


def test_a_wrong_moves_left_array_is_refused():
    class Wrong(FlatEvaluator):
        def evaluate(self, tokens, legal_idx, offsets):
            priors, wdl, plies = super().evaluate(tokens, legal_idx, offsets)
            return priors, wdl, plies[:-1]

    tree, batch = Tree(SearchParams()), Batch()
    tree.set_position(Board(FEN))
    tree.begin(10)
    assert gather([tree], batch) == 1
    with pytest.raises(ValueError, match="moves_left"):
        evaluate_batch(Wrong(), batch)


def test_verbose_stats_show_m_and_the_next_playout_goes_to_the_largest_s():
    from zerochess.search.mcts import run_round
    from zerochess.search.results import root_move_stats
    from zerochess.uci.format import verbose_move_stats_lines

    evaluator = FlatEvaluator()
    search = Search(evaluator, SearchParams(minibatch=8, seed=1, **STRONG))
    search.search(Board(FEN), nodes=200)
    moves, root = root_move_stats(search.tree, search.tt)
    assert root.m is not None and all(m.m is not None for m in moves if m.visits)
    assert any(abs(m.mu) > 0.01 for m in moves)
    for m in moves:
        assert m.s == pytest.approx(m.q + m.u + m.mu)
    best = max(moves, key=lambda m: m.s).move
    assert best != max(moves, key=lambda m: m.q + m.u).move  # the M term decides here
    before = search.tree.root_edges()
    search.tree.add_playouts(1)
    assert run_round([search.tree], evaluator, Batch(), leaves_per_tree=1) == 1
    after = search.tree.root_edges()
    grew = [mv for mv, a, b in zip(after["moves"], after["visits"], before["visits"]) if a > b]
    assert grew == [best]
    lines = verbose_move_stats_lines(moves, root)
    assert all("(M: " in line for line in lines)
    # Without the head: Lc0's line without M, as before.
    plain = Search(FlatEvaluator(with_m=False), SearchParams(minibatch=8, seed=1))
    plain.search(Board(FEN), nodes=200)
    moves, root = root_move_stats(plain.tree, plain.tt)
    assert root.m is None and all(m.mu == 0.0 and m.m is None for m in moves)
    assert not any("(M: " in line for line in verbose_move_stats_lines(moves, root))


def test_threads_carry_the_plies_left_too():
    """With Threads 2 the batches go through parallel.py's evaluate/apply pair: the plies
    left arrive, the tree stays consistent and the winning side still goes for the capture."""
    search = Search(FlatEvaluator(), SearchParams(minibatch=8, seed=1, threads=2, **STRONG))
    search.search(Board(FEN), nodes=600)
    search.tree.verify()
    assert search.tree.moves_left_seen
    edges = search.tree.root_edges()
    visits = dict(zip(edges["moves"], edges["visits"].tolist()))
    assert max(visits, key=visits.get) == CAPTURE
