"""Bad FENs and bad moves give clear errors and leave the board exactly as it was."""

import pytest

from zerochess.chess import Board, IllegalMoveError, InvalidFenError, InvalidMoveError

BAD_FENS = [
    ("", "4 to 6"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR", "4 to 6"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "8 ranks"),
    ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "invalid character '9'"),
    ("rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "squares, not 8"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNRR w KQkq - 0 1", "more squares than 8"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/44P w KQkq - 0 1", "more squares than 8"),
    ("rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "invalid character"),
    ("rnbqqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "exactly one king"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKKNR w KQkq - 0 1", "exactly one king"),
    ("rnbqkbnp/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "pawns on the first or last"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "side to move"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkx - 0 1", "castling"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KKkq - 0 1", "castling"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1", "en passant"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1", "en passant"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1", "integers"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -3 1", "out of range"),
    ("4k3/8/8/8/8/8/8/4K2R b - - 0 1 extra", "4 to 6"),
    ("4k2R/8/8/8/8/8/8/4K3 w - - 0 1", "not to move is in check"),
]


@pytest.mark.parametrize("fen,message", BAD_FENS)
def test_bad_fen_is_rejected_with_a_clear_message(fen, message):
    with pytest.raises(InvalidFenError, match=message):
        Board(fen)


@pytest.mark.parametrize("fen,message", BAD_FENS)
def test_bad_fen_leaves_the_board_unchanged(fen, message):
    board = Board()
    board.push_uci("e2e4")
    before = (board.fen(), board.move_stack, board.zobrist())
    with pytest.raises(ValueError):
        board.set_fen(fen)
    assert (board.fen(), board.move_stack, board.zobrist()) == before


def test_non_string_fen():
    with pytest.raises(InvalidFenError, match="string"):
        Board(42)


@pytest.mark.parametrize("move,error", [
    ("", InvalidMoveError), ("e2", InvalidMoveError), ("e2e9", InvalidMoveError),
    ("i2i4", InvalidMoveError), ("e7e8k", InvalidMoveError), ("hello!", InvalidMoveError),
    ("e2e5", IllegalMoveError), ("e1g1", IllegalMoveError), ("e7e5", IllegalMoveError),
    ("e2e4q", IllegalMoveError), ("0000", InvalidMoveError),
])
def test_bad_moves(move, error):
    board = Board()
    board.push_uci("g1f3")
    board.push_uci("g8f6")
    before = (board.fen(), board.move_stack, board.zobrist())
    with pytest.raises(error) as info:
        board.push_uci(move)
    assert isinstance(info.value, ValueError)
    assert repr(move) in str(info.value) or move in str(info.value)
    assert (board.fen(), board.move_stack, board.zobrist()) == before


def test_promotion_requires_the_piece_letter():
    board = Board("4k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    with pytest.raises(IllegalMoveError):
        board.push_uci("a7a8")
    board.push_uci("a7a8n")
    assert board.piece_at(56) == "N"


def test_pop_on_empty_board():
    with pytest.raises(IndexError):
        Board().pop()


def test_lenient_but_safe_fen_fields():
    # EPD-style four fields; castling rights without a rook are dropped (as python-chess does);
    # an en passant square with no capturing pawn is kept out of the key and the FEN
    assert Board("4k3/8/8/8/8/8/8/4K3 w - -").fen() == "4k3/8/8/8/8/8/8/4K3 w - - 0 1"
    assert Board("4k3/8/8/8/8/8/8/4K2R w KQ - 0 1").fen() == "4k3/8/8/8/8/8/8/4K2R w K - 0 1"
    assert Board("4k3/8/8/8/4P3/8/8/4K3 b - e3 0 1").fen() == "4k3/8/8/8/4P3/8/8/4K3 b - - 0 1"


def test_game_end_rules():
    mate = Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")
    assert mate.is_checkmate() and mate.result() == "1-0"
    stalemate = Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
    assert stalemate.is_stalemate() and stalemate.result() == "1/2-1/2"
    assert Board("8/8/4k3/8/8/2B5/4K3/8 w - - 0 1").is_insufficient_material()
    assert not Board("8/8/4k3/8/8/2B5/4KN2/8 w - - 0 1").is_insufficient_material()
    fifty = Board("4k3/8/8/8/8/8/8/R3K3 w - - 100 80")
    assert fifty.is_fifty_moves() and fifty.result() == "1/2-1/2"
    board = Board()
    for _ in range(2):
        for uci in ("g1f3", "g8f6", "f3g1", "f6g8"):
            assert not board.is_game_over()
            board.push_uci(uci)
    assert board.is_repetition(3) and board.result() == "1/2-1/2"
