"""The one trainer on teacher-labelled data: teacher metrics, warm start with growth, a
wall-clock budget with exact resume after SIGKILL, data in memory, old run directories.

The labelled set is real: Stockfish labels a few short games at depth 3 (tests/test_label.py's
settings), written by `zerochess train label`'s code.
"""

import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from test_label import needs_stockfish, small_config
from zerochess.cli import main
from zerochess.neural.checkpoint import load_checkpoint
from zerochess.neural.network import NetworkConfig, build_model
from zerochess.chess.threats import network_tokens
from zerochess.train.data.dataset import load_split
from zerochess.train.data.format import load_shard
from zerochess.train.data.label import label
from zerochess.train.report import make_report, read_metrics
from zerochess.train.supervised.config import SuperviseConfig
from zerochess.train.supervised.trainer import Trainer, evaluate_checkpoint
from zerochess.train.supervised.warmstart import network_path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "zerochess" / "data" / "network.pt"
TINY = SuperviseConfig(batch_size=32, steps=6, warmup_steps=2, threads=1, val_max_samples=64,
                       legal_gen_games=2, legal_gen_moves=3, log_every_steps=1,
                       save_every_steps=100, dropout=0.1)


@pytest.fixture(scope="module")
def teacher_data(tmp_path_factory):
    out = tmp_path_factory.mktemp("teacher") / "d"
    label(small_config(games=8, games_per_chunk=2, max_plies=30, val_every=2), out)
    return out


@pytest.fixture(scope="module")
def second_teacher_data(tmp_path_factory):
    """Another labelled set (other seed): the budget test also trains on two sets at once."""
    out = tmp_path_factory.mktemp("teacher2") / "d2"
    label(small_config(games=6, games_per_chunk=2, max_plies=30, val_every=2, seed=21), out)
    return out


def val_arrays(data: Path) -> list:
    meta = json.loads((data / "metadata.json").read_text())
    return [load_shard(data / n) for n in sorted(meta["shards"]) if meta["shards"][n]["split"] == "val"]


def teacher_figures_by_hand(model, data: Path) -> tuple[float, float]:
    """Agreement and expected-score error computed straight from the shard arrays (no
    gather, no metric classes): the reference the trainer's figures must equal."""
    agree, error, n = 0, 0.0, 0
    model.eval()
    for sh in val_arrays(data):
        with torch.no_grad():
            # the shards hold version-1 tokens; a threat network reads version 2
            tokens = network_tokens(np.array(sh["tokens"], np.uint8), model.config.threat_inputs)
            policy, wdl_logits = model(torch.from_numpy(tokens))
        off, idx = np.asarray(sh["legal_offsets"]), np.asarray(sh["legal_indices"])
        p = torch.softmax(wdl_logits.double(), -1).numpy()
        for i in range(len(sh)):
            legal = idx[off[i]:off[i + 1]].astype(np.int64)
            pick = legal[int(np.argmax(policy[i, legal].numpy()))]
            agree += int(pick == int(sh["teacher_best"][i]))
            w = np.asarray(sh["wdl"][i], dtype=np.float64)
            error += abs((p[i, 2] + p[i, 1] / 2) - (w[2] + w[1] / 2))
            n += 1
    return agree / n, error / n


@needs_stockfish
def test_evaluate_prints_teacher_agreement_and_expected_score_error(teacher_data, tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"legal_gen_games": 0, "val_max_samples": 100000}))
    res = CliRunner().invoke(main, ["train", "evaluate", str(SHIPPED), "--data", str(teacher_data),
                                    "--config", str(cfg)])
    assert res.exit_code == 0, res.output
    shipped = json.loads(res.stdout)
    model, _ = load_checkpoint(SHIPPED)
    top1, err = teacher_figures_by_hand(model, teacher_data)
    assert shipped["teacher_top1"] == pytest.approx(top1, abs=1e-9)
    assert shipped["expected_score_error"] == pytest.approx(err, abs=1e-5)
    assert "legal_top1" in shipped and "played_ce" in shipped  # beside today's metrics
    # The figures measure something: the shipped network agrees with Stockfish far more
    # often, and misjudges the score far less, than an untrained network.
    torch.manual_seed(0)
    fresh = build_model(NetworkConfig.preset("tiny"))
    untrained = evaluate_checkpoint_model(fresh, teacher_data, tmp_path)
    assert shipped["teacher_top1"] > untrained["teacher_top1"] + 0.1
    assert shipped["expected_score_error"] < untrained["expected_score_error"]
    # The shipped network by name gives the same figures.
    res = CliRunner().invoke(main, ["train", "evaluate", "default", "--data", str(teacher_data),
                                    "--config", str(cfg)])
    assert res.exit_code == 0 and json.loads(res.stdout) == shipped
    res = CliRunner().invoke(main, ["train", "evaluate", str(tmp_path / "nope.pt"), "--data",
                                    str(teacher_data)])
    assert res.exit_code == 1 and "nope.pt" in res.output


