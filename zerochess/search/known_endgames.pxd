# Known wins against a bare king: the value the search gives a leaf instead of the network's.
#
# Why: with king and rook (or two bishops, or bishop and knight) against a bare king the
# network calls nearly every position won, so all moves look alike to the search; it then
# follows the policy's preferences, shuffles, and the fifty-move rule draws the game (issue
# 27 measured KRvK 2 of 10 mated, KBBvK and KBNvK 0 of 10). Stockfish meets the same problem
# with specialised endgame evaluations (its KXK and KBNK): the score of a won position grows
# as the weak king nears the edge (for KBN, a corner of the bishop's colour) and the strong
# king nears it. The search here does the same: a leaf where one side has only its king and
# the other has mating material without pawns gets the value
#
#     0.90 + 0.09 * progress,   progress in [0, 1]
#
# from the strong side (0.90 to 0.99: never a proven win's 1.0, always above what the
# network gives a merely better position, so taking the last piece still looks good), and
# its negation from the bare king's side. The network still gives the priors; mates,
# stalemates and captures into insufficient material stay exact (mcts.pyx finds them at
# expansion). No tablebase is needed (SyzygyPath's tables, if set, decide the positions
# after a capture: search/syzygy.py).
#
# Header-only (`cdef inline`): compiled into mcts.c, no extension of its own.

from libc.stdint cimport uint64_t
from zerochess.chess.board cimport (Position, WHITE, BLACK, PAWN, KNIGHT, BISHOP, ROOK, QUEEN,
                                     KING, zc_lsb, zc_popcount)

cdef enum:
    KE_NONE = 0            # not a known win
    KE_MATING = 1          # queen, rook, or bishops of both colours, or three knights
    KE_BN = 2              # bishop(s) of one colour and knight(s): drive to that corner

cdef inline uint64_t _ke_light_squares() noexcept nogil:
    """The light squares: file + rank odd (a1 is dark, b1 light)."""
    return 0x55AA55AA55AA55AAULL


cdef inline int _ke_mating_kind(const Position* p, int strong) noexcept nogil:
    """How the strong side (pawnless, the other side a bare king) mates, or KE_NONE."""
    cdef uint64_t bishops = p.pieces[strong][BISHOP], light = _ke_light_squares()
    cdef int knights = zc_popcount(p.pieces[strong][KNIGHT])
    if p.pieces[strong][PAWN]:
        return KE_NONE             # pawns: promotion decides; the network knows it
    if p.pieces[strong][QUEEN] or p.pieces[strong][ROOK]:
        return KE_MATING
    if (bishops & light) and (bishops & ~light):
        return KE_MATING
    if bishops and knights:
        return KE_BN
    if knights >= 3:
        return KE_MATING
    return KE_NONE


cdef inline int _ke_abs(int x) noexcept nogil:
    return x if x >= 0 else -x


cdef inline int _ke_distance(int a, int b) noexcept nogil:
    """King moves between two squares (Chebyshev distance)."""
    cdef int df = _ke_abs((a & 7) - (b & 7)), dr = _ke_abs((a >> 3) - (b >> 3))
    return df if df > dr else dr


cdef inline int _ke_centre_distance(int s) noexcept nogil:
    """0 on the four centre squares, 6 in a corner (Manhattan distance to the centre)."""
    cdef int f = s & 7, r = s >> 3
    return (3 - f if f < 4 else f - 4) + (3 - r if r < 4 else r - 4)


cdef inline double _ke_scale(double progress, bint wide) noexcept nogil:
    """The strong side's value of a known win at ``progress`` (0-1) on either scale."""
    return (0.10 + 0.89 * progress) if wide else (0.90 + 0.09 * progress)


cdef inline int _ke_kind(const Position* p, int* strong) noexcept nogil:
    """The position's known-win kind (KE_NONE if none) and, for a known win, its strong side."""
    if p.color_occ[BLACK] == p.pieces[BLACK][KING]:
        strong[0] = WHITE
    elif p.color_occ[WHITE] == p.pieces[WHITE][KING]:
        strong[0] = BLACK
    else:
        return KE_NONE
    return _ke_mating_kind(p, strong[0])


cdef inline bint is_known_win(const Position* p) noexcept nogil:
    cdef int strong
    return _ke_kind(p, &strong) != KE_NONE


cdef inline bint known_win_value(const Position* p, bint wide, float* v) noexcept nogil:
    """True, and *v set (from the side to move), when p is a known win against a bare king.

    ``wide``: the search's root is itself a known win, so every leaf below it is one too (a
    bare king never gains material), a mate, or a draw; the values then spread over
    0.10-0.99 instead of 0.90-0.99, so that a move of the weak king towards the edge changes
    a child's Q by a few hundredths, as much as the prior's exploration term, not a few
    thousandths."""
    cdef int strong, kind, weak_king, strong_king, corner, d1, d2
    cdef float progress
    kind = _ke_kind(p, &strong)
    if kind == KE_NONE:
        return False
    weak_king = zc_lsb(p.pieces[1 - strong][KING])
    strong_king = zc_lsb(p.pieces[strong][KING])
    if kind == KE_BN:
        # Manhattan distance to the nearer corner of the bishop's colour (h1/a8 light,
        # a1/h8 dark), 0-7, as Stockfish's KBNK table; it outweighs the kings' closeness
        d1 = (weak_king & 7) + (weak_king >> 3)                  # to a1
        if p.pieces[strong][BISHOP] & _ke_light_squares():
            d1 = 7 - (weak_king & 7) + (weak_king >> 3)          # to h1
        d2 = 14 - d1                                             # to the opposite corner
        corner = d1 if d1 < d2 else d2
        progress = (0.7 * (7 - corner) / 7.0
                    + 0.3 * (7 - _ke_distance(weak_king, strong_king)) / 6.0)
    else:
        progress = (0.6 * _ke_centre_distance(weak_king) / 6.0
                    + 0.4 * (7 - _ke_distance(weak_king, strong_king)) / 6.0)
    v[0] = _ke_scale(progress, wide)
    if p.turn != strong:
        v[0] = -v[0]
    return True


cdef inline double known_win_shown_q(double q) noexcept nogil:
    """A Q on the wide scale as the narrow scale says it (what reports show): the same
    progress, the sign kept; |q| under 0.10 (a draw near) is left as it is."""
    cdef double a = q if q >= 0 else -q
    if a < 0.10:
        return q
    a = _ke_scale(min(1.0, (a - 0.10) / 0.89), False)
    return a if q >= 0 else -a
