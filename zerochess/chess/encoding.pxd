# Network input tokens and policy indices, callable without the GIL.
# The layout is documented in encoding.pyx's module docstring.

from libc.stdint cimport uint8_t, int32_t
from zerochess.chess.board cimport Position, Move

# The sizes of zerochess/chess/layout.py, as C constants for the nogil code (encoding.pyx
# checks at import that the two agree).
cdef enum:
    SEQ_LEN = 72           # tokens per position
    VOCAB_SIZE = 44        # distinct token values
    POLICY_SIZE = 4168     # 64 * 64 from-to moves + 72 underpromotions
    N_FROM_TO = 4096

# Write the SEQ_LEN tokens of `p` into out[0:SEQ_LEN]. `repeated` says whether the
# position already occurred earlier in the game (the caller knows the history).
cdef void encode_position(const Position* p, bint repeated, uint8_t* out) noexcept nogil

# Policy index of a legal move of `p` (from the side to move's point of view).
cdef int32_t move_index(const Position* p, Move m) noexcept nogil
