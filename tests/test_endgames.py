"""`zerochess endgames`: random won endgames, checked with python-chess and Stockfish."""

import os

import chess
import chess.engine
import pytest
from click.testing import CliRunner

from zerochess.cli import main
from zerochess.match.openings import load_openings
from zerochess.tools.endgames import KINDS, generate
from zerochess.train.data.teacher import default_teacher_command

MATERIAL = {   # kind -> the strong side's pieces besides its king
    "KQvK": [chess.QUEEN],
    "KRvK": [chess.ROOK],
    "KBBvK": [chess.BISHOP, chess.BISHOP],
    "KBNvK": [chess.KNIGHT, chess.BISHOP],
    "KPvK": [chess.PAWN],
}
STOCKFISH = default_teacher_command()[0]   # PATH, then Debian's games directory


def test_every_kind_has_its_material_listed():
    assert set(MATERIAL) == set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_positions_are_legal_with_the_right_material_and_the_strong_side_to_move(kind):
    boards = generate(kind, 40, seed=3)
    assert len({b.epd() for b in boards}) == 40
    colours = set()
    for board in boards:
        strong = board.turn
        colours.add(strong)
        assert board.is_valid() and not board.is_game_over() and not board.is_check()
        weak_pieces = [p.piece_type for p in board.piece_map().values() if p.color != strong]
        strong_pieces = sorted(p.piece_type for p in board.piece_map().values()
                               if p.color == strong and p.piece_type != chess.KING)
        assert weak_pieces == [chess.KING] and strong_pieces == sorted(MATERIAL[kind])
        assert board.halfmove_clock == 0 and board.fullmove_number == 1
        if kind == "KBBvK":
            light = {bool(chess.BB_LIGHT_SQUARES & chess.BB_SQUARES[s])
                     for s in board.pieces(chess.BISHOP, strong)}
            assert light == {True, False}
    assert colours == {chess.WHITE, chess.BLACK}


@pytest.mark.parametrize("kind", KINDS)
def test_nothing_hangs_whatever_the_strong_side_plays_first_the_weak_king_takes_nothing_free(kind):
    # After any quiet strong move that leaves a piece where it stood, the weak king has no
    # capture of it: the weak king attacks none of the strong side's men in the position.
    for board in generate(kind, 40, seed=4):
        strong = board.turn
        weak_king = board.king(not strong)
        for square in board.attacks(weak_king):
            piece = board.piece_at(square)
            assert piece is None or piece.color != strong, (board.fen(), square)
        null = board.copy()
        null.push(chess.Move.null())                   # the weak side to move at once
        assert not any(null.is_capture(m) for m in null.legal_moves), board.fen()


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_seed_gives_the_same_positions_and_another_seed_others(kind):
    same = [b.fen() for b in generate(kind, 12, seed=7)]
    assert same == [b.fen() for b in generate(kind, 12, seed=7)]
    assert same != [b.fen() for b in generate(kind, 12, seed=8)]


def test_bad_kind_and_count_are_named():
    with pytest.raises(ValueError, match="unknown endgame kind 'KNNvK'"):
        generate("KNNvK", 3, 1)
    with pytest.raises(ValueError, match="count"):
        generate("KQvK", -1, 1)


@pytest.mark.skipif(not os.path.exists(STOCKFISH), reason="Stockfish not installed")
def test_stockfish_calls_every_position_won_for_the_side_to_move():
    # Stockfish knows KPvK exactly (its KPK bitbase: a won one scores far above a pawn, a
    # drawn one 0) and scores the basic mates as won (KBNvK about +240, drawn ones 0).
    with chess.engine.SimpleEngine.popen_uci(STOCKFISH) as sf:
        sf.configure({"Threads": 1, "Hash": 16})
        for kind in KINDS:
            least = 500 if kind == "KPvK" else 200
            for board in generate(kind, 8 if kind != "KPvK" else 30, seed=5):
                score = sf.analyse(board, chess.engine.Limit(depth=14))["score"].relative
                assert score.is_mate() and score.mate() > 0 or score.score() >= least, \
                    (kind, board.fen(), score)


def test_cli_writes_an_epd_that_the_match_runner_reads(tmp_path):
    out = tmp_path / "endgames.epd"
    result = CliRunner().invoke(main, ["endgames", "--kind", "KRvK", "--kind", "KBNvK",
                                       "--count", "5", "--seed", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 10 positions" in result.output
    lines = out.read_text().splitlines()
    assert len(lines) == 10 and 'id "KRvK seed 2 #1"' in lines[0]
    openings = load_openings(out)
    expected = generate("KRvK", 5, 2) + generate("KBNvK", 5, 2)
    assert [o.board().fen() for o in openings] == [b.fen() for b in expected]
    bad = CliRunner().invoke(main, ["endgames", "--kind", "KXvK", "--out", str(out)])
    assert bad.exit_code != 0 and "KXvK" in bad.output
    missing = tmp_path / "no such dir" / "x.epd"
    bad = CliRunner().invoke(main, ["endgames", "--kind", "KQvK", "--out", str(missing)])
    assert bad.exit_code == 1 and f"cannot write {missing}: No such file" in bad.output
    assert bad.exception is None or isinstance(bad.exception, SystemExit)
