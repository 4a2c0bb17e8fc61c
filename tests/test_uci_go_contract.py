"""Issue 48: every ``go`` gets exactly one ``bestmove``, within its limits, legal in the
position the GUI sent (python-chess is the oracle), whatever the GUI got wrong; never a
stale position; depth and mate limits that end on a solved root. Raw pipes to a real
``python -m zerochess``, beside the other UCI tests (tests/uci_process.py)."""

import subprocess
import sys
import time

import chess
import chess.engine
import pytest

from uci_process import UciProcess

MATE_IN_ONE = "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4"
MATE_IN_TWO = "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 10"  # Legal's mate
BARE_KINGS = "8/8/4k3/8/8/3K4/8/8 w - - 0 1"
ONE_MOVE = "7k/8/8/8/8/8/1r6/K7 w - - 0 1"     # Kxb2 is the only move
DRAW_OR_LOSE = "7k/8/8/8/8/8/r7/K7 w - - 0 1"  # Kxa2 draws (proven at once), Kb1 loses
AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


def answer(engine, go: str, limit: float) -> tuple[list[str], str]:
    """Send ``go``; the lines up to its bestmove, which must come within ``limit`` seconds,
    and the move. Then ``stop`` and a sync: no second bestmove may follow."""
    start = time.monotonic()
    engine.send(go)
    lines = engine.expect("bestmove", timeout=limit)
    assert time.monotonic() - start < limit
    engine.send("stop")
    after = engine.sync()
    assert not any(l.startswith("bestmove") for l in after), after
    return lines, lines[-1].split()[1]


def assert_legal(move: str, board: chess.Board) -> None:
    assert chess.Move.from_uci(move) in board.legal_moves, (move, board.fen())


# -- depth and mate on solved positions -----------------------------------------------------

@pytest.mark.parametrize("fen,go,best", [
    (MATE_IN_ONE, "go depth 3", "f3f7"),
    (MATE_IN_ONE, "go depth 30", "f3f7"),
    (MATE_IN_ONE, "go mate 1", "f3f7"),
    (MATE_IN_TWO, "go mate 2", "d5f6"),
    (MATE_IN_TWO, "go depth 20", "d5f6"),
    (BARE_KINGS, "go depth 3", None),
    (BARE_KINGS, "go mate 3", None),
    (ONE_MOVE, "go depth 25", "a1b2"),
    (DRAW_OR_LOSE, "go depth 4", "a1a2"),   # the proven draw, chosen ply 1, holds no depth
])
def test_depth_and_mate_end_on_a_solved_root(engine, fen, go, best):
    engine.send(f"position fen {fen}")
    lines, move = answer(engine, go, limit=5)
    assert_legal(move, chess.Board(fen))
    if best is not None:
        assert move == best
    infos = [l for l in lines if l.startswith("info depth")]
    if fen == MATE_IN_TWO:   # a mate is reported at a real depth: its plies at least
        assert "score mate 2" in infos[-1] and int(infos[-1].split()[2]) >= 3


def test_depth_grows_and_ends_a_search_of_an_open_position(engine):
    engine.send("position startpos")
    lines, move = answer(engine, "go depth 3", limit=20)
    assert_legal(move, chess.Board())
    depths = [int(l.split()[2]) for l in lines if l.startswith("info depth")]
    assert depths[-1] >= 3 and depths == sorted(depths)


# -- malformed go: warned, obeyed in the rest, answered ---------------------------------------

@pytest.mark.parametrize("go,warning", [
    ("go foo nodes 100", "unknown word 'foo'"),
    ("go depth 0", "depth 0 taken as 1"),
    ("go wtime abc", "needs an integer"),
    ("go movestogo 0 wtime 1000 btime 1000", "movestogo 0 ignored"),
    ("go nodes -5", "ignored"),
    ("go mate 0", "ignored"),
    ("go nodes 50 nodes 60", "twice"),
    ("go movetime -20", "taken as 0"),
    ("go wtime 10000", "a clock for White only, with Black to move"),
    ("go wtime 10000 winc 100 movestogo 5", "a clock for White only"),
    ("go nodes", "needs an integer, got nothing"),
])
def test_a_malformed_go_is_warned_about_and_answered_with_a_legal_move(engine, go, warning):
    engine.send("position startpos moves e2e4")
    lines, move = answer(engine, go, limit=5)
    warnings = [l for l in lines if l.startswith("info string warning: ")]
    assert any(warning in l for l in warnings), lines
    assert not any(l.startswith("info string error") for l in lines), lines
    assert_legal(move, chess.Board(AFTER_E4))


def test_a_clock_for_the_other_side_only_moves_at_once_in_either_colour(engine):
    engine.send("position startpos")
    _, move = answer(engine, "go btime 60000 binc 1000", limit=2)
    assert_legal(move, chess.Board())


@pytest.mark.parametrize("go", ["go searchmoves e2e5 nodes 200", "go searchmoves e7e5 a1a8"])
def test_searchmoves_without_a_legal_move_answers_none(engine, go):
    engine.send("position startpos")
    lines, move = answer(engine, go, limit=5)
    assert move == "(none)"
    assert any("no move left to search" in l for l in lines), lines


