"""Network input tokens and the policy move index."""

import random

import chess
import numpy as np
import pytest

from zerochess.chess import (
    POLICY_SIZE, SEQ_LEN, VOCAB_SIZE, Board, IllegalMoveError, encode_board, index_to_move,
    legal_move_indices, move_to_index)
from zerochess.chess import layout


def _positions(count: int, seed: int):
    """Yield boards from random games until `count` positions have been produced."""
    rng = random.Random(seed)
    produced = 0
    while produced < count:
        board = Board()
        for _ in range(300):
            if board.is_game_over() or produced >= count:
                break
            yield board
            produced += 1
            board.push_uci(rng.choice(sorted(board.legal_moves())))


def test_every_legal_move_has_a_distinct_index_and_round_trips(request):
    count = request.config.getoption("--encoding-positions")
    seen_underpromotion = seen_castle = 0
    for board in _positions(count, seed=7):
        moves = board.legal_moves()
        idx = legal_move_indices(board)
        assert len(set(idx.tolist())) == len(moves), board.fen()
        assert ((0 <= idx) & (idx < POLICY_SIZE)).all()
        for uci, i in zip(moves, idx.tolist()):
            assert index_to_move(board, i) == uci
        seen_underpromotion += int((idx >= 4096).sum())
        seen_castle += sum(m in ("e1g1", "e1c1", "e8g8", "e8c8") and board.piece_at(
            {"e1": 4, "e8": 60}[m[:2]]) in ("K", "k") for m in moves)
    assert seen_underpromotion > 0 and seen_castle > 0


def test_the_compiled_encoding_is_sized_by_the_layout_module():
    """layout.py is the one Python source of the sizes; the C enum in encoding.pxd, which sizes
    the buffers the native code fills, must agree with it."""
    assert (layout.SEQ_LEN, layout.VOCAB_SIZE, layout.POLICY_SIZE) == (72, 44, 4168)  # as documented
    assert (SEQ_LEN, VOCAB_SIZE, POLICY_SIZE) == (layout.SEQ_LEN, layout.VOCAB_SIZE, layout.POLICY_SIZE)
    assert encode_board(Board()).shape == (layout.SEQ_LEN,)  # allocated with the C SEQ_LEN
    with pytest.raises(ValueError, match=f"outside 0..{layout.POLICY_SIZE - 1}"):  # the C bound
        index_to_move(Board(), layout.POLICY_SIZE)
    under = Board("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    assert move_to_index(under, "a7b8r") == layout.N_FROM_TO + (0 * 3 + 2) * 3 + 2  # C N_FROM_TO


def test_tokens_shape_and_vocabulary():
    board = Board()
    tokens = encode_board(board)
    assert tokens.dtype == np.uint8 and tokens.shape == (SEQ_LEN,)
    assert tokens.max() < VOCAB_SIZE
    # own pieces on the first two ranks, the opponent's on the last two, flags for White
    assert tokens[:16].tolist() == [4, 2, 3, 5, 6, 3, 2, 4] + [1] * 8
    assert tokens[48:64].tolist() == [7] * 8 + [10, 8, 9, 11, 12, 9, 8, 10]
    assert tokens[64:].tolist() == [13, 15, 17, 19, 21, 23, 32, 42]


def test_black_to_move_is_mirrored_to_the_movers_frame():
    board = Board()
    board.push_uci("e2e4")
    tokens = encode_board(board)
    # Black's pieces are now "own" and sit on ranks 1-2 of the mover's frame
    assert tokens[:16].tolist() == [4, 2, 3, 5, 6, 3, 2, 4] + [1] * 8
    # White's e-pawn stands on e4, which is e5 (square 36) from Black's side
    assert tokens[36] == 7 and tokens[64] == 14


def test_colour_mirrored_positions_give_the_same_tokens_and_indices():
    for board in _positions(3000, seed=11):
        mirrored = Board(chess.Board(board.fen()).mirror().fen())
        a, b = encode_board(board), encode_board(mirrored)
        assert np.array_equal(np.delete(a, [64, 71]), np.delete(b, [64, 71])), board.fen()
        assert a[64] != b[64]
        moves = board.legal_moves()
        mirror_uci = {m: chess.Move.from_uci(m) for m in moves}
        flipped = [chess.Move(chess.square_mirror(mv.from_square), chess.square_mirror(mv.to_square),
                              mv.promotion).uci() for mv in mirror_uci.values()]
        assert [move_to_index(board, m) for m in moves] == \
            [move_to_index(mirrored, m) for m in flipped]


def test_en_passant_is_visible_only_when_legal():
    board = Board("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3")
    assert encode_board(board)[69] == 24 + 4  # file e
    assert "d4e3" in board.legal_moves()
    # the same double push, but the capture would expose Black's king on the rank
    pinned = Board("8/8/8/8/k2pP2Q/8/8/4K3 b - e3 0 1")
    assert "d4e3" not in pinned.legal_moves()
    assert encode_board(pinned)[69] == 23
    # no black pawn beside the pushed pawn: nothing to see
    assert encode_board(Board("4k3/8/8/8/4P3/8/8/4K3 b - e3 0 1"))[69] == 23


def test_fifty_move_and_repetition_tokens():
    assert encode_board(Board("4k3/8/8/8/8/8/8/4K2R w K - 57 90"))[70] == 37
    assert encode_board(Board("4k3/8/8/8/8/8/8/4K2R w K - 150 90"))[70] == 41
    board = Board()
    assert encode_board(board)[71] == 42
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8"):
        board.push_uci(uci)
    assert encode_board(board)[71] == 43


def test_underpromotion_indices_and_errors():
    board = Board("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    assert move_to_index(board, "a7a8q") == 48 * 64 + 56
    assert move_to_index(board, "a7a8n") == 4096 + (0 * 3 + 1) * 3 + 0
    assert move_to_index(board, "a7b8r") == 4096 + (0 * 3 + 2) * 3 + 2
    with pytest.raises(IllegalMoveError):
        move_to_index(board, "a7a6")
    with pytest.raises(ValueError):
        index_to_move(board, POLICY_SIZE)
    with pytest.raises(ValueError):
        index_to_move(board, 0)  # a1a1 is never a move
