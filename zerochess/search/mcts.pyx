# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The MCTS core: PUCT selection, expansion, batched evaluation and backup.

One round (``run_round``) is: gather up to ``minibatch`` leaves from each tree without the
GIL, call the evaluator once for all of them with the GIL, then apply every result and back
every leaf up in one pass without the GIL. Self-play passes hundreds of trees to one round;
the UCI engine passes one.

Per simulation the root Position is copied and the path's moves are made on the copy
(copy-make); the repetition keys of the game history and of the path sit in one array,
so a position repeated inside the tree or the game history is scored as a draw at once.

Selection (at a node with N visits, children i with prior P_i, N_i visits, n_i in flight):

    c(N)   = cpuct_init + cpuct_factor * ln((N + cpuct_base) / cpuct_base)
    U_i    = c(N) * P_i * sqrt(max(sum_i (N_i + n_i), 1)) / (1 + N_i + n_i)
    Q_i    = (W_i - vl * n_i) / (N_i + vl * n_i)            (virtual loss vl)
    Q_fpu  = Q_parent - fpu_reduction * sqrt(sum of P_i over visited children)
    M_i    = moves-left utility of a visited or proven child (below), else 0
    choose argmax Q_i + U_i + M_i, ties to the first edge (deterministic)

Moves left (Lc0's moves-left utility): a network with a moves-left head gives each
evaluated position the plies the game has left (M); a node keeps the mean M of its visits,
terminal nodes 0, proven nodes their exact distance, and backup adds one ply per level
going up. With |Q_parent| beyond ``moves_left_threshold``,

    M_i = clamp(slope * (M_child - M_parent), -max_effect, max_effect) * sign(-Q_i)
          * (constant + scaled * |q'| + quadratic * q'^2),  q' = Q_i rescaled by the threshold

so among moves of about equal value the winning side prefers the one that ends the game
sooner and the losing side the one that lasts longer. Without M from the evaluator (no
head, the uniform backend), and below a known-win root (known_endgames.pxd steers there),
M_i is 0: the search is exactly what it was without it.

Values are stored from the side that moved into a node, so a parent maximises its
children's Q directly and the sign flips once per ply on the way up.

Solver: terminal nodes (mate, stalemate, insufficient material, fifty moves, repetition)
carry an exact result; a node with a child that wins for its side to move is a proven loss
for the side that moved into it, and a node whose children are all proven takes the best
of them. Proven wins keep the shortest distance, proven losses the longest, so that the
faster mate and the slower loss are chosen. A mate in one, and a capture into a dead draw
(insufficient material), are known when their node is expanded, whatever the network's prior
for the move (``_find_immediate_results``). A known win against a bare king (KRvK, KBNvK,
...) is valued by how far the weak king is driven, not by the network
(known_endgames.pxd), so the search makes progress where the network sees all moves
as equally won; below a root that is itself such a win every node is one too, and the
network is not called at all (uniform priors), so the search sees many times deeper. With
endgame tablebases (search/syzygy.py) a leaf they hold after a capture or pawn move is
probed between the nogil gathering and the evaluator (``gather``) and proven from their
WDL, with TB_PLIES marking the proof as theirs (no mate distance). Selection values a
proven child at its exact result, visited or not and without virtual loss (its leaf needs
no evaluation), so a mate or a saving draw found at expansion is visited at once.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport log, sqrt, fabs, INFINITY
from libc.stdint cimport uint8_t, uint16_t, int16_t, uint32_t, uint64_t, int32_t, int64_t
from libc.stdlib cimport malloc, realloc, free
from zerochess.chess.board cimport (
    Position, Move, Undo, GameStatus, ONGOING, CHECKMATE, MAX_MOVES, generate_legal,
    NO_PIECE, PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING, WHITE, BLACK, NO_SQUARE, make_move,
    unmake_move, in_check, move_from, move_to, move_promotion, insufficient_material,
    repetition_key, repetition_count, position_status, zc_popcount, Board)
from zerochess.chess.encoding cimport SEQ_LEN, encode_position, move_index
from zerochess.search.tt cimport tt_probe, tt_store, nn_cache_key
from zerochess.search.known_endgames cimport known_win_value, is_known_win, known_win_shown_q
from zerochess.search.tree cimport (
    Tree, TreeData, Node, Edge, UNEXPANDED, PENDING, EXPANDED, TERMINAL,
    PROVEN_NONE, PROVEN_WIN, PROVEN_DRAW, PROVEN_LOSS, TB_PLIES,
    tree_new_node, tree_new_edges, tree_reserve_hist, proven_value, proven_m)

cnp.import_array()

cdef enum SimResult:
    SIM_EVAL = 0           # a leaf was queued for the evaluator
    SIM_KNOWN = 1          # a leaf with a known value (terminal, proven, cache hit)
    SIM_COLLISION = 2      # reached a leaf already queued in this batch
    SIM_STOP = 3           # tree full or root without legal moves: stop gathering


cdef class Batch:
    """Buffers of one evaluator call: tokens, legal-move indices, offsets, leaves.

    Reused across rounds; grows when a round needs more leaves than it holds."""

    def __cinit__(self):
        self.data.leaves = NULL
        self.data.tb_pos = NULL
        self.data.n_tb = 0
        self.data.n_leaves = 0
        self.data.n_rows = 0
        self.data.n_legal = 0
        self.cap = 0

    def __init__(self, int leaves=64):
        self.reserve(leaves)

    def __dealloc__(self):
        free(self.data.leaves)
        free(self.data.tb_pos)

    @property
    def leaves(self):
        """Leaves gathered and not yet applied or abandoned."""
        return self.data.n_leaves

    @property
    def rows(self):
        """Of those, the positions that wait for the evaluator."""
        return self.data.n_rows

    def leaf_nodes(self):
        """``[(node index, row)]`` of the gathered leaves (row -1: value already known);
        for tests that check virtual loss while batches are in flight."""
        return [(self.data.leaves[i].node, self.data.leaves[i].row)
                for i in range(self.data.n_leaves)]

    cdef void reserve(self, int32_t leaves) except *:
        cdef Leaf* grown
        cdef Position* grown_pos
        if leaves <= self.cap:
            return
        self.tokens_array = np.zeros((leaves, SEQ_LEN), dtype=np.uint8)
        self.legal_array = np.zeros(leaves * MAX_MOVES, dtype=np.int32)
        self.offsets_array = np.zeros(leaves + 1, dtype=np.int32)
        grown = <Leaf*>realloc(self.data.leaves, leaves * sizeof(Leaf))
        if grown == NULL:
            raise MemoryError("cannot allocate the batch")
        self.data.leaves = grown
        grown_pos = <Position*>realloc(self.data.tb_pos, leaves * sizeof(Position))
        if grown_pos == NULL:
            raise MemoryError("cannot allocate the batch")
        self.data.tb_pos = grown_pos
        self.data.tokens = <uint8_t*>cnp.PyArray_DATA(self.tokens_array)
        self.data.legal = <int32_t*>cnp.PyArray_DATA(self.legal_array)
        self.data.offsets = <int32_t*>cnp.PyArray_DATA(self.offsets_array)
        self.cap = leaves


# ------------------------------------------------------------------------- selection

cdef inline void _undo_path(TreeData* t, int32_t idx) noexcept nogil:
    """Remove one simulation's virtual loss from idx up to the root."""
    while idx >= 0:
        t.nodes[idx].in_flight -= 1
        idx = t.nodes[idx].parent


cdef inline bint _root_allowed(const TreeData* t, Move m) noexcept nogil:
    cdef int32_t j
    for j in range(t.n_root_allowed):
        if t.root_allowed[j] == m:
            return True
    return False


cdef inline double _m_utility(const TreeData* t, double child_m, double parent_m,
                              double q) noexcept nogil:
    """The moves-left term of a child's score (module docstring): q is the child's Q from
    the chooser's side, so a winning chooser (q > 0) gains from fewer plies left."""
    cdef double m = t.ml_slope * (child_m - parent_m)
    cdef double a = fabs(q)
    if m > t.ml_max_effect:
        m = t.ml_max_effect
    elif m < -t.ml_max_effect:
        m = -t.ml_max_effect
    if q > 0.0:
        m = -m
    if t.ml_threshold > 0.0:
        a = (a - t.ml_threshold) / (1.0 - t.ml_threshold) if a > t.ml_threshold else 0.0
    return m * (t.ml_constant + t.ml_scaled * a + t.ml_quadratic * a * a)


cdef int32_t _select(TreeData* t, int32_t idx, bint at_root) noexcept nogil:
    cdef Node* n = &t.nodes[idx]
    cdef Edge* e = &t.edges[n.first_edge]
    cdef Node* c
    cdef int32_t i, best = 0
    cdef double vl = t.virtual_loss
    cdef double started, children, visited_policy = 0.0
    cdef double q, score, denom, prior, best_score = -INFINITY
    cdef double parent_q = (-n.wl / n.visits) if n.visits > 0 else 0.0
    cdef double cpuct = t.cpuct_init + t.cpuct_factor * log((n.visits + t.cpuct_base) / t.cpuct_base)
    cdef double fpu
    cdef bint use_m = t.ml_on and fabs(parent_q) > t.ml_threshold
    cdef double parent_m = n.m
    children = <double>n.visits - n.stops + n.in_flight - 1   # this simulation not yet below
    for i in range(n.n_edges):
        if e[i].child >= 0:
            c = &t.nodes[e[i].child]
            if c.visits + c.in_flight > 0:
                visited_policy += e[i].prior
    fpu = parent_q - (t.fpu_reduction_root if at_root else t.fpu_reduction) * sqrt(visited_policy)
    cpuct *= sqrt(children if children > 1.0 else 1.0)
    for i in range(n.n_edges):
        if at_root and t.n_root_allowed > 0 and not _root_allowed(t, e[i].move):
            continue
        q = fpu
        started = 0.0
        if e[i].child >= 0:
            c = &t.nodes[e[i].child]
            started = c.visits + c.in_flight
            denom = c.visits + vl * c.in_flight
            if c.proven != PROVEN_NONE:               # exact, visited or not: no virtual loss
                q = proven_value(c.proven)
            elif denom > 0.0:
                q = (c.wl - vl * c.in_flight) / denom
        prior = e[i].prior
        if e[i].tactical and prior < t.tactical_prior:   # SearchParams.tactical_prior
            prior = t.tactical_prior
        score = q + cpuct * prior / (1.0 + started)
        if use_m and e[i].child >= 0:
            if c.proven != PROVEN_NONE:               # its exact distance
                score += _m_utility(t, proven_m(c), parent_m, q)
            elif c.visits > 0:
                score += _m_utility(t, c.m, parent_m, q)
        if score > best_score:
            best_score = score
            best = i
    return best


cdef inline void _add_leaf(BatchData* b, TreeData* t, int32_t idx, int32_t depth, int32_t row,
                           float v, float d, uint64_t key, float m) noexcept nogil:
    cdef Leaf* leaf = &b.leaves[b.n_leaves]
    leaf.tree = t
    leaf.node = idx
    leaf.depth = depth
    leaf.row = row
    leaf.v = v
    leaf.d = d
    leaf.key = key
    leaf.known = row < 0
    leaf.m = m
    leaf.tb = -1
    b.n_leaves += 1


cdef void _find_immediate_results(TreeData* t, int32_t idx, Position* pos) noexcept nogil:
    """Give the moves of a freshly expanded node whose result is known at once their
    terminal child: a mate, and a capture that leaves mate impossible for both sides.

    The network may give such a move almost no prior, and the solver only learns of a
    terminal child when selection visits it. So each move is made: one that gives check
    has the opponent's replies counted, a capture has the material tested; then unmade.
    A mating move's child becomes a TERMINAL proven win (plies 1) and idx a proven loss for
    the side that moved into it (plies 2), and the search stops looking; a capture into
    insufficient material gets a TERMINAL proven draw child (selection values it at 0 at
    once, so a losing side finds the piece it can take for a draw, and the side that would
    leave that piece sees it). idx is still evaluated: its priors serve selection if it
    becomes the root. A child the tree has no room for is skipped.
    Each edge is also marked ``tactical`` (a capture, en passant included, a promotion or a
    check) for ``SearchParams.tactical_prior``."""
    cdef Move replies[MAX_MOVES]
    cdef Undo undo
    cdef Edge* e = &t.edges[t.nodes[idx].first_edge]
    cdef int i, n_edges = t.nodes[idx].n_edges
    cdef int32_t child
    cdef uint8_t result
    cdef bint check, en_passant, done = False    # done: a mate found, or the tree full
    for i in range(n_edges):
        # a pawn's only move onto the en passant square is the capture there
        en_passant = (move_to(e[i].move) == pos.ep
                      and pos.squares[move_from(e[i].move)] % 6 == PAWN)
        make_move(pos, e[i].move, &undo)
        result = PROVEN_NONE
        check = in_check(pos)
        e[i].tactical = (check or en_passant or undo.captured != NO_PIECE
                         or move_promotion(e[i].move) != 0)
        if done:
            pass                                      # only the marks are still wanted
        elif check and generate_legal(pos, replies) == 0:
            result = PROVEN_WIN
        elif undo.captured != NO_PIECE and insufficient_material(pos):
            result = PROVEN_DRAW
        unmake_move(pos, e[i].move, &undo)
        if result == PROVEN_NONE:
            continue
        child = tree_new_node(t, idx)                 # may move t.nodes, never t.edges
        if child < 0:
            done = True
            continue
        e[i].child = child
        t.nodes[child].state = TERMINAL
        t.nodes[child].proven = result
        t.nodes[child].plies = 1
        if result == PROVEN_WIN:
            t.nodes[idx].proven = PROVEN_LOSS
            t.nodes[idx].plies = 2
            done = True


# ------------------------------------------------------------------------- tablebases

cdef inline uint32_t _material_code(const Position* p) noexcept nogil:
    """The material as search/syzygy.material_code writes it: 3 bits per count of White's
    pawns, knights, bishops, rooks, queens, then Black's (kings implied)."""
    cdef uint32_t code = 0
    cdef int c, k
    for c in range(2):
        for k in range(5):                            # PAWN .. QUEEN
            code |= (<uint32_t>zc_popcount(p.pieces[c][k]) & 7) << (3 * (5 * c + k))
    return code


cdef inline bint _tb_candidate(const TreeData* t, const Position* p) noexcept nogil:
    """A position the tablebases decide exactly: few men, no castling right, the fifty-move
    counter just reset (so the fifty-move rule counts as the tables count it), and a
    material they hold (binary search over the tree's sorted codes)."""
    cdef uint32_t code
    cdef int32_t lo = 0, hi = t.n_tb_material - 1, mid
    if p.halfmove != 0 or p.castling != 0 or zc_popcount(p.occupied) > t.tb_pieces:
        return False
    code = _material_code(p)
    while lo <= hi:
        mid = (lo + hi) >> 1
        if t.tb_material[mid] == code:
            return True
        if t.tb_material[mid] < code:
            lo = mid + 1
        else:
            hi = mid - 1
    return False


cdef object _tb_bitboards(const Position* p):
    """The position as search/syzygy.Tablebases.probe_leaf reads it."""
    return (p.color_occ[WHITE], p.color_occ[BLACK],
            p.pieces[WHITE][PAWN] | p.pieces[BLACK][PAWN],
            p.pieces[WHITE][KNIGHT] | p.pieces[BLACK][KNIGHT],
            p.pieces[WHITE][BISHOP] | p.pieces[BLACK][BISHOP],
            p.pieces[WHITE][ROOK] | p.pieces[BLACK][ROOK],
            p.pieces[WHITE][QUEEN] | p.pieces[BLACK][QUEEN],
            p.pieces[WHITE][KING] | p.pieces[BLACK][KING],
            p.turn == WHITE, p.ep if p.ep != NO_SQUARE else None)


cdef dict _probe_tablebase_leaves(BatchData* b, dict trees):
    """Probe the leaves ``_expand`` left for the tablebases (with the GIL: python-chess's
    prober is Python). ``trees``: {address of a TreeData: its Tree}. A hit makes the leaf's
    node a TERMINAL proven result (from the side that moved into it: the tables' win for
    the side to move is its loss), plies TB_PLIES + 1, and plies left its parent's less one
    (Lc0's choice: the tables give no distance), so the leaf backs up like a mate or a draw
    found by the rules. A probe that fails (a table missing behind a capture, a file found
    broken) takes the leaf out of the batch, its virtual loss undone and its node
    UNEXPANDED again, and the tablebase drops that material; the returned {tree address:
    leaves dropped} lets ``gather`` refill the batch."""
    cdef int32_t i = 0, tb
    cdef Leaf* leaf
    cdef TreeData* t
    cdef Node* n
    cdef Node* parent
    cdef Position* pos
    dropped = {}
    while i < b.n_leaves:
        leaf = &b.leaves[i]
        if leaf.tb < 0:
            i += 1
            continue
        t = leaf.tree
        tb = leaf.tb
        pos = &b.tb_pos[tb]
        n = &t.nodes[leaf.node]
        wdl = (<Tree>trees[<size_t>t]).tablebase.probe_leaf(pos.key, _tb_bitboards(pos))
        if wdl is None:
            n.state = UNEXPANDED
            _undo_path(t, leaf.node)
            b.leaves[i] = b.leaves[b.n_leaves - 1]
            b.n_leaves -= 1
            dropped[<size_t>t] = dropped.get(<size_t>t, 0) + 1
            continue
        n.state = TERMINAL
        n.proven = PROVEN_LOSS if wdl > 0 else (PROVEN_WIN if wdl < 0 else PROVEN_DRAW)
        n.plies = TB_PLIES + 1
        parent = &t.nodes[n.parent]
        n.m = parent.m - 1.0 if parent.m > 1.0 else 0.0
        leaf.v = -proven_value(n.proven)             # from the leaf's side to move
        leaf.d = 1.0 if n.proven == PROVEN_DRAW else 0.0
        leaf.m = n.m
        leaf.tb = -1
        t.tb_hits += 1
        i += 1
    b.n_tb = 0
    return dropped


cdef int _expand(TreeData* t, BatchData* b, int32_t idx, Position* pos, int32_t nh,
                 int32_t depth) noexcept nogil:
    cdef Move moves[MAX_MOVES]
    cdef float priors[MAX_MOVES]
    cdef float wdl[3]
    cdef float cached_m
    cdef float known_v
    cdef bint known, wide
    cdef int i, n_moves = generate_legal(pos, moves)
    cdef GameStatus status
    cdef bint repeated
    cdef int64_t first
    cdef int32_t row
    cdef uint64_t key
    cdef Node* n = &t.nodes[idx]
    cdef Edge* e
    status = position_status(pos, n_moves, t.hist, nh)
    if status == ONGOING and depth > 0 and repetition_count(pos, t.hist, nh) >= 1:
        status = GameStatus.THREEFOLD_REPETITION      # twofold inside tree or history: draw
    if status != ONGOING and (depth > 0 or n_moves == 0):
        n.state = TERMINAL
        n.proven = PROVEN_WIN if status == CHECKMATE else PROVEN_DRAW
        n.plies = 1
        if depth == 0:                                # the game is over at the root
            _undo_path(t, idx)
            return SIM_STOP
        if status == CHECKMATE:                       # the game is over: 0 plies left
            _add_leaf(b, t, idx, depth, -1, -1.0, 0.0, 0, 0.0)
        else:
            _add_leaf(b, t, idx, depth, -1, 0.0, 1.0, 0, 0.0)
        return SIM_KNOWN
    if t.tb_pieces > 0 and depth > 0 and _tb_candidate(t, pos):
        b.tb_pos[b.n_tb] = pos[0]       # probed by gather() once the GIL is back
        n.state = PENDING
        _add_leaf(b, t, idx, depth, -1, 0.0, 0.0, 0, -1.0)
        b.leaves[b.n_leaves - 1].tb = b.n_tb
        b.n_tb += 1
        return SIM_KNOWN
    first = tree_new_edges(t, n_moves)
    if first < 0:
        _undo_path(t, idx)
        return SIM_STOP
    n.first_edge = <int32_t>first
    n.n_edges = <uint16_t>n_moves
    e = &t.edges[first]
    for i in range(n_moves):
        e[i].move = moves[i]
        e[i].prior = 0.0
        e[i].tactical = False
        e[i].child = -1
    _find_immediate_results(t, idx, pos)
    n = &t.nodes[idx]                                 # the nodes may have moved
    wide = t.known_win_root
    known = t.known_endgames and known_win_value(pos, wide, &known_v)
    if known and wide:          # the whole tree is a known win: no network, many more nodes
        for i in range(n_moves):
            e[i].prior = 1.0 / n_moves
        n.state = EXPANDED
        _add_leaf(b, t, idx, depth, -1, known_v, 0.0, 0, -1.0)
        return SIM_KNOWN
    repeated = repetition_count(pos, t.hist, nh) > 0
    key = nn_cache_key(pos, repeated)
    if t.tt != NULL and tt_probe(t.tt, key, n_moves, priors, wdl, &cached_m):
        for i in range(n_moves):
            e[i].prior = priors[i]
        n.state = EXPANDED
        t.cache_hits += 1
        if cached_m >= 0.0:
            t.ml_seen = True
        if known:
            _add_leaf(b, t, idx, depth, -1, known_v, 0.0, 0, cached_m)
        else:
            _add_leaf(b, t, idx, depth, -1, wdl[2] - wdl[0], wdl[1], 0, cached_m)
        return SIM_KNOWN
    row = b.n_rows
    encode_position(pos, repeated, b.tokens + row * SEQ_LEN)
    for i in range(n_moves):
        b.legal[b.n_legal + i] = move_index(pos, moves[i])
    b.n_legal += n_moves
    b.n_rows += 1
    b.offsets[b.n_rows] = <int32_t>b.n_legal
    n.state = PENDING
    t.nn_evals += 1
    _add_leaf(b, t, idx, depth, row, known_v if known else 0.0, 0.0, key, -1.0)
    b.leaves[b.n_leaves - 1].known = known           # the network gives only the priors
    return SIM_EVAL


cdef int _simulate(TreeData* t, BatchData* b) noexcept nogil:
    """Walk from the root to a leaf, adding virtual loss on the way down."""
    cdef Position pos = t.root_pos
    cdef int32_t nh = t.n_hist, idx = 0, depth = 0, e, child
    cdef Node* n
    cdef Edge* edge
    cdef Undo undo
    cdef double v
    while True:
        n = &t.nodes[idx]
        n.in_flight += 1
        if depth > 0 and n.proven != PROVEN_NONE:     # terminal or solved: exact value
            v = -proven_value(n.proven)               # from the leaf's side to move
            _add_leaf(b, t, idx, depth, -1, <float>v, 1.0 if n.proven == PROVEN_DRAW else 0.0, 0,
                      proven_m(n))                    # its exact distance to the end
            return SIM_KNOWN
        if n.state == UNEXPANDED:
            return _expand(t, b, idx, &pos, nh, depth)
        if n.state != EXPANDED:                       # PENDING: a collision; TERMINAL root
            _undo_path(t, idx)
            if n.state == PENDING:
                t.collisions += 1
                return SIM_COLLISION
            return SIM_STOP
        e = _select(t, idx, depth == 0)
        edge = &t.edges[n.first_edge + e]
        if edge.child < 0:
            child = tree_new_node(t, idx)             # may move t.nodes, never t.edges
            if child < 0:
                _undo_path(t, idx)
                return SIM_STOP
            edge.child = child
        if not tree_reserve_hist(t, nh + 1):
            t.full = True
            _undo_path(t, idx)
            return SIM_STOP
        t.hist[nh] = repetition_key(&pos)
        nh += 1
        make_move(&pos, edge.move, &undo)
        idx = edge.child
        depth += 1


cdef void _gather(TreeData* t, BatchData* b, int32_t max_leaves) noexcept nogil:
    cdef int32_t got = 0, collisions = 0
    cdef int r
    # Whether the root is a known win, once per gather: _expand widens the known values
    # below it, and the moves-left utility is off there (the network is not asked and
    # known_endgames.pxd steers the search instead; it needs plies left from the evaluator).
    t.known_win_root = t.known_endgames and is_known_win(&t.root_pos)
    t.ml_on = t.ml_seen and t.ml_max_effect > 0.0 and not t.known_win_root
    while got < max_leaves and collisions < t.max_collisions and not t.full:
        if t.playouts + t.nodes[0].in_flight >= t.target or t.nodes[0].state == PENDING:
            break
        r = _simulate(t, b)
        if r == SIM_STOP:
            break
        if r == SIM_COLLISION:
            collisions += 1
        else:
            got += 1


# ------------------------------------------------------------------------- backup

cdef bint _try_prove(TreeData* t, int32_t idx) noexcept nogil:
    """Prove idx from its children if possible (MCTS-solver); True when it got proven."""
    cdef Node* n = &t.nodes[idx]
    cdef Edge* e = &t.edges[n.first_edge]
    cdef Node* c
    cdef int32_t i, win_plies = 32767, loss_plies = 0, draw_plies = 32767
    cdef bint all_proven = True, any_draw = False
    if n.state != EXPANDED:
        return False
    for i in range(n.n_edges):
        if e[i].child < 0:
            all_proven = False
            continue
        c = &t.nodes[e[i].child]
        if c.proven == PROVEN_WIN:
            if c.plies < win_plies:
                win_plies = c.plies
        elif c.proven == PROVEN_DRAW:
            any_draw = True
            if c.plies < draw_plies:
                draw_plies = c.plies
        elif c.proven == PROVEN_LOSS:
            if c.plies > loss_plies:
                loss_plies = c.plies
        else:
            all_proven = False
    if win_plies < 32767:                 # the side to move here wins: a loss for the mover
        n.proven = PROVEN_LOSS
        n.plies = <int16_t>(win_plies + 1 if win_plies < 32766 else 32766)
    elif not all_proven:
        return False
    elif any_draw:
        n.proven = PROVEN_DRAW
        n.plies = <int16_t>(draw_plies + 1 if draw_plies < 32766 else 32766)
    else:                                 # every move loses: a win for the mover
        n.proven = PROVEN_WIN
        n.plies = <int16_t>(loss_plies + 1 if loss_plies < 32766 else 32766)
    n.wl = proven_value(n.proven) * n.visits
    n.d = n.visits if n.proven == PROVEN_DRAW else 0.0
    if n.plies < TB_PLIES:
        n.m = n.plies - 1.0               # plies left from its own position, exactly
    return True


cdef void _backup(Leaf* leaf) noexcept nogil:
    cdef TreeData* t = leaf.tree
    cdef int32_t idx = leaf.node
    cdef Node* n
    cdef double v = -leaf.v            # from the side that moved into the leaf
    cdef double d = leaf.d
    cdef double m = leaf.m if leaf.m >= 0.0 else 0.0   # plies left from the node's position
    t.playouts += 1
    if t.nodes[idx].proven == PROVEN_NONE:   # an exact leaf (mate, draw, solved) has no depth
        t.depth_sum += leaf.depth
        t.depth_playouts += 1
    if leaf.depth > t.max_depth:
        t.max_depth = leaf.depth
    t.nodes[idx].stops += 1
    while idx >= 0:
        n = &t.nodes[idx]
        if n.proven != PROVEN_NONE:    # solved: its exact value replaces the estimate
            v = proven_value(n.proven)
            d = 1.0 if n.proven == PROVEN_DRAW else 0.0
            m = proven_m(n)
        n.in_flight -= 1
        n.visits += 1
        n.wl += v
        n.d += d
        n.m += <float>((m - n.m) / n.visits)
        v = -v
        m += 1.0                       # one ply more from the parent's position
        idx = n.parent
    idx = leaf.node
    if t.nodes[idx].proven != PROVEN_NONE:
        idx = t.nodes[idx].parent
        while idx >= 0 and t.nodes[idx].proven == PROVEN_NONE and _try_prove(t, idx):
            idx = t.nodes[idx].parent


cdef void _apply(BatchData* b, const float* priors, const float* wdl,
                 const float* moves_left) noexcept nogil:
    """Write the evaluator's answers into the trees (``moves_left`` NULL: none given) and
    back every leaf up."""
    cdef int32_t i, j, off
    cdef Leaf* leaf
    cdef Node* n
    cdef Edge* e
    cdef const float* w
    for i in range(b.n_leaves):
        leaf = &b.leaves[i]
        if leaf.row < 0:
            continue
        n = &leaf.tree.nodes[leaf.node]
        e = &leaf.tree.edges[n.first_edge]
        off = b.offsets[leaf.row]
        for j in range(n.n_edges):
            e[j].prior = priors[off + j]
        n.state = EXPANDED
        w = wdl + 3 * leaf.row
        if not leaf.known:
            leaf.v = w[2] - w[0]
            leaf.d = w[1]
        if moves_left != NULL:
            leaf.m = moves_left[leaf.row] if moves_left[leaf.row] > 0.0 else 0.0
            leaf.tree.ml_seen = True
        if leaf.tree.tt != NULL:
            tt_store(leaf.tree.tt, leaf.key, n.n_edges, priors + off, w, leaf.m)
    for i in range(b.n_leaves):
        _backup(&b.leaves[i])


cdef void _abandon(BatchData* b) noexcept nogil:
    """Undo a batch whose evaluation failed: no visit is added, no virtual loss is left."""
    cdef int32_t i
    cdef Leaf* leaf
    cdef Node* n
    for i in range(b.n_leaves):
        leaf = &b.leaves[i]
        n = &leaf.tree.nodes[leaf.node]
        if leaf.row >= 0:
            n.state = UNEXPANDED           # its edges stay allocated but unreferenced
            n.first_edge = -1
            n.n_edges = 0
            leaf.tree.nn_evals -= 1
        _undo_path(leaf.tree, leaf.node)


# ------------------------------------------------------------------------- known wins

def known_win(Board board not None, bint wide=False):
    """The value (win - loss, from the side to move) the search gives ``board`` as a known
    win against a bare king (known_endgames.pxd), or None when it is not one; ``wide``: the
    scale used below a root that is itself a known win (0.10-0.99, else 0.90-0.99)."""
    cdef float v
    if known_win_value(&board.pos, wide, &v):
        return float(v)
    return None


def shown_q(double q, bint known_win_root):
    """The Q reported for a root move: the search's own, except below a known-win root
    (``known_win``), whose values spread over 0.10-0.99 to steer the search; reported on the
    network's scale for won positions (0.90-0.99; the bare king's side: negated), so that a
    GUI shows KRvK as won, not as +0.4. Values under 0.10 (a draw near: the rook hangs) are
    shown as they are. The scales are known_endgames.pxd's."""
    return known_win_shown_q(q) if known_win_root else q


# ------------------------------------------------------------------------- one round
#
# A round is three steps, also callable one by one so that several threads can keep
# batches of one tree at the evaluator at once (UCI ``Threads``; zerochess.search.parallel):
# ``gather`` (tree, nogil) -> ``evaluate_batch`` (evaluator only, any thread) ->
# ``apply_batch`` or ``abandon_batch`` (tree, nogil). Between gather and apply the batch's
# leaves are PENDING and its paths carry virtual loss, so a later gather collides with them
# instead of expanding them again. One thread at a time may gather or apply on a tree (and
# its transposition table): the caller holds a lock for that; evaluations need none.

def gather(list trees, Batch batch not None, int leaves_per_tree=0, int fill_to=0):
    """Gather one batch's leaves from ``trees`` into ``batch`` (the first step of
    ``run_round``, same arguments); return the number of leaves gathered (0: no tree had
    anything left to do now). ``batch.rows`` of them wait for the evaluator: PENDING, with
    virtual loss on their paths, until ``apply_batch`` or ``abandon_batch``.
    The batch must be empty: new, applied or abandoned."""
    cdef int32_t n = len(trees), i, total = 0, per
    cdef Tree tree
    cdef BatchData* b = &batch.data
    cdef TreeData** ptrs
    cdef int32_t* quota
    if b.n_leaves != 0:
        raise RuntimeError("the batch still holds leaves: apply or abandon it first")
    if n == 0:
        return 0
    ptrs = <TreeData**>malloc(n * sizeof(TreeData*))
    quota = <int32_t*>malloc(n * sizeof(int32_t))
    if ptrs == NULL or quota == NULL:
        free(ptrs)
        free(quota)
        raise MemoryError()
    try:
        for i in range(n):
            tree = <Tree?>trees[i]
            ptrs[i] = &tree.data
            per = leaves_per_tree if leaves_per_tree > 0 else tree.data.minibatch
            quota[i] = per
            total += per
        batch.reserve(2 * total if fill_to > 0 else total)
        b = &batch.data
        b.n_rows = 0
        b.n_leaves = 0
        b.n_legal = 0
        b.n_tb = 0
        b.offsets[0] = 0
        with nogil:
            for i in range(n):
                _gather(ptrs[i], b, quota[i])
            if fill_to > total:
                fill_to = total
            for i in range(n):
                if b.n_rows >= fill_to:
                    break
                _gather(ptrs[i], b, min(quota[i], fill_to - b.n_rows))
        while b.n_tb > 0:                  # leaves for the tablebases (search/syzygy.py)
            dropped = _probe_tablebase_leaves(b, {<size_t>ptrs[i]: trees[i] for i in range(n)})
            if not dropped:
                break
            for i in range(n):             # a failed probe dropped its material: refill
                quota[i] = dropped.get(<size_t>ptrs[i], 0)
                if quota[i]:
                    (<Tree>trees[i]).set_tablebase((<Tree>trees[i]).tablebase)
            with nogil:
                for i in range(n):
                    if quota[i]:
                        _gather(ptrs[i], b, quota[i])
        return b.n_leaves
    finally:
        free(ptrs)
        free(quota)


def evaluate_batch(evaluator, Batch batch not None):
    """The evaluator's ``(priors, wdl, moves_left)`` for the batch's rows, as C-contiguous
    float32 arrays of the right shapes (ValueError otherwise), ``moves_left`` None when the
    evaluator gives two outputs (no moves-left head); ``(None, None, None)`` without rows.

    Reads only the batch's buffers, never a tree: one thread may run it while another
    gathers or backs up a batch of the same tree."""
    cdef int32_t rows = batch.data.n_rows
    cdef int64_t n_legal = batch.data.n_legal
    if rows == 0:
        return None, None, None
    out = evaluator.evaluate(batch.tokens_array[:rows], batch.legal_array[:n_legal],
                             batch.offsets_array[:rows + 1])
    if not isinstance(out, (tuple, list)) or len(out) not in (2, 3):
        raise ValueError("evaluator must return (priors, wdl) or (priors, wdl, moves_left)")
    priors = np.ascontiguousarray(out[0], dtype=np.float32)
    wdl = np.ascontiguousarray(out[1], dtype=np.float32)
    if priors.shape != (n_legal,) or wdl.shape != (rows, 3):
        raise ValueError(
            f"evaluator returned priors {priors.shape} and wdl {wdl.shape}, "
            f"expected ({n_legal},) and ({rows}, 3)")
    moves_left = None
    if len(out) == 3 and out[2] is not None:
        moves_left = np.ascontiguousarray(out[2], dtype=np.float32)
        if moves_left.shape != (rows,):
            raise ValueError(f"evaluator returned moves_left {moves_left.shape}, expected ({rows},)")
    return priors, wdl, moves_left


def apply_batch(Batch batch not None, priors=None, wdl=None, moves_left=None):
    """Write the evaluator's answers (from ``evaluate_batch``; ``moves_left`` None when it
    gave no plies left) into the trees and back every leaf of the batch up; return the
    number of leaves backed up. The batch is empty after."""
    cdef BatchData* b = &batch.data
    cdef const float* priors_ptr = NULL
    cdef const float* wdl_ptr = NULL
    cdef const float* ml_ptr = NULL
    cdef int32_t leaves = b.n_leaves
    if b.n_rows > 0:     # the pointers below are read without bounds checks: check all
        if not (isinstance(priors, np.ndarray) and isinstance(wdl, np.ndarray)
                and priors.dtype == np.float32 and wdl.dtype == np.float32
                and priors.flags.c_contiguous and wdl.flags.c_contiguous
                and priors.shape == (b.n_legal,) and wdl.shape == (b.n_rows, 3)):
            raise ValueError("apply_batch needs evaluate_batch's arrays for this batch")
        priors_ptr = <const float*>cnp.PyArray_DATA(priors)
        wdl_ptr = <const float*>cnp.PyArray_DATA(wdl)
        if moves_left is not None:
            if not (isinstance(moves_left, np.ndarray) and moves_left.dtype == np.float32
                    and moves_left.flags.c_contiguous and moves_left.shape == (b.n_rows,)):
                raise ValueError("apply_batch needs evaluate_batch's moves_left for this batch")
            ml_ptr = <const float*>cnp.PyArray_DATA(moves_left)
    with nogil:
        _apply(b, priors_ptr, wdl_ptr, ml_ptr)
        b.n_leaves = 0
        b.n_rows = 0
        b.n_legal = 0
        b.n_tb = 0
    return leaves


def abandon_batch(Batch batch not None):
    """Undo a gathered batch (its evaluation failed): no visit is added, no virtual loss
    and no PENDING leaf is left. The batch is empty after."""
    cdef BatchData* b = &batch.data
    with nogil:
        _abandon(b)
        b.n_leaves = 0
        b.n_rows = 0
        b.n_legal = 0
        b.n_tb = 0


def run_round(list trees, evaluator, Batch batch=None, int leaves_per_tree=0, int fill_to=0):
    """Run one batch over ``trees`` (zerochess.search.tree.Tree objects); return the number
    of leaves backed up (0 when no tree had anything left to do).

    Each tree contributes up to ``leaves_per_tree`` leaves (default: its own minibatch)
    until it reaches the playout target set by ``Tree.begin``. The evaluator is called at
    most once, for all trees' leaves together; terminal positions and cache hits need no
    evaluation. ``batch`` holds the buffers between rounds (a fresh one if None).

    ``fill_to`` > 0 refills the batch: when the first pass leaves fewer than ``fill_to``
    positions to evaluate (trees that reached their target, a root waiting for its first
    evaluation, cache hits), a second pass lets the trees with playouts left gather up to
    ``leaves_per_tree`` more each until the batch holds ``fill_to``. A tree then has at
    most twice its usual leaves in flight, which bounds what virtual loss changes in its
    search; self-play's asynchronous actors use it to keep the evaluator's batch full.
    """
    if batch is None:
        batch = Batch()
    if gather(trees, batch, leaves_per_tree, fill_to) == 0:
        return 0
    try:
        priors, wdl, moves_left = evaluate_batch(evaluator, batch)
    except BaseException:
        abandon_batch(batch)
        raise
    return apply_batch(batch, priors, wdl, moves_left)
