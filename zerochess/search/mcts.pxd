# The MCTS hot loop: selection, expansion and backup over tree.pxd's structs, without the
# GIL. One Batch collects the leaves of one or many trees for a single evaluator call.

from libc.stdint cimport uint8_t, uint64_t, int32_t, int64_t
from zerochess.chess.board cimport Position
from zerochess.search.tree cimport TreeData

ctypedef struct Leaf:
    TreeData* tree
    int32_t node
    int32_t depth
    int32_t row            # batch row waiting for the evaluator, -1 when the value is known
    float v                # value (win - loss) from the leaf's side to move
    float d                # draw probability
    bint known             # v and d are known (known_endgames.pxd): the network's are not used
    float m                # plies left from the leaf's position; -1: unknown (no head)
    uint64_t key           # cache key of an evaluated row
    int32_t tb             # a leaf waiting for a tablebase probe: its position is tb_pos[tb]; -1: none

ctypedef struct BatchData:
    uint8_t* tokens        # [cap_rows, SEQ_LEN]
    int32_t* legal         # [cap_rows * MAX_MOVES]
    int32_t* offsets       # [cap_rows + 1]
    Leaf* leaves           # [cap_leaves]
    Position* tb_pos       # [cap_leaves]: the positions of the leaves waiting for a tablebase probe
    int32_t n_tb
    int32_t n_rows
    int32_t n_leaves
    int64_t n_legal

cdef class Batch:
    cdef BatchData data
    cdef object tokens_array
    cdef object legal_array
    cdef object offsets_array
    cdef int32_t cap
    cdef void reserve(self, int32_t leaves) except *
