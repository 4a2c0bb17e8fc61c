"""Known wins against a bare king (search/known_endgames.pxd): which positions are one, how
their value grows with the weak king driven, and that the search mates with them against a
defender that keeps its king in the centre, checked by python-chess."""

import chess
import pytest

from zerochess.chess.board import Board
from zerochess.search.mcts import known_win
from zerochess.search.params import SearchParams
from zerochess.search.search import Search, search
from tests.search_helpers import CountingEvaluator


@pytest.mark.parametrize("fen", [
    "8/8/3k4/8/8/8/2K5/7R w - - 0 1",      # KRvK
    "8/8/3k4/8/8/8/2K5/7Q b - - 0 1",      # KQvK, the bare king to move
    "8/8/3k4/8/8/8/2KBB3/8 w - - 0 1",     # bishops on both colours (d2 dark, e2 light)
    "8/8/3k4/8/8/8/2KBN3/8 w - - 0 1",     # bishop and knight
    "8/8/3k4/8/8/8/1NNKN3/8 w - - 0 1",    # three knights
    "8/8/3K4/8/8/8/2k5/4r3 w - - 0 1",     # Black is the strong side
])
def test_known_wins(fen):
    v = known_win(Board(fen))
    strong = chess.WHITE if chess.Board(fen).occupied_co[chess.BLACK] == chess.Board(
        fen).kings & chess.Board(fen).occupied_co[chess.BLACK] else chess.BLACK
    to_move_is_strong = chess.Board(fen).turn == strong
    assert v is not None
    assert 0.90 <= abs(v) <= 0.99
    assert (v > 0) == to_move_is_strong
    wide = known_win(Board(fen), wide=True)
    assert 0.10 <= abs(wide) <= 0.99 and (wide > 0) == to_move_is_strong


@pytest.mark.parametrize("fen", [
    "8/8/3k4/8/8/8/2K5/8 w - - 0 1",       # bare kings
    "8/8/3k4/8/8/8/2KB4/8 w - - 0 1",      # one bishop cannot mate
    "8/8/3k4/8/8/8/2KNN3/8 w - - 0 1",     # two knights cannot force mate
    "8/8/3k4/8/8/8/2KBB3/8 w - - 0 1".replace("2KBB3", "2KB1B2"),   # d2, f2: both dark
    "8/8/3k4/8/8/8/2KP4/7R w - - 0 1",     # a pawn: the network's business
    "8/8/3k4/8/5n2/8/2K5/7R w - - 0 1",    # the weak side has a piece
])
def test_not_known_wins(fen):
    assert known_win(Board(fen)) is None


def test_value_grows_as_the_weak_king_is_driven():
    centre = known_win(Board("8/8/8/3k4/8/8/2K5/7R w - - 0 1"))
    edge = known_win(Board("3k4/8/8/8/8/8/2K5/7R w - - 0 1"))
    corner = known_win(Board("k7/8/8/8/8/8/2K5/7R w - - 0 1"))
    near = known_win(Board("k7/8/1K6/8/8/8/8/7R w - - 0 1"))
    assert centre < edge < corner < near
    # bishop and knight: only the corners of the bishop's colour (light bishop e2: h1, a8)
    right = known_win(Board("k7/8/8/8/8/8/4BN2/3K4 w - - 0 1"))
    wrong = known_win(Board("7k/8/8/8/8/8/4BN2/3K4 w - - 0 1"))
    assert right > wrong


def test_known_win_root_needs_no_network():
    counting = CountingEvaluator()
    result = Search(counting).search(Board("8/8/3k4/8/8/8/2K5/7R w - - 0 1"), nodes=2000)
    assert counting.batches == []
    assert result.nodes >= 2000
    assert result.best_move in {m.uci() for m in chess.Board(
        "8/8/3k4/8/8/8/2K5/7R w - - 0 1").legal_moves}
    assert result.cp > 230            # shown on the won scale (Q >= 0.90), not as the steering value
    counting = CountingEvaluator()
    Search(counting, SearchParams(known_endgames=False)).search(
        Board("8/8/3k4/8/8/8/2K5/7R w - - 0 1"), nodes=200)
    assert counting.batches


def test_capture_into_a_known_win_is_preferred():
    """KRvKN with the knight en prise: the uniform evaluator calls every position a draw,
    the known win after the capture makes the capture the move."""
    fen = "8/8/3k4/8/8/8/2K5/n6R w - - 0 1"
    assert search(Board(fen), nodes=400).best_move == "h1a1"


def _central_defence(board: chess.Board) -> chess.Move:
    """The bare king's reply that keeps it nearest the centre (ties: the first)."""
    def centre_distance(move):
        board.push(move)
        king = board.king(not board.turn)
        board.pop()
        f, r = chess.square_file(king), chess.square_rank(king)
        return max(3 - f, f - 4) + max(3 - r, r - 4)
    return min(board.legal_moves, key=centre_distance)


@pytest.mark.parametrize("fen", [
    "8/8/8/3k4/8/8/8/R3K3 w - - 0 1",       # KRvK, the weak king in the centre
    "8/8/8/4k3/8/8/8/2B1KN2 w - - 0 1",     # KBNvK
    "8/8/8/3k4/8/8/8/2B1KB2 b - - 0 1",     # KBBvK, the defender to move
])
def test_mates_within_the_fifty_move_rule(fen):
    """Search (uniform priors, no network) against the centralising defender: checkmate
    before the fifty-move rule, every move legal by python-chess."""
    board = chess.Board(fen)
    engine = Search(CountingEvaluator())
    while not board.is_game_over():
        if board.fullmove_number > 60:
            break
        if board.occupied_co[board.turn] == board.kings & board.occupied_co[board.turn]:
            move = _central_defence(board)
        else:
            ours = Board(fen)                       # with the game's moves: repetitions
            for played in board.move_stack:
                ours.push_uci(played.uci())
            move = chess.Move.from_uci(engine.search(ours, nodes=20000).best_move)
            assert move in board.legal_moves
        board.push(move)
    assert board.is_checkmate(), (fen, board.fen(), board.outcome())
    assert board.halfmove_clock < 100
