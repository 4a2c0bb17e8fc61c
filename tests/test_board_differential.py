"""Differential test: the native board against python-chess over thousands of random games.

At every ply of every game: the legal move sets, check, each game-ending rule, the result,
the FEN (and its round trip through our parser) and the Polyglot Zobrist key must agree.
The games use a fixed seed; `--differential-games N` runs a larger set.
"""

import random

import chess
import chess.polyglot

from zerochess.chess import Board, Status

# Alternate short and long games: short ones cover openings cheaply, long ones reach the
# endgame rules (promotions, insufficient material, fifty moves, repetitions).
MAX_PLIES = (80, 400)


def oracle_status(ref: chess.Board) -> Status:
    """python-chess's view, in the order our Board.status() documents."""
    if ref.is_checkmate():
        return Status.CHECKMATE
    if ref.is_insufficient_material():
        return Status.INSUFFICIENT_MATERIAL
    if ref.is_stalemate():
        return Status.STALEMATE
    if ref.is_fifty_moves():
        return Status.FIFTY_MOVES
    if ref.is_repetition(3):
        return Status.THREEFOLD_REPETITION
    return Status.ONGOING


def check_ply(board: Board, ref: chess.Board):
    fen = board.fen()
    assert fen == ref.fen()
    assert Board(fen).fen() == fen
    assert board.zobrist() == chess.polyglot.zobrist_hash(ref), fen
    assert sorted(board.legal_moves()) == sorted(m.uci() for m in ref.legal_moves), fen
    assert board.is_check() == ref.is_check(), fen
    status = board.status()
    assert status == oracle_status(ref), fen
    assert board.is_repetition(3) == ref.is_repetition(3), fen
    expected_result = {Status.ONGOING: "*",
                       Status.CHECKMATE: "0-1" if ref.turn else "1-0"}.get(status, "1/2-1/2")
    assert board.result() == expected_result
    return status


def test_random_games_agree_with_python_chess(request):
    games = request.config.getoption("--differential-games")
    rng = random.Random(12345)
    seen = {s: 0 for s in Status}
    plies = 0
    special = {"ep": 0, "castle": 0, "underpromotion": 0}
    for game in range(games):
        board, ref = Board(), chess.Board()
        for _ in range(MAX_PLIES[game % 2]):
            status = check_ply(board, ref)
            if status != Status.ONGOING:
                break
            uci = rng.choice(sorted(board.legal_moves()))
            move = chess.Move.from_uci(uci)
            special["ep"] += ref.is_en_passant(move)
            special["castle"] += ref.is_castling(move)
            special["underpromotion"] += move.promotion not in (None, chess.QUEEN)
            board.push_uci(uci)
            ref.push(move)
            plies += 1
        else:
            status = check_ply(board, ref)
        seen[status] += 1
        # unwinding with pop() must retrace the game exactly
        if game % 50 == 0:
            while len(board):
                assert board.pop() == ref.pop().uci()
                assert board.fen() == ref.fen()
                assert board.zobrist() == chess.polyglot.zobrist_hash(ref)
    # the run must have exercised every rule it claims to test
    assert plies > 100 * games
    for name, count in special.items():
        assert count > 0, f"no {name} moves in {games} games"
    for status in (Status.CHECKMATE, Status.STALEMATE, Status.INSUFFICIENT_MATERIAL,
                   Status.THREEFOLD_REPETITION):
        assert seen[status] > 0 or games < 500, f"no game ended by {status.name}"
