"""UCI conformance through raw pipes: bad input, responsiveness, game-end positions,
reproducibility. (tests/test_uci_client.py drives the engine with python-chess.)"""

import time

import pytest

from uci_process import UciProcess


def test_uci_handshake_lists_every_option_and_comes_within_5s():
    start = time.monotonic()
    e = UciProcess()
    try:
        e.send("uci")
        lines = e.expect("uciok", timeout=5)
        assert time.monotonic() - start < 5
        assert lines[0].startswith("id name zerochess ")
        assert any(l.startswith("id author ") for l in lines)
        names = {l.split(" type ")[0][len("option name "):] for l in lines if l.startswith("option name ")}
        assert {"Hash", "Threads", "MinibatchSize", "WeightsFile", "Device", "Move Overhead", "MultiPV",
                "Ponder", "UCI_ShowWDL", "OwnBook", "BookFile", "Nodes", "Temperature"} <= names
        assert "option name UCI_ShowWDL type check default false" in lines
    finally:
        e.close()


# A malformed go or position is no longer refused but read as Stockfish reads it (or, for a
# position that cannot be read at all, leaves no position): tests/test_uci_go_contract.py.
BAD_COMMANDS = [
    ("frobnicate", "unknown command"),
    ("setoption name NoSuchThing value 1", "no such option"),
    ("setoption name Hash value 999999999", "between"),
    ("setoption name Ponder value perhaps", "true or false"),
    ("ponderhit", "ponderhit without"),
]


@pytest.mark.parametrize("command,message", BAD_COMMANDS)
def test_bad_input_is_reported_and_the_last_valid_state_kept(engine, command, message):
    engine.send("position startpos moves d2d4")
    engine.send(command)
    lines = engine.sync()
    errors = [l for l in lines if l.startswith("info string error: ")]
    assert len(errors) == 1 and message in errors[0], lines
    engine.send("d")
    state = engine.sync()
    assert "info string fen rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1" in state
    # and the engine still plays from that position
    engine.send("go nodes 50")
    best = engine.expect("bestmove")[-1]
    assert best.split()[1] in ("d7d5", "d7d6", "e7e5", "e7e6", "g8f6", "b8c6") or len(best.split()[1]) == 4


def test_huge_line_and_non_utf8_bytes(engine):
    engine.send("position startpos moves " + "e2e4 " * 20000)  # a 100 kB line: its legal start
    lines = engine.sync()
    assert len(lines) == 1 and lines[0].startswith("info string warning: position: move 2 ")
    engine.send("d")
    assert any(l.endswith("b KQkq - 0 1") and "4P3" in l for l in engine.sync())
    engine.send("", raw=b"\x00\x01\x02 garbage \xc3\x28\n")       # ignored
    engine.send("", raw=b"isready \xff\n")
    lines = engine.sync()
    assert sum(l.startswith("info string error: ") for l in lines) == 2, lines
    engine.send("d")
    assert any(l.endswith("b KQkq - 0 1") and "4P3" in l for l in engine.sync())
    engine.send("", raw=b"position \xff\xfe startpos\n")  # a position, unreadable: none left
    engine.send("d")
    lines = engine.sync()
    assert "info string no position: the last position command could not be read" in lines


def test_isready_and_stop_are_answered_within_100ms_while_searching(engine):
    engine.send("position startpos")
    engine.send("go infinite")
    time.sleep(0.5)
    for _ in range(3):
        start = time.monotonic()
        engine.send("isready")
        engine.expect("readyok", timeout=2)
        assert time.monotonic() - start < 0.1
    start = time.monotonic()
    engine.send("stop")
    lines = engine.expect("bestmove", timeout=2)
    assert time.monotonic() - start < 0.1
    assert any(l.startswith("info depth") for l in lines)


