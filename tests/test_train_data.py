"""Phase-1 data: random play, shards, the generate pipeline and the batch loader."""

import json
import shutil

import numpy as np
import pytest

from zerochess.chess import Board, encode_board, index_to_move, legal_move_indices
from zerochess.chess.layout import SEQ_LEN, VOCAB_SIZE
from legacy_shards import downgrade_dataset
from zerochess.train.data.batches import epoch_order, iterate_batches
from zerochess.train.data.dataset import load_split, open_shard
import zerochess.train.data.format as fmt
from zerochess.train.data.format import FORMAT_VERSION, ShardError, load_shard, write_shard
from zerochess.train.data.generate import GenerateConfig, generate
from zerochess.train.data.randomplay import (KIND_MATE, KIND_RANDOM, TRUNCATED, PlayConfig,
                                             capture_value, play_game)

PLAY = PlayConfig(max_plies=60, min_plies=4)
CFG = GenerateConfig(games=12, seed=7, games_per_shard=4, val_fraction=0.25, play=PLAY)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("data") / "d"
    generate(CFG, out, workers=1)
    return out


ALL_ARRAYS = ["tokens", "wdl", "policy_offsets", "policy_indices", "policy_weights", "move",
              "outcome", "kind", "game", "ply", "p_max", "p_top5", "legal_offsets",
              "legal_indices", "game_index", "game_plies", "game_result", "game_end"]


def shard_arrays(path):
    sh = load_shard(path)
    assert sorted(sh.arrays) == sorted(ALL_ARRAYS) and sh.source["kind"] == "random-play"
    return {k: np.asarray(sh[k]) for k in ALL_ARRAYS}


def test_samples_replay_as_legal_games(dataset):
    """Every random-play sample is the position reached by the previous samples' moves, with
    the board's own tokens and legal moves; mate samples' moves really mate."""
    sh = load_shard(dataset / "train-00000")
    off, idx = sh["legal_offsets"], sh["legal_indices"]
    checked = mates = 0
    for g in np.unique(sh["game"]):
        rows = np.nonzero(sh["game"] == g)[0]
        board = before = Board()
        for r in rows:
            # A position's mate-in-1 samples follow its random-play sample.
            here = before if sh["kind"][r] == KIND_MATE else board
            assert np.array_equal(sh["tokens"][r], encode_board(here))
            assert np.array_equal(idx[off[r]:off[r + 1]], legal_move_indices(here))
            assert sh["ply"][r] == len(here)
            if sh["kind"][r] == KIND_MATE:
                b = here.copy()
                b.push_uci(index_to_move(b, int(sh["move"][r])))
                assert b.is_checkmate() and sh["outcome"][r] == 1
                mates += 1
            else:
                before = board.copy()
                board.push_uci(index_to_move(board, int(sh["move"][r])))
                checked += 1
        gi = list(sh["game_index"]).index(g)
        assert sh["game_plies"][gi] == len(board)
    assert checked > 50 and mates > 0


def test_outcome_is_from_the_side_to_move(dataset):
    sh = load_shard(dataset / "train-00001")
    result = dict(zip(sh["game_index"].tolist(), sh["game_result"].tolist()))
    rnd = sh["kind"] == KIND_RANDOM
    white = sh["ply"] % 2 == 0
    expected = np.array([result[g] for g in sh["game"]]) * np.where(white, 1, -1)
    assert np.array_equal(sh["outcome"][rnd], expected[rnd])


SHARDS = ["train-00000", "val-00000", "train-00001", "val-00001", "train-00002", "val-00002"]


