"""Network input and policy indices with Chess960: standard chess encodes exactly as before
(today's networks see the same bytes), and Chess960 positions encode their castling rights
with the same four tokens, relative to the king (layout: zerochess/chess/encoding.pyx)."""

import random

import chess
import numpy as np

from chess960_helpers import DFRC_BOOK, start_positions
from zerochess.chess import (POLICY_SIZE, VOCAB_SIZE, Board, encode_board, index_to_move,
                              legal_move_indices, move_to_index)

PIECES = "PNBRQK"


def reference_tokens(ref: chess.Board, repeated: bool) -> list[int]:
    """The documented 72-token layout, computed from python-chess for a standard position:
    the encoding as it was before Chess960 (rights as the corner rooks' K/Q/k/q)."""
    us = ref.turn
    flip = 0 if us == chess.WHITE else 56
    out = [0] * 72
    for sq, piece in ref.piece_map().items():
        out[sq ^ flip] = (1 if piece.color == us else 7) + PIECES.index(piece.symbol().upper())
    them = not us
    out[64] = 13 if us == chess.WHITE else 14
    out[65] = 15 if ref.has_kingside_castling_rights(us) else 16
    out[66] = 17 if ref.has_queenside_castling_rights(us) else 18
    out[67] = 19 if ref.has_kingside_castling_rights(them) else 20
    out[68] = 21 if ref.has_queenside_castling_rights(them) else 22
    out[69] = 24 + chess.square_file(ref.ep_square) if ref.has_legal_en_passant() else 23
    out[70] = 32 + min(ref.halfmove_clock, 99) // 10
    out[71] = 43 if repeated else 42
    return out


def reference_index(ref: chess.Board, move: chess.Move) -> int:
    """Standard chess's policy index: from * 64 + to in the mover's frame, castling as the
    king's two-square move (python-chess's standard UCI), queen promotions as plain moves."""
    flip = 0 if ref.turn == chess.WHITE else 56
    move = chess.Move.from_uci(ref.uci(move, chess960=False))
    if move.promotion in (chess.KNIGHT, chess.BISHOP, chess.ROOK):
        frm, to = move.from_square ^ flip, move.to_square ^ flip
        return 4096 + ((frm & 7) * 3 + ((to & 7) - (frm & 7) + 1)) * 3 + move.promotion - 2
    return (move.from_square ^ flip) * 64 + (move.to_square ^ flip)


def test_standard_positions_encode_byte_for_byte_as_before():
    rng = random.Random(5)
    castlings = 0
    for _ in range(40):
        board, ref = Board(), chess.Board()
        for _ in range(rng.choice((30, 120))):
            repeated = board.is_repetition(2)
            assert encode_board(board).tolist() == reference_tokens(ref, repeated), ref.fen()
            moves = list(ref.legal_moves)
            if not moves:
                break
            assert legal_move_indices(board).tolist() == [
                reference_index(ref, chess.Move.from_uci(m)) for m in board.legal_moves()]
            castlings += any(ref.is_castling(m) for m in moves)
            move = rng.choice([m for m in moves if ref.is_castling(m)] or moves)
            board.push_uci(move.uci())
            ref.push(move)
    assert castlings > 20
    assert move_to_index(Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"), "e1g1") == 4 * 64 + 6


def test_chess960_rights_are_encoded_relative_to_the_king_with_todays_tokens():
    # king b1, rooks a1 and h1: both rights are the outermost rooks, as K/Q mean
    board = Board("1r4kr/pppppppp/8/8/8/8/PPPPPPPP/RK5R w KQk - 0 1", chess960=True)
    tokens = encode_board(board)
    assert tokens[65:69].tolist() == [15, 17, 19, 22]
    assert tokens.max() < VOCAB_SIZE
    # the same placement without rights differs only in those tokens
    bare = encode_board(Board("1r4kr/pppppppp/8/8/8/8/PPPPPPPP/RK5R w - - 0 1"))
    assert np.flatnonzero(tokens != bare).tolist() == [65, 66, 67]


def test_chess960_castling_has_its_own_index_distinct_from_every_other_legal_move():
    rng = random.Random(9)
    fens = start_positions() + start_positions(DFRC_BOOK)
    castlings = 0
    for _ in range(120):
        ref = chess.Board(rng.choice(fens), chess960=True)
        for _ in range(rng.randrange(6, 40)):
            moves = list(ref.legal_moves)
            if not moves:
                break
            castles = [m for m in moves if ref.is_castling(m)]
            if castles:
                board = Board(ref.fen(), chess960=True)
                idx = legal_move_indices(board).tolist()
                assert len(set(idx)) == len(idx) and all(0 <= i < POLICY_SIZE for i in idx)
                for uci, i in zip(board.legal_moves(), idx):
                    assert index_to_move(board, i) == uci
                for m in castles:
                    flip = 0 if ref.turn else 56
                    king, rook = m.from_square ^ flip, m.to_square ^ flip  # king takes rook
                    standard = chess.square_file(king) == 4 and chess.square_file(rook) in (0, 7)
                    to = (king + (2 if rook > king else -2)) if standard else rook
                    assert move_to_index(board, ref.uci(m, chess960=True)) == king * 64 + to
                    castlings += 1
                assert encode_board(board).max() < VOCAB_SIZE
            ref.push(rng.choice(castles or moves))
    assert castlings > 50
