"""A mate in one is found when its position is expanded, whatever prior the network gives
the mating move: the search plays it at any node budget of at least one batch, through
the Search API and through raw UCI. So is a capture that leaves neither side mating
material: the losing side takes the piece, the winning side does not leave it."""

import chess
import numpy as np
import pytest

from uci_process import UciProcess
from zerochess.chess.board import Board
from zerochess.chess.encoding import move_to_index
from zerochess.neural.evaluator import UniformEvaluator
from zerochess.search.params import SearchParams
from zerochess.search.search import Search

# Positions with a mate in one, both colours, quiet and open, by rook, queen, knight and
# promotion; most also have checks that do not mate.
MATE_IN_ONE = [
    "6k1/5ppp/8/3N4/8/8/5PPP/R5K1 w - - 0 1",                                # Ra8#
    "r5k1/5ppp/8/8/3n4/8/5PPP/6K1 b - - 0 1",                                # Ra1#
    "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",    # Qxf7#
    "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2",         # Qh4#
    "6rk/6pp/8/6N1/3Q4/8/8/6K1 w - - 0 1",                                    # Nf7#
    "7k/4P1pp/8/8/8/2Q5/1r6/K7 w - - 0 1",                                     # e8=Q#, e8=R#
]


def mating_moves(fen: str) -> set[str]:
    """python-chess oracle: every legal move that checkmates."""
    board = chess.Board(fen)
    found = set()
    for move in board.legal_moves:
        board.push(move)
        if board.is_checkmate():
            found.add(move.uci())
        board.pop()
    return found


class StarvingEvaluator:
    """A misleading network: prior 1e-6 on the given policy indices, the rest shared
    evenly by the other moves; the value says every position is even, or that ``winner``
    (chess.WHITE / chess.BLACK) wins it (token 64 is 13 with White to move)."""

    max_batch = 256

    def __init__(self, starved, winner=None):
        self.starved = np.asarray(sorted(starved), dtype=np.int64)
        self.winner = winner

    def evaluate(self, tokens, legal_idx, offsets):
        priors, wdl = UniformEvaluator().evaluate(tokens, legal_idx, offsets)
        if self.winner is not None:
            wins = (tokens[:, 64] == 13) == (self.winner == chess.WHITE)
            wdl = np.zeros((tokens.shape[0], 3), np.float32)
            wdl[wins, 2] = 1.0
            wdl[~wins, 0] = 1.0
        for b in range(len(offsets) - 1):
            lo, hi = offsets[b], offsets[b + 1]
            hit = np.isin(legal_idx[lo:hi], self.starved)
            if hit.any() and not hit.all():
                priors[lo:hi] = np.where(hit, 1e-6, (1 - 1e-6 * hit.sum()) / (~hit).sum())
        return priors, wdl


def starving_search(fen: str, minibatch: int) -> Search:
    starved = {move_to_index(Board(fen), m) for m in mating_moves(fen)}
    return Search(StarvingEvaluator(starved), SearchParams(minibatch=minibatch))


def test_the_oracle_agrees_these_are_mates_in_one_mostly_among_other_checks():
    other_checks = 0
    for fen in MATE_IN_ONE:
        board = chess.Board(fen)
        assert board.is_valid() and mating_moves(fen), fen
        checks = [m for m in board.legal_moves if board.gives_check(m)]
        other_checks += len(checks) > len(mating_moves(fen))
    assert other_checks >= len(MATE_IN_ONE) - 1


@pytest.mark.parametrize("minibatch", [1, 8, 32, 64])
@pytest.mark.parametrize("fen", MATE_IN_ONE)
def test_a_starved_mate_in_one_is_played_within_one_batch(fen, minibatch):
    search = starving_search(fen, minibatch)
    board = Board(fen)
    index = {m: move_to_index(board, m) for m in mating_moves(fen)}
    result = search.search(board, nodes=minibatch)
    assert result.best_move in mating_moves(fen)
    assert result.mate == 1 and result.mate_plies == 1 and result.q == 1.0
    assert result.pv == [result.best_move]
    edges = search.tree.root_edges()
    i = edges["moves"].index(result.best_move)
    assert edges["prior"][i] == pytest.approx(1e-6) and edges["index"][i] == index[result.best_move]
    search.tree.verify()


