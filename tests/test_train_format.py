"""The one training-data format: old formats load and convert, self-play and teacher-like
data sets go through the same reader, and `train supervise` trains on any of them."""

import json
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from click.testing import CliRunner

from legacy_shards import downgrade_dataset, downgrade_selfplay
from zerochess.cli import main
from zerochess.chess import Board, encode_board, legal_move_indices
from zerochess.train.data.convert import convert
from zerochess.train.data.dataset import (finish_dataset, load_split, open_dataset, open_shard,
                                          read_metadata, shard_entry)
from zerochess.train.data.format import ShardError, load_shard, write_shard
from zerochess.train.data.generate import GenerateConfig, generate
from zerochess.train.data.randomplay import PlayConfig
from zerochess.train.data.replay import ReplayWindow
from zerochess.train.losses import LossWeights, phase1_loss
from zerochess.train.supervised.config import SuperviseConfig
from zerochess.train.supervised.trainer import Trainer

TINY = SuperviseConfig(preset="tiny", batch_size=16, steps=3, warmup_steps=1, threads=1,
                       val_max_samples=32, legal_gen_games=0, log_every_steps=1)


@pytest.fixture(scope="module")
def random_play(tmp_path_factory):
    out = tmp_path_factory.mktemp("rp") / "d"
    generate(GenerateConfig(games=6, seed=5, games_per_shard=3, val_fraction=0.5,
                            play=PlayConfig(max_plies=30, min_plies=4)), out)
    return out


def positions(n, seed):
    """``n`` positions of random games, with their legal move indices."""
    rng = np.random.default_rng(seed)
    out, board = [], Board()
    while len(out) < n:
        if board.is_game_over() or len(board) > 40:
            board = Board()
        out.append((board.copy(), legal_move_indices(board)))
        moves = board.legal_moves()
        board.push_uci(moves[int(rng.integers(len(moves)))])
    return out


def teacher_like_arrays(n, seed):
    """What a teacher labeller writes: a soft WDL, a multipv-like sparse policy target (a
    softmax over up to 4 of the legal moves), the legal CSR, the played move, teacher
    scores and keys; no random-play kind."""
    rng = np.random.default_rng(seed)
    pos = positions(n, seed)
    pidx, pw, poff, lidx, loff = [], [], [0], [], [0]
    for _, legal in pos:
        k = min(4, len(legal))
        chosen = rng.choice(legal, size=k, replace=False).astype(np.int16)
        w = np.exp(rng.normal(size=k)).astype(np.float32)
        pidx.append(chosen), pw.append(w / w.sum()), poff.append(poff[-1] + k)
        lidx.append(legal.astype(np.int16)), loff.append(loff[-1] + len(legal))
    wdl = rng.dirichlet([1, 2, 1], size=n).astype(np.float32)
    return {
        "tokens": np.stack([encode_board(b) for b, _ in pos]),
        "wdl": wdl / wdl.sum(1, keepdims=True),
        "game": np.arange(n, dtype=np.int32) // 10,
        "ply": np.array([len(b) for b, _ in pos], np.int16),
        "policy_offsets": np.array(poff, np.int64), "policy_indices": np.concatenate(pidx),
        "policy_weights": np.concatenate(pw),
        "legal_offsets": np.array(loff, np.int64), "legal_indices": np.concatenate(lidx),
        "move": np.array([p[0] for p in pidx], np.int16),
        "teacher_best": np.array([p[0] for p in pidx], np.int16),
        "teacher_cp": rng.integers(-300, 300, n).astype(np.int32),
        "key": np.array([b.zobrist() for b, _ in pos], np.uint64),
    }


@pytest.fixture(scope="module")
def teacher_like(tmp_path_factory):
    out = tmp_path_factory.mktemp("teacher") / "d"
    settings = {"teacher": "hand-made", "multipv": 4}
    meta = open_dataset(out, settings)
    shards = {}
    for name, split, seed in (("train-00000", "train", 1), ("val-00001", "val", 2)):
        write_shard(out / name, teacher_like_arrays(48, seed),
                    {"kind": "teacher", "engine": "hand-made", "multipv": 4}, split=split)
        shards[name] = shard_entry(load_shard(out / name))
    finish_dataset(out, meta, shards)
    return out


