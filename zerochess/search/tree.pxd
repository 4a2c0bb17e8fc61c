# The search tree as flat C arrays: nodes and edges are structs indexed by int32, grown
# with realloc, never Python objects. tree.pyx owns storage, reuse and read-out;
# mcts.pyx runs selection, expansion and backup over the same structs without the GIL.

from libc.stdint cimport uint64_t, uint32_t, uint16_t, uint8_t, int8_t, int16_t, int32_t, int64_t
from zerochess.chess.board cimport Position, Move
from zerochess.search.tt cimport TTData, TranspositionTable

cdef enum NodeState:
    UNEXPANDED = 0         # created when its edge was first chosen; not evaluated yet
    PENDING = 1            # edges generated, waiting for the evaluator in this batch
    EXPANDED = 2           # edges have priors; selection goes through it
    TERMINAL = 3           # game over here (mate, stalemate, draw rules): exact value

cdef enum Proven:          # exact result, from the side that moved INTO the node
    PROVEN_NONE = 0
    PROVEN_WIN = 1
    PROVEN_DRAW = 2
    PROVEN_LOSS = 3

cdef enum:
    TB_PLIES = 1000        # a result read from the endgame tablebases, not a mate: its proof's
                           # plies are TB_PLIES + the plies to the position the tables decided
                           # (search/syzygy.py), so a mate (plies < TB_PLIES) ranks before it
                           # among wins and after it among losses, and no mate distance is shown

ctypedef struct Edge:
    Move move
    uint8_t tactical       # a capture, a promotion or a check (set at expansion; fits the padding)
    float prior            # from the evaluator (or the cache); root noise mixed in
    int32_t child          # node index, -1 until the edge is first chosen

ctypedef struct Node:
    int32_t parent         # -1 for the root
    int32_t first_edge     # edges[first_edge : first_edge + n_edges], -1 until expanded
    uint16_t n_edges
    uint8_t state          # NodeState
    uint8_t proven         # Proven
    int16_t plies          # proven nodes: plies from the parent's position to the game's
                           # end under best play (a checkmated node: 1)
    uint32_t visits        # completed visits of the subtree (N)
    uint32_t in_flight     # simulations through here waiting for the evaluator (virtual loss)
    uint32_t stops         # visits that ended here; visits == stops + sum(children visits)
    float m                # M: mean over the visits of the plies left from this node's
                           # position (moves-left head; a proven node: plies - 1 exactly);
                           # fills the 4 bytes the doubles' alignment padded, so a node
                           # stays 48 bytes
    double wl              # sum of values (win - loss) seen from the side that moved into
                           # the node; Q = wl / visits, from its parent's chooser's view
    double d               # sum of draw probabilities

ctypedef struct TreeData:
    Node* nodes
    Edge* edges
    int32_t n_nodes
    int32_t cap_nodes
    int64_t n_edges
    int64_t cap_edges
    int64_t max_bytes      # bound on nodes + edges memory (SearchParams.tree_mb)
    bint full              # an allocation would exceed max_bytes: gathering stops
    Position root_pos      # root is always node 0
    uint64_t* hist         # repetition keys: game history, then the current path
    int32_t n_hist         # length of the game-history part
    int32_t cap_hist
    TTData* tt             # may be NULL
    Move root_allowed[256] # UCI `go searchmoves`: the only root moves selection may take
    int32_t n_root_allowed # 0: every root move is allowed
    # parameters (copied from SearchParams)
    double cpuct_init
    double cpuct_factor
    double cpuct_base
    double fpu_reduction
    double fpu_reduction_root
    double virtual_loss
    double tactical_prior  # selection's floor under a tactical edge's prior; 0: off
    int32_t minibatch
    int32_t max_collisions
    bint known_endgames    # value known wins against a bare king by known_endgames.pxd
    bint known_win_root    # known_endgames and the root is such a win (set per gather)
    double ml_max_effect   # moves-left utility (SearchParams.moves_left_*); 0: off
    double ml_threshold
    double ml_slope
    double ml_constant
    double ml_scaled
    double ml_quadratic
    bint ml_seen           # an evaluator (or the cache) gave plies left in this tree
    bint ml_on             # selection adds the moves-left utility (set per gather)
    # this search's counters
    int64_t target         # playouts wanted in this search
    int64_t playouts       # completed playouts (visits added to the root) in this search
    int64_t nn_evals
    int64_t cache_hits
    int64_t collisions
    int64_t depth_sum      # sum of the depths of the leaves not valued exactly (the depth)
    int64_t depth_playouts # the playouts that ended at such a leaf
    int32_t max_depth
    int64_t tb_hits        # positions the endgame tablebases decided in this search
    # endgame tablebases (search/syzygy.py): a leaf with at most tb_pieces men, no castling
    # right, a fifty-move counter of 0 and a material in tb_material (sorted codes,
    # syzygy.material_code) waits in its batch for a WDL probe instead of the network
    int32_t tb_pieces      # 0: no tablebases
    int32_t n_tb_material
    uint32_t* tb_material

cdef class Tree:
    cdef TreeData data
    cdef public object params       # the SearchParams it was built from
    cdef public object tt           # the TranspositionTable or None
    cdef public object root_board   # a copy of the Board at the root
    cdef public bint root_noised    # Dirichlet noise already mixed into the root priors
    cdef public object tablebase    # search/syzygy.Tablebases probed at the leaves, or None
    cdef void _reset(self) except *

# Storage helpers for mcts.pyx (return -1 when the tree is full).
cdef int32_t tree_new_node(TreeData* t, int32_t parent) noexcept nogil
cdef int64_t tree_new_edges(TreeData* t, int n) noexcept nogil
cdef bint tree_reserve_hist(TreeData* t, int32_t n) noexcept nogil
cdef double proven_value(uint8_t proven) noexcept nogil

cdef inline float proven_m(const Node* n) noexcept nogil:
    """Plies left from a proven node's position: exact for a mate or a draw by the rules
    (plies - 1); for a tablebase result the node's own estimate (no distance is known)."""
    return n.plies - 1.0 if n.plies < TB_PLIES else n.m
cdef int32_t best_child_edge(const TreeData* t, int32_t node) noexcept nogil