def evaluate_checkpoint_model(model, data, tmp_path):
    from zerochess.neural.checkpoint import save_checkpoint

    path = save_checkpoint(tmp_path / "fresh.pt", model, {})
    return evaluate_checkpoint(path, data, SuperviseConfig(legal_gen_games=0))


@needs_stockfish
def test_in_memory_batches_equal_memory_mapped_ones(teacher_data):
    mapped = load_split(teacher_data, "train")
    assert len(mapped.shards) > 1 and mapped.has_teacher
    packed = mapped.in_memory()
    assert len(packed.shards) == 1 and len(packed) == len(mapped)
    idx = np.random.default_rng(3).permutation(len(mapped))
    for with_target in (False, True):
        a, b = mapped.gather(idx, with_target), packed.gather(idx, with_target)
        for k in ("tokens", "move", "wdl", "kind", "legal", "target", "best"):
            x, y = getattr(a, k), getattr(b, k)
            assert (x is None and y is None) or np.array_equal(x, y), k
    assert np.array_equal(a.best, np.concatenate([np.asarray(s["teacher_best"])
                                                  for s in mapped.shards])[idx])


@needs_stockfish
@pytest.mark.parametrize("spec", ["default", "zero"])
def test_growth_through_the_trainer_computes_what_it_grew_from(teacher_data, tmp_path, spec):
    """Warm start by name with every growth that applies: the grown network's outputs on
    the validation positions equal the checkpoint's, and so do its validation figures."""
    start, _ = load_checkpoint(network_path(spec))
    grow = dict(value_squares=4, n_layers=3)
    if not start.config.attention_bias:
        grow["attention_bias"] = True
    cfg = TINY.replace(init_from=spec, dropout=0.0, legal_gen_games=0, **grow)
    trainer = Trainer(cfg, teacher_data, tmp_path / "run")
    net = trainer.model.config
    assert (net.n_layers, net.value_squares, net.attention_bias) == (3, 4, True)
    tokens = torch.from_numpy(trainer.val_set.gather(np.arange(len(trainer.val_set))).tokens)
    trainer.model.eval(), start.eval()
    with torch.no_grad():
        for grown, before in zip(trainer.model(tokens), start(tokens)):
            assert torch.allclose(grown, before, atol=1e-6, rtol=0)
    assert trainer.validate() == pytest.approx(
        evaluate_checkpoint(network_path(spec), teacher_data, cfg), abs=1e-5)
    with pytest.raises(ValueError, match="would drop"):
        Trainer(TINY.replace(init_from=spec, n_layers=1), teacher_data, tmp_path / "less")


def supervise_cmd(data: list[str], out: Path, config: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "zerochess", "train", "supervise",
            *[a for d in data for a in ("--data", d)], "--out", str(out), "--config",
            str(config), *extra]


@needs_stockfish
@pytest.mark.parametrize("sets", ["one set", "two sets"])
def test_budget_run_killed_and_resumed_is_the_run_of_its_step_count(teacher_data,
                                                                     second_teacher_data,
                                                                     tmp_path, sets):
    """A grown warm start on a 30-second budget (capped at 40 steps), SIGKILLed mid-run and
    resumed with the same command, ends with the weights of an uninterrupted run of the
    step count the budget fixed (and memory-mapped instead of packed data: batches are the
    same either way); on one data set, and on two mixed 0.7 / 0.3."""
    data = ([str(teacher_data)] if sets == "one set" else
            [f"{teacher_data}:0.7", f"{second_teacher_data}:0.3"])
    cfg = replace(TINY, steps=40, minutes=0.5, init_from="zero", attention_bias=True,
                  value_squares=4, n_layers=3, save_every_steps=1, val_every_steps=7,
                  legal_gen_games=0)
    config = tmp_path / "c.json"
    config.write_text(json.dumps(cfg.to_dict()))
    killed = tmp_path / "killed"
    proc = subprocess.Popen(supervise_cmd(data, killed, config), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 180

    def steps_logged() -> int:
        try:
            return sum('"train"' in line for line in (killed / "metrics.jsonl").read_text().splitlines())
        except OSError:
            return 0
    while time.monotonic() < deadline and steps_logged() < 3 and proc.poll() is None:
        time.sleep(0.01)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    state = torch.load(killed / "resume.pt", weights_only=True)
    total = json.loads((killed / "config.json").read_text())["total_steps"]
    assert total == state["total_steps"] and 0 < state["step"] < total, (state["step"], total)
    done = subprocess.run(supervise_cmd(data, killed, config, "--resume"), cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1])["step"] == total

    whole = tmp_path / "whole"
    assert total <= 40
    Trainer(replace(cfg, minutes=None, steps=total, in_memory=False), data, whole).run()
    a = torch.load(whole / "resume.pt", weights_only=True)
    b = torch.load(killed / "resume.pt", weights_only=True)
    assert a["step"] == b["step"] == total
    for k, v in a["model"].items():
        assert torch.equal(v, b["model"][k]), k
    train_a = [r["loss"] for r in read_metrics(whole)[0]]
    train_b = [r["loss"] for r in read_metrics(killed)[0]]
    assert train_a == train_b and len(train_a) == total
    # the budget run also logged the starting network's validation as step 0
    val_b = read_metrics(killed)[1]
    assert val_b[0]["step"] == 0 and "teacher_top1" in val_b[0]
    best = load_checkpoint(killed / "best.pt")[1]["metadata"]
    assert best["metrics"]["loss"] == min(r["loss"] for r in val_b)  # the start a candidate
    assert [r["step"] for r in val_b[1:]] == [r["step"] for r in read_metrics(whole)[1]]