def test_dataset_metadata_api(teacher_like, tmp_path):
    meta = read_metadata(teacher_like)
    assert meta["status"] == "complete" and meta["shards"]["train-00000"] == {
        "split": "train", "samples": 48, "games": 0}
    with pytest.raises(ShardError, match="other settings"):
        open_dataset(teacher_like, {"teacher": "another"})
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "metadata.json").write_text('{"format": "something else"}')
    with pytest.raises(ShardError, match="not a zerochess data set") as e:
        read_metadata(tmp_path / "d")
    assert str(tmp_path / "d" / "metadata.json") in str(e.value)


def test_version_2_data_set_loads_as_it_was_and_converts(random_play, tmp_path):
    old = downgrade_dataset(random_play, tmp_path / "v2", version=2)
    assert json.loads((old / "train-00000" / "shard.json").read_text())["format"] == "zerochess-shard"
    sh = open_shard(old / "train-00000")
    assert sh.source["kind"] == "random-play" and sh.source["policy"] == "sampler"
    a, b = load_split(old, "train"), load_split(random_play, "train")
    assert a.has_policy_distribution and len(a) == len(b)
    idx = np.arange(len(a))[::3]
    x, y = a.gather(idx, with_target=True), b.gather(idx, with_target=True)
    for k in ("tokens", "move", "wdl", "kind", "legal"):
        assert np.array_equal(getattr(x, k), getattr(y, k)), k
    assert np.allclose(x.target, y.target, atol=2e-3) and np.allclose(x.target.sum(1), 1, atol=1e-6)
    res = CliRunner().invoke(main, ["train", "convert", str(old), str(tmp_path / "v3")])
    assert res.exit_code == 0, res.output
    for name in ("train-00000", "val-00001"):
        new = load_shard(tmp_path / "v3" / name)  # the version-3 reader alone
        assert new.source["converted_from"] == "zerochess-shard v2"
        assert new["policy_weights"].dtype == np.float32
    z = load_split(tmp_path / "v3", "train").gather(idx, with_target=True)
    assert np.array_equal(z.legal, y.legal) and np.allclose(z.target, y.target, atol=2e-3)
    assert read_metadata(tmp_path / "v3")["shards"] == read_metadata(random_play)["shards"]


