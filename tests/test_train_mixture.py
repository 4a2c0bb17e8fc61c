"""Training on several data sets at once: proportions, exact resume, per-set validation,
snapshots of a set still being written, and the errors of a bad ``--data``.

The sets are real: Stockfish labels a few short games at depth 3 (tests/test_label.py's
settings), twice with other seeds, written by `zerochess train label`'s code.
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from test_label import needs_stockfish, small_config
from zerochess.cli import main
from zerochess.neural.checkpoint import load_checkpoint
from zerochess.train.data.dataset import load_split
from zerochess.train.data.format import Shard
from zerochess.train.data.label import label
from zerochess.train.data.mixture import DataSpecError, MixedSet, parse_data_spec, parse_data_specs
from zerochess.train.report import read_metrics
from zerochess.train.supervised.config import SuperviseConfig
from zerochess.train.supervised.trainer import ResumeError, Trainer, evaluate_checkpoint

TINY = SuperviseConfig(batch_size=32, steps=6, warmup_steps=2, threads=1, val_max_samples=64,
                       legal_gen_games=2, legal_gen_moves=3, log_every_steps=1,
                       save_every_steps=100, dropout=0.1)


@pytest.fixture(scope="module")
def two_sets(tmp_path_factory):
    root = tmp_path_factory.mktemp("mix")
    a, b = root / "label-a", root / "label-b"
    label(small_config(games=8, games_per_chunk=2, max_plies=30, val_every=2), a)
    label(small_config(games=6, games_per_chunk=2, max_plies=30, val_every=2, seed=21), b)
    return a, b


def tagged(data: Path, tag: int):
    """``data``'s train split packed in memory, each sample marked with the set's ``tag``
    (in ``kind``) and its own index (in ``wdl[:, 0]``), so a batch row names its origin."""
    packed = load_split(data, "train").in_memory()
    sh = packed.shards[0]
    n = len(sh)
    arrays = dict(sh.arrays, kind=np.full(n, tag, np.uint8))
    wdl = np.zeros((n, 3), np.float32)
    wdl[:, 0] = np.arange(n)
    arrays["wdl"] = wdl
    packed.shards[0] = Shard(sh.path, sh.header, arrays)
    return packed


@needs_stockfish
def test_batches_draw_from_each_set_in_proportion_and_visit_every_sample(two_sets):
    a, b = (tagged(d, t) for d, t in zip(two_sets, (1, 2)))
    mixed = MixedSet([a, b], [0.85, 0.15])
    batch_size, steps = 32, 60
    seen = {1: [], 2: []}
    for k in range(steps):
        batch = mixed.batch(k, batch_size, seed=5)
        assert len(batch.kind) == batch_size and set(np.unique(batch.kind)) <= {1, 2}
        for tag in (1, 2):
            seen[tag] += batch.wdl[batch.kind == tag, 0].astype(int).tolist()
        for tag, w in ((1, 0.85), (2, 0.15)):  # the share so far within one sample
            assert abs(len(seen[tag]) - (k + 1) * batch_size * w) <= 1
    # Each set's stream visits all its samples once before any twice.
    for tag, data in ((1, a), (2, b)):
        n = len(data)
        got = seen[tag]
        assert len(got) > n
        assert sorted(got[:n]) == list(range(n))
        assert len(set(got[n:2 * n])) == len(got[n:2 * n])
    # A pure function of (seed, step): a fresh mixture gives batch 37 again, another seed not.
    again = MixedSet([a, b], [17, 3]).batch(37, batch_size, seed=5)  # 17:3 == 0.85:0.15
    first = MixedSet([a, b], [0.85, 0.15]).batch(37, batch_size, seed=5)
    assert np.array_equal(again.wdl, first.wdl) and np.array_equal(again.kind, first.kind)
    other = MixedSet([a, b], [0.85, 0.15]).batch(37, batch_size, seed=6)
    assert not np.array_equal(other.wdl, first.wdl)


@needs_stockfish
def test_two_set_run_killed_and_resumed_is_exact_and_validates_each_set(two_sets, tmp_path):
    """Kill after step 3, resume (memory-mapped instead of packed): step 4 and the weights
    after it equal an uninterrupted run's; validation scores each set and their mean."""
    a, b = two_sets
    data = [f"{a}:3", f"{b}:1"]
    cfg = TINY.replace(steps=12, stop_after_steps=4, val_every_steps=2)
    full, split = tmp_path / "full", tmp_path / "split"
    Trainer(cfg, data, full).run()
    Trainer(cfg.replace(stop_after_steps=3, in_memory=True), data, split).run()
    Trainer(cfg.replace(in_memory=False), data, split, resume=True).run()
    ta, va = read_metrics(full)
    tb, vb = read_metrics(split)
    assert [r["step"] for r in tb] == [1, 2, 3, 4]
    assert [r["loss"] for r in ta] == [r["loss"] for r in tb]
    sa = torch.load(full / "resume.pt", weights_only=True)
    sb = torch.load(split / "resume.pt", weights_only=True)
    for k, v in sa["model"].items():
        assert torch.equal(v, sb["model"][k]), k
    # Each set's validation, the combined figure its weighted mean (3:1), teacher metrics too.
    last = va[-1]
    for key in ("loss", "teacher_top1", "expected_score_error", "legal_top1"):
        assert last[key] == pytest.approx(0.75 * last[f"label-a/{key}"] + 0.25 * last[f"label-b/{key}"])
    assert last["label-a/loss"] != last["label-b/loss"]
    assert "label-a/legal_gen_raw_illegal" not in last and "legal_gen_raw_illegal" in last
    best = load_checkpoint(full / "best.pt")[1]["metadata"]
    assert best["metrics"]["loss"] == min(r["loss"] for r in va)
    assert best["data"] == [f"{a}:3", f"{b}:1"]
    # Each set's figures are the ones that set alone gives (train evaluate, one set).
    model_path = full / "best.pt"
    cfg_eval = TINY.replace(legal_gen_games=0)
    alone = evaluate_checkpoint(model_path, a, cfg_eval)
    both = evaluate_checkpoint(model_path, data, cfg_eval)
    assert both["label-a/teacher_top1"] == alone["teacher_top1"]
    assert both["label-a/loss"] == pytest.approx(alone["loss"])
    # The run's record names both sets; a resume on other sets or weights is refused.
    recorded = json.loads((full / "config.json").read_text())["data_sets"]
    assert [r["weight"] for r in recorded] == [3.0, 1.0]
    with pytest.raises(ResumeError, match="weight 1, now 2"):
        Trainer(cfg, [f"{a}:3", f"{b}:2"], split, resume=True)
    with pytest.raises(ResumeError, match="2 data set"):
        Trainer(cfg, [str(a)], split, resume=True)


