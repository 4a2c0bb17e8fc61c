"""Opening books: the Polyglot writer against python-chess's reader, the builder, the prober
(OwnBook) and the shipped files in books/."""

import os
import random
import struct
from collections import Counter

import chess
import chess.pgn
import chess.polyglot
import pytest
from click.testing import CliRunner

from zerochess.book import BookError, BookProber, write_book
from zerochess.book.build import NoMovesError, build_book
from zerochess.book.epd import parse_epd_line
from zerochess.book.polyglot import encode_move, to_polyglot_uci
from zerochess.cli import main
from zerochess.chess import Board

BOOKS = os.path.join(os.path.dirname(__file__), "..", "books")
CASTLE_FEN = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"
PROMO_FEN = "1n5k/P7/8/8/8/8/8/K7 w - - 0 1"
ROOK_FEN = "4k3/8/8/8/8/8/8/4R2K w - - 0 1"  # a rook's e1g1 is not castling


def key(fen):
    return chess.polyglot.zobrist_hash(chess.Board(fen))


def read_back(path, fen):
    """python-chess's reader: {uci: weight} for the position."""
    with chess.polyglot.open_reader(path) as reader:
        return {e.move.uci(): e.weight for e in reader.find_all(chess.Board(fen))}


def test_round_trip_through_python_chess(tmp_path):
    path = tmp_path / "t.bin"
    black_castle = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R b KQkq - 0 1"
    counts = {
        (key(chess.STARTING_FEN), "e2e4"): 5, (key(chess.STARTING_FEN), "d2d4"): 3,
        (key(chess.STARTING_FEN), "g1f3"): 1,
        (key(CASTLE_FEN), to_polyglot_uci("e1g1", True)): 2,
        (key(CASTLE_FEN), to_polyglot_uci("e1c1", True)): 1,
        (key(black_castle), to_polyglot_uci("e8g8", True)): 7,
        (key(PROMO_FEN), "a7a8q"): 4, (key(PROMO_FEN), "a7b8n"): 2, (key(PROMO_FEN), "a7a8r"): 1,
        (key(ROOK_FEN), to_polyglot_uci("e1g1", False)): 1,
    }
    assert write_book(path, counts) == len(counts)
    assert os.path.getsize(path) == 16 * len(counts)
    assert read_back(path, chess.STARTING_FEN) == {"e2e4": 5, "d2d4": 3, "g1f3": 1}
    assert read_back(path, CASTLE_FEN) == {"e1g1": 2, "e1c1": 1}
    assert read_back(path, black_castle) == {"e8g8": 7}
    assert read_back(path, PROMO_FEN) == {"a7a8q": 4, "a7b8n": 2, "a7a8r": 1}
    assert read_back(path, ROOK_FEN) == {"e1g1": 1}
    # The file itself: sorted keys, castling stored as king takes rook, promotion bits.
    raw = [struct.unpack(">QHHI", path.read_bytes()[i:i + 16])
           for i in range(0, os.path.getsize(path), 16)]
    assert [r[0] for r in raw] == sorted(r[0] for r in raw)
    castle_codes = {r[1] for r in raw if r[0] == key(CASTLE_FEN)}
    e1, h1, a1 = chess.E1, chess.H1, chess.A1
    assert castle_codes == {h1 | e1 << 6, a1 | e1 << 6}
    assert encode_move("a7a8q") == chess.A8 | chess.A7 << 6 | 4 << 12
    assert encode_move("a7b8n") == chess.B8 | chess.A7 << 6 | 1 << 12


def test_weights_are_scaled_into_u16_keeping_ratios(tmp_path):
    path = tmp_path / "big.bin"
    k = key(chess.STARTING_FEN)
    write_book(path, {(k, "e2e4"): 200_000, (k, "d2d4"): 100_000, (k, "a2a3"): 1})
    got = read_back(path, chess.STARTING_FEN)
    assert got["e2e4"] == 65535
    assert abs(got["d2d4"] - 32768) <= 1
    assert got["a2a3"] == 1  # a played move never vanishes


def test_bad_moves_and_weights_are_rejected(tmp_path):
    k = key(chess.STARTING_FEN)
    with pytest.raises(ValueError, match="not a UCI move"):
        write_book(tmp_path / "x.bin", {(k, "e2e9"): 1})
    with pytest.raises(ValueError, match="negative weight"):
        write_book(tmp_path / "x.bin", {(k, "e2e4"): -1})
    assert not (tmp_path / "x.bin").exists()
    assert os.listdir(tmp_path) == []  # no temp file left