def test_searchmoves_keeps_its_legal_moves(engine):
    engine.send("position startpos")
    lines, move = answer(engine, "go nodes 100 searchmoves e2e5 g1f3 B1C3", limit=5)
    assert move == "g1f3"
    assert any("not legal here, ignored: 'e2e5 B1C3'" in l for l in lines), lines


def test_a_go_while_searching_stops_that_search_first(engine):
    engine.send("position startpos")
    engine.send("go infinite")
    time.sleep(0.3)
    engine.send("go nodes 50")
    lines = engine.expect("bestmove")
    lines += engine.expect("bestmove")
    engine.send("stop")
    lines += engine.sync()
    assert sum(l.startswith("bestmove") for l in lines) == 2, lines
    assert any("go while searching" in l for l in lines)


def test_go_infinite_and_ponder_on_a_finished_game_wait_for_stop(engine):
    engine.send("position fen 7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")   # checkmated
    engine.send("go infinite")
    assert not any(l.startswith("bestmove") for l in engine.sync())
    engine.send("stop")
    assert engine.expect("bestmove")[-1] == "bestmove (none)"
    engine.send("stop")
    assert not any(l.startswith("bestmove") for l in engine.sync())


# -- never a stale position ------------------------------------------------------------------

@pytest.mark.parametrize("position,oracle,warning", [
    (f"position fen {AFTER_E4} 17", AFTER_E4, "after the sixth ignored"),
    ("position fen rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -", AFTER_E4, None),
    ("position fen 4k3/8/8/8/8/8/8/R3K3", "4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "taken as w - - 0 1"),
    ("position startpos moves e2e4 e7e5 e1e3 g1f3", chess.Board().fen(), None),
    ("position startpos moves e2e4 garbage d2d4", AFTER_E4, "move 2 ('garbage') and the rest ignored"),
    ("position fen 8/P7/8/8/8/8/8/K1k5 w - - 0 1 moves a7a8Q", "Q7/8/8/8/8/8/8/K1k5 b - - 0 1",
     "promotion letter read as lowercase"),
    ("position startpos junk moves e2e4", AFTER_E4, "words after startpos ignored"),
])
def test_what_stockfish_accepts_is_accepted_and_played_from(engine, position, oracle, warning):
    engine.send("position startpos")
    engine.send(position)
    lines = engine.sync()
    assert not any(l.startswith("info string error") for l in lines), lines
    if warning is not None:
        assert any(l.startswith("info string warning: ") and warning in l for l in lines), lines
    board = chess.Board(oracle)
    if "e1e3" in position:   # the legal prefix e2e4 e7e5
        board.push_uci("e2e4")
        board.push_uci("e7e5")
    engine.send("d")
    assert f"info string fen {board.fen()}" in engine.sync()
    _, move = answer(engine, "go nodes 50", limit=5)
    assert_legal(move, board)


@pytest.mark.parametrize("position", [
    "position fen garbage",
    "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1",   # 7 ranks
    "position middlegame",
    "position",
    "position fen",
])
def test_a_position_that_cannot_be_read_leaves_no_position(engine, position):
    engine.send("position startpos")
    engine.send(position)
    lines = engine.sync()
    assert any("no position until the next position command" in l for l in lines), lines
    lines, move = answer(engine, "go nodes 50", limit=5)
    assert move == "(none)"
    assert any("go without a position" in l for l in lines)
    engine.send("position startpos moves e2e4")   # a readable position brings play back
    _, move = answer(engine, "go nodes 50", limit=5)
    assert_legal(move, chess.Board(AFTER_E4))


def test_go_and_position_lines_that_are_not_utf8_are_still_read(engine):
    engine.send("position startpos")
    engine.send("", raw=b"position \xff\xfe startpos\n")   # unreadable: no position left
    lines = engine.sync()
    assert any("not valid UTF-8; read with the bad bytes replaced" in l for l in lines), lines
    assert any("no position until the next position command" in l for l in lines), lines
    _, move = answer(engine, "go depth 1", limit=5)
    assert move == "(none)"
    engine.send("", raw=b"position startpos moves e2e4 \xe9\n")   # the legal start
    engine.send("d")
    assert f"info string fen {AFTER_E4}" in engine.sync()
    start = time.monotonic()
    engine.send("", raw=b"go nodes 30 \xff\n")                    # still answered
    move = engine.expect("bestmove", timeout=5)[-1].split()[1]
    assert time.monotonic() - start < 5
    assert_legal(move, chess.Board(AFTER_E4))


# -- python-chess on solved positions --------------------------------------------------------

@pytest.mark.parametrize("fen,limit", [
    (MATE_IN_ONE, chess.engine.Limit(depth=20)),
    (MATE_IN_TWO, chess.engine.Limit(depth=20)),
    (MATE_IN_ONE, chess.engine.Limit(mate=2)),
    (MATE_IN_TWO, chess.engine.Limit(mate=2)),
    (BARE_KINGS, chess.engine.Limit(depth=20)),
])
def test_python_chess_analyse_returns_on_solved_positions(fen, limit):
    eng = chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "zerochess"], timeout=60)
    try:
        eng.configure({"WeightsFile": "uniform"})
        board = chess.Board(fen)
        started = time.monotonic()
        info = eng.analyse(board, limit)   # python-chess sets UCI_AnalyseMode for this
        assert time.monotonic() - started < 10
        assert chess.Move.from_uci(info["pv"][0].uci()) in board.legal_moves
        if fen != BARE_KINGS:
            assert info["score"].relative.mate() in (1, 2)
            assert info["depth"] >= 2 * info["score"].relative.mate() - 1
        result = eng.play(board, limit)
        assert result.move in board.legal_moves
    finally:
        eng.quit()


