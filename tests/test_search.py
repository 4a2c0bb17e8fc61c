"""The MCTS core's bookkeeping: visits, virtual loss, signs, cache, reuse, determinism,
batching across trees, and the threaded Search API."""

import threading
import time

import numpy as np
import pytest

from search_helpers import (CountingEvaluator, FailingEvaluator, SkewedEvaluator,
                            WhiteWinsEvaluator, one_full_cache_bucket)
from zerochess.chess.board import Board
from zerochess.chess.encoding import encode_board, legal_move_indices
from zerochess.neural.evaluator import UniformEvaluator
from zerochess.search.forest import Forest, playout_cap, run_many
from zerochess.search.mcts import Batch, run_round
from zerochess.search.params import SearchParams
from zerochess.search.results import lc0_cp, q_to_cp
from zerochess.search.search import Search, SearchLimits
from zerochess.search.tree import Tree
from zerochess.search.tt import TranspositionTable

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def test_visits_add_up_and_virtual_loss_never_drifts():
    tree = Tree(SearchParams(minibatch=64, max_collisions=64), TranspositionTable(8))
    tree.set_position(Board(KIWIPETE))
    tree.begin(100_000)
    batch, rounds = Batch(), 0
    while not tree.done:
        assert run_round([tree], SkewedEvaluator(), batch) > 0
        tree.verify()                    # in_flight == 0, visits == stops + children
        rounds += 1
    stats = tree.stats()
    assert stats["playouts"] == stats["root_visits"] == 100_000
    edges = tree.root_edges()
    assert edges["visits"].sum() == 100_000 - 1          # the root's own evaluation
    assert rounds < 100_000 / 16                          # batches were really gathered


