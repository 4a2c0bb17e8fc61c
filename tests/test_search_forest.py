"""Self-play's search object (zerochess.search.forest.Forest), driven round by round as the
asynchronous actors drive it: searches started and ended tree by tree, root noise mixed in
once a root is expanded, subtrees kept or dropped, the evaluator's figures counted."""

import numpy as np

from search_helpers import CountingEvaluator, SkewedEvaluator
from zerochess.chess import Board
from zerochess.search.forest import Forest
from zerochess.search.params import SearchParams

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q2/PPPBBPPP/R3K2R w KQkq - 0 1"
PARAMS = SearchParams(minibatch=8, max_collisions=8, dirichlet_fraction=0.25, hash_mb=4)


def run_rounds(forest, ids, leaves=8):
    """Step the trees ``ids`` together until every search is over; returns the rounds."""
    live, rounds = list(ids), 0
    while live:
        forest.step(live, leaves, len(live) * leaves)
        rounds += 1
        live = [i for i in live if not forest.settle(i)]
    return rounds


def test_round_by_round_searches_reach_their_playouts_in_shared_evaluator_calls():
    counting = CountingEvaluator()
    forest = Forest(counting, n_trees=3, params=PARAMS, rng=np.random.default_rng(1))
    boards = [Board(), Board(KIWIPETE), Board("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1")]
    for i, (board, nodes) in enumerate(zip(boards, (300, 200, 100))):
        assert forest.start(i, board, nodes) is False        # new trees: nothing reused
    run_rounds(forest, range(3))
    for i, nodes in enumerate((300, 200, 100)):
        tree = forest.tree(i)
        assert tree.done and tree.stats()["playouts"] >= nodes
        tree.verify()                                       # no virtual loss left behind
        indices, visits = forest.root_visits(i)
        assert len(indices) == len(boards[i].legal_moves()) and visits.sum() >= nodes - 1
    assert max(counting.batches) > PARAMS.minibatch            # one call held several trees
    assert forest.evaluations == len(counting.batches)
    assert forest.positions == sum(counting.batches) and forest.network_seconds > 0


def test_root_noise_waits_for_the_roots_first_evaluation_and_goes_in_once():
    def priors_after(noise):
        forest = Forest(SkewedEvaluator(), n_trees=1, params=PARAMS, rng=np.random.default_rng(7))
        forest.start(0, Board(), 64, noise=noise)
        assert not forest.tree(0).root_expanded
        run_rounds(forest, [0])
        assert forest.tree(0).root_noised == noise
        return forest.tree(0).root_edges()["prior"]

    plain, noisy = priors_after(False), priors_after(True)
    assert not np.allclose(plain, noisy) and np.isclose(noisy.sum(), 1.0, atol=1e-5)
    # a kept subtree whose root is already expanded is noised at once, when the search starts
    forest = Forest(SkewedEvaluator(), n_trees=1, params=PARAMS, rng=np.random.default_rng(7))
    forest.start(0, Board(), 200)
    run_rounds(forest, [0])
    board = Board()
    board.push_uci(forest.choose_move(0, 0.0))
    assert forest.start(0, board, 50, noise=True) is True
    assert forest.tree(0).root_noised


def test_a_dropped_tree_starts_afresh_and_the_table_keeps_the_networks_answers():
    forest = Forest(CountingEvaluator(), n_trees=2, params=PARAMS, rng=np.random.default_rng(3))
    forest.start(1, Board(), 100)
    run_rounds(forest, [1])
    first = forest.tree(1)
    forest.drop(1)
    assert forest.tree(1) is not first
    calls = forest.evaluations
    assert forest.start(1, Board(), 100) is False
    run_rounds(forest, [1])
    assert forest.evaluations - calls < calls   # the same positions come from the table
    forest.clear()
    assert all(not t.root_expanded for t in forest.trees)
