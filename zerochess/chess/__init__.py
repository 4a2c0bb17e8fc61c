"""The chess: the native board, the network's input encoding and threat flags.

Every name is imported on first use (``from zerochess.chess import Board`` works as usual),
so that importing a light submodule (``layout``, ``errors``) costs nothing else: the UCI
handshake must not import the board (python-chess, for the Polyglot keys) nor the encoding
(numpy). The network, its runtimes and evaluators are the other package,
``zerochess.neural``; nothing here imports it (lc0 keeps ``src/chess`` and ``src/neural``
apart the same way).
"""

from zerochess.lazy import lazy_exports

__all__ = [
    "Board", "Status", "STARTING_FEN", "square_name", "parse_square",
    "encode_board", "legal_move_indices", "move_to_index", "index_to_move",
    "SEQ_LEN", "VOCAB_SIZE", "POLICY_SIZE",
    "InvalidFenError", "InvalidMoveError", "IllegalMoveError",
]

# name -> the module that defines it
_LAZY = {
    **dict.fromkeys(("Board", "Status", "STARTING_FEN", "square_name", "parse_square"),
                    "zerochess.chess.board"),
    **dict.fromkeys(("encode_board", "legal_move_indices", "move_to_index", "index_to_move",
                     "SEQ_LEN", "VOCAB_SIZE", "POLICY_SIZE"), "zerochess.chess.encoding"),
    **dict.fromkeys(("InvalidFenError", "InvalidMoveError", "IllegalMoveError"),
                    "zerochess.chess.errors"),
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