@pytest.mark.parametrize("fen,white_to_move", [(Board().fen(), True), (
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", False)])
def test_values_flip_sign_every_ply(fen, white_to_move):
    s = Search(WhiteWinsEvaluator())
    result = s.search(Board(fen), nodes=3000)
    nodes = s.tree.node_arrays()
    depth = np.zeros(len(nodes["parent"]), dtype=np.int64)
    for i in range(1, len(depth)):                         # parents precede children
        depth[i] = depth[nodes["parent"][i]] + 1
    live = (nodes["visits"] > 0) & (nodes["proven"] == 0)
    q = nodes["wl"][live] / nodes["visits"][live]
    white_moved_in = (depth[live] % 2 == 1) == white_to_move
    assert live.sum() > 100 and depth.max() >= 3
    np.testing.assert_allclose(q, np.where(white_moved_in, 1.0, -1.0))
    assert result.q == (1.0 if white_to_move else -1.0)
    assert result.wdl == ((0.0, 0.0, 1.0) if white_to_move else (1.0, 0.0, 0.0))


def test_transposition_hits_return_the_stored_priors():
    evaluator = SkewedEvaluator()
    tt = TranspositionTable(16)
    tree = Tree(SearchParams(), tt)
    board = Board(KIWIPETE)
    tree.set_position(board)
    tree.begin(2000)
    while not tree.done:
        run_round([tree], evaluator)
    for move in [None] + board.legal_moves()[:5]:
        b = board.copy()
        if move:
            b.push_uci(move)
        expect_p, expect_wdl = evaluator.evaluate(encode_board(b)[None, :], legal_move_indices(b),
                                                  np.array([0, len(b.legal_moves())], np.int32))
        stored = tt.lookup(b)
        assert stored is not None
        np.testing.assert_array_equal(stored[0], expect_p)
        np.testing.assert_array_equal(stored[1], expect_wdl[0])
    # the root's edges carry the same priors
    np.testing.assert_array_equal(tree.root_edges()["prior"], tt.lookup(board)[0])


def test_a_cache_hit_skips_the_evaluator():
    counting = CountingEvaluator(SkewedEvaluator())
    s = Search(counting, SearchParams(hash_mb=16))
    first = s.search(Board(KIWIPETE), nodes=3000)
    evaluated = sum(counting.batches)
    assert evaluated == first.nn_evals
    s.tree.clear()                                  # same cache, fresh tree
    second = s.search(Board(KIWIPETE), nodes=3000)
    assert second.cache_hits >= first.nn_evals - 5   # (a few entries may have been replaced)
    assert sum(counting.batches) - evaluated == second.nn_evals < first.nn_evals / 10
    assert second.root_visits == first.root_visits   # same priors, same values: same search
    assert 0 < second.hashfull <= 1000


def test_transposition_table_replaces_the_least_recently_used_entry():
    tt, boards = one_full_cache_bucket()
    assert tt.capacity == 4
    assert tt.hashfull() == 1000
    assert tt.lookup(boards[0]) is not None          # touch the oldest: now the newest
    tt.store(boards[4], np.full(20, 0.05, np.float32), np.zeros(3, np.float32))
    assert tt.lookup(boards[1]) is None              # the least recently used went
    assert all(tt.lookup(boards[i]) is not None for i in (0, 2, 3, 4))
    tt.clear()
    assert tt.hashfull() == 0 and tt.lookup(boards[0]) is None


def test_cache_key_covers_the_fifty_move_and_repetition_tokens():
    tt = TranspositionTable(1)
    a = Board("8/8/8/8/8/4k3/8/R3K3 w - - 0 80")
    b = Board("8/8/8/8/8/4k3/8/R3K3 w - - 35 80")    # same board, other fifty-move token
    n = len(a.legal_moves())
    tt.store(a, np.full(n, 1.0 / n, np.float32), np.array([0, 1, 0], np.float32))
    assert tt.lookup(a) is not None and tt.lookup(b) is None
    c = Board()
    for move in ("g1f3", "g8f6", "f3g1", "f6g8"):      # the start position, repeated
        c.push_uci(move)
    tt.store(Board(), np.full(20, 0.05, np.float32), np.array([0, 1, 0], np.float32))
    assert tt.lookup(Board()) is not None and tt.lookup(c) is None


def test_tree_reuse_keeps_the_subtree_statistics():
    s = Search(UniformEvaluator(), SearchParams(seed=3))
    board = Board(KIWIPETE)
    first = s.search(board, nodes=5000)
    edges = s.tree.root_edges()
    move, reply = first.pv[0], first.pv[1]
    i = edges["moves"].index(move)
    child_visits, child_q = int(edges["visits"][i]), float(edges["q"][i])
    board.push_uci(move)
    assert s.set_position(board)
    stats = s.tree.stats()
    assert stats["root_visits"] == child_visits and stats["tree_nodes"] < 5000
    q, _ = s.tree.root_wdl()
    assert q == pytest.approx(-child_q)              # the other side's view now
    s.tree.verify()
    # a second ply, then searching on: the kept visits stay and new ones add up
    reply_visits = int(s.tree.root_edges()["visits"][s.tree.root_edges()["moves"].index(reply)])
    board.push_uci(reply)
    assert s.set_position(board) and s.tree.stats()["root_visits"] == reply_visits
    result = s.search(board, nodes=1000)
    assert result.tree_reused and s.tree.stats()["root_visits"] == reply_visits + 1000
    s.tree.verify()
    # an unrelated position starts afresh
    assert not s.set_position(Board()) and s.tree.stats()["root_visits"] == 0


def test_same_seed_same_result_and_noise_matters():
    params = SearchParams(seed=7, dirichlet_fraction=0.25, multipv=3)
    runs = [Search(UniformEvaluator(), params).search(Board(KIWIPETE), nodes=4000) for _ in range(2)]
    assert runs[0].root_visits == runs[1].root_visits and runs[0].pv == runs[1].pv
    again = Search(UniformEvaluator(), params)
    again.search(Board(), nodes=100)
    again.new_game()
    assert again.search(Board(KIWIPETE), nodes=4000).root_visits == runs[0].root_visits
    other = Search(UniformEvaluator(), params.replace(seed=8)).search(Board(KIWIPETE), nodes=4000)
    assert other.root_visits != runs[0].root_visits


def test_forest_batches_many_trees_and_matches_single_searches():
    fens = [Board().fen(), KIWIPETE, "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"]
    params = SearchParams(minibatch=8, max_collisions=8)
    counting = CountingEvaluator()
    forest = Forest(counting, n_trees=3, params=params)
    results = forest.search([Board(f) for f in fens], nodes=[1500, 1000, 800])
    assert [r.nodes for r in results] == [1500, 1000, 800]
    assert max(counting.batches) > params.minibatch           # one call held several trees
    for fen, r, n in zip(fens, results, [1500, 1000, 800]):
        alone = Search(UniformEvaluator(), params).search(Board(fen), nodes=n)
        assert alone.root_visits == r.root_visits
    for tree in forest.trees:
        tree.verify()


def test_fill_to_refills_the_batch_from_trees_with_playouts_left():
    """Two trees whose roots still wait for their first evaluation and two mid-search:
    without fill_to the round evaluates 2 roots + 2 x 8 leaves; with it the two searching
    trees take up to 8 more each, so the batch holds the full 4 x 8, and every tree stays
    consistent (visits add up, no virtual loss left) to the end of its search."""
    params = SearchParams(minibatch=8, max_collisions=8)
    fens = [Board().fen(), KIWIPETE, KIWIPETE, Board().fen()]

    def trees_mid_search():
        trees = [Tree(params, TranspositionTable(8)) for _ in fens]
        for t, f in zip(trees, fens):
            t.set_position(Board(f))
            t.begin(400)
        run_round(trees[:2], UniformEvaluator(), Batch(), 1)   # expand the first two roots
        return trees

    sizes = {}
    for fill_to in (0, 32):
        counting = CountingEvaluator()
        trees, batch = trees_mid_search(), Batch()
        run_round(trees, counting, batch, 8, fill_to)
        sizes[fill_to] = counting.batches[0]
        while not all(t.done for t in trees):
            assert run_round(trees, counting, batch, 8, fill_to) > 0
        for t in trees:
            t.verify()
            assert t.stats()["playouts"] == 400
    assert sizes[0] == 2 + 2 * 8
    assert sizes[32] == 32


def test_self_play_hooks():
    rng = np.random.default_rng(0)
    params = SearchParams(dirichlet_fraction=0.25, full_search_probability=0.3,
                          full_search_nodes=400, fast_search_nodes=50)
    caps = [playout_cap(params, rng) for _ in range(2000)]
    assert {c for c in caps} == {(400, True), (50, False)}
    assert 0.25 < np.mean([full for _, full in caps]) < 0.35
    tree = Tree(params)
    tree.set_position(Board())
    run_many([tree], UniformEvaluator(), 400, rng=rng, noise=True)
    priors = tree.root_edges()["prior"]
    assert tree.root_noised and abs(priors.sum() - 1) < 1e-5 and priors.std() > 1e-3
    indices, visits = tree.root_visits()
    assert visits.sum() == 399 and len(indices) == 20 and len(set(indices.tolist())) == 20
    best = tree.ranked_root_edges(1)[0]
    assert tree.choose_move(0.0, rng) == tree.root_edges()["moves"][best]
    picks = [tree.choose_move(1.0, rng) for _ in range(4000)]
    moves = tree.root_edges()["moves"]
    freq = np.array([picks.count(m) for m in moves]) / len(picks)
    np.testing.assert_allclose(freq, visits / visits.sum(), atol=0.03)


def test_search_thread_api_stops_and_reports():
    s = Search(UniformEvaluator(), SearchParams(multipv=2))
    s.set_position(Board())
    seen, infos = [], []
    s.start(SearchLimits(should_stop=lambda st: seen.append(st) or st.nodes >= 5000),
            on_info=infos.append)
    result = s.wait()
    assert 5000 <= result.nodes < 5000 + 64 and seen[-1].nodes == result.nodes
    assert all(a.nodes < b.nodes for a, b in zip(seen, seen[1:]))
    assert infos and infos[-1] is result and len(result.lines) == 2
    assert result.best_move in Board().legal_moves() and result.ponder_move
    # infinite search, stopped from outside
    s.new_game()
    s.set_position(Board(KIWIPETE))
    done = threading.Event()
    s.start(on_done=lambda r: done.set())
    time.sleep(0.2)
    assert s.running
    s.stop()
    assert s.wait().nodes > 1000 and done.is_set() and not s.running
    s.tree.verify()


def test_evaluator_failure_leaves_a_clean_tree():
    s = Search(FailingEvaluator(good=5))
    s.set_position(Board())
    s.start(SearchLimits(nodes=10_000))
    with pytest.raises(RuntimeError, match="backend failure"):
        s.wait()
    s.tree.verify()
    assert s.tree.stats()["root_visits"] > 0


def test_tree_memory_is_bounded():
    s = Search(UniformEvaluator(), SearchParams(tree_mb=4))
    result = s.search(Board(KIWIPETE), nodes=1_000_000)
    stats = s.tree.stats()
    assert stats["tree_full"] and result.nodes < 1_000_000
    assert stats["tree_bytes"] <= 4 * 1048576
    s.tree.verify()


def test_centipawn_formulas():
    # Stockfish 15.1's scale (the fit of experiments/cp_scale_fit.py): +100 cp is about a win
    # half the time (W 0.5, L 0: q = 0.5); a proven result is the limit
    assert q_to_cp(0.0) == 0 and q_to_cp(-0.5) == -q_to_cp(0.5)
    assert q_to_cp(0.5) == 88 and q_to_cp(0.9) == 237 and q_to_cp(0.99) == 426
    assert q_to_cp(1.0) == 12800 and q_to_cp(-1.0) == -12800
    assert all(q_to_cp(a) < q_to_cp(b) for a, b in [(0.1, 0.2), (0.8, 0.9), (0.95, 0.99),
                                                     (0.999, 0.99999)])
    # Leela Chess Zero's (UCI ScoreType centipawn_lc0)
    assert lc0_cp(0.5) == 89 and lc0_cp(0.9) == 546 and 12000 < lc0_cp(1.0) <= 12800
    assert all(lc0_cp(a) < lc0_cp(b) for a, b in [(0.1, 0.2), (0.8, 0.9), (0.95, 0.99)])


def test_params_are_validated():
    with pytest.raises(ValueError):
        SearchParams(minibatch=0)
    with pytest.raises(ValueError):
        SearchParams(dirichlet_fraction=1.5)
    assert SearchParams().cpuct(0) == pytest.approx(SearchParams().cpuct_init)


def test_root_restriction_sends_every_visit_to_the_allowed_moves():
    from zerochess.chess import Board
    from zerochess.neural.evaluator import UniformEvaluator
    from zerochess.search.search import Search, SearchLimits
    search = Search(UniformEvaluator())
    result = search.search(Board(), limits=SearchLimits(nodes=500, root_moves=("a2a3", "h2h3")))
    visited = {m for m, v in result.root_visits.items() if v > 0}
    assert visited == {"a2a3", "h2h3"}
    assert sum(result.root_visits.values()) == result.nodes - 1  # the first visit expanded the root
    assert result.best_move in ("a2a3", "h2h3")
    # the restriction lasts one search only
    result = search.search(Board(), nodes=500)
    assert len({m for m, v in result.root_visits.items() if v > 0}) > 2


def test_root_wdl_is_loss_draw_win_like_every_report():
    board = Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")   # White mates with Ra8
    s = Search(UniformEvaluator(), SearchParams())
    result = s.search(board, nodes=300)
    q, (loss, draw, win) = s.tree.root_wdl()
    assert win > loss and q == pytest.approx(win - loss)
    assert (loss, draw, win) == pytest.approx(result.wdl, abs=0.05)


def test_one_temperature_sampler_for_the_tree_and_the_uci_layer():
    from zerochess.search.sampling import sample_by_visits
    rng = np.random.default_rng(1)
    assert sample_by_visits([5, 9, 1], 0.0, rng) is None and sample_by_visits([0, 0], 1.0, rng) is None
    draws = [sample_by_visits([1, 3, 0], 1.0, rng) for _ in range(4000)]
    assert 2 not in draws and 0.70 < draws.count(1) / len(draws) < 0.80
    # the tree draws through it: the same generator state gives the same move
    tree = Tree(SearchParams())
    tree.set_position(Board())
    run_many([tree], UniformEvaluator(), 100, rng=np.random.default_rng(0))
    edges = tree.root_edges()
    a = tree.choose_move(1.0, np.random.default_rng(7))
    assert a == edges["moves"][sample_by_visits(edges["visits"], 1.0, np.random.default_rng(7))]


def test_go_runs_on_one_worker_thread_that_reports_through_callbacks():
    s = Search(UniformEvaluator(), SearchParams())
    s.set_position(Board())
    before = set(threading.enumerate())
    seen = []
    done = threading.Event()

    def on_done(result):
        seen.append(("done", threading.current_thread(), result.best_move))
        done.set()

    s.start(SearchLimits(), on_info=lambda info: seen.append(("info", threading.current_thread())),
            on_done=on_done)
    started = set(threading.enumerate()) - before
    assert len(started) == 1           # the search's worker, nothing else
    worker = started.pop()
    s.stop()
    assert done.wait(10)
    s.join()
    assert seen[-1][0] == "done" and {t for _, t, *rest in seen} == {worker}
    assert not s.running


def test_update_limits_replaces_the_stopping_rule_of_a_running_search():
    s = Search(UniformEvaluator(), SearchParams())
    s.set_position(Board())
    s.start(SearchLimits(should_stop=lambda p: False))   # a ponder search: no limit
    first_check = []

    def rule(p):
        if not first_check:  # the nodes when the new rule took over (a loaded machine
            first_check.append(p.nodes)  # may search past 200 before that)
        return p.nodes >= 200

    s.update_limits(rule)
    result = s.wait()
    assert first_check and result.nodes >= 200
    assert result.nodes < max(200, first_check[0]) + 2 * SearchParams().minibatch