PGN = """[Event "a"]
[Result "1-0"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0

[Event "b"]
[Result "1/2-1/2"]

1. e4 c5 2. Nf3 d6 1/2-1/2

[Event "c"]
[Result "0-1"]

1. d4 d5 2. c4 e6 0-1

[Event "d"]
[Result "1-0"]

1. e4 e5 2. O-O-O e6 1-0
"""  # game d is illegal: castling with pieces in the way


def test_build_from_pgn_counts_and_plies(tmp_path):
    src = tmp_path / "g.pgn"
    src.write_text(PGN.split('[Event "d"]')[0])
    out = tmp_path / "g.bin"
    n = build_book(src, out, plies=3)
    assert read_back(out, chess.STARTING_FEN) == {"e2e4": 2, "d2d4": 1}
    after_e4 = chess.Board()
    after_e4.push_san("e4")
    assert read_back(out, after_e4.fen()) == {"e7e5": 1, "c7c5": 1}
    # entries: ply 1 {e4, d4}, ply 2 {e4 e5, e4 c5, d4 d5}, ply 3 {Nf3, Nf3, c4} after distinct positions
    assert sum(1 for _ in chess.polyglot.open_reader(out)) == n == 8
    # Result weighting (Polyglot make): win 2, draw 1, loss 0 (dropped) for the mover.
    build_book(src, out, plies=3, weighting="result")
    assert read_back(out, chess.STARTING_FEN) == {"e2e4": 3}  # 2 (win) + 1 (draw); d4 lost
    assert read_back(out, after_e4.fen()) == {"c7c5": 1}  # e5 lost (0), c5 drew (1)


def test_build_rejects_illegal_pgn_naming_the_game(tmp_path):
    src = tmp_path / "bad.pgn"
    src.write_text(PGN)
    with pytest.raises(ValueError, match=r"bad.pgn: game 4"):
        build_book(src, tmp_path / "bad.bin")


def test_build_from_epd_with_and_without_moves(tmp_path):
    src = tmp_path / "bm.epd"
    src.write_text(f"{CASTLE_FEN.rsplit(' ', 2)[0]} bm O-O; id \"x\";\n"
                   f"{chess.STARTING_FEN.rsplit(' ', 2)[0]} bm e4 d4;\n")
    out = tmp_path / "bm.bin"
    assert build_book(src, out) == 3
    assert read_back(out, CASTLE_FEN) == {"e1g1": 1}
    assert read_back(out, chess.STARTING_FEN) == {"e2e4": 1, "d2d4": 1}
    bare = tmp_path / "bare.epd"
    bare.write_text("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 3\n")
    with pytest.raises(NoMovesError, match="build from a PGN of the lines"):
        build_book(bare, tmp_path / "bare.bin")
    assert not (tmp_path / "bare.bin").exists()