def test_infinite_and_ponder_wait_for_stop_or_ponderhit(engine):
    engine.send("position fen 4k3/8/8/8/8/8/8/R3K3 w Q - 0 1")
    engine.send("go infinite nodes 100")   # the node limit is reached at once...
    time.sleep(0.5)
    engine.send("isready")
    lines = engine.expect("readyok")
    assert not any(l.startswith("bestmove") for l in lines)  # ...but bestmove waits for stop
    engine.send("stop")
    engine.expect("bestmove")
    engine.send("go ponder wtime 100 btime 100")   # a tiny clock: pondering must ignore it
    time.sleep(0.5)
    engine.send("isready")
    assert not any(l.startswith("bestmove") for l in engine.expect("readyok"))
    engine.send("ponderhit")
    engine.expect("bestmove", timeout=2)


def test_info_lines_carry_the_required_fields(engine):
    engine.send("setoption name UCI_ShowWDL value true")
    engine.send("setoption name MultiPV value 3")
    engine.send("position startpos")
    engine.send("go nodes 3000")
    lines = engine.expect("bestmove")
    infos = [l for l in lines if l.startswith("info depth")]
    assert infos
    last = infos[-3:]
    assert [l.split(" multipv ")[1].split()[0] for l in last] == ["1", "2", "3"]
    for word in ("seldepth", "score cp", "wdl", "nodes", "nps", "hashfull", "time", "pv"):
        assert all(f" {word} " in l for l in last), (word, last)
    w, d, l = (int(x) for x in last[0].split(" wdl ")[1].split()[:3])
    assert w + d + l == 1000
    assert lines[-1].split()[0] == "bestmove" and " ponder " in lines[-1]


@pytest.mark.parametrize("fen,score", [
    ("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", "score mate 0"),     # checkmated
    ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "score cp 0"),       # stalemated
])
def test_no_legal_move_gives_bestmove_none(engine, fen, score):
    engine.send(f"position fen {fen}")
    engine.send("go movetime 200")
    lines = engine.expect("bestmove", timeout=3)
    assert lines[-1] == "bestmove (none)"
    assert any(score in l for l in lines)


def test_same_go_nodes_after_ucinewgame_gives_the_same_output(engine):
    def run():
        engine.send("ucinewgame")
        engine.send("position startpos moves e2e4 c7c5 g1f3")
        engine.send("go nodes 3000")
        lines = engine.expect("bestmove")
        strip = lambda l: " ".join(w for i, w in enumerate(l.split())
                                   if l.split()[i - 1] not in ("nps", "time") if i > 0)
        return [strip(l) for l in lines if l.startswith("info depth")][-1], lines[-1]
    assert run() == run()


def test_special_moves_in_and_out(engine):
    import chess
    # en passant, castling and an underpromotion given to the engine in `position`
    engine.send("position fen r3k2r/1P6/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1 moves e5d6 e8g8 b7a8n")
    engine.send("d")
    fen = "N4rk1/8/3P4/8/8/8/8/R3K2R b KQ - 0 2"
    assert f"info string fen {fen}" in engine.sync()
    engine.send("go nodes 500")
    best = engine.expect("bestmove")[-1].split()[1]
    assert chess.Move.from_uci(best) in chess.Board(fen).legal_moves
    # the engine finds the mate with king and rook, and reports it as a mate score
    engine.send("position fen 6k1/8/6K1/8/8/8/8/R7 w - - 0 1")
    engine.send("go nodes 5000")
    lines = engine.expect("bestmove")
    assert lines[-1].split()[1] == "a1a8"
    assert "score mate 1" in lines[-2]


def test_searchmoves_restricts_the_root(engine):
    engine.send("position startpos")
    engine.send("go nodes 2000 searchmoves a2a3 h2h3")
    lines = engine.expect("bestmove")
    assert lines[-1].split()[1] in ("a2a3", "h2h3")
    engine.send("setoption name MultiPV value 4")
    engine.send("go nodes 1000 searchmoves g1f3 b1c3")
    lines = engine.expect("bestmove")
    final = [l for l in lines if l.startswith("info depth")][-2:]
    assert sorted(l.split(" pv ")[1].split()[0] for l in final) == ["b1c3", "g1f3"]
