"""``SearchParams.tactical_prior`` (UCI ``TacticalPrior``): a floor under the prior that
selection gives a capture, a promotion or a check, so that a move the network overlooks
still gets visits. The tree marks those moves when it expands a node; python-chess is the
oracle for which moves they are."""

import random

import chess
import numpy as np
import pytest

from zerochess.chess.board import Board
from zerochess.chess.encoding import move_to_index
from zerochess.search.params import SearchParams
from zerochess.search.search import Search
from test_search_mate_in_one import StarvingEvaluator

VALUES = np.array([0, 1, 3, 3, 5, 9, 0, -1, -3, -3, -5, -9, 0], dtype=np.float32)


class MaterialEvaluator(StarvingEvaluator):
    """StarvingEvaluator's priors (the starved moves get 1e-6), and a value that counts
    material from the side to move: a network that knows what a queen is worth but does
    not see the move that wins one."""

    def evaluate(self, tokens, legal_idx, offsets):
        priors, _ = super().evaluate(tokens, legal_idx, offsets)
        material = VALUES[tokens[:, :64].astype(np.int64) % 44].sum(axis=1)
        expected = 0.5 + 0.5 * np.tanh(material / 4.0)
        wdl = np.stack([1.0 - expected, np.zeros_like(expected), expected], axis=1)
        return priors, wdl.astype(np.float32)


# White to move wins a hanging queen with Nxd5; Black to move wins a rook with exd5: each a
# capture the network starves. The pawns keep mating material on the board, so that the
# capture is not a dead draw the tree would prove at once (test_search_mate_in_one.py).
HANGING = [
    ("4k3/p7/8/3q4/8/4N3/P7/4K3 w - - 0 1", "e3d5"),
    ("4k3/p7/4p3/3R4/8/8/P7/4K3 b - - 0 1", "e6d5"),
]


@pytest.mark.parametrize("fen,capture", HANGING)
def test_a_starved_winning_capture_is_found_with_the_floor_and_not_without(fen, capture):
    board = Board(fen)
    starved = {move_to_index(board, capture)}
    visits = {}
    for floor in (0.0, 0.05):
        search = Search(MaterialEvaluator(starved), SearchParams(minibatch=8, tactical_prior=floor))
        result = search.search(Board(fen), nodes=400)
        edges = search.tree.root_edges()
        i = edges["moves"].index(capture)
        assert edges["tactical"][i] and edges["prior"][i] == pytest.approx(1e-6)
        visits[floor] = int(edges["visits"][i])
        if floor:
            assert result.best_move == capture
        else:
            assert result.best_move != capture
        search.tree.verify()
    assert visits[0.0] <= 1 < visits[0.05]


def test_the_floor_leaves_a_quiet_position_s_search_unchanged():
    # No capture, promotion or check anywhere near the root's moves: the same tree.
    fen = "4k3/pppppppp/8/8/8/8/PPPPPPPP/4K3 w - - 0 1"
    out = []
    for floor in (0.0, 0.05):
        search = Search(MaterialEvaluator(set()), SearchParams(minibatch=8, tactical_prior=floor))
        search.search(Board(fen), nodes=16)
        edges = search.tree.root_edges()
        assert not edges["tactical"].any()
        out.append(edges["visits"].tolist())
    assert out[0] == out[1]


def tactical_by_oracle(board: chess.Board, move: chess.Move) -> bool:
    return board.is_capture(move) or move.promotion is not None or board.gives_check(move)


# en passant (one that also gives check), and a capture that promotes
FIXED = ["4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1",
         "1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1"]


def random_boards(rng: random.Random, chess960: bool, games: int):
    for game in range(games):
        board = (chess.Board.from_chess960_pos(rng.randrange(960)) if chess960
                 else chess.Board())
        for ply in range(rng.randrange(4, 120)):
            moves = list(board.legal_moves)
            if not moves or board.is_game_over():
                break
            # prefer pawn pushes now and then, so that promotions happen
            pushes = [m for m in moves if board.piece_type_at(m.from_square) == chess.PAWN]
            board.push(rng.choice(pushes if pushes and rng.random() < 0.4 else moves))
        if not board.is_game_over():
            yield board


@pytest.mark.parametrize("chess960", [False, True])
def test_the_tactical_marks_match_python_chess(chess960):
    rng = random.Random(27 + chess960)
    checked = {"capture": 0, "en passant": 0, "promotion": 0, "check": 0, "quiet": 0}
    boards = list(random_boards(rng, chess960, 30))
    boards += [chess.Board(fen, chess960=chess960) for fen in FIXED]
    for board in boards:
        search = Search(MaterialEvaluator(set()), SearchParams(minibatch=1))
        search.search(Board(board.fen(), chess960=chess960) if chess960 else Board(board.fen()),
                      nodes=1)
        edges = search.tree.root_edges()
        for uci, tactical in zip(edges["moves"], edges["tactical"]):
            move = chess.Move.from_uci(uci)
            assert bool(tactical) == tactical_by_oracle(board, move), (board.fen(), uci)
            kind = ("en passant" if board.is_en_passant(move) else "capture" if board.is_capture(move)
                    else "promotion" if move.promotion else "check" if board.gives_check(move)
                    else "quiet")
            checked[kind] += 1
    assert min(checked.values()) > 0, checked


def test_the_option_is_validated():
    with pytest.raises(ValueError):
        SearchParams(tactical_prior=-0.1)
    with pytest.raises(ValueError):
        SearchParams(tactical_prior=1.5)
