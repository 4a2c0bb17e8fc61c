"""`zerochess train label`: teacher-labelled positions in the one data format.

Real Stockfish (Debian's package) is the teacher of the small runs; a deliberately failing
teacher (tests/flaky_teacher.py) shows that crashes, hangs and garbage are survived.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import chess
import numpy as np
import pytest

from zerochess.chess.board import Board
from zerochess.chess.encoding import encode_board, legal_move_indices
from zerochess.train.data.dataset import load_split
from zerochess.train.data.format import load_shard
from zerochess.train.data.label import LabelConfig, label, read_positions_file
from zerochess.train.data.teacher import Line, TeacherConfig, policy_target

HERE = Path(__file__).parent
STOCKFISH = shutil.which("stockfish") or shutil.which("/usr/games/stockfish")
needs_stockfish = pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed")


def small_config(**over) -> LabelConfig:
    teacher = over.pop("teacher", None) or TeacherConfig(command=[STOCKFISH or "stockfish"],
                                                         depth=3, multipv=3)
    base = dict(teacher=teacher, games=4, games_per_chunk=2, max_plies=12, val_every=2, seed=7)
    base.update(over)
    return LabelConfig(**base)


def all_shards(out: Path) -> list:
    meta = json.loads((out / "metadata.json").read_text())
    return [load_shard(out / name) for name in sorted(meta["shards"])]


def checksums(out: Path) -> dict:
    meta = json.loads((out / "metadata.json").read_text())
    return {name: {a: v["sha256"] for a, v in json.loads((out / name / "shard.json").read_text())
                   ["arrays"].items()} for name in sorted(meta["shards"])}


@needs_stockfish
def test_two_games_already_make_a_validation_split(tmp_path):
    """Whatever --val-every and the chunk size, game 1 is a validation game (then 1 + n,
    1 + 2n, ...): the smallest labelled set trains with `train supervise`."""
    meta = label(small_config(games=2, games_per_chunk=20, val_every=20, max_plies=6),
                 tmp_path / "d")
    assert meta["samples"]["train"] > 0 and meta["samples"]["val"] > 0
    val = load_split(tmp_path / "d", "val")
    assert {int(g) for sh in val.shards for g in np.asarray(sh["game"])} == {1}


@needs_stockfish
def test_tiny_labelling_run_writes_a_complete_data_set(tmp_path):
    meta = label(small_config(), tmp_path / "d")
    assert meta["status"] == "complete"
    assert meta["samples"]["train"] > 0 and meta["samples"]["val"] > 0
    shards = all_shards(tmp_path / "d")
    for sh in shards:
        # the engine's own name and the search limit are recorded
        assert sh.source["kind"] == "teacher" and "Stockfish" in sh.source["engine"]
        assert sh.source["teacher"]["depth"] == 3 and sh.source["teacher"]["multipv"] == 3
        games = set(np.asarray(sh["game"]).tolist())
        assert all((g % 2 == 1) == (sh.split == "val") for g in games)  # split by game
    keys = np.concatenate([np.asarray(sh["key"]) for sh in shards])
    assert len(keys) == len(np.unique(keys))  # deduplicated by Zobrist key
    # the teacher's time is timed on our clock, so it is a part of the wall time: Stockfish's
    # own "info ... time" (milliseconds plus one) summed to more than the wall at low depth
    timing = meta["timing"]
    assert 0 < timing["outside_teacher_share"] < 1


@needs_stockfish
def test_policy_target_sums_to_one_over_legal_moves_only(tmp_path):
    label(small_config(games=2), tmp_path / "d")
    checked = 0
    for sh in all_shards(tmp_path / "d"):
        po, pi, pw = (np.asarray(sh[k]) for k in ("policy_offsets", "policy_indices", "policy_weights"))
        lo, li = np.asarray(sh["legal_offsets"]), np.asarray(sh["legal_indices"])
        for i in range(len(sh)):
            idx, w = pi[po[i]:po[i + 1]], pw[po[i]:po[i + 1]]
            legal = set(li[lo[i]:lo[i + 1]].tolist())
            assert abs(float(w.sum()) - 1) < 1e-5 and (w >= 0).all()
            assert set(idx.tolist()) <= legal and len(set(idx.tolist())) == len(idx)
            assert int(sh["teacher_best"][i]) in legal
            assert abs(float(np.asarray(sh["wdl"][i]).sum()) - 1) < 1e-5
            checked += 1
    assert checked > 0


def test_policy_target_prefers_the_better_move_and_honours_temperature():
    lines = [Line(chess.Move.from_uci("e2e4"), 40, None, 0.0),
             Line(chess.Move.from_uci("d2d4"), 30, None, 0.0),
             Line(chess.Move.from_uci("g1h3"), -300, None, 0.0)]
    w = policy_target(lines, 0.04)
    assert abs(sum(w) - 1) < 1e-9 and w[0] > w[1] > w[2] and w[2] < 0.01
    assert policy_target(lines, 0) == [1.0, 0.0, 0.0]
    assert policy_target(lines, 1.0)[2] > w[2]  # hotter: flatter


@pytest.mark.parametrize("mode", ["crash", "hang", "garbage"])
def test_a_failing_teacher_is_restarted_and_nothing_is_lost(tmp_path, mode):
    teacher = TeacherConfig(command=[sys.executable, str(HERE / "flaky_teacher.py"), mode, "4"],
                            depth=1, multipv=2, timeout=2.0)
    meta = label(small_config(teacher=teacher, games=2, max_plies=8, random_plies=0), tmp_path / "d")
    assert meta["status"] == "complete"
    assert meta["timing"]["teacher_failures"] >= 2  # every 4th go failed, and was retried
    assert meta["timing"]["positions_skipped"] == 0  # each retry on a fresh process succeeded
    total = meta["samples"]["train"] + meta["samples"]["val"]
    assert total + meta["dedup"]["duplicates_dropped"] == 16  # 2 games x 8 plies, all labelled


def test_the_teachers_time_is_the_wait_for_its_answer_not_what_it_reports():
    """The labeller's outside share needs the teacher's real time: engines report their own
    (Stockfish: whole milliseconds plus one), which at depth 4 is more than the whole search.
    This teacher takes 80 ms and reports 1 ms."""
    from zerochess.train.data.teacher import Teacher
    teacher = Teacher(TeacherConfig(command=[sys.executable, str(HERE / "flaky_teacher.py"),
                                             "slow", "80"], depth=1, multipv=2))
    try:
        t0 = time.perf_counter()
        lines = teacher.analyse(chess.Board())
        wall = time.perf_counter() - t0
    finally:
        teacher.close()
    assert len(lines) == 2 and lines[0].seconds == lines[1].seconds
    assert 0.08 <= lines[0].seconds <= wall


def test_a_teacher_that_cannot_start_is_a_clear_error(tmp_path):
    from click.testing import CliRunner

    from zerochess.train.data.label_cli import label as label_cmd
    res = CliRunner().invoke(label_cmd, ["--out", str(tmp_path / "d"), "--teacher",
                                         "/nonexistent/teacher", "--games", "1", "--depth", "1"])
    assert res.exit_code != 0
    assert "/nonexistent/teacher" in res.output and "Traceback" not in res.output


def test_positions_file_errors_name_the_line(tmp_path):
    bad = tmp_path / "bad.epd"
    bad.write_text("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\nnot a position\n")
    with pytest.raises(ValueError, match="bad.epd:2"):
        read_positions_file(str(bad))


@needs_stockfish
def test_a_pgn_source_labels_every_position_of_its_games(tmp_path):
    pgn = tmp_path / "g.pgn"
    pgn.write_text('[Event "t"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *\n\n[Event "u"]\n\n1. d4 d5 *\n')
    meta = label(small_config(source=str(pgn), games_per_chunk=1), tmp_path / "d")
    assert meta["games"] == 2
    # the positions before each move: 6 + 2, less the second game's start position (a repeat)
    assert meta["samples"]["train"] + meta["samples"]["val"] == 7
    assert meta["dedup"]["duplicates_dropped"] == 1
    sh = load_shard(tmp_path / "d" / "c00000-train")
    b = Board()
    moves = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]
    for i, uci in enumerate(moves):
        assert np.array_equal(np.asarray(sh["tokens"][i]), encode_board(b))
        assert sorted(np.asarray(sh["legal_indices"])[sh["legal_offsets"][i]:sh["legal_offsets"][i + 1]]
                      .tolist()) == sorted(legal_move_indices(b).tolist())
        b.push_uci(uci)


@needs_stockfish
def test_resume_after_sigkill_reproduces_the_uninterrupted_data_set(tmp_path):
    args = ["--depth", "3", "--multipv", "3", "--games", "6", "--games-per-chunk", "1",
            "--max-plies", "16", "--val-every", "3", "--seed", "5", "--teacher", STOCKFISH]
    code = "from zerochess.cli import main; main()"
    args = ["train", "label", *args]
    whole = tmp_path / "whole"
    subprocess.run([sys.executable, "-c", code, *args, "--out", str(whole)], check=True,
                   capture_output=True)
    killed = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-c", code, *args, "--out", str(killed)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (killed / "c00002-val" / "shard.json").exists():
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert json.loads((killed / "metadata.json").read_text())["status"] == "in-progress"
    subprocess.run([sys.executable, "-c", code, *args, "--out", str(killed)], check=True,
                   capture_output=True)
    assert checksums(killed) == checksums(whole)


def test_other_settings_on_an_existing_data_set_are_refused(tmp_path):
    teacher = TeacherConfig(command=[sys.executable, str(HERE / "flaky_teacher.py"), "crash", "1000"],
                            depth=1, multipv=2)
    label(small_config(teacher=teacher, games=1, max_plies=4), tmp_path / "d")
    with pytest.raises(ValueError, match="other settings"):
        label(small_config(teacher=teacher, games=1, max_plies=5), tmp_path / "d")
    # more games with the same settings grow the data set
    meta = label(small_config(teacher=teacher, games=3, max_plies=4), tmp_path / "d")
    assert meta["games"] == 3 and meta["status"] == "complete"
