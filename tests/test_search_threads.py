"""Threads > 1: several threads search one tree, each with a batch at the network
(search/parallel.py).

Virtual loss and visit counts must add up after every batch with other batches still in
flight, no leaf may be handed to the evaluator twice, mates are still found, the UCI
``stop`` still gets one ``bestmove``, and Threads 1 stays the deterministic search."""

import threading
import time

import chess
import numpy as np
import pytest

from search_helpers import FailingEvaluator, SkewedEvaluator
from test_search_mates import MATES
from test_uci_loop import Output, wait_for
from zerochess.chess.board import Board
from zerochess.neural.evaluator import UniformEvaluator
from zerochess.search.mcts import Batch, abandon_batch, gather, run_round
from zerochess.search.parallel import TreeWorkers
from zerochess.search.params import SearchParams
from zerochess.search.search import Search, SearchLimits
from zerochess.search.tree import Tree
from zerochess.search.tt import TranspositionTable
from zerochess.uci.loop import UciLoop

MIDDLEGAME = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"
QUIET = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


class SlowEvaluator:
    """Wraps an evaluator; sleeps in every call (releasing the GIL, as ONNX Runtime does)
    and records the most calls that ran at once and the threads that made them."""

    max_batch = 256

    def __init__(self, inner, seconds=0.005):
        self.inner, self.seconds = inner, seconds
        self.lock = threading.Lock()
        self.running = self.peak = self.calls = 0
        self.threads = set()

    def evaluate(self, tokens, legal_idx, offsets):
        with self.lock:
            self.running += 1
            self.calls += 1
            self.peak = max(self.peak, self.running)
            self.threads.add(threading.current_thread().name)
        try:
            time.sleep(self.seconds)
            return self.inner.evaluate(tokens, legal_idx, offsets)
        finally:
            with self.lock:
                self.running -= 1


def check_in_flight(tree: Tree, pending: list[tuple[int, int]]) -> None:
    """The invariants with batches in flight: every node's virtual loss is the number of
    pending leaves below it (itself included), visits == stops + children's visits, and
    the PENDING nodes are exactly the pending leaves waiting for the evaluator, each once."""
    a = tree.node_arrays()
    expected = np.zeros(len(a["parent"]), np.int64)
    for node, _ in pending:
        while node >= 0:
            expected[node] += 1
            node = a["parent"][node]
    assert (a["in_flight"] == expected).all()
    child_visits = np.zeros_like(a["visits"])
    np.add.at(child_visits, a["parent"][1:], a["visits"][1:])
    assert (a["visits"] == a["stops"] + child_visits).all()
    waiting = [node for node, row in pending if row >= 0]
    assert len(waiting) == len(set(waiting))            # no leaf evaluated twice
    assert set(np.flatnonzero(a["state"] == 1)) == set(waiting)   # 1: PENDING


@pytest.mark.parametrize("threads", [2, 4])
def test_virtual_loss_and_visits_add_up_after_every_batch_with_others_in_flight(threads):
    params = SearchParams(minibatch=8, threads=threads)
    tree = Tree(params, TranspositionTable(4))
    tree.set_position(Board(MIDDLEGAME))
    tree.begin(3000)
    run_round([tree], SkewedEvaluator(), None, 1)           # the root, as Search does
    evaluator = SlowEvaluator(SkewedEvaluator(), seconds=0.001)
    workers = TreeWorkers(threads, params.minibatch)
    in_flight = []

    def after_batch(seconds):
        pending = workers.pending_leaves()
        in_flight.append(len({row for _, row in pending if row >= 0}))
        check_in_flight(tree, pending)
        return False

    workers.run(tree, evaluator, after_batch)
    workers.close()
    tree.verify()
    assert tree.stats()["playouts"] == 3000 and len(in_flight) > 100
    assert max(in_flight) > 0          # checked while other batches were at the network
    assert evaluator.peak > 1 and evaluator.peak <= threads
    assert all(name.startswith("zerochess-eval") or name == "MainThread"
               for name in evaluator.threads) and len(evaluator.threads) == threads


def test_a_broken_invariant_would_be_seen():
    tree = Tree(SearchParams(), TranspositionTable(4))
    tree.set_position(Board(MIDDLEGAME))
    tree.begin(100)
    run_round([tree], SkewedEvaluator(), None, 1)
    batch = Batch(8)
    gather([tree], batch)
    check_in_flight(tree, batch.leaf_nodes())
    with pytest.raises(AssertionError):
        check_in_flight(tree, batch.leaf_nodes()[1:])       # one leaf forgotten
    abandon_batch(batch)
    tree.verify()


def test_two_threads_keep_two_evaluations_running_at_once():
    evaluator = SlowEvaluator(UniformEvaluator())
    search = Search(evaluator, SearchParams(minibatch=8, threads=2))
    result = search.search(Board(MIDDLEGAME), nodes=2000)
    search.tree.verify()
    assert result.nodes == 2000 and chess.Move.from_uci(result.best_move) in \
        chess.Board(MIDDLEGAME).legal_moves
    assert evaluator.peak == 2                # the root and one thread's batches: the search thread
    assert evaluator.threads == {"zerochess-search", "zerochess-eval_0"}


def test_one_thread_evaluates_on_the_search_thread_and_repeats_itself():
    evaluator = SlowEvaluator(SkewedEvaluator(), seconds=0.0)
    results = []
    for _ in range(2):
        search = Search(evaluator, SearchParams(minibatch=8, threads=1))
        results.append(search.search(Board(MIDDLEGAME), nodes=1500))
        search.tree.verify()
    assert evaluator.peak == 1 and evaluator.threads == {"zerochess-search"}
    assert results[0].root_visits == results[1].root_visits