@needs_stockfish
def test_cli_takes_several_sets_and_a_config_lists_them(two_sets, tmp_path):
    a, b = two_sets
    config = tmp_path / "c.toml"
    config.write_text(f'data = ["{a}:0.85", "{b}:0.15"]\nsteps = 2\nbatch_size = 32\n'
                      "threads = 1\nval_max_samples = 64\nlegal_gen_games = 0\nwarmup_steps = 1\n")
    res = CliRunner().invoke(main, ["train", "supervise", "--out", str(tmp_path / "run"),
                                    "--config", str(config)])
    assert res.exit_code == 0, res.output
    val = read_metrics(tmp_path / "run")[1][-1]
    assert "label-a/teacher_top1" in val and "label-b/teacher_top1" in val
    # --data replaces the file's sets; a single string in the file still works.
    config.write_text(config.read_text().replace(f'data = ["{a}:0.85", "{b}:0.15"]', f'data = "{a}"'))
    res = CliRunner().invoke(main, ["train", "supervise", "--out", str(tmp_path / "one"),
                                    "--config", str(config)])
    assert res.exit_code == 0, res.output
    assert "label-a/loss" not in read_metrics(tmp_path / "one")[1][-1]
    res = CliRunner().invoke(main, ["train", "evaluate", "default", "--data", str(a),
                                    "--data", f"{b}:1", "--config", str(config)])
    assert res.exit_code == 0, res.output
    figures = json.loads(res.stdout)
    assert figures["teacher_top1"] == pytest.approx(
        (figures["label-a/teacher_top1"] + figures["label-b/teacher_top1"]) / 2)


@needs_stockfish
@pytest.mark.parametrize("spec, message", [
    ("{a}/nope", "no such data set directory"),
    ("{a}/nope:0.5", "no such data set directory"),
    ("{a}:abc", "weight 'abc' is not a number"),
    ("{a}:0", "must be a positive number"),
    ("{a}:-1", "must be a positive number"),
    ("{a}:nan", "must be a positive number"),
])
def test_a_bad_data_spec_is_one_clear_error(two_sets, tmp_path, spec, message):
    a, _ = two_sets
    spec = spec.format(a=a)
    with pytest.raises(DataSpecError, match=message):
        parse_data_spec(spec)
    res = CliRunner().invoke(main, ["train", "supervise", "--data", spec, "--out",
                                    str(tmp_path / "run")])
    assert res.exit_code == 1 and message in res.output and "Traceback" not in res.output
    assert not (tmp_path / "run" / "resume.pt").exists()


