"""The chess engine's building blocks: native board, network input encoding, the network and
its evaluator backends.

Every name is imported on first use (``from zerochess.engine import Board`` works as usual),
so that importing a light submodule (``extras``, ``backends``, ``shipped``) costs nothing
else: the UCI handshake imports those but neither the board (python-chess, for the Polyglot
keys), nor the encoding (numpy), nor a network runtime. ``make_evaluator`` plays the shipped
``.onnx`` networks on ONNX Runtime without torch; ``load_network``, ``Network`` and
``NetworkConfig`` are the torch model (the ``train`` extra).
"""

import importlib

__all__ = [
    "Board", "Status", "STARTING_FEN", "square_name", "parse_square",
    "encode_board", "legal_move_indices", "move_to_index", "index_to_move",
    "SEQ_LEN", "VOCAB_SIZE", "POLICY_SIZE",
    "InvalidFenError", "InvalidMoveError", "IllegalMoveError",
    "load_network", "Network", "NetworkConfig", "make_evaluator", "UniformEvaluator",
]

# name -> the module that defines it
_LAZY = {
    **dict.fromkeys(("Board", "Status", "STARTING_FEN", "square_name", "parse_square"),
                    "zerochess.engine.board"),
    **dict.fromkeys(("encode_board", "legal_move_indices", "move_to_index", "index_to_move",
                     "SEQ_LEN", "VOCAB_SIZE", "POLICY_SIZE"), "zerochess.engine.encoding"),
    **dict.fromkeys(("InvalidFenError", "InvalidMoveError", "IllegalMoveError"),
                    "zerochess.engine.errors"),
    "load_network": "zerochess.engine.api",
    "Network": "zerochess.engine.api",
    "NetworkConfig": "zerochess.engine.network",
    "make_evaluator": "zerochess.engine.backends",
    "UniformEvaluator": "zerochess.engine.evaluator",
}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # once: later lookups do not come back here
        return value
    raise AttributeError(f"module 'zerochess.engine' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