def test_config_file_holds_the_hyperparameters_recorded_in_the_shipped_network():
    """docs/configs/r13.toml is the recipe of the shipped network (r13): every setting the
    trainer recorded in the checkpoint is the file's, so the documented command remakes it."""
    cfg = SuperviseConfig.from_file(ROOT / "docs" / "configs" / "r13.toml").to_dict()
    _, info = load_checkpoint(SHIPPED)
    made = info["metadata"]["supervise"]  # what `zerochess train supervise` recorded
    newer = set(cfg) - set(made)  # fields added since: at their defaults, the old behaviour
    assert set(made) <= set(cfg)
    assert all(cfg[k] == SuperviseConfig().to_dict()[k] for k in newer)
    differ = {k: (cfg[k], made[k]) for k in made if cfg[k] != made[k]}
    assert differ == {}
    assert made["val_max_samples"] == 8192  # the model card's validation positions


@pytest.mark.parametrize("path", sorted((ROOT / "docs" / "configs").glob("*.toml")),
                         ids=lambda p: p.name)
def test_every_documented_recipe_still_loads(path):
    """docs/teacher.md's commands name these files, the ones that did not ship (r12, r14)
    included: a renamed or removed field must not leave a documented command that fails."""
    written = tomllib.loads(path.read_text(encoding="utf-8"))
    loaded = SuperviseConfig.from_file(path).to_dict()
    assert written and {k: loaded.get(k) for k in written} == written


def test_report_reads_an_old_distill_run(tmp_path):
    """experiments/distill.py's records had no type and other names; the report plots them."""
    recs = [{"step": s, "total": 1000, "minutes": s / 50, "lr": 7e-4 * (1 - s / 2000),
             "train_policy": 2.5 - s / 1e4, "train_value": 0.3, "val_policy_ce": 2.45 - s / 1e4,
             "val_value_ce": 0.29, "val_top1": 0.33 + s / 1e5, "val_value_err": 0.066,
             "val_illegal_mass": 0.021} for s in (500, 1000)]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    text, pngs = make_report(tmp_path)
    assert {p.name for p in pngs} == {"losses.png", "validation.png"}
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert "teacher_top1" in text and "0.3400" in text and "expected_score_error" in text
    assert "best validation policy + value CE 2.6400 at step 1000" in text
    (tmp_path / "metrics.jsonl").write_text('{"no_step": 1}\n')
    res = CliRunner().invoke(main, ["train", "report", str(tmp_path)])
    assert res.exit_code == 1 and "metrics.jsonl:1" in res.output


@needs_stockfish
def test_shards_of_two_producers_are_not_packed(teacher_data, tmp_path):
    """Packing needs every shard to hold the same optional arrays; random play has `kind`,
    labelled data `teacher_best`: asked for, packing says so; left to itself, the trainer
    reads such a set memory-mapped."""
    from zerochess.train.data.batches import PositionSet
    from zerochess.train.data.generate import GenerateConfig, generate
    from zerochess.train.data.randomplay import PlayConfig

    generate(GenerateConfig(games=4, seed=3, games_per_shard=2, val_fraction=0.25,
                            play=PlayConfig(max_plies=30, min_plies=4)), tmp_path / "rp")
    mixed = PositionSet(load_split(tmp_path / "rp", "train").shards
                        + load_split(teacher_data, "train").shards)
    assert not mixed.has_teacher
    with pytest.raises(ValueError, match=r"\['kind', 'teacher_best'\]"):
        mixed.in_memory()