@needs_stockfish
def test_a_set_named_twice_or_none_is_refused(two_sets):
    a, _ = two_sets
    with pytest.raises(DataSpecError, match="named twice"):
        parse_data_specs([str(a), f"{a}:2"])
    with pytest.raises(DataSpecError, match="no data set"):
        parse_data_specs([])
    res = CliRunner().invoke(main, ["train", "evaluate", "default"])
    assert res.exit_code == 1 and "no data set" in res.output


def in_progress_copy(src: Path, dst: Path) -> Path:
    """``src`` as a labeller still writing it leaves it: metadata "in-progress", no shard
    list, one chunk (its two shards) not yet written."""
    shutil.copytree(src, dst)
    meta = json.loads((dst / "metadata.json").read_text())
    (dst / "metadata.json").write_text(json.dumps(
        {k: meta[k] for k in ("format", "format_version", "settings", "created")}
        | {"status": "in-progress"}))
    last = sorted(p.name for p in dst.iterdir() if p.is_dir())[-2:]
    for name in last:
        shutil.move(dst / name, dst.parent / f"later-{name}")
    return dst


@needs_stockfish
def test_a_set_still_being_written_trains_as_a_recorded_snapshot(two_sets, tmp_path):
    a, b = two_sets
    growing = in_progress_copy(b, tmp_path / "growing")
    data = [f"{a}:0.85", f"{growing}:0.15"]
    cfg = TINY.replace(steps=8, stop_after_steps=3, dropout=0.0, legal_gen_games=0)
    with pytest.raises(ValueError, match="incomplete.*--snapshot"):
        Trainer(cfg, data, tmp_path / "refused")
    Trainer(cfg.replace(snapshot=True), data, tmp_path / "run").run()
    recorded = json.loads((tmp_path / "run" / "config.json").read_text())["data_sets"][1]
    finished = sorted(p.name for p in growing.iterdir() if p.is_dir())
    assert sorted(recorded["shards"]["train"] + recorded["shards"]["val"]) == finished
    # The labeller writes its next chunk: the resumed run reads the recorded shards only,
    # and ends exactly as a run that never paused.
    for p in tmp_path.glob("later-*"):
        shutil.move(p, growing / p.name.removeprefix("later-"))
    Trainer(cfg.replace(snapshot=True, stop_after_steps=None), data, tmp_path / "run",
            resume=True).run()
    straight = tmp_path / "straight"
    shutil.copytree(b, straight)
    for name in set(p.name for p in straight.iterdir() if p.is_dir()) - set(finished):
        shutil.rmtree(straight / name)  # the snapshot's shards, as a complete set
    meta = json.loads((straight / "metadata.json").read_text())
    meta["shards"] = {n: e for n, e in meta["shards"].items() if n in finished}
    (straight / "metadata.json").write_text(json.dumps(meta))
    Trainer(cfg.replace(stop_after_steps=None), [f"{a}:0.85", f"{straight}:0.15"],
            tmp_path / "whole").run()
    assert [r["loss"] for r in read_metrics(tmp_path / "run")[0]] == \
        [r["loss"] for r in read_metrics(tmp_path / "whole")[0]]
    # A recorded shard rewritten (as `train label` deduplicates at its end): refused, by name.
    header = growing / recorded["shards"]["train"][0] / "shard.json"
    h = json.loads(header.read_text())
    h["deduplicated"] = True
    header.write_text(json.dumps(h))
    with pytest.raises(ResumeError, match="recorded from its snapshot of .*growing changed"):
        Trainer(cfg.replace(snapshot=True, steps=8), data, tmp_path / "run", resume=True)


def test_the_r8_config_warm_starts_r7_on_both_sets_in_proportion():
    cfg = SuperviseConfig.from_file(Path(__file__).resolve().parent.parent / "docs" / "configs" / "r8.toml")
    assert cfg.init_from == "default" and cfg.snapshot and cfg.minutes and cfg.steps is None
    assert cfg.data == ["runs/label-d4:0.85", "runs/label-eg:0.15"]
    r7 = SuperviseConfig.from_file(Path(__file__).resolve().parent.parent / "docs" / "configs" / "r7.toml")
    same = ("batch_size", "lr", "min_lr_ratio", "weight_decay", "warmup_steps", "grad_clip",
            "policy_target", "illegal_penalty", "val_every_steps", "val_max_samples")
    assert all(getattr(cfg, k) == getattr(r7, k) for k in same)
