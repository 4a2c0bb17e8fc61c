"""The one atomic writer (zerochess.atomic): whole files or none, ordinary permissions,
and temporary names that remove_partial recognises."""

import json
import os

import pytest

from zerochess.atomic import write_atomic, write_json_atomic, write_text_atomic
from zerochess.train.data.format import remove_partial


def test_bytes_text_and_json_land_whole_in_a_new_directory(tmp_path):
    target = tmp_path / "a" / "b"
    assert write_atomic(target / "x.bin", lambda f: f.write(b"\x00\x01")) == target / "x.bin"
    write_text_atomic(target / "x.txt", "caf\u00e9\n")
    write_json_atomic(target / "x.json", {"b": 1, "a": [2]})
    assert (target / "x.bin").read_bytes() == b"\x00\x01"
    assert (target / "x.txt").read_text(encoding="utf-8") == "caf\u00e9\n"
    assert json.loads((target / "x.json").read_text()) == {"a": [2], "b": 1}
    assert (target / "x.json").read_text() == json.dumps({"a": [2], "b": 1}, indent=1, sort_keys=True)
    assert sorted(os.listdir(target)) == ["x.bin", "x.json", "x.txt"]


def test_a_failed_write_keeps_the_old_file_and_leaves_nothing(tmp_path):
    path = tmp_path / "state.json"
    write_json_atomic(path, {"step": 1})

    def half(f):
        f.write(b'{"step": ')
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic(path, half)
    assert json.loads(path.read_text()) == {"step": 1}
    assert os.listdir(tmp_path) == ["state.json"]


def test_the_file_gets_the_umask_permissions_not_private_ones(tmp_path):
    umask = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "book.txt", "x")
    finally:
        os.umask(umask)
    assert (tmp_path / "book.txt").stat().st_mode & 0o777 == 0o644


def test_a_killed_writers_temporary_file_is_what_remove_partial_deletes(tmp_path):
    seen = []

    def write(f):  # look at the directory while the write is under way
        f.write(b"x")
        seen.extend(os.listdir(tmp_path))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(tmp_path / "metrics.jsonl", write)
    assert len(seen) == 1 and seen[0].startswith("metrics.jsonl.tmp-")
    (tmp_path / seen[0]).write_bytes(b"x")  # what a SIGKILL (no clean-up) would have left
    assert remove_partial(tmp_path) == [tmp_path / seen[0]] and os.listdir(tmp_path) == []
