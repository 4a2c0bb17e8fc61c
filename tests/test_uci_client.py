"""zerochess driven by a real UCI client: python-chess's chess.engine."""

import shutil
import sys

import chess
import chess.engine
import pytest

ZEROCHESS = [sys.executable, "-m", "zerochess"]
STOCKFISH = shutil.which("stockfish") or (
    "/usr/games/stockfish" if shutil.which("/usr/games/stockfish") else None)


@pytest.fixture
def engine():
    e = chess.engine.SimpleEngine.popen_uci(ZEROCHESS, timeout=60)
    e.configure({"WeightsFile": "uniform"})
    yield e
    e.quit()


def test_identity_and_options(engine):
    assert engine.id["name"].startswith("zerochess ")
    assert engine.options["Hash"].type == "spin" and engine.options["Hash"].default == 64
    assert engine.options["CPuct"].type == "string"
    assert float(engine.options["CPuct"].default) == pytest.approx(1.745)


def test_plays_a_legal_game_under_a_clock_with_ponder_moves(engine):
    board = chess.Board()
    clocks = {chess.WHITE: 5.0, chess.BLACK: 5.0}
    while not board.is_game_over() and board.ply() < 40:
        limit = chess.engine.Limit(white_clock=clocks[True], black_clock=clocks[False],
                                   white_inc=0.05, black_inc=0.05)
        result = engine.play(board, limit, ponder=board.ply() % 2 == 0)
        assert result.move in board.legal_moves
        if result.ponder is not None:
            after = board.copy()
            after.push(result.move)
            assert result.ponder in after.legal_moves
        board.push(result.move)
    assert board.ply() == 40 or board.is_game_over()


def test_multipv_analysis(engine):
    infos = engine.analyse(chess.Board(), chess.engine.Limit(nodes=2000), multipv=3)
    assert len(infos) == 3
    moves = [info["pv"][0] for info in infos]
    assert len(set(moves)) == 3
    assert all(m in chess.Board().legal_moves for m in moves)
    assert all(info["nodes"] >= 2000 for info in infos)


def test_promotion_castling_en_passant_through_the_client(engine):
    board = chess.Board("r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1")
    for uci in ("e5d6", "e8g8", "b7a8n"):
        board.push_uci(uci)
    result = engine.play(board, chess.engine.Limit(nodes=300))
    assert result.move in board.legal_moves


def test_game_over_positions(engine):
    mated = chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")
    info = engine.analyse(mated, chess.engine.Limit(time=0.2))
    assert info["score"].relative == chess.engine.Mate(0)


@pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed")
def test_a_short_game_against_stockfish():
    zc = chess.engine.SimpleEngine.popen_uci(ZEROCHESS, timeout=60)
    sf = chess.engine.SimpleEngine.popen_uci(STOCKFISH, timeout=60)
    try:
        zc.configure({"WeightsFile": "uniform"})
        sf.configure({"Skill Level": 0, "Threads": 1, "Hash": 16})
        board = chess.Board()
        players = {chess.WHITE: zc, chess.BLACK: sf}
        while not board.is_game_over() and board.ply() < 30:
            result = players[board.turn].play(board, chess.engine.Limit(time=0.05))
            assert result.move in board.legal_moves
            board.push(result.move)
        assert board.ply() == 30 or board.is_game_over()
    finally:
        zc.quit()
        sf.quit()