def test_fen_style_epd_lines_keep_their_counters():
    board, ops = parse_epd_line("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    assert (board.halfmove_clock, board.fullmove_number, ops) == (2, 3, {})
    board, ops = parse_epd_line(f"{chess.STARTING_FEN} bm e4;")
    assert ops["bm"] == [chess.Move.from_uci("e2e4")] and board.fullmove_number == 1


@pytest.fixture
def small_book(tmp_path):
    k = key(chess.STARTING_FEN)
    path = tmp_path / "p.bin"
    # e2e5 is illegal (a corrupt or colliding entry); weight-0 moves are never chosen.
    write_book(path, {(k, "e2e4"): 3, (k, "d2d4"): 1, (k, "e2e5"): 50, (k, "a2a3"): 0})
    return path


def test_prober_weighted_choice_is_proportional_and_legal(small_book):
    prober = BookProber(small_book)
    rng = random.Random(7)
    picks = Counter(prober.probe(chess.Board(), rng) for _ in range(4000))
    assert set(picks) == {"e2e4", "d2d4"}
    assert 0.72 < picks["e2e4"] / 4000 < 0.78  # expected 0.75; 4000 draws: sd 0.007
    assert prober.probe("8/8/8/8/8/8/8/k6K w - - 0 1", rng) is None


def test_prober_is_deterministic_given_the_rng(small_book):
    prober = BookProber(small_book)
    a = [prober.probe("startpos", random.Random(s)) for s in range(50)]
    b = [prober.probe(chess.STARTING_FEN, random.Random(s)) for s in range(50)]
    assert a == b and len(set(a)) == 2


def test_prober_converts_castling_back(tmp_path):
    path = tmp_path / "c.bin"
    write_book(path, {(key(CASTLE_FEN), "e1h1"): 1})
    assert BookProber(path).probe(CASTLE_FEN, random.Random(0)) == "e1g1"


@pytest.mark.parametrize("content, message", [
    (b"", "is empty"),
    (b"\x00" * 17, "not a multiple of 16"),
    (struct.pack(">QHHI", 9, 0, 1, 0) + struct.pack(">QHHI", 3, 0, 1, 0), "not sorted"),
])
def test_corrupt_book_is_a_clear_error(tmp_path, content, message):
    path = tmp_path / "corrupt.bin"
    path.write_bytes(content)
    with pytest.raises(BookError, match=message) as info:
        BookProber(path)
    assert "corrupt.bin" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_missing_book_is_a_clear_error(tmp_path):
    with pytest.raises(BookError, match="cannot read opening book.*nothere.bin"):
        BookProber(tmp_path / "nothere.bin")


def test_cli_book_build_and_probe(tmp_path):
    src = tmp_path / "g.pgn"
    src.write_text(PGN.split('[Event "d"]')[0])
    out = tmp_path / "cli.bin"
    runner = CliRunner()
    result = runner.invoke(main, ["book", "build", str(src), str(out), "--plies", "2",
                                  "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "5 entries" in result.output  # ply 1: e4, d4; ply 2: e5, c5, d5
    assert read_back(out, chess.STARTING_FEN) == {"e2e4": 2, "d2d4": 1}
    result = runner.invoke(main, ["book", "probe", str(out)])
    assert result.exit_code == 0 and "e4" in result.output and "66.7%" in result.output
    result = runner.invoke(main, ["book", "build", str(tmp_path / "no.epd"), str(out)])
    assert result.exit_code != 0


# The shipped books -------------------------------------------------------------------------

def test_shipped_noob_pgn_reaches_the_epd_positions():
    with open(os.path.join(BOOKS, "noob_2moves.epd")) as f:
        fens = [line.strip() for line in f if line.strip()]
    assert len(fens) == 7314
    keys = []
    with open(os.path.join(BOOKS, "noob_2moves.pgn")) as f:
        for fen in fens[:300]:  # the script checks all; a sample keeps the test fast
            game = chess.pgn.read_game(f)
            board = game.end().board()
            assert len(board.move_stack) == 4
            assert chess.polyglot.zobrist_hash(board) == Board(fen).zobrist()
            keys.append(chess.polyglot.zobrist_hash(board))
    assert len(set(keys)) == len(keys)


def test_shipped_balanced_suite_is_unique_and_from_the_pgn():
    with open(os.path.join(BOOKS, "balanced_2moves.epd")) as f:
        fens = [line.strip() for line in f if line.strip()]
    keys = [Board(fen).zobrist() for fen in fens]
    assert len(fens) >= 500 and len(set(keys)) == len(keys)
    with open(os.path.join(BOOKS, "noob_2moves.epd")) as f:
        noob = {Board(line).zobrist() for line in f if line.strip()}
    assert set(keys) <= noob
    with open(os.path.join(BOOKS, "balanced_2moves.pgn")) as f:
        for k in keys[:100]:
            game = chess.pgn.read_game(f)
            assert chess.polyglot.zobrist_hash(game.end().board()) == k
            cp = float(game.end().comment.split(":")[-1])
            assert abs(cp) <= 0.5


def test_shipped_engine_book_is_valid_and_covers_the_start():
    path = os.path.join(os.path.dirname(BOOKS), "zerochess", "data", "book.bin")
    prober = BookProber(path)
    assert len(prober) > 100
    moves = {e.move for e in prober.entries(chess.Board())}
    assert {"e2e4", "d2d4", "c2c4", "g1f3"} <= moves
    with chess.polyglot.open_reader(path) as reader:
        assert sum(e.weight for e in reader.find_all(chess.Board())) > 0