def test_split_is_by_game_and_metadata_counts(dataset):
    """Each unit of 4 games writes a train and a val shard; with val_fraction 0.25 games 1, 5
    and 9 are the validation games (dataset.is_val_game)."""
    meta = json.loads((dataset / "metadata.json").read_text())
    assert meta["status"] == "complete"
    splits = {n: s["split"] for n, s in meta["shards"].items()}
    assert sorted(splits) == sorted(SHARDS) and all(n.startswith(s) for n, s in splits.items())
    games = {sp: set() for sp in ("train", "val")}
    for name, sp in splits.items():
        games[sp] |= set(np.asarray(load_shard(dataset / name)["game_index"]).tolist())
    assert games["val"] == {1, 5, 9} and games["train"] == set(range(12)) - {1, 5, 9}
    assert len(load_split(dataset, "train")) == meta["samples"]["train"]


@pytest.mark.parametrize("games", range(2, 13))
def test_any_run_of_two_games_or_more_has_a_validation_split(tmp_path, games):
    """At the default 250 games per shard, one unit holds the whole run: validation games
    come from inside it (game 1, then every tenth), and `train supervise` finds both splits."""
    meta = generate(GenerateConfig(games=games, seed=games, play=PLAY), tmp_path / "d")
    assert meta["samples"]["val"] > 0 and meta["samples"]["train"] > 0
    assert len(load_split(tmp_path / "d", "val")) == meta["samples"]["val"]
    val = set(np.asarray(load_shard(tmp_path / "d" / "val-00000")["game_index"]).tolist())
    assert val == ({1, 11} if games > 11 else {1})


def test_same_output_for_any_number_of_workers(dataset, tmp_path):
    generate(CFG, tmp_path / "d2", workers=2)
    for name in SHARDS:
        a, b = shard_arrays(dataset / name), shard_arrays(tmp_path / "d2" / name)
        for k in ALL_ARRAYS:
            assert np.array_equal(a[k], b[k]), (name, k)


def test_killed_run_continues_and_cleans_up(dataset, tmp_path):
    out = tmp_path / "d"

    def die_after_first_shard(n):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        generate(CFG, out, workers=1, progress=die_after_first_shard)
    assert json.loads((out / "metadata.json").read_text())["status"] == "in-progress"
    with pytest.raises(ShardError, match="incomplete"):
        load_split(out, "train")
    made = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert made == ["train-00000", "val-00000"]
    shutil.rmtree(out / "val-00000")  # killed between a unit's two shards
    (out / "val-00002.tmp-999").mkdir()  # a writer killed mid-shard
    (out / "val-00002.tmp-999" / "tokens.npy").write_bytes(b"partial")
    meta = generate(CFG, out, workers=1)
    assert meta["status"] == "complete" and not list(out.glob("*.tmp-*"))
    for name in SHARDS:
        a, b = shard_arrays(dataset / name), shard_arrays(out / name)
        assert all(np.array_equal(a[k], b[k]) for k in ALL_ARRAYS)


def test_other_settings_on_an_existing_directory_are_refused(dataset, tmp_path):
    shutil.copytree(dataset, tmp_path / "d")
    other = GenerateConfig(games=12, seed=8, games_per_shard=4, val_fraction=0.25, play=PLAY)
    with pytest.raises(ShardError, match="other settings") as e:
        generate(other, tmp_path / "d")
    assert "metadata.json" in str(e.value)


