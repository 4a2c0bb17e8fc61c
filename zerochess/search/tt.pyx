# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Transposition table: network outputs cached by position, in a fixed memory budget.

Leela Chess Zero calls this the NN cache: the tree is a tree (paths differ, repetition
draws depend on them), but the network's answer depends only on its input, so a position
reached by a second path, or again after the game moved on, skips the evaluator.

* Key: ``nn_cache_key`` = the Polyglot repetition key xor a constant for each value of the
  two tokens the network also sees (fifty-move bucket, repetition flag). The full 64-bit
  key and the legal-move count are checked on a probe, so a false hit needs a 64-bit
  collision between positions with equally many legal moves.
* Layout: buckets of ``TT_WAYS`` = 4 entries of 288 bytes (priors, WDL, and the plies left
  of a network with a moves-left head, -1 without: that float took the bytes the 8-byte
  alignment padded before, so ``Hash`` holds as many entries as it did), as many buckets
  as fit in the budget (``Hash`` in MB); a key picks its bucket by multiply-high.
* Replacement: an empty slot of the bucket, else its least recently used entry (every
  store and hit stamps the entry with the table's clock).
* ``hashfull``: occupied slots per mille, exact (the UCI ``hashfull`` figure).
* Positions with more than ``TT_MAX_MOVES`` = 64 legal moves are not cached; fixed-size
  entries keep the table one flat array, and such positions are uncommon.
"""

import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint64_t, uint32_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset
from zerochess.chess.board cimport (Board, Position, Move, MAX_MOVES, generate_legal,
                                     repetition_key, repetition_count)

cnp.import_array()

cdef uint64_t TOKEN_MIX[10][2]     # [fifty-move bucket][repetition flag]


cdef uint64_t _splitmix64(uint64_t x) noexcept nogil:
    x += 0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef void _init_mix() noexcept:
    cdef int b, r
    for b in range(10):
        for r in range(2):
            # bucket 0, not repeated keeps the plain key: the common case reads naturally
            TOKEN_MIX[b][r] = 0 if (b == 0 and r == 0) else _splitmix64(<uint64_t>(b * 2 + r))


_init_mix()


cdef uint64_t nn_cache_key(const Position* p, bint repeated) noexcept nogil:
    cdef int h = p.halfmove if p.halfmove < 99 else 99
    cdef uint64_t key = repetition_key(p) ^ TOKEN_MIX[h // 10][1 if repeated else 0]
    return key if key != 0 else 1      # 0 marks an empty slot


cdef inline TTEntry* _bucket(TTData* t, uint64_t key) noexcept nogil:
    # multiply-high maps the key's top bits uniformly onto [0, n_buckets)
    cdef uint64_t index = ((key >> 32) * t.n_buckets) >> 32
    return t.entries + index * TT_WAYS


cdef bint tt_probe(TTData* t, uint64_t key, int n_moves, float* priors, float* wdl,
                   float* m) noexcept nogil:
    cdef TTEntry* e
    cdef int i
    if t.entries == NULL or n_moves > TT_MAX_MOVES:
        return False
    t.probes += 1
    e = _bucket(t, key)
    for i in range(TT_WAYS):
        if e[i].key == key and e[i].n_moves == n_moves:
            t.clock += 1
            e[i].stamp = t.clock
            memcpy(priors, e[i].priors, n_moves * sizeof(float))
            memcpy(wdl, e[i].wdl, 3 * sizeof(float))
            m[0] = e[i].m
            t.hits += 1
            return True
    return False


cdef void tt_store(TTData* t, uint64_t key, int n_moves, const float* priors,
                   const float* wdl, float m) noexcept nogil:
    cdef TTEntry* e
    cdef TTEntry* victim
    cdef int i
    if t.entries == NULL or n_moves > TT_MAX_MOVES:
        return
    e = _bucket(t, key)
    victim = e
    for i in range(TT_WAYS):
        if e[i].key == key or e[i].key == 0:
            victim = e + i
            break
        if e[i].stamp < victim.stamp:
            victim = e + i
    if victim.key == 0:
        t.used += 1
    t.clock += 1
    victim.key = key
    victim.stamp = t.clock
    victim.n_moves = <uint16_t>n_moves
    memcpy(victim.wdl, wdl, 3 * sizeof(float))
    memcpy(victim.priors, priors, n_moves * sizeof(float))
    victim.m = m


cdef class TranspositionTable:
    """A cache of evaluator outputs in ``mb`` megabytes (the UCI ``Hash`` option).

    >>> tt = TranspositionTable(16)
    >>> tt.hashfull()
    0
    """

    def __cinit__(self):
        memset(&self.data, 0, sizeof(TTData))

    def __init__(self, double mb=16):
        self.resize(mb)

    def __dealloc__(self):
        free(self.data.entries)

    def resize(self, double mb):
        """Reallocate to ``mb`` megabytes (at least one bucket) and clear."""
        if not mb > 0:
            raise ValueError(f"hash size must be > 0 MB, got {mb}")
        cdef uint64_t n = <uint64_t>(mb * 1048576.0 / (TT_WAYS * sizeof(TTEntry)))
        if n < 1:
            n = 1
        if n >= (1ULL << 32):
            raise ValueError(f"hash size {mb} MB is too large")
        free(self.data.entries)
        memset(&self.data, 0, sizeof(TTData))
        self.data.entries = <TTEntry*>calloc(n * TT_WAYS, sizeof(TTEntry))
        if self.data.entries == NULL:
            raise MemoryError(f"cannot allocate a {mb} MB transposition table")
        self.data.n_buckets = n
        self.mb = mb

    def clear(self):
        """Forget every entry (UCI ``ucinewgame``)."""
        memset(self.data.entries, 0, self.data.n_buckets * TT_WAYS * sizeof(TTEntry))
        self.data.used = 0
        self.data.clock = 0
        self.data.hits = 0
        self.data.probes = 0

    def hashfull(self):
        """Occupied slots per mille (0..1000)."""
        return int(self.data.used * 1000 // (self.data.n_buckets * TT_WAYS))

    @property
    def capacity(self):
        """Number of entries the table holds."""
        return int(self.data.n_buckets * TT_WAYS)

    @property
    def hits(self):
        return int(self.data.hits)

    @property
    def probes(self):
        return int(self.data.probes)

    @property
    def megabytes(self):
        return self.mb

    def lookup(self, Board board, bint touch=True):
        """The cached ``(priors float32[n_legal], wdl float32[3])`` of the board's position,
        priors in ``board.legal_moves()`` order, or None. Does not count as a probe.

        ``touch=False`` also leaves the replacement order as it was: reports read the cache
        (Lc0's ``V``) without changing what the search keeps, so turning them on cannot
        change a search."""
        cdef Move moves[MAX_MOVES]
        cdef int n = generate_legal(&board.pos, moves)
        cdef bint repeated = repetition_count(&board.pos, board.history, board.ply) > 0
        cdef uint64_t key = nn_cache_key(&board.pos, repeated)
        cdef cnp.ndarray[cnp.float32_t, ndim=1] priors = np.empty(n, dtype=np.float32)
        cdef cnp.ndarray[cnp.float32_t, ndim=1] wdl = np.empty(3, dtype=np.float32)
        cdef float m = -1.0
        cdef uint64_t hits = self.data.hits, probes = self.data.probes
        cdef uint32_t clock = self.data.clock
        cdef uint32_t stamps[TT_WAYS]
        cdef TTEntry* bucket = _bucket(&self.data, key) if self.data.entries != NULL else NULL
        cdef int i
        if bucket != NULL:
            for i in range(TT_WAYS):
                stamps[i] = bucket[i].stamp
        found = tt_probe(&self.data, key, n, <float*>priors.data, <float*>wdl.data, &m)
        self.data.hits = hits
        self.data.probes = probes
        if not touch and bucket != NULL:
            self.data.clock = clock
            for i in range(TT_WAYS):
                bucket[i].stamp = stamps[i]
        return (priors, wdl) if found else None

    def store(self, Board board, priors, wdl, float moves_left=-1.0):
        """Store ``priors`` (float32, ``board.legal_moves()`` order), ``wdl`` and the plies
        left (-1: none) for the board's position, as the search does after an evaluation
        (tests, warm starts)."""
        cdef Move moves[MAX_MOVES]
        cdef int n = generate_legal(&board.pos, moves)
        cdef bint repeated = repetition_count(&board.pos, board.history, board.ply) > 0
        cdef cnp.ndarray[cnp.float32_t, ndim=1] p = np.ascontiguousarray(priors, dtype=np.float32)
        cdef cnp.ndarray[cnp.float32_t, ndim=1] w = np.ascontiguousarray(wdl, dtype=np.float32)
        if p.shape[0] != n or w.shape[0] != 3:
            raise ValueError(f"need {n} priors and 3 wdl values")
        tt_store(&self.data, nn_cache_key(&board.pos, repeated), n, <float*>p.data, <float*>w.data,
                 moves_left)

    def __repr__(self):
        return f"TranspositionTable({self.mb} MB, {self.capacity} entries, hashfull {self.hashfull()})"