# -- analysis: first info at once, once a second, currmove after 3 s --------------------------

def test_go_infinite_reports_within_100ms_then_every_second_with_currmove_after_3s():
    e = UciProcess()
    try:
        e.send("uci")
        e.expect("uciok", timeout=15)
        e.sync(timeout=60)                 # the shipped network, loaded here
        e.send("setoption name UCI_AnalyseMode value true")
        e.send("position startpos moves e2e4")
        e.sync()
        start = time.monotonic()
        e.send("go infinite")
        e.expect("info depth", timeout=2)
        assert time.monotonic() - start < 0.1
        time.sleep(4.6)
        e.send("stop")
        lines = e.expect("bestmove", timeout=5)
        times = [int(l.split(" time ")[1].split()[0]) for l in lines if " time " in l]
        assert all(b - a <= 1100 for a, b in zip(times, times[1:])), times
        current = [l for l in lines if " currmove " in l]
        assert 1 <= len(current) <= 3, lines
        board = chess.Board(AFTER_E4)
        for line in current:
            words = line.split()
            assert words[:2] == ["info", "depth"] and words[3] == "currmove"
            assert chess.Move.from_uci(words[4]) in board.legal_moves
            assert 1 <= int(words[6]) <= board.legal_moves.count()
    finally:
        e.close()


# -- options: ScoreType, UCI_AnalyseMode, flags ----------------------------------------------

def test_score_type_chooses_the_centipawn_scale(engine):
    fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKB1R w KQkq - 0 1"   # White a knight down
    scores = {}
    for kind in ("centipawn", "centipawn_lc0"):
        engine.send(f"setoption name ScoreType value {kind}")
        engine.send("ucinewgame")
        engine.send(f"position fen {fen}")
        lines, _ = answer(engine, "go nodes 200", limit=10)
        last = [l for l in lines if l.startswith("info depth")][-1]
        scores[kind] = int(last.split(" score cp ")[1].split()[0])
    from zerochess.search.results import lc0_cp, q_to_cp
    assert (scores["centipawn"] == 0) == (scores["centipawn_lc0"] == 0)
    assert abs(scores["centipawn"]) <= abs(scores["centipawn_lc0"]) or abs(scores["centipawn"]) < 100
    assert q_to_cp(0.5) == pytest.approx(100, abs=15)   # 100 cp ~ a win half the time
    assert lc0_cp(0.5) == 89


@pytest.mark.parametrize("command,message", [
    ("setoption name ScoreType value millipawns", "takes one of centipawn, centipawn_lc0"),
    ("setoption name UCI_AnalyseMode value maybe", "UCI_AnalyseMode takes true or false"),
])
def test_new_options_name_a_bad_value(engine, command, message):
    engine.send(command)
    errors = [l for l in engine.sync() if l.startswith("info string error: ")]
    assert len(errors) == 1 and message in errors[0], errors


def test_options_as_command_line_flags():
    e = UciProcess([sys.executable, "-m", "zerochess", "--threads=2", "--weights-file", "uniform",
                    "--uci-show-wdl", "--move-overhead=250", "--ScoreType=centipawn_lc0"])
    try:
        e.send("uci")
        lines = e.expect("uciok", timeout=15)
        assert any(l.startswith("option name Threads type spin default 2 min 1 max ") for l in lines)
        assert "option name UCI_ShowWDL type check default true" in lines
        assert "option name Move Overhead type spin default 250 min 0 max 10000" in lines
        assert any(l.startswith("option name ScoreType type combo default centipawn_lc0") for l in lines)
        e.send("position startpos")
        e.send("go nodes 30")
        lines = e.expect("bestmove", timeout=15)
        assert " wdl " in [l for l in lines if l.startswith("info depth")][-1]
    finally:
        e.close()


@pytest.mark.parametrize("args,message", [
    (["--threads=0"], "--threads=0: option Threads must be between 1 and"),
    (["--no-such-thing=1"], "no such option: --no-such-thing"),
    (["--hash"], "--hash needs a value"),
    (["--clear-hash"], "is a button"),
])
def test_a_wrong_flag_is_a_clear_error(args, message):
    done = subprocess.run([sys.executable, "-m", "zerochess", *args], input="uci\n",
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert message in done.stderr and "uciok" not in done.stdout
