"""The chess engine's building blocks: native board, network input encoding, and (later) the
network and its evaluator backends."""

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
]
