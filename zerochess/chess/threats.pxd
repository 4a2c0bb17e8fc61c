# Threat inputs (encoding version 2), callable without the GIL; threats.pyx documents them.

from libc.stdint cimport uint8_t

# Rewrite one position's SEQ_LEN version-1 tokens as version-2 tokens, in place: each square
# token t becomes t + VOCAB_SIZE * flags (bit 0: the opponent attacks the square, bit 1: the
# side to move does). Returns 0, or -1 (tokens untouched) when a square token is not a
# version-1 square token (0..12).
cdef int add_threats_row(uint8_t* tokens) noexcept nogil
