# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Threat inputs: which squares each side attacks, folded into the network's square tokens.

Monty (an MCTS chess engine) measured +51 +- 16 Elo from telling its network, per square,
whether the opponent attacks it and whether the side to move defends it. A transformer can
work that out from the pieces, but only by spending layers on geometry (a rook's attack
along a file depends on every square between); handing it the answer frees them. The flags are a pure function of the version-1 tokens
(``encoding.pyx``), so the training shards, which hold version-1 tokens only, serve networks
with and without them, and the search keeps encoding version 1.

Per square, in the mover's frame (the tokens' frame: the side to move's pawns go up):

    bit 0  the opponent attacks the square
    bit 1  the side to move attacks ("defends") the square

counting every piece with the real occupancy: pawns diagonally forward for their own side,
bishops, rooks and queens stopped by the first piece in the way, knights, kings. Pins are
ignored (pseudo-attacks, as is usual): a pinned piece still attacks. A square holding a
piece is attacked when an enemy could capture there and defended when an own piece could
recapture; an empty square is flagged the same way (where a piece may safely go).

**Version-2 tokens** are version-1 tokens with each of the 64 square tokens ``t`` replaced by
``t + VOCAB_SIZE * flags`` (44 x 0..3, so values 0..175: still uint8); tokens 64..71 are
unchanged. A network with ``NetworkConfig.threat_inputs`` reads ``t % 44`` as the square
token and ``t // 44`` as the flags (integer ops, so its ONNX export takes them as they
are). Its evaluators call ``add_threats`` on the search's version-1 batch first.
"""

import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint8_t, uint64_t
from libc.string cimport memset
from zerochess.chess.board cimport (Position, WHITE, BLACK, attacked_squares)
from zerochess.chess.encoding cimport SEQ_LEN, VOCAB_SIZE

from zerochess.chess.layout import N_THREAT_FLAGS, THREAT_VOCAB_SIZE  # noqa: F401 (re-exported)

cnp.import_array()

# Two flag bits per square, and version-2 tokens must stay uint8.
if (N_THREAT_FLAGS, THREAT_VOCAB_SIZE) != (4, VOCAB_SIZE * 4) or THREAT_VOCAB_SIZE > 256:
    raise ImportError("layout.py's threat sizes are not two flag bits on uint8 tokens")

cdef enum:
    N_SQUARE_TOKENS = 13  # version-1 square tokens: empty, own P N B R Q K, opponent P N B R Q K


cdef int add_threats_row(uint8_t* tokens) noexcept nogil:
    # Decode the square tokens into bitboards: own pieces as White, the opponent's as Black,
    # which is what the mover's frame is (own pawns move up the board).
    cdef Position pos
    cdef int sq, t
    cdef uint64_t bit, opp_attacks, own_attacks
    memset(&pos, 0, sizeof(Position))
    for sq in range(64):
        t = tokens[sq]
        if t == 0:
            continue
        if t >= N_SQUARE_TOKENS:
            return -1
        bit = 1ULL << sq
        if t <= 6:
            pos.pieces[WHITE][t - 1] |= bit
        else:
            pos.pieces[BLACK][t - 7] |= bit
        pos.occupied |= bit
    opp_attacks = attacked_squares(&pos, BLACK)
    own_attacks = attacked_squares(&pos, WHITE)
    for sq in range(64):
        tokens[sq] = <uint8_t>(tokens[sq] + VOCAB_SIZE * (((opp_attacks >> sq) & 1)
                                                          | (((own_attacks >> sq) & 1) << 1)))
    return 0


def add_threats_inplace(cnp.ndarray tokens not None):
    """Turn a C-contiguous uint8 array of version-1 tokens (shape [..., SEQ_LEN]) into
    version-2 tokens in place, without the GIL. ValueError for another dtype or shape, or
    when a square token is not a version-1 one (0..12: tokens that already carry threats,
    say); rows before the bad one are already converted then."""
    if tokens.dtype != np.uint8 or tokens.ndim == 0 or tokens.shape[tokens.ndim - 1] != SEQ_LEN:
        raise ValueError(f"need uint8 tokens of shape [..., {SEQ_LEN}], got {tokens.dtype} "
                         f"{np.shape(tokens)}")
    if not tokens.flags.c_contiguous:
        raise ValueError("add_threats_inplace needs a C-contiguous array")
    cdef Py_ssize_t n = tokens.size // SEQ_LEN, i
    cdef uint8_t* data = <uint8_t*>tokens.data
    cdef Py_ssize_t bad = -1
    with nogil:
        for i in range(n):
            if add_threats_row(data + i * SEQ_LEN) != 0:
                bad = i
                break
    if bad >= 0:
        raise ValueError(f"row {bad} is not version-1 tokens: a square token is 13 or more "
                         "(already threat tokens?)")


def add_threats(tokens):
    """Version-2 tokens (a new uint8 array, same shape) of the version-1 ``tokens``
    ([..., SEQ_LEN], any array-like); see the module docstring."""
    out = np.array(tokens, dtype=np.uint8, order="C", copy=True)
    add_threats_inplace(out)
    return out


def network_tokens(tokens, bint threat_inputs):
    """What a network reads for the search's version-1 ``tokens``: version-2 tokens when it
    has ``threat_inputs``, else ``tokens`` themselves (no copy)."""
    return add_threats(tokens) if threat_inputs else tokens