def test_a_mate_in_one_deeper_in_the_tree_proves_the_move_that_allows_it_lost():
    # Black to move; most moves let Ra8 mate (the back rank), which the network starves.
    # Every move that allows it is proven lost once its reply node is expanded.
    fen = "6k1/5ppp/8/8/8/8/5PPP/R5K1 b - - 0 1"
    search = starving_search("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", 8)
    search.search(Board(fen), nodes=400)
    edges = search.tree.root_edges()
    board = chess.Board(fen)
    for move, visits, proven, plies in zip(edges["moves"], edges["visits"], edges["proven"],
                                           edges["plies"]):
        board.push_uci(move)
        allows_mate = bool(mating_moves(board.fen()))
        board.pop()
        if proven == 3:                                  # a proven loss for Black
            assert allows_mate and plies == 2
        elif visits and allows_mate:
            pytest.fail(f"{move} allows mate in one but was not proven lost")
    assert (edges["proven"] == 3).sum() > 0
    search.tree.verify()


def test_uci_go_nodes_8_plays_the_mate_with_the_weightless_backend():
    engine = UciProcess()
    try:
        engine.send("uci")
        engine.expect("uciok")
        engine.send("setoption name WeightsFile value uniform")
        engine.send("setoption name MinibatchSize value 8")
        engine.sync()
        for fen in MATE_IN_ONE:
            engine.send("ucinewgame")
            engine.send(f"position fen {fen}")
            engine.send("go nodes 8")
            lines = engine.expect("bestmove")
            assert lines[-1].split()[1] in mating_moves(fen), (fen, lines)
            assert any(" score mate 1 " in line for line in lines), lines
    finally:
        engine.close()


# The side to move can take the opponent's last minor piece (or one of two) and leave
# insufficient material: (FEN, the drawing capture).
DEAD_DRAW_CAPTURES = [
    ("8/8/8/4k3/3N4/8/8/4B2K b - - 0 1", "e5d4"),           # KBNvK: the knight left en prise
    ("k7/8/8/3n4/4K3/8/8/b7 w - - 0 1", "e4d5"),             # colours reversed
    ("8/8/8/4k3/3B4/8/8/2B4K b - - 0 1", "e5d4"),           # KBBvK
]


@pytest.mark.parametrize("minibatch", [1, 8, 32])
@pytest.mark.parametrize("fen,capture", DEAD_DRAW_CAPTURES)
def test_a_lost_side_takes_a_starved_capture_into_a_dead_draw(fen, capture, minibatch):
    board = chess.Board(fen)
    board.push_uci(capture)
    assert board.is_insufficient_material()                    # the oracle: a dead draw
    loser = chess.Board(fen).turn
    starved = {move_to_index(Board(fen), capture)}
    search = Search(StarvingEvaluator(starved, winner=not loser), SearchParams(minibatch=minibatch))
    result = search.search(Board(fen), nodes=minibatch)
    assert result.best_move == capture and result.q == 0.0 and result.wdl[1] == 1.0
    search.tree.verify()


def test_the_winning_side_does_not_leave_a_piece_to_a_starved_dead_draw_capture():
    # White (KBNvK, winning by the evaluator) has its knight attacked and undefended; the
    # network hides Black's capture. Every White move that leaves the knight draws.
    fen = "8/8/8/4k3/3N4/8/8/4B2K w - - 0 1"
    board = chess.Board(fen)
    leaves = []
    for move in board.legal_moves:
        board.push(move)
        if any(board.is_capture(r) and _after(board, r).is_insufficient_material()
               for r in board.legal_moves):
            leaves.append(move.uci())
        board.pop()
    assert leaves and len(leaves) < board.legal_moves.count()
    starved = set()
    for move in leaves:                          # every drawing capture, in Black's frame
        after = _after(board, chess.Move.from_uci(move))
        starved |= {move_to_index(Board(after.fen()), r.uci()) for r in after.legal_moves
                    if after.is_capture(r) and _after(after, r).is_insufficient_material()}
    search = Search(StarvingEvaluator(starved, winner=chess.WHITE), SearchParams(minibatch=8))
    result = search.search(Board(fen), nodes=400)
    assert result.best_move not in leaves and result.q > 0.9
    edges = search.tree.root_edges()
    for move, visits, q in zip(edges["moves"], edges["visits"], edges["q"]):
        if move in leaves and visits:
            assert q < 0.9, (move, visits, q)


def _after(board, move):
    b = board.copy()
    b.push(move)
    return b
