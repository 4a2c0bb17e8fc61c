# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Network input tokens and the policy move index.

Everything is seen from the side to move, as Leela Chess Zero does: for Black the board is
mirrored rank-wise (square ``s`` becomes ``s ^ 56``) and "own"/"opponent" replace
white/black. One network then learns one game instead of two mirror images of it, and a
position and its colour-mirror give identical tokens (except the side-to-move token).

Input: ``SEQ_LEN`` = 72 tokens, each a value below ``VOCAB_SIZE`` = 44.

=========  =================================================================  ==========
token      meaning                                                            values
=========  =================================================================  ==========
0..63      square a1..h8 in the mover's frame: empty, own P N B R Q K,        0..12
           opponent P N B R Q K
64         side to move: White, Black                                          13, 14
65         own O-O right (rook on the king's h-side): yes, no                  15, 16
66         own O-O-O right (rook on the king's a-side): yes, no                17, 18
67         opponent O-O right: yes, no                                         19, 20
68         opponent O-O-O right: yes, no                                       21, 22
69         en passant: none, or the target file a..h when a legal en          23, 24..31
           passant capture exists
70         fifty-move counter: 32 + min(halfmove clock, 99) // 10             32..41
71         repetition: position not seen before in the game, seen before      42, 43
=========  =================================================================  ==========

Chess960: castling rights are encoded relative to the king, as X-FEN writes them: a right
on the king's h-side (O-O) or a-side (O-O-O), meaning the outermost rook on that side of the
king on its first rank; the squares already show where king and rooks stand. Why not a rook
file per right or a marked rook square: both need token values today's networks never saw
(their embeddings have 44 rows, and the policy head's reach table is indexed by square
token), so they would have to be clamped away anyway, while rights relative to the king are
the same four tokens with the same meaning: standard chess encodes byte for byte as before
(its rights are the corner rooks, the outermost ones; tested), and a network trained on
standard chess reads a Chess960 position's rights as "may castle that way". The one case
this leaves ambiguous is an inner rook holding the right while another rook of the same
side stands further out on the first rank (X-FEN then writes a file letter): rare, reached
only by play, and the network still sees exactly which castlings are legal, because the
policy is read over the legal moves.

This is encoding version 1, what the search and the training shards hold. Version 2 (a
network with threat inputs reads it) adds to each square token 44 times the square's
attacked/defended flags, computed from version 1 alone: ``threats.pyx``.

The seed's 69-token layout (64 squares, side, four castling rights) could not see en
passant, the fifty-move counter or repetitions, so its network could not know that a
capture en passant is legal or that a position is about to be drawn; tokens 69-71 fix that.

Policy: ``POLICY_SIZE`` = 4168 indices, also in the mover's frame.

* ``from * 64 + to`` (0..4095) for every move except underpromotions: queen promotions
  included, standard chess's castling (king on the e-file, rook in the corner) as the
  king's two-square move (e1g1), any other Chess960 castling as the king taking its rook
  (b1a1, f1h1). The king's destination would not do in Chess960: a king on f1 castling
  with the h1 rook lands on g1, where its ordinary one-square move also goes; no other
  move goes from the king to its own rook, so that index is free. (Training a network on
  Chess960 games would also need the transformer's reach table, which knows only e1g1 and
  e1c1 as castling; playing needs nothing, because the engine reads legal moves' logits only.)
* ``4096 + ((from_file * 3 + (to_file - from_file + 1)) * 3 + piece)`` for underpromotions,
  piece 0 = knight, 1 = bishop, 2 = rook (4096..4167). In the mover's frame a promotion
  always goes from rank 7 to rank 8, so file and direction identify it.

The seed promoted to queens only; here every legal move of every position has its own
index, underpromotions included (tested over 100,000 positions).
"""

import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint8_t, int32_t
from zerochess.chess.board cimport (
    Board, Position, Move, WHITE, BLACK, KNIGHT, BISHOP, ROOK, NO_PIECE, MAX_MOVES,
    WHITE_OO, WHITE_OOO, BLACK_OO, BLACK_OOO, generate_legal, legal_en_passant,
    repetition_count, move_from, move_to, move_promotion, castling_king_to,
    is_standard_castling)
import zerochess.chess.layout as layout
from zerochess.chess.board import move_to_uci

cnp.import_array()

# The C enum in encoding.pxd mirrors zerochess.chess.layout (C needs the sizes at compile
# time); refuse to run with the two apart. The Python names are layout's values (a Cython module
# cannot define a Python global under a C enum member's name, so they go through the dict).
if (SEQ_LEN, VOCAB_SIZE, POLICY_SIZE, N_FROM_TO) != (
        layout.SEQ_LEN, layout.VOCAB_SIZE, layout.POLICY_SIZE, layout.N_FROM_TO):
    raise ImportError("encoding.pxd's sizes differ from zerochess/chess/layout.py; "
                      "make them agree and rebuild")
globals().update(SEQ_LEN=layout.SEQ_LEN, VOCAB_SIZE=layout.VOCAB_SIZE,
                 POLICY_SIZE=layout.POLICY_SIZE)


cdef void encode_position(const Position* p, bint repeated, uint8_t* out) noexcept nogil:
    cdef int us = p.turn
    cdef int flip = 0 if us == WHITE else 56
    cdef int sq, piece, color
    for sq in range(64):
        piece = p.squares[sq]
        if piece == NO_PIECE:
            out[sq ^ flip] = 0
        else:
            color = 1 if piece >= 6 else 0
            out[sq ^ flip] = <uint8_t>((1 if color == us else 7) + piece - 6 * color)
    cdef int own_oo = WHITE_OO if us == WHITE else BLACK_OO
    cdef int own_ooo = WHITE_OOO if us == WHITE else BLACK_OOO
    cdef int opp_oo = BLACK_OO if us == WHITE else WHITE_OO
    cdef int opp_ooo = BLACK_OOO if us == WHITE else WHITE_OOO
    out[64] = 13 + us
    out[65] = 15 if p.castling & own_oo else 16
    out[66] = 17 if p.castling & own_ooo else 18
    out[67] = 19 if p.castling & opp_oo else 20
    out[68] = 21 if p.castling & opp_ooo else 22
    out[69] = <uint8_t>(24 + (p.ep & 7)) if legal_en_passant(p) else 23
    out[70] = <uint8_t>(32 + (p.halfmove if p.halfmove < 99 else 99) // 10)
    out[71] = 43 if repeated else 42


cdef int32_t move_index(const Position* p, Move m) noexcept nogil:
    cdef int flip = 0 if p.turn == WHITE else 56
    cdef int frm = move_from(m) ^ flip
    cdef int to = (castling_king_to(m) if is_standard_castling(m) else move_to(m)) ^ flip
    cdef int promo = move_promotion(m)
    if promo == KNIGHT or promo == BISHOP or promo == ROOK:
        return N_FROM_TO + ((frm & 7) * 3 + ((to & 7) - (frm & 7) + 1)) * 3 + (promo - KNIGHT)
    return frm * 64 + to


def encode_board(Board board):
    """The board's SEQ_LEN input tokens as a uint8 numpy array."""
    cdef cnp.ndarray[cnp.uint8_t, ndim=1] out = np.empty(SEQ_LEN, dtype=np.uint8)
    cdef bint repeated = repetition_count(&board.pos, board.history, board.ply) > 0
    encode_position(&board.pos, repeated, <uint8_t*>out.data)
    return out


def legal_move_indices(Board board):
    """Policy indices of ``board.legal_moves()``, in the same order, as int32."""
    cdef Move moves[MAX_MOVES]
    cdef int i, n = generate_legal(&board.pos, moves)
    cdef cnp.ndarray[cnp.int32_t, ndim=1] out = np.empty(n, dtype=np.int32)
    for i in range(n):
        out[i] = move_index(&board.pos, moves[i])
    return out


def move_to_index(Board board, str uci):
    """Policy index of a legal move given as UCI; raises like ``Board.push_uci``."""
    cdef Move m = board.parse_uci(uci)
    return move_index(&board.pos, m)


def index_to_move(Board board, int index):
    """The legal move (UCI) with this policy index; ValueError if no legal move has it."""
    cdef Move moves[MAX_MOVES]
    cdef int i, n = generate_legal(&board.pos, moves)
    if not 0 <= index < POLICY_SIZE:
        raise ValueError(f"policy index {index} outside 0..{POLICY_SIZE - 1}")
    for i in range(n):
        if move_index(&board.pos, moves[i]) == index:
            return move_to_uci(moves[i], board.chess960)
    raise ValueError(f"no legal move has policy index {index} in {board.fen()}")
