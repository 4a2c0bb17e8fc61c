# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The search tree's storage: flat node and edge arrays, tree reuse, and read-out.

Nodes and edges are C structs (tree.pxd) in two arrays grown with ``realloc`` (doubling)
up to ``SearchParams.tree_mb``; node 0 is always the root. A node's edges are contiguous,
written once when the node is expanded; an edge's child node is created only when the
edge is first chosen, so a node costs 48 bytes and an edge 12 (Leela's layout, roughly).

Tree reuse: ``set_position`` recognises a board that extends the previous root by known
moves, walks those moves down the tree and copies the subtree under the new root into
fresh arrays in breadth-first order (so parents keep lower indices than their children);
everything else is freed. The statistics of the kept subtree are unchanged.

This module also reads results out (best child, PV, root statistics, invariants) with the
GIL held: once per report, never per node visit. The hot loop is in mcts.pyx.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport INFINITY
from libc.stdint cimport uint64_t, uint32_t, int32_t, int64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memset
from zerochess.chess.board cimport Board, Move, MAX_MOVES, generate_legal
from zerochess.chess.board import move_to_uci
from zerochess.chess.encoding cimport move_index
from zerochess.search.tt cimport TranspositionTable

from zerochess.search.params import SearchParams
from zerochess.search.sampling import sample_by_visits

cnp.import_array()

TABLEBASE_PLIES = TB_PLIES   # tree.pxd: a proof's plies from here on are a tablebase result

cdef int32_t INITIAL_NODES = 4096
cdef int64_t INITIAL_EDGES = 65536


cdef int32_t tree_new_node(TreeData* t, int32_t parent) noexcept nogil:
    cdef int64_t cap, limit
    cdef Node* grown
    cdef Node* n
    if t.n_nodes == t.cap_nodes:
        cap = 2 * <int64_t>t.cap_nodes
        limit = (t.max_bytes - t.cap_edges * <int64_t>sizeof(Edge)) // <int64_t>sizeof(Node)
        if cap > limit:
            cap = limit
        if cap > 2147483647:
            cap = 2147483647
        if cap <= t.n_nodes:
            t.full = True
            return -1
        grown = <Node*>realloc(t.nodes, cap * sizeof(Node))
        if grown == NULL:
            t.full = True
            return -1
        t.nodes = grown
        t.cap_nodes = <int32_t>cap
    n = &t.nodes[t.n_nodes]
    memset(n, 0, sizeof(Node))
    n.parent = parent
    n.first_edge = -1
    t.n_nodes += 1
    return t.n_nodes - 1


cdef int64_t tree_new_edges(TreeData* t, int n) noexcept nogil:
    cdef int64_t cap, limit, first
    cdef Edge* grown
    if t.n_edges + n > t.cap_edges:
        cap = 2 * t.cap_edges
        if cap < t.n_edges + n:
            cap = t.n_edges + n
        limit = (t.max_bytes - t.cap_nodes * <int64_t>sizeof(Node)) // <int64_t>sizeof(Edge)
        if cap > limit:
            cap = limit
        if cap > 2147483647:
            cap = 2147483647
        if cap < t.n_edges + n:
            t.full = True
            return -1
        grown = <Edge*>realloc(t.edges, cap * sizeof(Edge))
        if grown == NULL:
            t.full = True
            return -1
        t.edges = grown
        t.cap_edges = cap
    first = t.n_edges
    t.n_edges += n
    return first


cdef bint tree_reserve_hist(TreeData* t, int32_t n) noexcept nogil:
    cdef int32_t cap
    cdef uint64_t* grown
    if n <= t.cap_hist:
        return True
    cap = 2 * t.cap_hist if 2 * t.cap_hist > n else n + 64
    grown = <uint64_t*>realloc(t.hist, cap * sizeof(uint64_t))
    if grown == NULL:
        return False
    t.hist = grown
    t.cap_hist = cap
    return True


cdef double proven_value(uint8_t proven) noexcept nogil:
    """Exact value of a proven node from the side that moved into it."""
    if proven == PROVEN_WIN:
        return 1.0
    if proven == PROVEN_LOSS:
        return -1.0
    return 0.0


cdef inline int _rank(const Node* c) noexcept nogil:
    # proven wins first, then everything unproven or drawn, proven losses last
    if c == NULL:
        return 1
    if c.proven == PROVEN_WIN:
        return 2
    if c.proven == PROVEN_LOSS:
        return 0
    return 1


cdef bint _edge_better(const TreeData* t, const Edge* a, const Edge* b) noexcept nogil:
    """Is edge a a better move to play than edge b? Proven wins, shortest first; then most
    visits, ties by Q (exact for a proven unvisited child); proven losses last, longest
    first."""
    cdef const Node* ca = &t.nodes[a.child] if a.child >= 0 else NULL
    cdef const Node* cb = &t.nodes[b.child] if b.child >= 0 else NULL
    cdef int ra = _rank(ca), rb = _rank(cb)
    cdef double qa, qb
    cdef uint32_t va = ca.visits if ca != NULL else 0
    cdef uint32_t vb = cb.visits if cb != NULL else 0
    if ra != rb:
        return ra > rb
    if ra == 2 and ca.plies != cb.plies:
        return ca.plies < cb.plies
    if ra == 0 and ca.plies != cb.plies:
        return ca.plies > cb.plies
    if va != vb:
        return va > vb
    qa = _known_q(ca, va)
    qb = _known_q(cb, vb)
    return qa > qb


cdef inline double _known_q(const Node* c, uint32_t visits) noexcept nogil:
    """Q of a child for ranking: its mean, or its exact value when proven but unvisited
    (a terminal child found at expansion), else -infinity."""
    if visits > 0:
        return c.wl / visits
    if c != NULL and c.proven != PROVEN_NONE:
        return proven_value(c.proven)
    return -INFINITY


cdef int32_t best_child_edge(const TreeData* t, int32_t node) noexcept nogil:
    """Offset of the best edge of an expanded node (see _edge_better), -1 if none."""
    cdef const Node* n = &t.nodes[node]
    cdef const Edge* e
    cdef int32_t i, best = -1
    if n.first_edge < 0 or n.state != EXPANDED or n.n_edges == 0:
        return -1
    e = &t.edges[n.first_edge]
    best = 0
    for i in range(1, n.n_edges):
        if _edge_better(t, &e[i], &e[best]):
            best = i
    return best


cdef class Tree:
    """One search tree: a root position, its nodes and edges, and this search's counters.

    Build it once per game (or per engine) and call ``set_position`` before each search;
    the search functions live in ``zerochess.search.mcts``. ``tt`` is a shared
    ``TranspositionTable`` or None (no cache).
    """

    def __cinit__(self):
        memset(&self.data, 0, sizeof(TreeData))

    def __init__(self, params=None, TranspositionTable tt=None):
        self.params = params if params is not None else SearchParams()
        self.tt = tt
        self.data.tt = &tt.data if tt is not None else NULL
        self.configure(self.params)
        self.data.nodes = <Node*>malloc(INITIAL_NODES * sizeof(Node))
        self.data.edges = <Edge*>malloc(INITIAL_EDGES * sizeof(Edge))
        self.data.hist = <uint64_t*>malloc(256 * sizeof(uint64_t))
        if self.data.nodes == NULL or self.data.edges == NULL or self.data.hist == NULL:
            raise MemoryError("cannot allocate the search tree")
        self.data.cap_nodes = INITIAL_NODES
        self.data.cap_edges = INITIAL_EDGES
        self.data.cap_hist = 256
        self.root_board = None
        self.tablebase = None
        self._reset()

    def __dealloc__(self):
        free(self.data.nodes)
        free(self.data.edges)
        free(self.data.hist)
        free(self.data.tb_material)

    def configure(self, params):
        """Copy a SearchParams' search constants into the tree (takes effect at once)."""
        self.params = params
        self.data.cpuct_init = params.cpuct_init
        self.data.cpuct_factor = params.cpuct_factor
        self.data.cpuct_base = params.cpuct_base
        self.data.fpu_reduction = params.fpu_reduction
        self.data.fpu_reduction_root = params.root_fpu_reduction
        self.data.virtual_loss = params.virtual_loss
        self.data.tactical_prior = params.tactical_prior
        self.data.minibatch = params.minibatch
        self.data.max_collisions = params.max_collisions
        self.data.known_endgames = params.known_endgames
        self.data.ml_max_effect = params.moves_left_max_effect
        self.data.ml_threshold = params.moves_left_threshold
        self.data.ml_slope = params.moves_left_slope
        self.data.ml_constant = params.moves_left_constant_factor
        self.data.ml_scaled = params.moves_left_scaled_factor
        self.data.ml_quadratic = params.moves_left_quadratic_factor
        self.data.max_bytes = <int64_t>params.tree_mb * 1048576
        if self.data.max_bytes < INITIAL_NODES * sizeof(Node) + INITIAL_EDGES * sizeof(Edge):
            self.data.max_bytes = INITIAL_NODES * sizeof(Node) + INITIAL_EDGES * sizeof(Edge)

    def set_tablebase(self, tablebase):
        """Probe ``tablebase`` (a search/syzygy.Tablebases, or None: off) at the leaves: a
        position it holds with a fifty-move counter of 0 is a proven result (mcts.pyx).
        Call it again after the tablebase lost a table (a probe failed)."""
        cdef uint32_t* codes = NULL
        cdef int32_t i, n = 0
        wanted = sorted(tablebase.material_codes()) if tablebase is not None else []
        if wanted:
            codes = <uint32_t*>malloc(len(wanted) * sizeof(uint32_t))
            if codes == NULL:
                raise MemoryError("cannot allocate the tablebase materials")
            for i in range(len(wanted)):
                codes[i] = wanted[i]
            n = len(wanted)
        free(self.data.tb_material)
        self.data.tb_material = codes
        self.data.n_tb_material = n
        self.data.tb_pieces = tablebase.probe_limit if n else 0
        self.tablebase = tablebase if n else None

    cdef void _reset(self) except *:
        self.data.n_root_allowed = 0
        self.data.n_nodes = 0
        self.data.n_edges = 0
        self.data.full = False
        self.data.ml_seen = False
        self.root_noised = False
        tree_new_node(&self.data, -1)

    def clear(self):
        """Forget the tree (UCI ``ucinewgame``); the next set_position starts afresh."""
        self._reset()
        self.root_board = None

    def set_position(self, Board board, bint reuse=True):
        """Make ``board`` the root. Returns True when the previous tree's subtree was kept:
        the board extends the previous root position by moves whose nodes exist."""
        cdef Board old = self.root_board
        cdef Board b
        cdef int32_t k, i, j, idx = 0
        cdef Node* n
        cdef bint kept = False
        if reuse and old is not None:
            k = board.ply - old.ply
            if k >= 0:
                b = board.copy()
                for i in range(k):
                    b.pop()
                kept = b.fen() == old.fen()
                for i in range(old.ply if kept else 0):
                    if board.history[i] != old.history[i]:
                        kept = False
                        break
                if kept:
                    for i in range(old.ply, board.ply):
                        n = &self.data.nodes[idx]
                        if n.state != EXPANDED:
                            kept = False
                            break
                        for j in range(n.n_edges):
                            if self.data.edges[n.first_edge + j].move == board.moves[i]:
                                break
                        else:
                            kept = False
                            break
                        idx = self.data.edges[n.first_edge + j].child
                        if idx < 0:
                            kept = False
                            break
                    if kept and self.data.nodes[idx].state != EXPANDED:
                        kept = False
        if kept:
            if idx != 0:
                self._compact(idx)
                self.root_noised = False
        else:
            self._reset()
        self.root_board = board.copy()
        self.data.root_pos = board.pos
        if not tree_reserve_hist(&self.data, board.ply + 256):
            raise MemoryError("cannot allocate the repetition history")
        for i in range(board.ply):
            self.data.hist[i] = board.history[i]
        self.data.n_hist = board.ply
        return kept

    def _compact(self, int32_t new_root):
        """Keep only the subtree under new_root, copied breadth-first into new arrays."""
        cdef TreeData* t = &self.data
        cdef Node* nodes = <Node*>malloc(t.cap_nodes * sizeof(Node))
        cdef Edge* edges = <Edge*>malloc(t.cap_edges * sizeof(Edge))
        cdef int32_t* order = <int32_t*>malloc(t.n_nodes * sizeof(int32_t))
        cdef int32_t head = 0, tail = 1, old, child
        cdef int64_t n_edges = 0, j
        cdef Node* n
        if nodes == NULL or edges == NULL or order == NULL:
            free(nodes)
            free(edges)
            free(order)
            raise MemoryError("cannot compact the search tree")
        order[0] = new_root
        with nogil:
            while head < tail:
                old = order[head]
                n = &nodes[head]
                n[0] = t.nodes[old]
                if head == 0:
                    n.parent = -1
                if n.first_edge >= 0:
                    memcpy(&edges[n_edges], &t.edges[n.first_edge], n.n_edges * sizeof(Edge))
                    n.first_edge = <int32_t>n_edges
                    for j in range(n_edges, n_edges + n.n_edges):
                        child = edges[j].child
                        if child >= 0:
                            t.nodes[child].parent = head       # the child's new parent index
                            order[tail] = child
                            edges[j].child = tail
                            tail += 1
                    n_edges += n.n_edges
                head += 1
        free(order)
        free(t.nodes)
        free(t.edges)
        t.nodes = nodes
        t.edges = edges
        t.n_nodes = tail
        t.n_edges = n_edges

    # ---------------------------------------------------------------- read-out

    def begin(self, long long playouts):
        """Start a new search of ``playouts`` visits: reset this search's counters."""
        self.data.target = playouts
        self.data.playouts = 0
        self.data.nn_evals = 0
        self.data.cache_hits = 0
        self.data.collisions = 0
        self.data.depth_sum = 0
        self.data.depth_playouts = 0
        self.data.max_depth = 0
        self.data.tb_hits = 0

    def restrict_root(self, moves=()):
        """Let selection at the root take only these moves (UCI ``go searchmoves``); an
        empty sequence lifts the restriction. Moves are UCI strings legal at the root."""
        cdef int32_t n = 0
        for uci in dict.fromkeys(moves):
            if n >= 256:
                break
            self.data.root_allowed[n] = self.root_board.parse_uci(uci)
            n += 1
        self.data.n_root_allowed = n

    def add_playouts(self, long long playouts):
        """Raise this search's playout target (self-play: a fast search becoming full)."""
        self.data.target += playouts

    @property
    def done(self):
        """This search reached its playout target, the tree is full, or the root is over."""
        return (self.data.playouts >= self.data.target or self.data.full
                or self.data.nodes[0].state == TERMINAL)

    @property
    def root_expanded(self):
        return self.data.nodes[0].state == EXPANDED

    @property
    def root_over(self):
        """The root position has no legal moves (known once the search tried to expand it)."""
        return self.data.nodes[0].state == TERMINAL

    def stats(self):
        """This search's counters and the tree's size, as a dict of Python numbers."""
        cdef Node* r = &self.data.nodes[0]
        return {
            "playouts": int(self.data.playouts),
            "target": int(self.data.target),
            "nn_evals": int(self.data.nn_evals),
            "cache_hits": int(self.data.cache_hits),
            "collisions": int(self.data.collisions),
            # the average depth of the playouts whose leaf was not valued exactly (a mate, a
            # draw, a solved node): they say how deep the search looked at unknown positions
            "depth": ((<double>self.data.depth_sum / self.data.depth_playouts)
                      if self.data.depth_playouts else 0.0),
            "seldepth": int(self.data.max_depth),
            "root_visits": int(r.visits),
            "tree_nodes": int(self.data.n_nodes),
            "tree_edges": int(self.data.n_edges),
            "tree_bytes": int(self.data.cap_nodes * sizeof(Node) + self.data.cap_edges * sizeof(Edge)),
            "tree_full": bool(self.data.full),
            "tb_hits": int(self.data.tb_hits),
        }

    def root_wdl(self):
        """(q, (l, d, w)) of the root from its side to move, or None before any visit; WDL in
        (loss, draw, win) order, as the evaluator and every report give it."""
        cdef Node* r = &self.data.nodes[0]
        if r.visits == 0:
            return None
        q = -r.wl / r.visits
        d = r.d / r.visits
        return q, ((1 - q - d) / 2, d, (1 + q - d) / 2)

    def root_edges(self):
        """Per root move, in generation order: a dict of equal-length arrays.

        ``moves`` (UCI), ``index`` (policy index, int32), ``prior``, ``visits``, ``q`` and
        ``d`` (means from the root's side to move; NaN when unvisited), ``proven``
        (0 none, 1 win, 2 draw, 3 loss, for the root's side to move), ``plies``, and
        ``m``: the plies left from the move's position (the moves-left head's, backed up;
        a proven move's exact distance; NaN when unvisited and unproven), ``tactical``
        (a capture, a promotion or a check: ``SearchParams.tactical_prior`` applies)."""
        cdef Node* r = &self.data.nodes[0]
        cdef int i, n = r.n_edges if r.first_edge >= 0 else 0
        cdef Edge* e
        cdef Node* c
        out = {
            "moves": [],
            "index": np.empty(n, dtype=np.int32),
            "prior": np.empty(n, dtype=np.float32),
            "visits": np.zeros(n, dtype=np.int64),
            "q": np.full(n, np.nan),
            "d": np.full(n, np.nan),
            "proven": np.zeros(n, dtype=np.uint8),
            "plies": np.zeros(n, dtype=np.int32),
            "m": np.full(n, np.nan),
            "tactical": np.zeros(n, dtype=bool),
        }
        for i in range(n):
            e = &self.data.edges[r.first_edge + i]
            out["moves"].append(move_to_uci(e.move, self.root_board.chess960))
            out["index"][i] = move_index(&self.data.root_pos, e.move)
            out["prior"][i] = e.prior
            out["tactical"][i] = e.tactical
            if e.child >= 0:
                c = &self.data.nodes[e.child]
                out["visits"][i] = c.visits
                if c.visits:
                    out["q"][i] = c.wl / c.visits
                    out["d"][i] = c.d / c.visits
                    out["m"][i] = c.m
                if c.proven != PROVEN_NONE:
                    out["m"][i] = proven_m(c)
                out["proven"][i] = c.proven
                out["plies"][i] = c.plies
        return out

    def ranked_root_edges(self, int k):
        """Offsets of the k best root edges, best first (the order used for bestmove)."""
        cdef Node* r = &self.data.nodes[0]
        cdef int i, j, n = r.n_edges if r.state == EXPANDED else 0
        cdef Edge* e = &self.data.edges[r.first_edge] if n else NULL
        order = list(range(n))
        if self.data.n_root_allowed > 0:   # `searchmoves`: report only the searched moves
            allowed = {self.data.root_allowed[j] for j in range(self.data.n_root_allowed)}
            order = [i for i in order if e[i].move in allowed]
            n = len(order)
        # selection sort of the first k: n <= 218 and k is small
        for i in range(min(k, n)):
            for j in range(i + 1, n):
                if _edge_better(&self.data, &e[order[j]], &e[order[i]]):
                    order[i], order[j] = order[j], order[i]
        return order[:min(k, n)]

    def set_root_priors(self, priors):
        """Replace the root priors (Dirichlet noise); ``priors`` aligned with root_edges()."""
        cdef Node* r = &self.data.nodes[0]
        cdef int i
        if r.state != EXPANDED or len(priors) != r.n_edges:
            raise ValueError("the root is not expanded or the prior count differs")
        for i in range(r.n_edges):
            self.data.edges[r.first_edge + i].prior = priors[i]

    def pv(self, int root_edge, int max_len=64):
        """The principal variation starting with the given root edge, as UCI moves: the
        best child (bestmove order) at each node until an unexpanded one or an unvisited
        one that is not proven."""
        cdef Node* r = &self.data.nodes[0]
        cdef Edge* e
        cdef int32_t idx, b
        if r.state != EXPANDED or not 0 <= root_edge < r.n_edges:
            return []
        e = &self.data.edges[r.first_edge + root_edge]
        line = [move_to_uci(e.move, self.root_board.chess960)]
        idx = e.child
        while idx >= 0 and len(line) < max_len:
            b = best_child_edge(&self.data, idx)
            if b < 0:
                break
            e = &self.data.edges[self.data.nodes[idx].first_edge + b]
            if e.child < 0 or (self.data.nodes[e.child].visits == 0
                               and self.data.nodes[e.child].proven == PROVEN_NONE):
                break                      # a mate found at expansion is proven unvisited
            line.append(move_to_uci(e.move, self.root_board.chess960))
            idx = e.child
        return line

    def node_arrays(self):
        """Every node's fields as numpy arrays (tests and debugging); ``move`` is the move
        code (board.pxd's 16-bit layout) of the edge leading to the node, -1 at the root."""
        cdef int32_t i, j, n = self.data.n_nodes
        cdef Node* nd
        out = {name: np.empty(n, dtype=dt) for name, dt in (
            ("parent", np.int32), ("state", np.uint8), ("proven", np.uint8),
            ("plies", np.int16), ("visits", np.int64), ("in_flight", np.int64),
            ("stops", np.int64), ("wl", np.float64), ("d", np.float64),
            ("m", np.float32), ("n_edges", np.int32), ("move", np.int32))}
        out["move"][:] = -1
        for i in range(n):
            nd = &self.data.nodes[i]
            if nd.first_edge >= 0:
                for j in range(nd.n_edges):
                    if self.data.edges[nd.first_edge + j].child >= 0:
                        out["move"][self.data.edges[nd.first_edge + j].child] = \
                            self.data.edges[nd.first_edge + j].move
        for i in range(n):
            nd = &self.data.nodes[i]
            out["parent"][i] = nd.parent
            out["state"][i] = nd.state
            out["proven"][i] = nd.proven
            out["plies"][i] = nd.plies
            out["visits"][i] = nd.visits
            out["in_flight"][i] = nd.in_flight
            out["stops"][i] = nd.stops
            out["wl"][i] = nd.wl
            out["d"][i] = nd.d
            out["m"][i] = nd.m
            out["n_edges"][i] = nd.n_edges if nd.first_edge >= 0 else 0
        return out

    def verify(self):
        """Check the tree's invariants; raise AssertionError naming the first broken one.

        No virtual loss left (in_flight == 0), no node waiting for the evaluator, every
        node's visits == stops + the sum of its children's visits, each child's parent
        link points back. Returns the number of nodes checked."""
        cdef TreeData* t = &self.data
        cdef int32_t i, j, c
        cdef int64_t child_visits
        cdef Node* n
        for i in range(t.n_nodes):
            n = &t.nodes[i]
            if n.in_flight != 0:
                raise AssertionError(f"node {i}: {n.in_flight} visits still in flight")
            if n.state == PENDING:
                raise AssertionError(f"node {i}: still waiting for the evaluator")
            child_visits = 0
            if n.first_edge >= 0:
                for j in range(n.n_edges):
                    c = t.edges[n.first_edge + j].child
                    if c >= 0:
                        if t.nodes[c].parent != i:
                            raise AssertionError(f"node {c}: parent {t.nodes[c].parent}, expected {i}")
                        child_visits += t.nodes[c].visits
            if n.visits != n.stops + child_visits:
                raise AssertionError(
                    f"node {i}: visits {n.visits} != stops {n.stops} + children {child_visits}")
        return int(t.n_nodes)

    # ---------------------------------------------------------------- self-play hooks

    def root_top2_visits(self):
        """(visits of the most visited root move, of the runner-up, offset of the most
        visited edge or -1): cheap enough to poll after every batch, for stoppers."""
        cdef Node* r = &self.data.nodes[0]
        cdef uint32_t v, a = 0, b = 0
        cdef int i, best = -1
        cdef Edge* e
        if r.state != EXPANDED:
            return 0, 0, -1
        for i in range(r.n_edges):
            e = &self.data.edges[r.first_edge + i]
            v = self.data.nodes[e.child].visits if e.child >= 0 else 0
            if v > a:
                a, b, best = v, a, i
            elif v > b:
                b = v
        return int(a), int(b), best

    def root_moves_left(self):
        """M of the root: the mean plies left from its position over its visits (the
        moves-left head's, backed up), or None before any visit or without the head."""
        cdef Node* r = &self.data.nodes[0]
        if r.visits == 0 or not self.data.ml_seen:
            return None
        return float(proven_m(r)) if r.proven != PROVEN_NONE else float(r.m)

    @property
    def moves_left_seen(self):
        """Whether the evaluator (or the cache) gave plies left in this tree: the network
        has a moves-left head, and the search's moves-left utility may apply."""
        return bool(self.data.ml_seen)

    def root_proven(self):
        """True when the solver has proven the root's result."""
        return self.data.nodes[0].proven != PROVEN_NONE

    def root_visits(self):
        """The training target: ``(policy_indices int32[n], visits int64[n])`` over the
        root's legal moves (policy indices in the mover's frame, see encoding.pyx)."""
        edges = self.root_edges()
        return edges["index"], edges["visits"]

    def choose_move(self, double temperature, rng):
        """The move to play (UCI), or None without a legal move.

        temperature 0: the best move (proven wins first, then most visits, ties by Q).
        Otherwise a move drawn with probability proportional to visits ** (1 / T) from
        ``rng`` (a numpy Generator), so that the same seed plays the same game."""
        ranked = self.ranked_root_edges(1)
        if not ranked:
            return None
        edges = self.root_edges()
        drawn = sample_by_visits(edges["visits"], temperature, rng)
        return edges["moves"][ranked[0] if drawn is None else drawn]
