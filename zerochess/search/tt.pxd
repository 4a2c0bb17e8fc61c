# The transposition table: a fixed-memory cache of network outputs (priors, WDL, plies
# left) keyed by
# what the network sees. Its C functions run without the GIL inside the MCTS core.

from libc.stdint cimport uint64_t, uint32_t, uint16_t
from zerochess.chess.board cimport Position

cdef enum:
    TT_MAX_MOVES = 64      # positions with more legal moves are not cached (rare; documented)
    TT_WAYS = 4            # entries per bucket; replacement is least-recently-used in a bucket

ctypedef struct TTEntry:
    uint64_t key           # nn_cache_key of the position; 0 marks an empty slot
    uint32_t stamp         # the table's clock at the last store or hit (LRU replacement)
    uint16_t n_moves       # legal moves, in generate_legal order, that priors[] covers
    uint16_t _pad
    float wdl[3]           # loss, draw, win from the side to move
    float priors[TT_MAX_MOVES]
    float m                # plies left from the position (moves-left head); -1: none

ctypedef struct TTData:
    TTEntry* entries       # n_buckets * TT_WAYS entries
    uint64_t n_buckets
    uint64_t used          # occupied slots, for hashfull
    uint32_t clock
    uint64_t hits
    uint64_t probes

# The cache key: the position's repetition key mixed with the two tokens the network sees
# beyond the board (fifty-move bucket, repetition flag), so that a hit returns exactly what
# the network would have answered.
cdef uint64_t nn_cache_key(const Position* p, bint repeated) noexcept nogil

# Copy a stored entry into priors[0:n_moves], wdl[0:3] and m[0]; False on a miss.
cdef bint tt_probe(TTData* t, uint64_t key, int n_moves, float* priors, float* wdl,
                   float* m) noexcept nogil
cdef void tt_store(TTData* t, uint64_t key, int n_moves, const float* priors,
                   const float* wdl, float m) noexcept nogil

cdef class TranspositionTable:
    cdef TTData data
    cdef double mb
