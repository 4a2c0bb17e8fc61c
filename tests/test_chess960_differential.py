"""Chess960 differential test: the native board against python-chess (``chess960=True``)
over random games from the Fischer random and double Fischer random books.

At every ply: the legal move sets in both UCI forms (king takes rook with ``chess960``,
standard castling as e1g1 without), the FEN in the form the game began with and in the
other form (each read back by our parser), and the Zobrist key: equal to
``chess.polyglot.zobrist_hash`` whenever the castling rooks stand in the corners (Polyglot
has keys only for those), and, for other rights, different from the same position with the
rights removed (so the transposition table and repetitions tell them apart). Every move is
taken back once to check that unmake restores FEN and key.
"""

import random

import chess
import chess.polyglot
import pytest

from chess960_helpers import DFRC_BOOK, start_positions
from zerochess.chess import Board, IllegalMoveError

CORNERS = chess.BB_A1 | chess.BB_H1 | chess.BB_A8 | chess.BB_H8


def check_ply(board: Board, ref: chess.Board, shredder: bool):
    fen = board.fen()
    assert fen == ref.fen(shredder=shredder)
    other = board.fen(shredder=not shredder)
    assert other == ref.fen(shredder=not shredder)
    assert Board(fen).fen() == fen and Board(other).fen() == other
    assert Board(other).zobrist() == board.zobrist()
    assert sorted(board.legal_moves()) == sorted(ref.uci(m, chess960=True) for m in ref.legal_moves)
    plain = Board(fen)  # UCI_Chess960 off: standard castling as the king's two-square move
    assert sorted(plain.legal_moves()) == sorted(ref.uci(m, chess960=False) for m in ref.legal_moves)
    rights = ref.clean_castling_rights()
    if rights & ~CORNERS == 0:
        assert board.zobrist() == chess.polyglot.zobrist_hash(ref), fen
    else:
        no_rights = Board(" ".join(fen.split()[:2] + ["-"] + fen.split()[3:]))
        assert board.zobrist() != no_rights.zobrist(), fen


def play(fen: str, rng: random.Random, max_plies: int) -> int:
    board = Board(fen, chess960=True)
    ref = chess.Board(fen, chess960=True)
    shredder = fen.split()[2] not in ("KQkq", "-")
    castled = 0
    for _ in range(max_plies):
        check_ply(board, ref, shredder)
        if ref.is_game_over(claim_draw=True):
            break
        moves = list(ref.legal_moves)
        # castle whenever possible half of the time: random play rarely would
        castlings = [m for m in moves if ref.is_castling(m)]
        move = rng.choice(castlings if castlings and rng.random() < 0.5 else moves)
        castled += ref.is_castling(move)
        uci = ref.uci(move, chess960=True)
        key, before = board.zobrist(), board.fen()
        board.push_uci(uci)
        assert board.pop() == uci and board.fen() == before and board.zobrist() == key
        board.push_uci(uci)
        ref.push(move)
        assert board.peek() == uci
    return castled


@pytest.mark.parametrize("book,seed", [(None, 1), (DFRC_BOOK, 2)])
def test_random_games_from_chess960_starts_agree_with_python_chess(book, seed):
    starts = start_positions() if book is None else start_positions(book)
    rng = random.Random(seed)
    castled = sum(play(rng.choice(starts), rng, rng.choice((40, 160))) for _ in range(40))
    assert castled >= 20


def test_castling_is_read_in_both_forms_and_written_as_asked():
    fen = "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w KQkq - 0 1"
    for chess960 in (False, True):
        board = Board(fen, chess960=chess960)
        board.push_uci("e1b1")  # king takes the b1 rook: O-O-O, king to c1, rook to d1
        assert board.fen() == "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/2KR2R1 b kq - 1 1"
        assert board.peek() == "e1b1"  # not standard castling: king takes rook either way
    standard = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"
    for text in ("e1g1", "e1h1"):
        for chess960 in (False, True):
            board = Board(standard, chess960=chess960)
            board.push_uci(text)
            assert board.fen() == "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R4RK1 b kq - 1 1"
            assert board.peek() == ("e1h1" if chess960 else "e1g1")
    with pytest.raises(IllegalMoveError):
        Board("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K1R1 w Qkq - 0 1").push_uci("e1g1")


def test_x_fen_file_letters_name_an_inner_rook_and_shredder_fen_is_kept():
    # two white rooks on the king's h-side: K means the outer one (h1), G the inner one
    inner = Board("4k3/8/8/8/8/8/8/4K1RR w G - 0 1", chess960=True)
    outer = Board("4k3/8/8/8/8/8/8/4K1RR w K - 0 1", chess960=True)
    assert inner.fen().split()[2] == "G" and outer.fen().split()[2] == "K"
    assert "e1g1" in inner.legal_moves() and "e1h1" not in inner.legal_moves()
    assert inner.zobrist() != outer.zobrist()
    assert Board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1").fen().split()[2] == "HAha"
    assert Board().fen().split()[2] == "KQkq"
    assert Board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1").zobrist() == Board().zobrist()
