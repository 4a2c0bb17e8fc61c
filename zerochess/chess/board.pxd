# The native chess core's C-level API, for the MCTS core and the encoder.
#
# Everything here is `noexcept nogil` and works on plain structs, so the search can
# walk millions of positions without touching a Python object. The Python `Board`
# class (board.pyx) is a thin, checked wrapper over the same functions.

from libc.stdint cimport uint64_t, uint16_t, uint8_t, int8_t, int32_t

# A move in 16 bits: from (bits 0-5) | to (bits 6-11) | promotion piece type (bits 12-14,
# 0 = none, else KNIGHT..QUEEN) | CASTLING_FLAG (bit 15). Castling is the king taking its
# own rook (from = the king's square, to = the rook's square, flag set): one code for every
# Chess960 castling, never equal to another move's code, and position-free to print (the
# UCI text, e1g1 or e1h1, is chosen when it is written: move_to_uci). En passant is the
# pawn's diagonal move to the empty target square, as UCI writes it.
ctypedef uint16_t Move

cdef enum:
    WHITE = 0
    BLACK = 1
    PAWN = 0
    KNIGHT = 1
    BISHOP = 2
    ROOK = 3
    QUEEN = 4
    KING = 5
    NO_PIECE = -1          # Position.squares value for an empty square
    NO_SQUARE = -1
    MAX_MOVES = 256        # more than the 218 legal moves of the richest known position
    # castling-right bits
    # castling-right bits: OO is the right with the rook on the h-side of the king, OOO on
    # the a-side (Chess960's two castlings; standard chess is the case king e, rooks h and a)
    WHITE_OO = 1
    WHITE_OOO = 2
    BLACK_OO = 4
    BLACK_OOO = 8
    CASTLING_FLAG = 0x8000

# Game status, in the order python-chess reports outcomes.
cdef enum GameStatus:
    ONGOING = 0
    CHECKMATE = 1
    STALEMATE = 2
    INSUFFICIENT_MATERIAL = 3
    FIFTY_MOVES = 4
    THREEFOLD_REPETITION = 5

ctypedef struct Position:
    uint64_t pieces[2][6]   # [color][piece type] bitboards, a1 = bit 0, h8 = bit 63
    uint64_t color_occ[2]   # all pieces of a color
    uint64_t occupied
    int8_t squares[64]      # color * 6 + type, or NO_PIECE: O(1) "what is on this square"
    int32_t turn            # WHITE or BLACK
    int32_t castling        # WHITE_OO | WHITE_OOO | BLACK_OO | BLACK_OOO
    int8_t castle_rook[4]   # square of the rook of each right bit (1, 2, 4, 8 -> 0..3),
                            # meaningful while the bit is set (a right's rook never moves)
    uint64_t castle_guard   # squares whose piece moving or being captured drops a right:
                            # the rights' rooks and their kings (0 when no right is left)
    int32_t ep              # en passant target square, kept only when a pawn of the side
                            # to move attacks it (the Polyglot convention), else NO_SQUARE
    int32_t halfmove        # plies since the last capture or pawn move (fifty-move rule)
    int32_t fullmove
    uint64_t key            # Polyglot Zobrist key, updated incrementally; equals
                            # chess.polyglot.zobrist_hash for every position whose castling
                            # rooks stand on the a- and h-files (all of standard chess)

# What make_move needs to restore the position in unmake_move.
ctypedef struct Undo:
    uint64_t key
    uint64_t castle_guard
    int32_t castling
    int32_t ep
    int32_t halfmove
    int8_t captured         # piece code captured on the target square (not en passant)

cdef inline int move_from(Move m) noexcept nogil:
    return m & 63

cdef inline int move_to(Move m) noexcept nogil:
    return (m >> 6) & 63

cdef inline int move_promotion(Move m) noexcept nogil:
    return (m >> 12) & 7

cdef inline Move make_move_code(int frm, int to, int promo) noexcept nogil:
    return <Move>(frm | (to << 6) | (promo << 12))

cdef inline bint is_castling(Move m) noexcept nogil:
    return (m & CASTLING_FLAG) != 0

# Whether a castling is standard chess's (king on the e-file, rook in the corner): then its
# UCI text without Chess960 and its policy index are the king's two-square move (e1g1).
cdef inline bint is_standard_castling(Move m) noexcept nogil:
    return ((m & CASTLING_FLAG) != 0 and (m & 7) == 4
            and (((m >> 6) & 7) == 0 or ((m >> 6) & 7) == 7))

# The king's destination of a castling (g-file for the h-side rook, c-file for the a-side).
cdef inline int castling_king_to(Move m) noexcept nogil:
    return ((m & 56) | 6) if ((m >> 6) & 63) > (m & 63) else ((m & 56) | 2)

# The compiler's bit builtins (lowest and highest set square, population count), here so
# that every module cimporting the board uses the same ones.
cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static __inline int zc_lsb(unsigned long long b) { unsigned long i; _BitScanForward64(&i, b); return (int)i; }
    static __inline int zc_msb(unsigned long long b) { unsigned long i; _BitScanReverse64(&i, b); return (int)i; }
    static __inline int zc_popcount(unsigned long long b) { return (int)__popcnt64(b); }
    #else
    static inline int zc_lsb(unsigned long long b) { return __builtin_ctzll(b); }
    static inline int zc_msb(unsigned long long b) { return 63 - __builtin_clzll(b); }
    static inline int zc_popcount(unsigned long long b) { return __builtin_popcountll(b); }
    #endif
    """
    int zc_lsb(uint64_t b) noexcept nogil
    int zc_msb(uint64_t b) noexcept nogil
    int zc_popcount(uint64_t b) noexcept nogil

# Move generation and make/unmake.
cdef int generate_legal(const Position* p, Move* out) noexcept nogil
cdef void make_move(Position* p, Move m, Undo* u) noexcept nogil
cdef void unmake_move(Position* p, Move m, const Undo* u) noexcept nogil
cdef bint in_check(const Position* p) noexcept nogil
cdef bint legal_en_passant(const Position* p) noexcept nogil
# Squares color `by` attacks on p.occupied (pseudo-attacks: pins ignored); reads only
# p.pieces[by] and p.occupied.
cdef uint64_t attacked_squares(const Position* p, int by) noexcept nogil

# Keys and status. A history is the array of repetition keys of the earlier positions of
# the game, oldest first (the current position's key is not in it).
cdef uint64_t repetition_key(const Position* p) noexcept nogil
cdef int repetition_count(const Position* p, const uint64_t* history, int n) noexcept nogil
cdef bint insufficient_material(const Position* p) noexcept nogil
cdef GameStatus position_status(const Position* p, int n_legal, const uint64_t* history,
                            int n) noexcept nogil
cdef uint64_t perft(Position* p, int depth) noexcept nogil

# The Python-facing board. Its fields are visible to other Cython modules, so the search
# can copy a game's position and repetition history straight out of it.
cdef class Board:
    cdef Position pos
    cdef public bint chess960   # UCI text of castling: king takes rook (e1h1) when set
    cdef public bint shredder   # FEN castling field as Shredder-FEN (HAha) instead of X-FEN
    cdef Undo* undos          # undos[i] restores the position before moves[i]
    cdef Move* moves          # the moves pushed since the FEN, oldest first
    cdef uint64_t* history    # history[i]: repetition key of the position before moves[i]
    cdef int ply              # number of moves pushed
    cdef int capacity         # allocated length of the three arrays above
    cdef void _reserve(self, int n) except *
    cdef void _push(self, Move m) noexcept
