"""What a GUI sees when WeightsFile (or BookFile) points at a file that does not load, through
raw pipes: exactly one ``info string error:`` line saying which network is used instead, only
UCI lines on stdout, and a ``bestmove`` for every ``go``."""

import chess
import pytest
import torch

from test_onnx_network import BAD_KINDS, bad_onnx_file
from test_without_torch import no_torch_env  # noqa: F401 (a fixture: torch's import fails)
from uci_process import UciProcess
from zerochess.uci.player import SHIPPED_BOOK, short_reason

SHIPPED_NETWORK = SHIPPED_BOOK.parent / "network.pt"

UCI_PREFIXES = ("id ", "option ", "uciok", "readyok", "info ", "bestmove ")


def _bad_file(tmp_path, kind):
    path = tmp_path / f"{kind}.pt"
    shipped = SHIPPED_NETWORK.read_bytes()
    if kind == "missing":
        return tmp_path / "no" / "such.pt"
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "truncated":
        path.write_bytes(shipped[: len(shipped) // 2])
    elif kind == "random":
        path.write_bytes(bytes(range(256)) * 40)  # fixed "random" bytes: not a zip, not a pickle
    elif kind == "foreign":
        torch.save({"model": {"weight": torch.zeros(3, 3)}, "epoch": 3}, path)  # valid torch file
    return path


def _only_uci(lines):
    bad = [l for l in lines if not l.startswith(UCI_PREFIXES)]
    assert not bad, f"non-UCI lines on stdout: {bad!r}"


def _play(e, moves=""):
    e.send(f"position startpos{' moves ' + moves if moves else ''}")
    e.send("go nodes 50")
    lines = e.expect("bestmove", timeout=60)
    move = lines[-1].split()[1]
    board = chess.Board()
    for m in moves.split():
        board.push_uci(m)
    assert chess.Move.from_uci(move) in board.legal_moves, lines[-1]
    return lines


@pytest.mark.parametrize("kind", ["missing", "empty", "truncated", "random", "foreign"])
def test_a_bad_weights_file_falls_back_to_the_shipped_network_in_one_line(tmp_path, kind):
    path = _bad_file(tmp_path, kind)
    e = UciProcess()
    try:
        e.send("uci")
        lines = e.expect("uciok", timeout=15)
        e.send(f"setoption name WeightsFile value {path}")
        lines += e.sync(timeout=60)
        errors = [l for l in lines if l.startswith("info string error: ")]
        assert len(errors) == 1, lines
        assert f"cannot load WeightsFile {path}" in errors[0]
        assert errors[0].endswith("; using the shipped network"), errors[0]
        # the next go neither repeats the error nor goes without a bestmove
        played = _play(e)
        assert not [l for l in played if l.startswith("info string")], played
        _only_uci(lines + played)
        e.send("d")  # the engine is still alive and answering
        e.sync()
    finally:
        e.close()


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_a_bad_onnx_weights_file_keeps_the_network_and_says_why(tmp_path, kind):
    path, reason = bad_onnx_file(tmp_path, kind)
    e = UciProcess()
    try:
        e.send("uci")
        lines = e.expect("uciok", timeout=15)
        e.send("setoption name WeightsFile value zero")
        lines += e.sync(timeout=60)
        e.send(f"setoption name WeightsFile value {path}")
        errors = e.sync(timeout=60)
        assert len(errors) == 1, errors
        assert errors[0].startswith(f"info string error: cannot load WeightsFile {path}: {reason}")
        assert errors[0].endswith("; keeping WeightsFile zero"), errors[0]
        played = _play(e, "e2e4")
        assert not [l for l in played if l.startswith("info string")], played
        _only_uci(lines + errors + played)
    finally:
        e.close()


def test_the_last_network_that_loaded_is_kept_and_go_without_isready_still_answers(tmp_path):
    e = UciProcess()
    try:
        e.send("uci")
        lines = e.expect("uciok", timeout=15)
        e.send("setoption name WeightsFile value uniform")
        lines += e.sync()
        for kind in ("random", "foreign", "missing"):
            path = _bad_file(tmp_path, kind)
            e.send(f"setoption name WeightsFile value {path}")
            e.send("position startpos moves e2e4")
            e.send("go nodes 50")  # no isready: the load (and its failure) happens at go
            played = e.expect("bestmove", timeout=60)
            errors = [l for l in played if l.startswith("info string error: ")]
            assert len(errors) == 1, played
            assert errors[0].startswith(f"info string error: cannot load WeightsFile {path}: ")
            assert errors[0].endswith("; keeping WeightsFile uniform"), errors[0]
            assert chess.Move.from_uci(played[-1].split()[1]) in chess.Board(
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").legal_moves
            lines += played
            # the option was set back: the next go loads nothing and reports nothing
            again = _play(e)
            assert not [l for l in again if l.startswith("info string")], again
            lines += again
        _only_uci(lines)
    finally:
        e.close()


def test_a_bad_book_file_keeps_the_book_in_use(tmp_path):
    bad = tmp_path / "book.bin"
    bad.write_bytes(b"\x01" * 7)  # not a multiple of the 16-byte Polyglot entry
    e = UciProcess()
    try:
        e.send("uci")
        lines = e.expect("uciok", timeout=15)
        for line in ("setoption name WeightsFile value uniform", "setoption name OwnBook value true",
                     f"setoption name BookFile value {bad}"):
            e.send(line)
        lines += e.sync()
        errors = [l for l in lines if l.startswith("info string error: ")]
        assert len(errors) == 1 and f"cannot open BookFile {bad}" in errors[0], lines
        assert errors[0].endswith("; keeping no book"), errors[0]
        lines += _play(e)
        _only_uci(lines)
    finally:
        e.close()


def test_short_reason_is_one_line_and_cut_after_the_first_sentence():
    text = ("truncated or corrupt file (UnpicklingError: Weights only load failed. In PyTorch 2.6, we changed the default value of the "
            "`weights_only` argument in `torch.load` from `False` to `True`.\nPlease file an issue"
            " with the following\n\nUnsupported operand 159\n")
    reason = short_reason(RuntimeError(text))
    assert reason == "truncated or corrupt file (UnpicklingError: Weights only load failed. [...]"
    assert short_reason(EOFError()) == "EOFError"
    assert short_reason(ValueError("short\nsecond line")) == "short"
    assert len(short_reason(ValueError("x" * 1000))) <= 170


def _score_and_pv(e, weights):
    """``score cp ... pv ...`` of a tiny search with WeightsFile ``weights`` (the lines before
    it are returned too, to check that none is an error)."""
    e.send(f"setoption name WeightsFile value {weights}")
    lines = e.sync(timeout=60)
    e.send("position startpos moves e2e4")
    e.send("go nodes 32")
    lines += e.expect("bestmove", timeout=60)
    info = [l.split() for l in lines if l.startswith("info depth")][-1]
    return info[info.index("score"):info.index("score") + 3] + info[info.index("pv"):], lines


@pytest.mark.parametrize("torch_blocked", [False, True])
def test_an_onnx_network_file_without_the_suffix_plays_as_what_it_is(tmp_path, torch_blocked,
                                                                        request):
    """The shipped ``zero`` network copied to names without ``.onnx`` (none, and ``.pt``): the
    engine reads it as the ONNX network it is (by content), with or without torch, and
    searches exactly as with WeightsFile zero (and not as with the default network)."""
    zero = SHIPPED_BOOK.parent / "zero.onnx"
    copies = [tmp_path / "zero-network", tmp_path / "zero-network.pt"]
    for copy in copies:
        copy.write_bytes(zero.read_bytes())
    env = request.getfixturevalue("no_torch_env") if torch_blocked else None
    e = UciProcess(env=env)
    try:
        e.send("uci")
        lines = e.expect("uciok", timeout=30)
        expected, seen = _score_and_pv(e, "zero")
        other, more = _score_and_pv(e, "default")
        assert other != expected  # the two shipped networks tell apart in this search
        lines += seen + more
        for copy in copies:
            found, seen = _score_and_pv(e, copy)
            assert found == expected, (copy, seen)
            lines += seen
        assert not [l for l in lines if l.startswith("info string")], lines
        _only_uci(lines)
    finally:
        e.close()
