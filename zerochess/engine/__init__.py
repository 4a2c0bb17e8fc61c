"""The chess engine's building blocks: native board, network input encoding, the network and
its evaluator backends.

The torch-based names (``load_network``, ``Network``, ``NetworkConfig``, ``make_evaluator``)
are imported on first use, so that the board, ``perft`` and the UCI handshake do not pay
for importing torch.
"""

from zerochess.engine.board import STARTING_FEN, Board, Status, parse_square, square_name
from zerochess.engine.encoding import (
    POLICY_SIZE,
    SEQ_LEN,
    VOCAB_SIZE,
    encode_board,
    index_to_move,
    legal_move_indices,
    move_to_index,
)
from zerochess.engine.errors import IllegalMoveError, InvalidFenError, InvalidMoveError

__all__ = [
    "Board", "Status", "STARTING_FEN", "square_name", "parse_square",
    "encode_board", "legal_move_indices", "move_to_index", "index_to_move",
    "SEQ_LEN", "VOCAB_SIZE", "POLICY_SIZE",
    "InvalidFenError", "InvalidMoveError", "IllegalMoveError",
    "load_network", "Network", "NetworkConfig", "make_evaluator", "UniformEvaluator",
]

_LAZY = {
    "load_network": "zerochess.engine.api",
    "Network": "zerochess.engine.api",
    "NetworkConfig": "zerochess.engine.network",
    "make_evaluator": "zerochess.engine.backends",
    "UniformEvaluator": "zerochess.engine.evaluator",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'zerochess.engine' has no attribute {name!r}")