def test_shard_round_trip(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    n = 5
    arrays = {
        "tokens": rng.integers(0, VOCAB_SIZE, (n, SEQ_LEN)).astype(np.uint8),
        "wdl": np.eye(3, dtype=np.float32)[[2, 0, 1, 2, 1]],
        "move": np.arange(n, dtype=np.int16),
        "outcome": np.array([1, -1, 0, 1, 0], np.int8),
        "kind": np.array([0, 0, 1, 0, 0], np.uint8),
        "game": np.array([3, 3, 3, 4, 4], np.int32),
        "ply": np.array([0, 1, 1, 0, 1], np.int16),
        "p_max": np.full(n, 0.5, np.float32),
        "p_top5": np.ones(n, np.float32),
        "legal_offsets": np.array([0, 2, 3, 4, 6, 7], np.int64),
        "legal_indices": np.arange(7, dtype=np.int16),
        "policy_offsets": np.array([0, 2, 3, 4, 6, 7], np.int64),
        "policy_indices": np.arange(7, dtype=np.int16),
        "policy_weights": np.array([0.25, 0.75, 1, 1, 0.5, 0.5, 1], np.float32),
        "game_index": np.array([3, 4], np.int32),
        "game_plies": np.array([2, 2], np.int16),
        "game_result": np.array([1, 0], np.int8),
        "game_end": np.array([1, TRUNCATED], np.uint8),
    }
    source = {"kind": "random-play", "seed": 1}
    write_shard(tmp_path / "s", arrays, source, split="train")
    sh = load_shard(tmp_path / "s")
    assert sh.header["format_version"] == FORMAT_VERSION and sh.split == "train" and len(sh) == n
    assert sh.source == source and sh.games == 2
    for k, a in arrays.items():
        assert sh[k].dtype == a.dtype and np.array_equal(sh[k], a), k
    # small arrays are read (no descriptor held), large ones memory-mapped; both read-only
    assert not isinstance(sh["tokens"], np.memmap) and not sh["tokens"].flags.writeable
    monkeypatch.setattr(fmt, "SMALL_ARRAY_BYTES", -1)
    mapped = load_shard(tmp_path / "s")
    assert isinstance(mapped["tokens"], np.memmap) and np.array_equal(mapped["tokens"], arrays["tokens"])
    bad = dict(arrays, move=arrays["move"].astype(np.int32))
    with pytest.raises(ValueError, match="move.npy"):
        write_shard(tmp_path / "t", bad, source)
    short = dict(arrays, policy_weights=arrays["policy_weights"][:-1])
    with pytest.raises(ValueError, match="policy_weights.npy"):
        write_shard(tmp_path / "t", short, source)
    with pytest.raises(ValueError, match="policy_weights"):
        write_shard(tmp_path / "t", {k: v for k, v in arrays.items() if k != "policy_weights"}, source)
    unnormalised = dict(arrays, policy_weights=arrays["policy_weights"] * 2)
    with pytest.raises(ValueError, match="sum to 1"):
        write_shard(tmp_path / "t", unnormalised, source)
    soft = dict(arrays, wdl=np.full((n, 3), 0.5, np.float32))
    with pytest.raises(ValueError, match="wdl.npy"):
        write_shard(tmp_path / "t", soft, source)
    with pytest.raises(ValueError, match="source kind"):
        write_shard(tmp_path / "t", arrays, {"kind": "dream"})
    assert not (tmp_path / "t").exists()


def test_version_1_shards_are_still_read(dataset, tmp_path):
    """A data set written by the first phase-1 format (no sampler distribution) loads with
    the played move as its one-hot policy target, and gathers the same positions."""
    downgrade_dataset(dataset, tmp_path / "d", version=1)
    sh = open_shard(tmp_path / "d" / "train-00000")
    assert sh.header["legacy"]["format_version"] == 1 and "sampler_prob" not in sh
    old, new = load_split(tmp_path / "d", "train"), load_split(dataset, "train")
    assert not old.has_policy_distribution and new.has_policy_distribution
    idx = np.arange(10)
    a, b = old.gather(idx), new.gather(idx)
    assert np.array_equal(a.tokens, b.tokens) and np.array_equal(a.legal, b.legal)
    assert np.array_equal(a.wdl, b.wdl) and np.array_equal(a.move, b.move)
    assert a.target is None
    onehot = old.gather(idx, with_target=True).target
    assert np.array_equal(onehot.argmax(1), a.move) and (onehot.max(1) == 1).all()


def test_sampler_prob_is_the_distribution_the_move_was_drawn_from(dataset):
    """Per sample: a distribution over legal moves (all of them, for a random-play move)
    whose largest entry is p_max; a mate-in-1 sample's is all on its mating move. The dense
    batch target matches."""
    sh = load_shard(dataset / "train-00000")
    off, prob = np.asarray(sh["policy_offsets"]), np.asarray(sh["policy_weights"], np.float64)
    idx = np.asarray(sh["policy_indices"])
    loff, lidx = np.asarray(sh["legal_offsets"]), np.asarray(sh["legal_indices"])
    for r in range(len(sh)):
        p = prob[off[r]:off[r + 1]]
        assert abs(p.sum() - 1) < 2e-3 and (p > 0).sum() >= 1
        assert p.max() == pytest.approx(sh["p_max"][r], rel=1e-3)
        assert set(idx[off[r]:off[r + 1]]) <= set(lidx[loff[r]:loff[r + 1]])
        if sh["kind"][r] == KIND_MATE:
            assert p.max() == 1.0 and idx[off[r] + p.argmax()] == sh["move"][r]
        else:
            assert (p > 0).all() and off[r + 1] - off[r] == loff[r + 1] - loff[r]  # every legal move could have been drawn
    data = load_split(dataset, "train")
    b = data.gather(np.arange(len(data))[::7], with_target=True)
    assert np.allclose(b.target.sum(1), 1.0, atol=1e-6)
    assert (b.target[~b.legal] == 0).all() and (b.target[np.arange(len(b.move)), b.move] > 0).all()
    mate = b.kind == KIND_MATE
    assert mate.any() and (b.target[mate, b.move[mate]] == 1.0).all()


def test_version_mismatch_names_the_header(dataset, tmp_path):
    shutil.copytree(dataset / "train-00000", tmp_path / "s")
    header = json.loads((tmp_path / "s" / "shard.json").read_text())
    header["format_version"] = FORMAT_VERSION + 1
    (tmp_path / "s" / "shard.json").write_text(json.dumps(header))
    with pytest.raises(ShardError, match="version") as e:
        load_shard(tmp_path / "s")
    assert str(tmp_path / "s" / "shard.json") in str(e.value)


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_corrupt_shard_names_the_file(dataset, tmp_path, damage):
    shutil.copytree(dataset, tmp_path / "d")
    f = tmp_path / "d" / "train-00001" / "legal_indices.npy"
    data = bytearray(f.read_bytes())
    if damage == "flip":
        data[-1] ^= 0xFF
    else:
        data = data[: len(data) // 2]
    f.write_bytes(bytes(data))
    with pytest.raises(ShardError) as e:
        load_split(tmp_path / "d", "train")
    assert str(f) in str(e.value)


def test_batches_gather_the_right_samples(dataset):
    data = load_split(dataset, "train")
    it = iterate_batches(data, batch_size=16, seed=3)
    b = next(it)
    order = epoch_order(len(data), 3, 0)[:16]
    flat_tokens = np.concatenate([np.asarray(s["tokens"]) for s in data.shards])
    flat_move = np.concatenate([np.asarray(s["move"]) for s in data.shards])
    assert np.array_equal(b.tokens, flat_tokens[order])
    assert np.array_equal(b.move, flat_move[order])
    assert b.legal[np.arange(16), b.move].all()  # the target is always legal
    counts = b.legal.sum(1)
    lens = np.concatenate([np.diff(np.asarray(s["legal_offsets"])) for s in data.shards])
    assert np.array_equal(counts, lens[order])
    assert set(np.unique(b.wdl)) <= {0, 1, 2}
    assert np.array_equal(b.wdl.sum(1), np.ones(16))  # one-hot game results
    # Resuming the iterator at (epoch 0, batch 1) gives what the uninterrupted one gives next.
    b2 = next(it)
    b2r = next(iterate_batches(data, 16, 3, start_epoch=0, start_index=1))
    assert np.array_equal(b2.tokens, b2r.tokens) and np.array_equal(b2.legal, b2r.legal)


def test_pure_random_sampler_probabilities():
    pure = PlayConfig(capture_weight=1.0, check_weight=1.0, mate_in_one=False, max_plies=30)
    g = play_game(1, 0, pure)
    n_legal = np.array([len(a) for a in g.legal])
    assert np.allclose(g.p_max, 1.0 / n_legal)
    assert all(np.allclose(p, np.float16(1.0 / len(p))) for p in g.probs)
    biased = play_game(1, 0, PlayConfig(max_plies=30))
    assert (biased.p_max >= 1.0 / np.array([len(a) for a in biased.legal]) - 1e-7).all()


def test_mvv_lva_prefers_the_most_valuable_victim():
    board = Board("4k3/8/8/3q4/4P3/8/8/3QK3 w - - 0 1")  # e4xd5 (PxQ) and d1xd5 (QxQ)
    pxq = capture_value(board, "e4d5", mvv_lva=True)
    qxq = capture_value(board, "d1d5", mvv_lva=True)
    assert pxq > qxq > 1.0
    assert capture_value(board, "d1d5", mvv_lva=False) == 1.0
    assert capture_value(board, "e1f2", mvv_lva=True) == 0.0
    ep = Board("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1")
    assert capture_value(ep, "e5d6", mvv_lva=False) == 1.0


def test_game_truncation_and_min_length():
    g = play_game(3, 1, PlayConfig(max_plies=12, min_plies=1))
    assert g.plies == 12 and g.end == TRUNCATED and g.result == 0
    assert play_game(3, 1, PlayConfig(max_plies=12, min_plies=12)) is not None
    with pytest.raises(ValueError, match="min_plies"):
        PlayConfig(max_plies=5, min_plies=6)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="POSIX open-file limits")
def test_a_low_open_file_limit_is_lifted_or_named(dataset):
    """Each memory-mapped array holds a file descriptor, so a large data set (2,400 shards
    for 24,000 labelled games) outgrows the common soft limit of 1,024. Loading lifts the
    soft limit to the hard one; where the hard limit itself is too low, the error says so
    instead of calling a sound shard corrupt."""
    import subprocess
    import sys

    script = (
        "import resource, sys\n"
        "import zerochess.train.data.format as fmt\n"
        "fmt.SMALL_ARRAY_BYTES = -1  # map every array, as the large ones of big shards are\n"
        "from zerochess.train.data.dataset import load_split\n"
        "from zerochess.train.data.format import ShardError\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "limit = int(sys.argv[2])\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard if sys.argv[3] == 'soft' else limit))\n"
        "try:\n"
        "    sets = [load_split(sys.argv[1], 'train'), load_split(sys.argv[1], 'val')]\n"
        "    print('loaded', sum(len(s) for s in sets))\n"
        "except ShardError as e:\n"
        "    print('error', e)\n"
    )
    shards = len(list(dataset.glob("*/shard.json")))
    limit = 12 + 2 * shards  # far below the 18 descriptors each shard's arrays hold

    def run(which):
        out = subprocess.run([sys.executable, "-c", script, str(dataset), str(limit), which],
                             capture_output=True, text=True, timeout=120)
        return out.stdout.strip() + out.stderr.strip()

    meta = json.loads((dataset / "metadata.json").read_text())
    assert run("soft") == f"loaded {meta['samples']['train'] + meta['samples']['val']}"
    hard = run("hard")
    assert hard.startswith("error ") and "too many open files" in hard and "ulimit -n" in hard
    assert "corrupt" not in hard


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self/fd"), reason="needs /proc")
def test_small_arrays_are_read_not_mapped(dataset):
    """A labelled shard's arrays are small, so a data set of thousands of shards holds no
    descriptor per array: loading a split leaves the process's open files as they were."""
    import os

    before = len(os.listdir("/proc/self/fd"))
    data = load_split(dataset, "train")
    assert len(os.listdir("/proc/self/fd")) == before
    tokens = data.shards[0]["tokens"]
    assert not isinstance(tokens, np.memmap) and not tokens.flags.writeable
