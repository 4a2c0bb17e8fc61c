# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The native chess board: bitboards, legal move generation, make/unmake, Polyglot Zobrist keys.

Why native: the MCTS core visits millions of positions and must do so with the GIL released,
so the rules of chess live here as ``cdef ... noexcept nogil`` functions over a plain
``Position`` struct (declared in ``board.pxd``). python-chess stays the reference oracle in
the tests and the library for PGN/Polyglot/UCI clients; it is never the engine's board.

Design, in brief:

* Squares are 0..63 with a1 = 0, h8 = 63 (python-chess's numbering); a bitboard has bit ``s``
  set for square ``s``.
* Sliding attacks use the classical ray method: the ray from a square in a direction, cut at
  the first blocker (found with a bit scan). No magic numbers to trust, fast enough that the
  network, not the board, is the search's bottleneck.
* Move generation is fully legal, not pseudo-legal plus a test: checkers, pins and the
  squares that answer a check are computed once per position; the king's moves are tested
  against attacks with the king removed from the board (so it cannot hide behind itself);
  en passant is tested by replaying the capture on the occupancy, which covers the
  horizontally pinned pawn pair and discovered checks along the diagonal.
* The Zobrist key is Polyglot's (the 781 published random numbers, read from
  ``chess.polyglot``), so the opening book, the transposition table and python-chess agree
  on one 64-bit key. It includes the en passant file only when a pawn of the side to move
  attacks the target square, as Polyglot specifies; ``Position.ep`` is normalised the same
  way. Repetition uses a variant that counts en passant only when the capture is legal
  (the FIDE rule, and python-chess's).
* Castling follows Chess960's rules, standard chess being the case of king e, rooks a and h:
  a right is a side of the king (h-side O-O, a-side O-O-O) plus its rook's square, and the
  move is the king taking its own rook (a flag bit in the move code). FENs are read in
  X-FEN and Shredder-FEN and written back in the form given; UCI text writes standard
  castling as e1g1 unless the board's ``chess960`` asks for e1h1 (docs/chess960.md).
"""

from libc.stdint cimport uint64_t, uint8_t, int8_t, int32_t
from libc.stdlib cimport realloc, free
from libc.string cimport memset

import enum

from zerochess.chess.errors import IllegalMoveError, InvalidFenError, InvalidMoveError

# zc_lsb, zc_msb, zc_popcount: the compiler's bit builtins, declared in board.pxd.

# ---------------------------------------------------------------------------------------
# Tables, filled once at import.

cdef uint64_t KNIGHT_ATTACKS[64]
cdef uint64_t KING_ATTACKS[64]
cdef uint64_t PAWN_ATTACKS[2][64]   # squares a pawn of that color on that square attacks
# Rays in 8 directions. 0..3 go towards higher squares (N, E, NE, NW: first blocker is the
# lowest bit), 4..7 towards lower squares (S, W, SW, SE: first blocker is the highest bit).
cdef uint64_t RAYS[8][64]
cdef uint64_t BETWEEN[64][64]       # squares strictly between two aligned squares, else 0
cdef uint64_t LINE[64][64]          # the whole line through two aligned squares, else 0
cdef uint64_t Z_PIECE[12][64]       # Polyglot keys by piece code and square
# Castling by color, king file and rook file (both on the color's first rank): the squares that
# must be empty (the king's and the rook's paths and destinations, less the two pieces) and
# the squares the king crosses before its destination. Filled once; the generator's fast path.
cdef uint64_t CASTLE_EMPTY[2][8][8]
cdef uint64_t CASTLE_CROSSED[2][8][8]
cdef uint64_t Z_CASTLE_RIGHT[4][8]  # key of castling right bit 0..3 with its rook on file 0..7
cdef uint64_t Z_EP[8]
cdef uint64_t Z_WHITE_TO_MOVE

cdef uint64_t RANK_1 = 0xFF
cdef uint64_t RANK_3 = 0xFF << 16
cdef uint64_t RANK_6 = 0xFF << 40
cdef uint64_t RANK_8 = 0xFF << 56
cdef uint64_t DARK_SQUARES = 0xAA55AA55AA55AA55
cdef uint64_t LIGHT_SQUARES = ~DARK_SQUARES

cdef int DIR_DF[8]
cdef int DIR_DR[8]


cdef void _init_tables():
    cdef int sq, d, f, r, nf, nr, a, b, k, step, i
    cdef int knight_df[8]
    cdef int knight_dr[8]
    knight_df[:] = [1, 2, 2, 1, -1, -2, -2, -1]
    knight_dr[:] = [2, 1, -1, -2, -2, -1, 1, 2]
    DIR_DF[:] = [0, 1, 1, -1, 0, -1, -1, 1]
    DIR_DR[:] = [1, 0, 1, 1, -1, 0, -1, -1]
    for sq in range(64):
        f = sq % 8
        r = sq // 8
        KNIGHT_ATTACKS[sq] = 0
        KING_ATTACKS[sq] = 0
        for k in range(8):
            nf = f + knight_df[k]
            nr = r + knight_dr[k]
            if 0 <= nf < 8 and 0 <= nr < 8:
                KNIGHT_ATTACKS[sq] |= 1ULL << (nr * 8 + nf)
        for nf in range(f - 1, f + 2):
            for nr in range(r - 1, r + 2):
                if 0 <= nf < 8 and 0 <= nr < 8 and (nf != f or nr != r):
                    KING_ATTACKS[sq] |= 1ULL << (nr * 8 + nf)
        PAWN_ATTACKS[0][sq] = 0
        PAWN_ATTACKS[1][sq] = 0
        for nf in (f - 1, f + 1):
            if 0 <= nf < 8:
                if r < 7:
                    PAWN_ATTACKS[0][sq] |= 1ULL << ((r + 1) * 8 + nf)
                if r > 0:
                    PAWN_ATTACKS[1][sq] |= 1ULL << ((r - 1) * 8 + nf)
        for d in range(8):
            RAYS[d][sq] = 0
            nf = f + DIR_DF[d]
            nr = r + DIR_DR[d]
            while 0 <= nf < 8 and 0 <= nr < 8:
                RAYS[d][sq] |= 1ULL << (nr * 8 + nf)
                nf += DIR_DF[d]
                nr += DIR_DR[d]
    cdef int color, kf, rf, back, ksq, rsq, kto, rto
    for a in range(64):
        for b in range(64):
            BETWEEN[a][b] = 0
            LINE[a][b] = 0
        for d in range(8):
            # walk from a in direction d; every square reached is aligned with a
            nf = a % 8 + DIR_DF[d]
            nr = a // 8 + DIR_DR[d]
            while 0 <= nf < 8 and 0 <= nr < 8:
                b = nr * 8 + nf
                BETWEEN[a][b] = RAYS[d][a] & ~RAYS[d][b] & ~(1ULL << b)
                LINE[a][b] = RAYS[d][a] | RAYS[(d + 4) % 8][a] | (1ULL << a)
                nf += DIR_DF[d]
                nr += DIR_DR[d]

    for color in range(2):
        back = 0 if color == WHITE else 56
        for kf in range(8):
            for rf in range(8):
                ksq, rsq = back + kf, back + rf
                kto = back + (6 if rf > kf else 2)
                rto = back + (5 if rf > kf else 3)
                CASTLE_EMPTY[color][kf][rf] = (
                    BETWEEN[ksq][kto] | BETWEEN[rsq][rto] | (1ULL << kto) | (1ULL << rto)
                    | BETWEEN[ksq][rsq]) & ~(1ULL << ksq) & ~(1ULL << rsq)
                CASTLE_CROSSED[color][kf][rf] = BETWEEN[ksq][kto]

cdef void _init_zobrist() except *:
    # The Polyglot random numbers are a published standard; python-chess (a runtime
    # dependency) carries them, so we read them rather than keep a second copy.
    from chess.polyglot import POLYGLOT_RANDOM_ARRAY as rnd
    global Z_WHITE_TO_MOVE
    cdef int color, ptype, sq, kind, bit
    for color in range(2):
        for ptype in range(6):
            # Polyglot orders pieces black pawn, white pawn, black knight, ...
            kind = 2 * ptype + (1 if color == WHITE else 0)
            for sq in range(64):
                Z_PIECE[color * 6 + ptype][sq] = rnd[64 * kind + sq]
    # A right whose rook stands in its corner (h-file for O-O, a-file for O-O-O: every right
    # of standard chess) has Polyglot's key, as python-chess hashes it. Polyglot has no key
    # for a Chess960 rook elsewhere (python-chess then hashes no right at all), but the
    # transposition table and repetitions must tell such rights apart, so those get keys of
    # their own: fixed numbers from a splitmix64 sequence.
    cdef uint64_t mask = 0xFFFFFFFFFFFFFFFF
    state = 0x960
    for bit in range(4):
        for sq in range(8):
            if sq == (7 if bit % 2 == 0 else 0):
                Z_CASTLE_RIGHT[bit][sq] = rnd[768 + bit]
            else:
                state = (state + 0x9E3779B97F4A7C15) & mask
                z = state
                z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
                z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
                Z_CASTLE_RIGHT[bit][sq] = z ^ (z >> 31)
    for sq in range(8):
        Z_EP[sq] = rnd[772 + sq]
    Z_WHITE_TO_MOVE = rnd[780]


_init_tables()
_init_zobrist()

# ---------------------------------------------------------------------------------------
# Attacks.

cdef inline uint64_t _up_ray(int d, int sq, uint64_t occ) noexcept nogil:
    cdef uint64_t a = RAYS[d][sq]
    cdef uint64_t blockers = a & occ
    if blockers:
        a ^= RAYS[d][zc_lsb(blockers)]
    return a


cdef inline uint64_t _down_ray(int d, int sq, uint64_t occ) noexcept nogil:
    cdef uint64_t a = RAYS[d][sq]
    cdef uint64_t blockers = a & occ
    if blockers:
        a ^= RAYS[d][zc_msb(blockers)]
    return a


cdef inline uint64_t rook_attacks(int sq, uint64_t occ) noexcept nogil:
    return _up_ray(0, sq, occ) | _up_ray(1, sq, occ) | _down_ray(4, sq, occ) | _down_ray(5, sq, occ)


cdef inline uint64_t bishop_attacks(int sq, uint64_t occ) noexcept nogil:
    return _up_ray(2, sq, occ) | _up_ray(3, sq, occ) | _down_ray(6, sq, occ) | _down_ray(7, sq, occ)


cdef inline uint64_t attackers_of(const Position* p, int sq, int by, uint64_t occ) noexcept nogil:
    """Pieces of color `by` that attack `sq` given occupancy `occ`."""
    cdef const uint64_t* pc = p.pieces[by]
    return ((PAWN_ATTACKS[by ^ 1][sq] & pc[PAWN])
            | (KNIGHT_ATTACKS[sq] & pc[KNIGHT])
            | (KING_ATTACKS[sq] & pc[KING])
            | (bishop_attacks(sq, occ) & (pc[BISHOP] | pc[QUEEN]))
            | (rook_attacks(sq, occ) & (pc[ROOK] | pc[QUEEN])))


cdef uint64_t attacked_squares(const Position* p, int by) noexcept nogil:
    """Squares that color `by`'s pieces attack on the occupancy `p.occupied` (pawns
    diagonally forward for their colour, sliders stopped by the first piece in the way,
    knights, the king; pins ignored). Reads only `p.pieces[by]` and `p.occupied`, so a
    caller may fill just those (the threat inputs, zerochess/chess/threats.pyx)."""
    cdef const uint64_t* pc = p.pieces[by]
    cdef uint64_t out = 0, b
    cdef uint64_t diagonal = pc[BISHOP] | pc[QUEEN], straight = pc[ROOK] | pc[QUEEN]
    b = pc[PAWN]
    while b:
        out |= PAWN_ATTACKS[by][zc_lsb(b)]
        b &= b - 1
    b = pc[KNIGHT]
    while b:
        out |= KNIGHT_ATTACKS[zc_lsb(b)]
        b &= b - 1
    b = pc[KING]
    while b:
        out |= KING_ATTACKS[zc_lsb(b)]
        b &= b - 1
    b = diagonal
    while b:
        out |= bishop_attacks(zc_lsb(b), p.occupied)
        b &= b - 1
    b = straight
    while b:
        out |= rook_attacks(zc_lsb(b), p.occupied)
        b &= b - 1
    return out


cdef inline int king_square(const Position* p, int color) noexcept nogil:
    return zc_lsb(p.pieces[color][KING])


cdef bint in_check(const Position* p) noexcept nogil:
    return attackers_of(p, king_square(p, p.turn), p.turn ^ 1, p.occupied) != 0


cdef inline bint _en_passant_is_legal(const Position* p, int frm, int ksq) noexcept nogil:
    """Replay the capture on the occupancy and ask whether our king is attacked after it."""
    cdef int us = p.turn, them = p.turn ^ 1
    cdef int capsq = p.ep - 8 if us == WHITE else p.ep + 8
    cdef uint64_t occ = (p.occupied ^ (1ULL << frm) ^ (1ULL << capsq)) | (1ULL << p.ep)
    cdef const uint64_t* th = p.pieces[them]
    return ((rook_attacks(ksq, occ) & (th[ROOK] | th[QUEEN]))
            | (bishop_attacks(ksq, occ) & (th[BISHOP] | th[QUEEN]))
            | (KNIGHT_ATTACKS[ksq] & th[KNIGHT])
            | (PAWN_ATTACKS[us][ksq] & th[PAWN] & ~(1ULL << capsq))) == 0


cdef bint legal_en_passant(const Position* p) noexcept nogil:
    if p.ep == NO_SQUARE:
        return False
    cdef int ksq = king_square(p, p.turn)
    cdef uint64_t b = PAWN_ATTACKS[p.turn ^ 1][p.ep] & p.pieces[p.turn][PAWN]
    while b:
        if _en_passant_is_legal(p, zc_lsb(b), ksq):
            return True
        b &= b - 1
    return False

# ---------------------------------------------------------------------------------------
# Legal move generation.

cdef inline int _emit(Move* out, int n, int frm, uint64_t targets) noexcept nogil:
    cdef int to
    while targets:
        to = zc_lsb(targets)
        targets &= targets - 1
        out[n] = make_move_code(frm, to, 0)
        n += 1
    return n


cdef int generate_legal(const Position* p, Move* out) noexcept nogil:
    cdef int us = p.turn, them = p.turn ^ 1
    cdef const uint64_t* own = p.pieces[us]
    cdef const uint64_t* th = p.pieces[them]
    cdef uint64_t mine = p.color_occ[us], theirs = p.color_occ[them], occ = p.occupied
    cdef int ksq = zc_lsb(own[KING])
    cdef int n = 0, frm, to, s, capsq
    cdef uint64_t b, t, target, pinned = 0, snipers, line
    cdef uint64_t checkers = attackers_of(p, ksq, them, occ)
    cdef uint64_t occ_without_king = occ ^ (1ULL << ksq)

    # King steps: tested with the king lifted off the board, so it cannot step along a
    # checking slider's line away from it.
    b = KING_ATTACKS[ksq] & ~mine
    while b:
        to = zc_lsb(b)
        b &= b - 1
        if not attackers_of(p, to, them, occ_without_king):
            out[n] = make_move_code(ksq, to, 0)
            n += 1
    if checkers & (checkers - 1):
        return n  # double check: only the king may move

    # Other pieces may only capture a single checker or block its line.
    target = ~mine
    if checkers:
        target &= checkers | BETWEEN[ksq][zc_lsb(checkers)]

    # Pins: an enemy slider that sees our king through exactly one of our pieces.
    snipers = ((rook_attacks(ksq, theirs) & (th[ROOK] | th[QUEEN]))
               | (bishop_attacks(ksq, theirs) & (th[BISHOP] | th[QUEEN])))
    while snipers:
        s = zc_lsb(snipers)
        snipers &= snipers - 1
        b = BETWEEN[ksq][s] & occ
        if b and not (b & (b - 1)) and (b & mine):
            pinned |= b

    b = own[KNIGHT] & ~pinned  # a pinned knight can never move
    while b:
        frm = zc_lsb(b)
        b &= b - 1
        n = _emit(out, n, frm, KNIGHT_ATTACKS[frm] & target)

    b = own[BISHOP] | own[QUEEN]
    while b:
        frm = zc_lsb(b)
        b &= b - 1
        t = bishop_attacks(frm, occ) & target
        if (pinned >> frm) & 1:
            t &= LINE[ksq][frm]
        n = _emit(out, n, frm, t)

    b = own[ROOK] | own[QUEEN]
    while b:
        frm = zc_lsb(b)
        b &= b - 1
        t = rook_attacks(frm, occ) & target
        if (pinned >> frm) & 1:
            t &= LINE[ksq][frm]
        n = _emit(out, n, frm, t)

    cdef int up = 8 if us == WHITE else -8
    cdef uint64_t double_rank = RANK_3 if us == WHITE else RANK_6   # after one step
    cdef uint64_t last_rank = RANK_8 if us == WHITE else RANK_1
    b = own[PAWN]
    while b:
        frm = zc_lsb(b)
        b &= b - 1
        t = PAWN_ATTACKS[us][frm] & theirs
        to = frm + up
        if not ((occ >> to) & 1):
            t |= 1ULL << to
            if ((double_rank >> to) & 1) and not ((occ >> (to + up)) & 1):
                t |= 1ULL << (to + up)
        t &= target
        if (pinned >> frm) & 1:
            t &= LINE[ksq][frm]
        while t:
            to = zc_lsb(t)
            t &= t - 1
            if (last_rank >> to) & 1:
                out[n] = make_move_code(frm, to, QUEEN)
                out[n + 1] = make_move_code(frm, to, ROOK)
                out[n + 2] = make_move_code(frm, to, BISHOP)
                out[n + 3] = make_move_code(frm, to, KNIGHT)
                n += 4
            else:
                out[n] = make_move_code(frm, to, 0)
                n += 1

    if p.ep != NO_SQUARE:
        b = PAWN_ATTACKS[them][p.ep] & own[PAWN]
        while b:
            frm = zc_lsb(b)
            b &= b - 1
            if _en_passant_is_legal(p, frm, ksq):
                out[n] = make_move_code(frm, p.ep, 0)
                n += 1

    # Castling (Chess960's rules, standard chess being one case): not out of check; the
    # squares between king and destination and between rook and destination empty but for
    # these two pieces; no square the king crosses attacked, tested with the king lifted;
    # the destination not attacked once both pieces stand on their new squares. The rights
    # imply king and rook stand on their original squares (kept so by make_move and the
    # FEN parser).
    if not checkers and (p.castling & (3 << (2 * us))):
        n = _castling_moves(p, out, n, us, ksq, occ)
    return n


cdef inline bint _castling_path_safe(const Position* p, int them, uint64_t crossed, int kto,
                                     uint64_t occ, uint64_t final_occ) noexcept nogil:
    """No square the king crosses attacked (with the king lifted: `occ`), nor its
    destination with king and rook on their new squares (`final_occ`)."""
    while crossed:
        if attackers_of(p, zc_lsb(crossed), them, occ):
            return False
        crossed &= crossed - 1
    return not attackers_of(p, kto, them, final_occ)


cdef int _castling_moves(const Position* p, Move* out, int n, int us, int ksq,
                         uint64_t occ) noexcept nogil:
    cdef int them = us ^ 1, back = 0 if us == WHITE else 56
    cdef int rsq
    cdef uint64_t kbit = 1ULL << ksq
    # Standard chess (king on e, rook in the corner) takes the short test it always had: the
    # squares between empty, the two the king crosses or reaches not attacked. It is the
    # general rule for that arrangement (with no check, lifting the king or moving the rook
    # opens no line onto those squares), and it keeps standard move generation as fast.
    if p.castling & (1 << (2 * us)):            # O-O: king to g, rook to f
        rsq = p.castle_rook[2 * us]
        if ksq == back + 4 and rsq == back + 7:
            if (not (occ & (0x60ULL << back)) and not attackers_of(p, back + 5, them, occ)
                    and not attackers_of(p, back + 6, them, occ)):
                out[n] = make_move_code(ksq, rsq, 0) | CASTLING_FLAG
                n += 1
        elif not (occ & CASTLE_EMPTY[us][ksq & 7][rsq & 7]) and _castling_path_safe(
                p, them, CASTLE_CROSSED[us][ksq & 7][rsq & 7], back + 6, occ ^ kbit,
                (occ ^ kbit ^ (1ULL << rsq)) | (1ULL << (back + 5))):
            out[n] = make_move_code(ksq, rsq, 0) | CASTLING_FLAG
            n += 1
    if p.castling & (2 << (2 * us)):            # O-O-O: king to c, rook to d
        rsq = p.castle_rook[2 * us + 1]
        if ksq == back + 4 and rsq == back:
            if (not (occ & (0x0EULL << back)) and not attackers_of(p, back + 3, them, occ)
                    and not attackers_of(p, back + 2, them, occ)):
                out[n] = make_move_code(ksq, rsq, 0) | CASTLING_FLAG
                n += 1
        elif not (occ & CASTLE_EMPTY[us][ksq & 7][rsq & 7]) and _castling_path_safe(
                p, them, CASTLE_CROSSED[us][ksq & 7][rsq & 7], back + 2, occ ^ kbit,
                (occ ^ kbit ^ (1ULL << rsq)) | (1ULL << (back + 3))):
            out[n] = make_move_code(ksq, rsq, 0) | CASTLING_FLAG
            n += 1
    return n

# ---------------------------------------------------------------------------------------
# Make / unmake.

cdef inline void _put(Position* p, int sq, int piece) noexcept nogil:
    cdef uint64_t bit = 1ULL << sq
    cdef int color = 1 if piece >= 6 else 0
    (&p.pieces[0][0])[piece] |= bit
    p.color_occ[color] |= bit
    p.occupied |= bit
    p.squares[sq] = <int8_t>piece


cdef inline void _remove(Position* p, int sq, int piece) noexcept nogil:
    cdef uint64_t bit = 1ULL << sq
    cdef int color = 1 if piece >= 6 else 0
    (&p.pieces[0][0])[piece] &= ~bit
    p.color_occ[color] &= ~bit
    p.occupied &= ~bit
    p.squares[sq] = NO_PIECE


cdef inline int _rook_to(Move m) noexcept nogil:
    return castling_king_to(m) - 1 if (castling_king_to(m) & 7) == 6 else castling_king_to(m) + 1


cdef inline void _castle(Position* p, int us, int king_from, int rook_from, int king_to) noexcept nogil:
    """Move king and rook of a castling; both are lifted first because in Chess960 either
    may land where the other stood."""
    cdef int rook_to = king_to - 1 if (king_to & 7) == 6 else king_to + 1
    _remove(p, king_from, us * 6 + KING)
    _remove(p, rook_from, us * 6 + ROOK)
    _put(p, king_to, us * 6 + KING)
    _put(p, rook_to, us * 6 + ROOK)


cdef inline void _uncastle(Position* p, int us, int king_from, int rook_from, int king_to) noexcept nogil:
    cdef int rook_to = king_to - 1 if (king_to & 7) == 6 else king_to + 1
    _remove(p, king_to, us * 6 + KING)
    _remove(p, rook_to, us * 6 + ROOK)
    _put(p, king_from, us * 6 + KING)
    _put(p, rook_from, us * 6 + ROOK)


cdef uint64_t _castle_key(const Position* p) noexcept nogil:
    cdef uint64_t key = 0
    cdef int i
    for i in range(4):
        if (p.castling >> i) & 1:
            key ^= Z_CASTLE_RIGHT[i][p.castle_rook[i] & 7]
    return key


cdef void _refresh_guard(Position* p) noexcept nogil:
    cdef uint64_t guard = 0
    cdef int i
    for i in range(4):
        if (p.castling >> i) & 1:
            guard |= (1ULL << p.castle_rook[i]) | p.pieces[i >> 1][KING]
    p.castle_guard = guard


cdef inline uint64_t _drop_rights(Position* p, uint64_t touched) noexcept nogil:
    """Drop the rights whose king or rook stands on a touched square (before the move is
    made) and refresh the guard, in one pass; returns the change of the key."""
    cdef uint64_t delta = 0, guard = 0, pair
    cdef int i
    for i in range(4):
        if (p.castling >> i) & 1:
            pair = (1ULL << p.castle_rook[i]) | p.pieces[i >> 1][KING]
            if touched & pair:
                p.castling &= ~(1 << i)
                delta ^= Z_CASTLE_RIGHT[i][p.castle_rook[i] & 7]
            else:
                guard |= pair
    p.castle_guard = guard
    return delta


cdef void make_move(Position* p, Move m, Undo* u) noexcept nogil:
    cdef int us = p.turn, them = p.turn ^ 1
    cdef int frm = move_from(m), to = move_to(m), promo = move_promotion(m)
    cdef int piece = p.squares[frm]
    cdef int ptype = piece - 6 * us
    cdef int captured = p.squares[to]
    cdef int capsq, ep
    cdef uint64_t key = p.key

    u.key = p.key
    u.castle_guard = p.castle_guard
    u.castling = p.castling
    u.ep = p.ep
    u.halfmove = p.halfmove

    if p.ep != NO_SQUARE:
        key ^= Z_EP[p.ep & 7]
    p.ep = NO_SQUARE
    p.halfmove += 1

    if m & CASTLING_FLAG:
        u.captured = NO_PIECE
        key ^= _drop_rights(p, 1ULL << frm)  # the king moves: both its rights go
        _castle(p, us, frm, to, castling_king_to(m))
        key ^= Z_PIECE[piece][frm] ^ Z_PIECE[piece][castling_king_to(m)]
        key ^= Z_PIECE[us * 6 + ROOK][to] ^ Z_PIECE[us * 6 + ROOK][_rook_to(m)]
        if us == BLACK:
            p.fullmove += 1
        p.turn = them
        p.key = key ^ Z_WHITE_TO_MOVE
        return

    u.captured = <int8_t>captured
    # A right is lost when its king or rook moves or the rook is captured; decided before
    # the pieces move, while the kings still stand where the guard says.
    if p.castle_guard & ((1ULL << frm) | (1ULL << to)):
        key ^= _drop_rights(p, (1ULL << frm) | (1ULL << to))

    if captured != NO_PIECE:
        _remove(p, to, captured)
        key ^= Z_PIECE[captured][to]
        p.halfmove = 0

    if ptype == PAWN:
        p.halfmove = 0
        if to == u.ep and (to & 7) != (frm & 7):
            capsq = to - 8 if us == WHITE else to + 8
            _remove(p, capsq, them * 6 + PAWN)
            key ^= Z_PIECE[them * 6 + PAWN][capsq]
        elif to - frm == 16 or frm - to == 16:
            ep = (frm + to) >> 1
            if PAWN_ATTACKS[us][ep] & p.pieces[them][PAWN]:
                p.ep = ep
                key ^= Z_EP[ep & 7]

    _remove(p, frm, piece)
    key ^= Z_PIECE[piece][frm]
    if promo:
        piece = us * 6 + promo
    _put(p, to, piece)
    key ^= Z_PIECE[piece][to]

    if us == BLACK:
        p.fullmove += 1
    p.turn = them
    p.key = key ^ Z_WHITE_TO_MOVE


cdef void unmake_move(Position* p, Move m, const Undo* u) noexcept nogil:
    p.turn ^= 1
    cdef int us = p.turn, them = p.turn ^ 1
    cdef int frm = move_from(m), to = move_to(m), promo = move_promotion(m)
    cdef int piece = p.squares[to]
    cdef int capsq, ptype
    if m & CASTLING_FLAG:
        _uncastle(p, us, frm, to, castling_king_to(m))
    else:
        _remove(p, to, piece)
        if promo:
            piece = us * 6 + PAWN
        _put(p, frm, piece)
        ptype = piece - 6 * us
        if u.captured != NO_PIECE:
            _put(p, to, u.captured)
        elif ptype == PAWN and to == u.ep and (to & 7) != (frm & 7):
            capsq = to - 8 if us == WHITE else to + 8
            _put(p, capsq, them * 6 + PAWN)
    if us == BLACK:
        p.fullmove -= 1
    p.castling = u.castling
    p.castle_guard = u.castle_guard
    p.ep = u.ep
    p.halfmove = u.halfmove
    p.key = u.key

# ---------------------------------------------------------------------------------------
# Keys, status, perft.

cdef uint64_t repetition_key(const Position* p) noexcept nogil:
    if p.ep != NO_SQUARE and not legal_en_passant(p):
        return p.key ^ Z_EP[p.ep & 7]
    return p.key


cdef int repetition_count(const Position* p, const uint64_t* history, int n) noexcept nogil:
    """How often the current position occurred before, looking back only as far as the
    last capture or pawn move (nothing earlier can repeat)."""
    cdef uint64_t key = repetition_key(p)
    cdef int back = p.halfmove if p.halfmove < n else n
    cdef int k = 2, count = 0
    while k <= back:
        if history[n - k] == key:
            count += 1
        k += 2
    return count


cdef inline bint _side_cannot_mate(const Position* p, int c) noexcept nogil:
    cdef const uint64_t* own = p.pieces[c]
    cdef const uint64_t* opp = p.pieces[c ^ 1]
    cdef uint64_t bishops
    if own[PAWN] | own[ROOK] | own[QUEEN]:
        return False
    if own[KNIGHT]:
        # A lone knight mates only with the help of enemy pieces that can block.
        return zc_popcount(p.color_occ[c]) <= 2 and not (
            p.color_occ[c ^ 1] & ~opp[KING] & ~opp[QUEEN])
    if own[BISHOP]:
        # Bishops all on one colour mate only with the help of a knight or pawn.
        bishops = own[BISHOP] | opp[BISHOP]
        return ((not (bishops & DARK_SQUARES) or not (bishops & LIGHT_SQUARES))
                and not (own[PAWN] | opp[PAWN] | own[KNIGHT] | opp[KNIGHT]))
    return True


cdef bint insufficient_material(const Position* p) noexcept nogil:
    return _side_cannot_mate(p, WHITE) and _side_cannot_mate(p, BLACK)


cdef GameStatus position_status(const Position* p, int n_legal, const uint64_t* history,
                            int n) noexcept nogil:
    if n_legal == 0 and in_check(p):
        return CHECKMATE
    if insufficient_material(p):
        return INSUFFICIENT_MATERIAL
    if n_legal == 0:
        return STALEMATE
    if p.halfmove >= 100:
        return FIFTY_MOVES
    if repetition_count(p, history, n) >= 2:
        return THREEFOLD_REPETITION
    return ONGOING


cdef uint64_t perft(Position* p, int depth) noexcept nogil:
    """Leaf count; the last ply is counted in bulk from the legal-move count."""
    cdef Move moves[MAX_MOVES]
    cdef Undo u
    cdef int i, n
    cdef uint64_t total = 0
    if depth <= 0:
        return 1
    n = generate_legal(p, moves)
    if depth == 1:
        return n
    for i in range(n):
        make_move(p, moves[i], &u)
        total += perft(p, depth - 1)
        unmake_move(p, moves[i], &u)
    return total

# ---------------------------------------------------------------------------------------
# Text: squares, moves, FEN.

STARTING_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
_PIECE_CHARS = "PNBRQKpnbrqk"
_PROMO_CHARS = {"n": KNIGHT, "b": BISHOP, "r": ROOK, "q": QUEEN}
_PROMO_LETTERS = {KNIGHT: "n", BISHOP: "b", ROOK: "r", QUEEN: "q"}


class Status(enum.IntEnum):
    """Game status of a position, as ``Board.status()`` reports it."""
    ONGOING = 0
    CHECKMATE = 1
    STALEMATE = 2
    INSUFFICIENT_MATERIAL = 3
    FIFTY_MOVES = 4
    THREEFOLD_REPETITION = 5


def square_name(int sq):
    return "abcdefgh"[sq & 7] + str((sq >> 3) + 1)


def parse_square(str name):
    """'e4' -> 28; ValueError for anything else."""
    if len(name) != 2 or name[0] not in "abcdefgh" or name[1] not in "12345678":
        raise ValueError(f"not a square: {name!r}")
    return (ord(name[0]) - 97) + 8 * (ord(name[1]) - 49)


cpdef str move_to_uci(Move m, bint chess960=False):
    """UCI text of a move code. Castling is the king taking its rook (e1h1) when
    ``chess960`` is set; without it, standard chess's castling is the king's two-square move
    (e1g1) and any other castling stays king-takes-rook, the one unambiguous text (as
    python-chess writes it)."""
    if not chess960 and is_standard_castling(m):
        return square_name(move_from(m)) + square_name(castling_king_to(m))
    cdef str s = square_name(move_from(m)) + square_name(move_to(m))
    if move_promotion(m):
        s += _PROMO_LETTERS[move_promotion(m)]
    return s


cdef int _parse_fen(object fen, Position* out) except -1:
    """Parse into `out` (a scratch struct) or raise InvalidFenError; never half-written
    into a live board because callers copy `out` only on success. Returns 1 when the
    castling field was Shredder-FEN, else 0."""
    if not isinstance(fen, str):
        raise InvalidFenError(f"FEN must be a string, got {type(fen).__name__}")
    parts = fen.split()
    if len(parts) < 4 or len(parts) > 6:
        raise InvalidFenError(
            f"FEN needs 4 to 6 space-separated fields (placement, side, castling, en passant"
            f"[, halfmove, fullmove]), got {len(parts)}: {fen!r}")
    memset(out, 0, sizeof(Position))
    cdef int sq, piece, color, ptype, f, r, rank_index, pawn_sq, origin
    for sq in range(64):
        out.squares[sq] = NO_PIECE
    ranks = parts[0].split("/")
    if len(ranks) != 8:
        raise InvalidFenError(f"piece placement needs 8 ranks separated by '/', got {len(ranks)}: {parts[0]!r}")
    for rank_index in range(8):
        text = ranks[rank_index]
        r = 7 - rank_index
        f = 0
        for ch in text:
            if ch in "12345678":
                f += ord(ch) - 48
            elif ch in _PIECE_CHARS:
                if f > 7:
                    raise InvalidFenError(f"rank {r + 1} ({text!r}) describes more squares than 8")
                piece = _PIECE_CHARS.index(ch)
                _put(out, r * 8 + f, piece)
                f += 1
            else:
                raise InvalidFenError(f"invalid character {ch!r} in rank {r + 1} of {parts[0]!r}")
        if f != 8:
            raise InvalidFenError(f"rank {r + 1} ({text!r}) describes {f} squares, not 8")
    for color, name in ((WHITE, "white"), (BLACK, "black")):
        if zc_popcount(out.pieces[color][KING]) != 1:
            raise InvalidFenError(
                f"{name} must have exactly one king, has {zc_popcount(out.pieces[color][KING])}")
    if (out.pieces[WHITE][PAWN] | out.pieces[BLACK][PAWN]) & (RANK_1 | RANK_8):
        raise InvalidFenError("pawns on the first or last rank")

    if parts[1] == "w":
        out.turn = WHITE
    elif parts[1] == "b":
        out.turn = BLACK
    else:
        raise InvalidFenError(f"side to move must be 'w' or 'b', got {parts[1]!r}")

    shredder = _parse_castling(parts[2], out)

    out.ep = NO_SQUARE
    if parts[3] != "-":
        try:
            sq = parse_square(parts[3])
        except ValueError:
            raise InvalidFenError(f"invalid en passant square {parts[3]!r}") from None
        if (sq >> 3) != (5 if out.turn == WHITE else 2):
            raise InvalidFenError(
                f"en passant square {parts[3]} is impossible with {'white' if out.turn == WHITE else 'black'} to move")
        # Keep it only when it means something: the double-pushed pawn is there, the
        # squares it crossed are empty, and a pawn of ours attacks the target (Polyglot).
        pawn_sq = sq - 8 if out.turn == WHITE else sq + 8
        origin = sq + 8 if out.turn == WHITE else sq - 8
        if (out.squares[pawn_sq] == (out.turn ^ 1) * 6 + PAWN
                and out.squares[sq] == NO_PIECE and out.squares[origin] == NO_PIECE
                and PAWN_ATTACKS[out.turn ^ 1][sq] & out.pieces[out.turn][PAWN]):
            out.ep = sq

    out.halfmove = 0
    out.fullmove = 1
    try:
        if len(parts) > 4:
            out.halfmove = int(parts[4])
        if len(parts) > 5:
            out.fullmove = int(parts[5])
    except ValueError:
        raise InvalidFenError(f"halfmove clock and fullmove number must be integers: {fen!r}") from None
    if out.halfmove < 0 or out.fullmove < 0 or out.halfmove > 100000 or out.fullmove > 100000:
        raise InvalidFenError(f"halfmove clock or fullmove number out of range: {fen!r}")
    if out.fullmove == 0:
        out.fullmove = 1

    # The side that just moved cannot have left its king in check.
    if attackers_of(out, king_square(out, out.turn ^ 1), out.turn, out.occupied):
        raise InvalidFenError("the side not to move is in check")

    out.key = _compute_key(out)
    return 1 if shredder else 0


cdef bint _parse_castling(str field, Position* out) except -1:
    """Set the rights of a castling field in X-FEN (K/Q: the outermost rook on that side of
    the king, standard FEN being the case of rooks in the corners; or a file letter) or
    Shredder-FEN (file letters only, HAha). Returns whether it was Shredder-FEN.

    A right whose king is not on its first rank or whose rook is missing is dropped, as
    python-chess does (a FEN written by hand or by an old tool may carry stale rights)."""
    cdef int color, ksq, rsq, side, right, f
    cdef uint64_t rooks, candidates
    out.castling = 0
    if field == "-":
        out.castle_guard = 0
        return False
    for ch in field:
        lower = ch.lower()
        if lower not in "kqabcdefgh":
            raise InvalidFenError(f"invalid castling field {field!r}")
        color = WHITE if ch.isupper() else BLACK
        ksq = king_square(out, color)
        rooks = out.pieces[color][ROOK] & (RANK_1 if color == WHITE else RANK_8)
        if (ksq >> 3) != (0 if color == WHITE else 7):
            continue
        if lower == "k" or lower == "q":
            side = 0 if lower == "k" else 1
            candidates = rooks & (~((2ULL << ksq) - 1) if side == 0 else ((1ULL << ksq) - 1))
            if not candidates:
                continue
            rsq = zc_msb(candidates) if side == 0 else zc_lsb(candidates)
        else:
            f = ord(lower) - 97
            rsq = (ksq & 56) + f
            if f == (ksq & 7) or not (rooks >> rsq) & 1:
                continue
            side = 0 if f > (ksq & 7) else 1
        right = 2 * color + side
        if out.castling & (1 << right):
            raise InvalidFenError(f"invalid castling field {field!r}: two rights on one side of a king")
        out.castling |= 1 << right
        out.castle_rook[right] = rsq
    _refresh_guard(out)
    return all(ch in "abcdefghABCDEFGH" for ch in field)


cdef str _castling_field(const Position* p, bint shredder):
    """The castling field in the form the board was given: Shredder-FEN file letters, or
    X-FEN: K/Q unless another rook stands further out on that side (then the file letter)."""
    cdef int right, rsq, color
    cdef uint64_t rooks, outer
    out = []
    for right in range(4):
        if not (p.castling >> right) & 1:
            continue
        color = right >> 1
        rsq = p.castle_rook[right]
        rooks = p.pieces[color][ROOK] & (RANK_1 if color == WHITE else RANK_8)
        outer = rooks & (~((2ULL << rsq) - 1) if right % 2 == 0 else ((1ULL << rsq) - 1))
        ch = "abcdefgh"[rsq & 7] if shredder or outer else ("k" if right % 2 == 0 else "q")
        out.append(ch.upper() if color == WHITE else ch)
    return "".join(out) or "-"


cdef uint64_t _compute_key(const Position* p) noexcept nogil:
    cdef uint64_t key = 0
    cdef int sq
    for sq in range(64):
        if p.squares[sq] != NO_PIECE:
            key ^= Z_PIECE[p.squares[sq]][sq]
    key ^= _castle_key(p)
    if p.ep != NO_SQUARE:
        key ^= Z_EP[p.ep & 7]
    if p.turn == WHITE:
        key ^= Z_WHITE_TO_MOVE
    return key


cdef str _placement(const Position* p):
    rows = []
    cdef int r, f, empty, piece
    for r in range(7, -1, -1):
        row = []
        empty = 0
        for f in range(8):
            piece = p.squares[r * 8 + f]
            if piece == NO_PIECE:
                empty += 1
            else:
                if empty:
                    row.append(str(empty))
                    empty = 0
                row.append(_PIECE_CHARS[piece])
        if empty:
            row.append(str(empty))
        rows.append("".join(row))
    return "/".join(rows)

# ---------------------------------------------------------------------------------------
# The Python class.

cdef class Board:
    """A chess position with its game history, on the native core.

    >>> b = Board()
    >>> b.push_uci("e2e4"); b.fen()
    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'

    ``turn`` is True when White is to move (python-chess's convention). Bad input raises a
    ``ValueError`` subclass from ``zerochess.chess.errors`` and leaves the board unchanged.

    Every board plays Chess960's castling rules (standard chess is their special case) and
    reads X-FEN and Shredder-FEN; ``chess960`` only chooses how castling is written as UCI
    text (king takes rook, e1h1, when set; the king's two-square move e1g1 otherwise), the
    way the ``UCI_Chess960`` option asks. Castling is read in either form.

    >>> b = Board("1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w KQkq - 0 1", chess960=True)
    >>> b.fen(shredder=True).split()[2], "e1b1" in b.legal_moves()
    ('GBgb', True)
    """

    def __cinit__(self):
        self.undos = NULL
        self.moves = NULL
        self.history = NULL
        self.ply = 0
        self.capacity = 0
        self._reserve(64)

    def __init__(self, fen=None, chess960=False):
        self.chess960 = chess960
        self.set_fen(STARTING_FEN if fen is None else fen)

    def __dealloc__(self):
        free(self.undos)
        free(self.moves)
        free(self.history)

    cdef void _reserve(self, int n) except *:
        if n <= self.capacity:
            return
        cdef int cap = max(n, 2 * self.capacity)
        cdef Undo* undos = <Undo*>realloc(self.undos, cap * sizeof(Undo))
        if undos == NULL:
            raise MemoryError()
        self.undos = undos
        cdef Move* moves = <Move*>realloc(self.moves, cap * sizeof(Move))
        if moves == NULL:
            raise MemoryError()
        self.moves = moves
        cdef uint64_t* history = <uint64_t*>realloc(self.history, cap * sizeof(uint64_t))
        if history == NULL:
            raise MemoryError()
        self.history = history
        self.capacity = cap

    cdef void _push(self, Move m) noexcept:
        # caller guarantees capacity and legality
        self.history[self.ply] = repetition_key(&self.pos)
        self.moves[self.ply] = m
        make_move(&self.pos, m, &self.undos[self.ply])
        self.ply += 1

    def set_fen(self, fen):
        """Set the position from a FEN (4 to 6 fields) and clear the move history."""
        cdef Position parsed
        cdef int shredder = _parse_fen(fen, &parsed)
        self.pos = parsed
        self.shredder = shredder
        self.ply = 0

    def fen(self, shredder=None):
        """FEN of the position; the en passant square is shown only when the capture is
        legal (python-chess's default), so equal positions give equal FENs. The castling
        field is in the form the FEN was given (``shredder`` overrides): X-FEN (KQkq, which
        is standard FEN for standard chess) or Shredder-FEN (HAha)."""
        castling = _castling_field(&self.pos, self.shredder if shredder is None else shredder)
        ep = square_name(self.pos.ep) if legal_en_passant(&self.pos) else "-"
        return (f"{_placement(&self.pos)} {'w' if self.pos.turn == WHITE else 'b'} "
                f"{castling} {ep} {self.pos.halfmove} {self.pos.fullmove}")

    def copy(self):
        """An independent copy with the same position and move history."""
        cdef Board other = Board.__new__(Board)
        other._reserve(self.capacity)
        other.pos = self.pos
        other.ply = self.ply
        other.chess960 = self.chess960
        other.shredder = self.shredder
        cdef int i
        for i in range(self.ply):
            other.undos[i] = self.undos[i]
            other.moves[i] = self.moves[i]
            other.history[i] = self.history[i]
        return other

    def __copy__(self):
        return self.copy()

    @property
    def turn(self):
        return self.pos.turn == WHITE

    @property
    def halfmove_clock(self):
        return self.pos.halfmove

    @property
    def fullmove_number(self):
        return self.pos.fullmove

    @property
    def move_stack(self):
        """UCI strings of the moves pushed since the FEN, oldest first."""
        return [move_to_uci(self.moves[i], self.chess960) for i in range(self.ply)]

    def __len__(self):
        return self.ply

    def legal_moves(self):
        """Legal moves as UCI strings (castling as ``chess960`` says: e1h1 or e1g1)."""
        cdef Move moves[MAX_MOVES]
        cdef int i, n = generate_legal(&self.pos, moves)
        return [move_to_uci(moves[i], self.chess960) for i in range(n)]

    def parse_uci(self, str uci):
        """The native move code of a legal UCI move; raises InvalidMoveError if the text is not
        UCI notation and IllegalMoveError if the move is not legal here."""
        if not isinstance(uci, str) or not 4 <= len(uci) <= 5:
            raise InvalidMoveError(f"not a UCI move: {uci!r}")
        try:
            frm = parse_square(uci[0:2])
            to = parse_square(uci[2:4])
        except ValueError:
            raise InvalidMoveError(f"not a UCI move: {uci!r}") from None
        promo = 0
        if len(uci) == 5:
            if uci[4:5] not in _PROMO_CHARS:
                raise InvalidMoveError(f"not a UCI move (bad promotion piece): {uci!r}")
            promo = _PROMO_CHARS[uci[4:5]]
        cdef Move wanted = make_move_code(frm, to, promo)
        cdef Move moves[MAX_MOVES]
        cdef int i, n = generate_legal(&self.pos, moves)
        for i in range(n):
            if moves[i] == wanted:
                return wanted
            # castling: king takes rook (e1h1), or standard chess's king move (e1g1)
            if is_castling(moves[i]) and not promo and (
                    (moves[i] & 0x7FFF) == wanted
                    or (is_standard_castling(moves[i])
                        and wanted == make_move_code(frm, castling_king_to(moves[i]), 0))):
                return moves[i]
        raise IllegalMoveError(f"illegal move {uci} in {self.fen()}")

    def normalize_uci(self, str uci):
        """The legal move ``uci`` written as this board writes it (castling per ``chess960``:
        e1g1 and e1h1 name one move); raises like ``parse_uci``."""
        return move_to_uci(self.parse_uci(uci), self.chess960)

    def push_uci(self, str uci):
        """Play a move given in UCI notation."""
        cdef Move m = self.parse_uci(uci)
        self._reserve(self.ply + 1)
        self._push(m)

    def pop(self):
        """Take back the last move and return it as a UCI string."""
        if self.ply == 0:
            raise IndexError("pop from a board with no moves pushed")
        self.ply -= 1
        unmake_move(&self.pos, self.moves[self.ply], &self.undos[self.ply])
        return move_to_uci(self.moves[self.ply], self.chess960)

    def peek(self):
        """The last move pushed, as UCI, or None."""
        return move_to_uci(self.moves[self.ply - 1], self.chess960) if self.ply else None

    def zobrist(self):
        """The Polyglot key; equals ``chess.polyglot.zobrist_hash`` of the same position
        whenever its castling rooks stand in the corners (always in standard chess; other
        Chess960 rights have keys of their own, which python-chess does not hash)."""
        return self.pos.key

    def piece_at(self, int square):
        """The piece symbol on square 0..63 ('P', 'k', ...) or None."""
        if not 0 <= square < 64:
            raise ValueError(f"square out of range: {square}")
        piece = self.pos.squares[square]
        return None if piece == NO_PIECE else _PIECE_CHARS[piece]

    def is_check(self):
        return in_check(&self.pos)

    def is_checkmate(self):
        return self.status() == Status.CHECKMATE

    def is_stalemate(self):
        cdef Move moves[MAX_MOVES]
        return generate_legal(&self.pos, moves) == 0 and not in_check(&self.pos)

    def is_insufficient_material(self):
        return insufficient_material(&self.pos)

    def is_fifty_moves(self):
        """Fifty moves (100 plies) without capture or pawn move, and a legal move left."""
        cdef Move moves[MAX_MOVES]
        return self.pos.halfmove >= 100 and generate_legal(&self.pos, moves) > 0

    def is_repetition(self, int count=3):
        """Whether the position has occurred `count` times in the game (counting now)."""
        return repetition_count(&self.pos, self.history, self.ply) + 1 >= count

    def status(self):
        """The game status: checkmate first, then insufficient material, stalemate, the
        fifty-move rule and threefold repetition (python-chess's order of outcomes, with
        the draws a player may claim counted as game ends, as engines do)."""
        cdef Move moves[MAX_MOVES]
        cdef int n = generate_legal(&self.pos, moves)
        return Status(position_status(&self.pos, n, self.history, self.ply))

    def is_game_over(self):
        return self.status() != Status.ONGOING

    def result(self):
        """'1-0', '0-1', '1/2-1/2', or '*' while the game goes on."""
        status = self.status()
        if status == Status.ONGOING:
            return "*"
        if status == Status.CHECKMATE:
            return "0-1" if self.pos.turn == WHITE else "1-0"
        return "1/2-1/2"

    def perft(self, int depth):
        """Number of leaf positions `depth` plies ahead (bulk-counted last ply)."""
        cdef Position p = self.pos
        cdef uint64_t n
        with nogil:
            n = perft(&p, depth)
        return n

    def divide(self, int depth):
        """Perft split by first move: {uci: leaf count}."""
        cdef Move moves[MAX_MOVES]
        cdef Position p = self.pos
        cdef Undo u
        cdef int i, n = generate_legal(&p, moves)
        cdef uint64_t count
        result = {}
        for i in range(n):
            make_move(&p, moves[i], &u)
            with nogil:
                count = perft(&p, depth - 1)
            unmake_move(&p, moves[i], &u)
            result[move_to_uci(moves[i], self.chess960)] = count
        return result

    def __str__(self):
        lines = []
        for r in range(7, -1, -1):
            lines.append(" ".join(self.piece_at(r * 8 + f) or "." for f in range(8)))
        return "\n".join(lines)

    def __repr__(self):
        return f"Board({self.fen()!r})"

    def __eq__(self, other):
        if not isinstance(other, Board):
            return NotImplemented
        return self.fen() == other.fen()

    def __hash__(self):
        return hash(self.fen())