def test_old_selfplay_shards_fill_the_replay_window_like_new_ones(tmp_path):
    """A zerochess-selfplay-shard v1 directory gives the replay window the same batch as
    the version-3 shard it was made from: visits / their sum, legal = the root's moves."""
    arrays = teacher_like_arrays(12, seed=3)
    rng = np.random.default_rng(0)
    off, legal = arrays["legal_offsets"], arrays["legal_indices"]
    visits = rng.integers(0, 20, len(legal)).astype(np.int32)
    visits[off[:-1]] += 1  # every position was visited
    totals = np.add.reduceat(visits, off[:-1])
    outcome = rng.integers(-1, 2, 12).astype(np.int8)
    v3 = {"tokens": arrays["tokens"], "wdl": np.eye(3, dtype=np.float32)[outcome + 1],
          "game": np.zeros(12, np.int32), "ply": arrays["ply"], "policy_offsets": off,
          "policy_indices": legal, "visits": visits,
          "policy_weights": (visits / np.repeat(totals, np.diff(off))).astype(np.float32),
          "move": arrays["move"], "outcome": outcome, "root_q": np.zeros(12, np.float32),
          "game_index": np.zeros(1, np.int32), "game_plies": np.full(1, 12, np.int16),
          "game_result": np.zeros(1, np.int8), "game_end": np.full(1, 6, np.uint8),
          "game_opponent": np.full(1, -1, np.int32), "game_false_resign": np.full(1, -1, np.int8)}
    new = write_shard(tmp_path / "new" / "it0001-w00-c0000", v3, {"kind": "selfplay"}, pgn="")
    downgrade_selfplay(new, tmp_path / "old" / "it0001-w00-c0000")
    sh = open_shard(tmp_path / "old" / "it0001-w00-c0000")
    assert sh.source["kind"] == "selfplay" and np.array_equal(sh["visits"], visits)
    a = ReplayWindow.from_directory(tmp_path / "old", 10).gather(np.arange(10))
    b = ReplayWindow.from_directory(tmp_path / "new", 10).gather(np.arange(10))
    for k in ("tokens", "wdl", "legal", "move"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k
    assert np.allclose(a.target, b.target, atol=1e-6)
    r = 2  # window index 0 is the shard's third position (capacity 10 of 12)
    want = np.zeros(4168, np.float32)
    want[legal[off[r]:off[r + 1]]] = visits[off[r]:off[r + 1]] / totals[r]
    assert np.allclose(a.target[0], want, atol=1e-6)
    names = convert(tmp_path / "old", tmp_path / "conv")
    assert names == ["it0001-w00-c0000"] and (tmp_path / "conv" / names[0] / "games.pgn").is_file()
    assert np.array_equal(load_shard(tmp_path / "conv" / names[0])["visits"], visits)


def test_foreign_and_corrupt_old_shards_are_named(random_play, tmp_path):
    old = downgrade_dataset(random_play, tmp_path / "v1", version=1)
    f = old / "train-00000" / "legal_indices.npy"
    f.write_bytes(f.read_bytes()[:-4])
    with pytest.raises(ShardError) as e:
        load_split(old, "train")
    assert str(f) in str(e.value)
    header = old / "val-00001" / "shard.json"
    h = json.loads(header.read_text())
    h["format_version"] = 9
    header.write_text(json.dumps(h))
    with pytest.raises(ShardError, match="version 9") as e:
        open_shard(old / "val-00001")
    assert str(header) in str(e.value)
    header.write_text(json.dumps({**h, "format": "not-ours"}))
    with pytest.raises(ShardError, match="not a zerochess shard") as e:
        open_shard(old / "val-00001")
    assert str(header) in str(e.value)


def test_soft_wdl_target_is_the_cross_entropy_and_one_hot_gives_the_old_loss():
    g = torch.Generator().manual_seed(0)
    logits, wdl_logits = torch.randn(3, 4168, generator=g), torch.randn(3, 3, generator=g)
    legal = torch.rand(3, 4168, generator=g) < 0.02
    move = torch.stack([torch.nonzero(row)[0, 0] for row in legal])
    classes = torch.tensor([0, 2, 1])
    _, by_class = phase1_loss(logits, wdl_logits, move, classes, legal, LossWeights())
    _, by_onehot = phase1_loss(logits, wdl_logits, move, F.one_hot(classes, 3).float(), legal,
                               LossWeights())
    assert torch.allclose(by_class["value_loss"], by_onehot["value_loss"], atol=1e-7)
    soft = torch.tensor([[0.2, 0.5, 0.3], [0.0, 0.1, 0.9], [1 / 3, 1 / 3, 1 / 3]])
    _, parts = phase1_loss(logits, wdl_logits, move, soft, legal, LossWeights())
    want = -(soft * torch.log_softmax(wdl_logits, -1)).sum(-1).mean()
    assert float(parts["value_loss"]) == pytest.approx(float(want), rel=1e-6)


def test_supervise_trains_on_a_teacher_like_data_set(teacher_like, tmp_path):
    data = load_split(teacher_like, "train")
    b = data.gather(np.arange(8), with_target=True)
    sh = load_shard(teacher_like / "train-00000")
    assert np.allclose(b.wdl, sh["wdl"][:8]) and (b.kind == 0).all()
    assert (b.target > 0).sum(1).max() <= 4 and b.legal[b.target > 0].all()
    summary = Trainer(TINY, teacher_like, tmp_path / "run").run()
    val = summary["val"]
    assert summary["finished"] and math.isfinite(val["loss"]) and math.isfinite(val["value_loss"])
    assert "mate_top1" not in val and 0.0 <= val["exact"] <= 1.0  # no kind: no mate metrics
    res = CliRunner().invoke(main, ["train", "supervise", "--data", str(teacher_like), "--out",
                                    str(tmp_path / "cli"), "--steps", "2", "--batch-size", "16",
                                    "--threads", "1", "--policy-target", "played"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout.strip().splitlines()[-1])["step"] == 2


def test_data_without_a_played_move_uses_the_targets_likeliest_move(teacher_like, tmp_path):
    arrays = {k: v for k, v in teacher_like_arrays(10, seed=4).items() if k != "move"}
    write_shard(tmp_path / "s", arrays, {"kind": "pgn"})
    sh = load_shard(tmp_path / "s")
    from zerochess.train.data.batches import PositionSet

    b = PositionSet([sh]).gather(np.arange(10))
    off, idx, w = arrays["policy_offsets"], arrays["policy_indices"], arrays["policy_weights"]
    want = [idx[off[r] + np.argmax(w[off[r]:off[r + 1]])] for r in range(10)]
    assert list(b.move) == want and b.target is None