@pytest.mark.parametrize("fen,n,nodes", [m for m in MATES if m[1] <= 2])
def test_two_threads_find_forced_mates(fen, n, nodes):
    search = Search(UniformEvaluator(), SearchParams(threads=2))
    result = search.search(Board(fen), nodes=nodes)
    search.tree.verify()
    assert result.mate == n and len(result.pv) == 2 * n - 1
    board = chess.Board(fen)
    for move in result.pv:
        board.push_uci(move)
    assert board.is_checkmate()


def test_a_failing_evaluator_leaves_a_clean_tree_with_batches_in_flight():
    search = Search(SlowEvaluator(FailingEvaluator(good=20), seconds=0.002),
                    SearchParams(minibatch=4, threads=3))
    with pytest.raises(RuntimeError):
        search.search(Board(MIDDLEGAME), nodes=5000)
    search.tree.verify()               # no virtual loss, no PENDING leaf left


def test_a_failing_report_stops_every_thread_and_leaves_a_clean_tree():
    tree = Tree(SearchParams(minibatch=4), TranspositionTable(4))
    tree.set_position(Board(MIDDLEGAME))
    tree.begin(100_000)
    run_round([tree], UniformEvaluator(), None, 1)
    workers = TreeWorkers(3, 4)
    reports = []

    def after_batch(seconds):
        reports.append(seconds)
        if len(reports) == 5:
            raise KeyError("report")
        return False

    with pytest.raises(KeyError):
        workers.run(tree, SlowEvaluator(UniformEvaluator(), seconds=0.002), after_batch)
    tree.verify()
    assert 5 <= len(reports) <= 7 and tree.stats()["playouts"] < 100   # the others' last
    before = tree.stats()["playouts"]
    workers.run(tree, UniformEvaluator(), lambda seconds: tree.stats()["playouts"] >= before + 40)
    tree.verify()                      # and the workers search again afterwards
    assert tree.stats()["playouts"] >= before + 40


def test_threads_change_between_searches_and_the_tree_is_reused():
    search = Search(UniformEvaluator(), SearchParams(threads=1))
    search.search(Board(MIDDLEGAME), nodes=500)
    search.configure(search.params.replace(threads=3))
    board = Board(MIDDLEGAME)
    board.push_uci("d2d3")
    result = search.search(board, nodes=800)
    search.tree.verify()
    assert search.workers.threads == 3 and result.tree_reused and result.nodes == 800
    assert chess.Move.from_uci(result.best_move) in chess.Board(board.fen()).legal_moves
    board = Board(MIDDLEGAME)
    board.push_uci("h5f7")                 # Qxf7#: the root is over, nothing to evaluate
    result = search.search(board, nodes=800)
    assert result.best_move is None and result.nodes == 0


@pytest.mark.parametrize("runtime,needs", [("onnx-fp32", "onnxruntime"), ("torch-fp32", "torch")])
def test_the_shipped_network_searches_with_two_threads(runtime, needs):
    pytest.importorskip(needs)
    from zerochess.neural.backends import make_evaluator

    evaluator = make_evaluator(None, device="cpu", threads=1, runtime=runtime)
    search = Search(evaluator, SearchParams(minibatch=8, threads=2))
    # a quiet position: MIDDLEGAME's Qxf7# is proven at expansion, which spends no evaluations
    result = search.search(Board(QUIET), nodes=400)
    search.tree.verify()
    assert result.nodes == 400 and result.nn_evals > 100
    assert chess.Move.from_uci(result.best_move) in chess.Board(QUIET).legal_moves
    result = search.search(Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"), nodes=400)
    search.tree.verify()
    assert result.best_move == "a1a8" and result.mate == 1


def test_threads_reconfigure_the_search_and_keep_the_network():
    loop = UciLoop(Output())
    for line in ("uci", "setoption name WeightsFile value uniform", "isready"):
        loop.handle(line)
    evaluator, search = loop.player.evaluator, loop.player.search
    loop.handle("setoption name Threads value 3")
    loop.handle("isready")
    assert loop.player.evaluator is evaluator and loop.player.search is search
    assert search.params.threads == 3 and search.workers.threads == 3
    loop.handle("setoption name Threads value 1")
    loop.handle("isready")
    assert search.params.threads == 1 and search.workers is None


def test_the_engine_runs_the_network_on_one_intra_op_thread_per_search_thread():
    pytest.importorskip("onnxruntime")
    loop = UciLoop(Output())
    for line in ("uci", "setoption name Threads value 2", "isready"):
        loop.handle(line)
    session = loop.player.evaluator.session
    assert session.get_session_options().intra_op_num_threads == 1
    assert loop.player.search.workers.threads == 2


def test_uci_stop_gets_one_bestmove_with_two_threads():
    out = Output()
    loop = UciLoop(out)
    for line in ("uci", "setoption name WeightsFile value uniform",
                 "setoption name Threads value 2", "isready", "position startpos"):
        loop.handle(line)
    assert out.lines()[-1] == "readyok"
    for _ in range(3):
        loop.handle("go infinite")
        assert wait_for(lambda: any(l.startswith("info") and " nodes " in l
                                    for l in out.lines()[-3:]), timeout=10)
        started = time.monotonic()
        loop.handle("stop")
        loop.handle("isready")
        assert wait_for(lambda: out.lines()[-1] == "readyok", timeout=10)
        assert time.monotonic() - started < 5   # a hang, not a speed: batches take ms
        assert sum(l.startswith("bestmove ") for l in out.lines()) == _ + 1
    assert loop.player.search.params.threads == 2
    loop.handle("quit")
