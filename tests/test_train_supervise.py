"""Phase-1 training: loss, metrics, schedule, config, exact resume, report and the CLI."""

import json
import math
from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from click.testing import CliRunner

from zerochess.cli import main
from zerochess.neural.checkpoint import load_checkpoint
from zerochess.neural.network import NetworkConfig, build_model
from legacy_shards import downgrade_dataset
from zerochess.train.data.generate import GenerateConfig, generate
from zerochess.train.data.randomplay import PlayConfig
from zerochess.train.losses import LossWeights, MetricSums, illegal_penalty, phase1_loss
from zerochess.train.report import make_report
from zerochess.train.supervised.config import SuperviseConfig
from zerochess.train.supervised.legalgen import legal_generation_test
from zerochess.train.supervised.trainer import ResumeError, Trainer, lr_factor

# Budget for every training run here: a few steps of the tiny network on a few hundred samples.
TINY = SuperviseConfig(preset="tiny", batch_size=32, steps=8, warmup_steps=2, threads=1,
                       val_max_samples=64, legal_gen_games=2, legal_gen_moves=3,
                       log_every_steps=1, save_every_steps=100, dropout=0.1)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("data") / "d"
    cfg = GenerateConfig(games=8, seed=11, games_per_shard=2, val_fraction=0.25,
                         play=PlayConfig(max_plies=40, min_plies=4))
    generate(cfg, out)
    return out


@pytest.fixture(scope="module")
def smoke_run(data, tmp_path_factory):
    run = tmp_path_factory.mktemp("runs") / "run"
    summary = Trainer(TINY, data, run).run()
    return run, summary


def read_metrics(run):
    return [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]


def batch(b=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(b, 4168, generator=g)
    legal = torch.rand(b, 4168, generator=g) < 0.01
    move = torch.stack([torch.nonzero(row)[0, 0] for row in legal])
    wdl_logits = torch.randn(b, 3, generator=g)
    wdl = torch.tensor([0, 1, 2, 1][:b])
    return logits, wdl_logits, move, wdl, legal


def test_loss_parts_match_their_definitions():
    logits, wdl_logits, move, wdl, legal = batch()
    weights = LossWeights(2.0, 3.0, 0.5, illegal_penalty="mass")
    total, parts = phase1_loss(logits, wdl_logits, move, wdl, legal, weights)
    masked_ce = F.cross_entropy(logits.masked_fill(~legal, -1e9), move)
    mass = (torch.softmax(logits, -1) * ~legal).sum(-1).mean()
    value = F.cross_entropy(wdl_logits, wdl)
    assert torch.allclose(parts["policy_loss"], masked_ce, atol=1e-5)
    assert torch.allclose(parts["illegal_mass"], mass, atol=1e-5)
    assert torch.allclose(total, 2 * masked_ce + 3 * value + 0.5 * mass, atol=1e-5)


def test_log_penalty_plus_masked_ce_is_the_unmasked_ce():
    logits, wdl_logits, move, wdl, legal = batch()
    total, _ = phase1_loss(logits, wdl_logits, move, wdl, legal,
                           LossWeights(1.0, 0.0, 1.0, illegal_penalty="log"))
    assert torch.allclose(total, F.cross_entropy(logits, move), atol=1e-5)


def test_log_penalty_gradient_sharpens_the_legal_policy():
    """The "log" penalty's gradient is p_j / B on each illegal logit and -M q_i / B on each
    legal one (q: the legal-masked softmax): it raises likely legal moves most."""
    logits, _, _, _, legal = batch()
    b = logits.shape[0]
    z = logits.clone().requires_grad_()
    pen, m = illegal_penalty(z, legal, "log")
    pen.backward()
    p = torch.softmax(logits, -1)
    mass = (p * ~legal).sum(-1, keepdim=True)
    assert float(m.detach()) == pytest.approx(float(mass.mean()), rel=1e-5)
    assert torch.allclose(z.grad[~legal], (p / b)[~legal], rtol=1e-4, atol=1e-12)
    q = p / (1 - mass)
    assert torch.allclose(z.grad[legal], (-mass * q / b).expand_as(p)[legal], rtol=1e-4, atol=1e-9)


def test_sampler_target_loss_is_the_hand_computed_cross_entropy():
    """One position, legal moves 10, 11, 12 with logits 1, 2, 3 (every other index -5) and
    sampler probabilities 0.2, 0.3, 0.5: the policy loss is -sum t log softmax([1, 2, 3])."""
    logits = torch.full((1, 4168), -5.0)
    logits[0, [10, 11, 12]] = torch.tensor([1.0, 2.0, 3.0])
    legal = torch.zeros(1, 4168, dtype=torch.bool)
    legal[0, [10, 11, 12]] = True
    target = torch.zeros(1, 4168)
    target[0, [10, 11, 12]] = torch.tensor([0.2, 0.3, 0.5])
    z = math.exp(1) + math.exp(2) + math.exp(3)
    expected = -(0.2 * (1 - math.log(z)) + 0.3 * (2 - math.log(z)) + 0.5 * (3 - math.log(z)))
    wdl_logits, wdl, move = torch.zeros(1, 3), torch.tensor([1]), torch.tensor([11])
    _, parts = phase1_loss(logits, wdl_logits, move, wdl, legal, LossWeights(), target)
    assert parts["policy_loss"].item() == pytest.approx(expected, rel=1e-6)
    # A one-hot target is the played-move loss; and with the "log" penalty at weight 1 the
    # masked soft CE plus the penalty is the unmasked soft CE, as for the one-hot target.
    onehot = F.one_hot(move, 4168).float()
    _, p1 = phase1_loss(logits, wdl_logits, move, wdl, legal, LossWeights(), onehot)
    _, p2 = phase1_loss(logits, wdl_logits, move, wdl, legal, LossWeights())
    assert torch.allclose(p1["policy_loss"], p2["policy_loss"])
    logits, wdl_logits, move, wdl, legal = batch()
    soft = torch.rand(legal.shape) * legal
    soft = soft / soft.sum(1, keepdim=True)
    total, _ = phase1_loss(logits, wdl_logits, move, wdl, legal,
                           LossWeights(1.0, 0.0, 1.0, illegal_penalty="log"), soft)
    unmasked = -(soft * torch.log_softmax(logits, -1)).sum(-1).mean()
    assert torch.allclose(total, unmasked, atol=1e-5)


def test_sampler_target_smoke_run(data, tmp_path):
    cfg = TINY.replace(policy_target="sampler", steps=4, dropout=0.0)
    assert SuperviseConfig().policy_target == "sampler"  # the default
    summary = Trainer(cfg, data, tmp_path / "run").run()
    assert summary["finished"]
    val = summary["val"]
    assert math.isfinite(val["loss"]) and math.isfinite(val["played_ce"])
    assert 0.0 <= val["legal_top1"] <= 1.0 and val["policy_loss"] != val["played_ce"]
    with pytest.raises(ValueError, match="policy_target"):
        SuperviseConfig(policy_target="visits")


def test_sampler_target_refuses_version_1_data(data, tmp_path):
    downgrade_dataset(data, tmp_path / "d", version=1)
    with pytest.raises(ValueError, match="version 2"):
        Trainer(TINY.replace(policy_target="sampler"), tmp_path / "d", tmp_path / "run")
    played = TINY.replace(steps=1, policy_target="played")  # the one-hot target still works
    Trainer(played, tmp_path / "d", tmp_path / "run2").run()


def test_metrics_on_a_handmade_batch():
    legal = torch.zeros(2, 4168, dtype=torch.bool)
    legal[0, [10, 11, 12]] = True
    legal[1, [20, 21]] = True
    logits = torch.full((2, 4168), -20.0)
    logits[0, 11] = 5.0  # sample 0: top-1 legal and equal to the target
    logits[1, 99] = 5.0  # sample 1: raw top-1 illegal; masked top-1 is 20 or 21
    logits[1, 21] = 1.0
    move = torch.tensor([11, 20])
    wdl = torch.tensor([2, 1])
    wdl_logits = torch.tensor([[-9.0, -9.0, 9.0], [0.0, 0.0, 0.0]])
    m = MetricSums(LossWeights())
    m.update(logits, wdl_logits, move, wdl, legal, torch.tensor([0, 0], dtype=torch.uint8))
    r = m.result()
    assert r["legal_top1"] == 0.5 and r["exact"] == 0.5 and r["top5"] == 1.0
    assert "mate_top1" not in r  # no mate samples in the batch
    assert r["value_mse"] == pytest.approx(0.0, abs=1e-6)
    assert 0.45 < r["illegal_mass"] < 0.5  # sample 1 puts ~98% on move 99


def test_schedule_warms_up_then_decays_to_the_floor():
    cfg = SuperviseConfig(warmup_steps=10, min_lr_ratio=0.1)
    f = [lr_factor(s, 100, cfg) for s in range(100)]
    assert f[0] == pytest.approx(0.1) and f[9] == pytest.approx(1.0)
    assert all(a >= b for a, b in zip(f[10:], f[11:]))
    assert lr_factor(100, 100, cfg) == pytest.approx(0.1)
    # A short run caps the warm-up at a fifth of its steps so it still decays.
    assert lr_factor(4, 20, SuperviseConfig(warmup_steps=1000)) == pytest.approx(1.0)


def test_config_files_and_unknown_fields(tmp_path):
    (tmp_path / "c.toml").write_text('preset = "small"\nlr = 3e-4\n')
    (tmp_path / "c.json").write_text('{"batch_size": 64, "policy_head": "attention"}')
    assert SuperviseConfig.from_file(tmp_path / "c.toml").lr == 3e-4
    assert SuperviseConfig.from_file(tmp_path / "c.json").policy_head == "attention"
    (tmp_path / "bad.json").write_text('{"learning_rate": 1}')
    with pytest.raises(ValueError, match=r"bad\.json.*learning_rate"):
        SuperviseConfig.from_file(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="illegal_penalty"):
        SuperviseConfig(illegal_penalty="huber")


def test_smoke_run_writes_logs_metrics_and_checkpoints(data, smoke_run):
    run, summary = smoke_run
    assert summary["finished"] and summary["step"] == 8
    recs = read_metrics(run)
    train = [r for r in recs if r["type"] == "train"]
    val = [r for r in recs if r["type"] == "val"]
    assert [r["step"] for r in train] == list(range(1, 9))
    assert val and val[-1]["step"] == 8
    for k in ("legal_top1", "exact", "top5", "value_mse", "illegal_mass",
              "legal_gen_raw_illegal", "legal_gen_masked_illegal"):
        assert 0.0 <= val[-1][k] <= 1.0, k
    assert val[-1]["legal_gen_masked_illegal"] == 0.0
    for k in ("grad_policy_head", "grad_value_head", "grad_trunk", "loader_wait_share"):
        assert math.isfinite(train[-1][k])
    model, info = load_checkpoint(run / "final.pt")
    assert model.config.reach_mask  # on for new runs by default
    assert info["metadata"]["step"] == 8 and info["metadata"]["metrics"]["legal_top1"] >= 0
    assert (run / "best.pt").exists() and (run / "train.log").read_text()
    with pytest.raises(ResumeError, match="--resume"):
        Trainer(TINY, data, run)


def test_resume_after_a_kill_reproduces_the_next_step(data, tmp_path):
    """Kill after step 3, resume: step 4's loss and the weights after it are bit-identical to
    the uninterrupted run's (dropout on, so the RNG state matters too)."""
    full, split = tmp_path / "full", tmp_path / "split"
    cfg = TINY.replace(steps=12, stop_after_steps=4)
    Trainer(cfg, data, full).run()
    Trainer(cfg.replace(stop_after_steps=3), data, split).run()
    Trainer(cfg, data, split, resume=True).run()
    a = [r for r in read_metrics(full) if r["type"] == "train"]
    b = [r for r in read_metrics(split) if r["type"] == "train"]
    assert [r["step"] for r in b] == [1, 2, 3, 4]
    assert a[3]["loss"] == b[3]["loss"] and a[3]["grad_trunk"] == b[3]["grad_trunk"]
    sa = torch.load(full / "resume.pt", weights_only=True)
    sb = torch.load(split / "resume.pt", weights_only=True)
    assert sa["step"] == sb["step"] == 4 and (sa["epoch"], sa["index"]) == (sb["epoch"], sb["index"])
    for k, v in sa["model"].items():
        assert torch.equal(v, sb["model"][k]), k
    assert sa["optimizer"]["state"][0]["exp_avg"].equal(sb["optimizer"]["state"][0]["exp_avg"])
    # And a resumed run refuses a changed config.
    with pytest.raises(ResumeError, match="lr"):
        Trainer(cfg.replace(lr=5e-3), data, split, resume=True)
    # A state saved before init_from and reach_mask existed resumes with the settings such
    # runs used (no warm start, the preset's mask), and names the field that now differs.
    sb["config"] = {k: v for k, v in sb["config"].items() if k not in ("init_from", "reach_mask")}
    torch.save(sb, split / "resume.pt")
    Trainer(replace(cfg, reach_mask=None), data, split, resume=True)
    with pytest.raises(ResumeError, match=r"\['reach_mask'\]"):
        Trainer(cfg, data, split, resume=True)


def test_cpu_bf16_autocasts_training_but_validates_in_fp32(data, tmp_path):
    """``cpu_bf16``: the training forward runs under bf16 autocast (its policy logits come
    out bf16), the validation in fp32 (its figures equal `train evaluate`'s of the same
    weights); off, the default, everything is fp32. A run resumes with the setting it was
    started with and refuses the other."""
    from zerochess.train.supervised.trainer import evaluate_checkpoint

    assert SuperviseConfig().cpu_bf16 is False
    cfg = TINY.replace(steps=4, dropout=0.0)
    t16 = Trainer(cfg.replace(cpu_bf16=True, stop_after_steps=2), data, tmp_path / "bf16")
    t32 = Trainer(cfg, data, tmp_path / "fp32")
    tokens = torch.from_numpy(t16.train_set.gather(np.arange(8)).tokens)
    assert t16._forward(tokens)[0].dtype == torch.bfloat16
    assert t32._forward(tokens)[0].dtype == torch.float32
    t16.run()
    losses = [r["loss"] for r in read_metrics(tmp_path / "bf16") if r["type"] == "train"]
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses)
    val = t16.validate()
    saved = t16.save_network("check.pt", val)
    again = evaluate_checkpoint(saved, data, cfg.replace(cpu_bf16=True))
    assert again["loss"] == pytest.approx(val["loss"], rel=1e-6)
    with pytest.raises(ResumeError, match="cpu_bf16"):
        Trainer(cfg, data, tmp_path / "bf16", resume=True)
    Trainer(cfg.replace(cpu_bf16=True), data, tmp_path / "bf16", resume=True)


def test_init_from_starts_at_the_checkpoints_weights(data, smoke_run, tmp_path):
    """A warm start takes the checkpoint's weights and architecture (here a non-default head),
    not the preset's fresh ones, and then trains with its own fresh optimizer."""
    src = tmp_path / "src"
    Trainer(TINY.replace(policy_head="pooled", steps=2, reach_mask=False), data, src).run()
    warm_cfg = replace(TINY, init_from=str(src / "final.pt"), steps=1, reach_mask=None)
    warm = Trainer(warm_cfg, data, tmp_path / "warm")
    start, _ = load_checkpoint(src / "final.pt")
    assert warm.net_cfg.policy_head == "pooled" and not warm.net_cfg.reach_mask  # None: keep
    assert all(torch.equal(v, warm.model.state_dict()[k]) for k, v in start.state_dict().items())
    assert not warm.opt.state  # fresh AdamW moments
    warm.run()
    assert json.loads((tmp_path / "warm" / "config.json").read_text())["network"]["policy_head"] == "pooled"
    # reach_mask has no parameters: it can be switched on for a warm start.
    masked = Trainer(warm_cfg.replace(reach_mask=True), data, tmp_path / "masked")
    assert masked.net_cfg.reach_mask and not start.config.reach_mask
    assert all(torch.equal(v, masked.model.state_dict()[k]) for k, v in start.state_dict().items())
    # attention_bias adds zero biases to a checkpoint without them (its weights kept); a
    # run from a biased checkpoint keeps them, and refuses to drop them.
    biased = Trainer(warm_cfg.replace(attention_bias=True), data, tmp_path / "biased")
    assert biased.net_cfg.attention_bias and not start.config.attention_bias
    state = biased.model.state_dict()
    assert all(torch.equal(v, state[k]) for k, v in start.state_dict().items())
    assert {k for k in state if k not in start.state_dict()} == {"layers.0.attn_bias", "layers.1.attn_bias"}
    assert all(not state[k].any() for k in ("layers.0.attn_bias", "layers.1.attn_bias"))
    biased.run()
    again = Trainer(warm_cfg.replace(init_from=str(tmp_path / "biased" / "final.pt")), data,
                    tmp_path / "again")
    assert again.net_cfg.attention_bias
    with pytest.raises(ValueError, match="would drop them"):
        Trainer(warm_cfg.replace(init_from=str(tmp_path / "biased" / "final.pt"),
                                 attention_bias=False), data, tmp_path / "dropped")
    # Resuming a warm-started run rebuilds the same architecture.
    Trainer(warm_cfg.replace(steps=1), data, tmp_path / "warm", resume=True)
    # A missing or damaged checkpoint is named, not a traceback.
    from zerochess.neural.checkpoint import CheckpointError
    with pytest.raises(CheckpointError, match="nope.pt"):
        Trainer(TINY.replace(init_from=str(tmp_path / "nope.pt")), data, tmp_path / "x")
    res = CliRunner().invoke(main, ["train", "supervise", "--data", str(data), "--out",
                                    str(tmp_path / "y"), "--init-from", str(src / "final.pt"),
                                    "--preset", "small"])
    assert res.exit_code != 0 and "--init-from takes the checkpoint's architecture" in res.output


def test_threat_inputs_train_on_version_2_batches_and_resume_exactly(data, tmp_path):
    """A threat-input run reads the shards' version-1 tokens as version 2 (batches and
    validation), its threat embedding learns, a killed run resumes bit-identically, and
    ``train evaluate`` of its checkpoint scores it as the run did."""
    import numpy as np

    from zerochess.chess.threats import add_threats
    from zerochess.train.data.batches import iterate_batches
    from zerochess.train.supervised.trainer import evaluate_checkpoint

    cfg = TINY.replace(threat_inputs=True, steps=4)
    full, split = tmp_path / "full", tmp_path / "split"
    trainer = Trainer(cfg, data, full)
    assert trainer.model.config.threat_inputs
    raw = next(iterate_batches(trainer.train_set, cfg.batch_size, cfg.seed,
                               with_target=trainer.sampler_target))
    assert np.array_equal(next(trainer.batches()).tokens, add_threats(raw.tokens))
    trainer.run()
    Trainer(cfg.replace(stop_after_steps=2), data, split).run()
    Trainer(cfg, data, split, resume=True).run()
    sa = torch.load(full / "resume.pt", weights_only=True)["model"]
    sb = torch.load(split / "resume.pt", weights_only=True)["model"]
    assert all(torch.equal(v, sb[k]) for k, v in sa.items())
    assert sa["threat_embed.weight"].abs().min() > 0  # it learnt from the flags
    assert json.loads((full / "config.json").read_text())["network"]["threat_inputs"] is True
    model, info = load_checkpoint(full / "final.pt")
    assert model.config.threat_inputs
    val = info["metadata"]["metrics"]
    again = evaluate_checkpoint(full / "final.pt", data, cfg)
    assert again["loss"] == val["loss"] and again["legal_top1"] == val["legal_top1"]
    assert again["legal_gen_masked_illegal"] == 0.0


def test_threat_inputs_grow_a_shipped_network_at_zero(data, tmp_path):
    """``--init-from zero --threat-inputs``: the shipped weights, a zero threat
    embedding, and on version-2 tokens exactly the shipped network's outputs; a run from a
    threat checkpoint keeps the embedding and refuses to drop it."""
    import numpy as np

    from zerochess.neural.api import shipped_network_path
    from zerochess.chess.threats import add_threats

    warm_cfg = TINY.replace(init_from="zero", threat_inputs=True, steps=1, reach_mask=None,
                            dropout=0.0)
    warm = Trainer(warm_cfg, data, tmp_path / "warm")
    start, _ = load_checkpoint(shipped_network_path("zero", ".pt"))
    state, before = warm.model.state_dict(), start.state_dict()
    assert set(state) - set(before) == {"threat_embed.weight"}
    assert all(torch.equal(v, state[k]) for k, v in before.items())
    assert not state["threat_embed.weight"].any()
    tokens = warm.val_set.gather(np.arange(64)).tokens  # version 1, as the shards hold them
    with torch.no_grad():
        ref = start.eval()(torch.from_numpy(tokens))
        out = warm.model.eval()(torch.from_numpy(add_threats(tokens)))
    assert all(torch.equal(a, b) for a, b in zip(ref, out))
    warm.run()
    grown = tmp_path / "warm" / "final.pt"
    assert Trainer(TINY.replace(init_from=str(grown), steps=1, reach_mask=None), data,
                   tmp_path / "kept").net_cfg.threat_inputs
    with pytest.raises(ValueError, match="would drop its threat embedding"):
        Trainer(TINY.replace(init_from=str(grown), threat_inputs=False, reach_mask=None), data,
                tmp_path / "dropped")


def test_cli_threat_inputs_flag_and_config_file(data, smoke_run, tmp_path):
    run, _ = smoke_run
    r = CliRunner()
    toml = tmp_path / "c.toml"
    toml.write_text("preset = 'tiny'\nbatch_size = 32\nsteps = 2\nwarmup_steps = 1\n"
                    "threads = 1\nval_max_samples = 32\nlegal_gen_games = 1\n"
                    "legal_gen_moves = 2\nthreat_inputs = true\n")
    res = r.invoke(main, ["train", "supervise", "--data", str(data), "--out",
                          str(tmp_path / "toml"), "--config", str(toml)])
    assert res.exit_code == 0, res.output
    assert load_checkpoint(tmp_path / "toml" / "final.pt")[0].config.threat_inputs
    res = r.invoke(main, ["train", "supervise", "--data", str(data), "--out",
                          str(tmp_path / "flag"), "--config", str(toml), "--init-from",
                          str(run / "final.pt"), "--threat-inputs"])
    assert res.exit_code == 0, res.output
    model, _ = load_checkpoint(tmp_path / "flag" / "final.pt")
    assert model.config.threat_inputs and not load_checkpoint(run / "final.pt")[0].config.threat_inputs
    res = r.invoke(main, ["train", "evaluate", str(tmp_path / "flag" / "final.pt"), "--data",
                          str(data), "--config", str(toml)])
    assert res.exit_code == 0, res.output
    assert 0.0 <= json.loads(res.stdout)["legal_top1"] <= 1.0


def test_legal_generation_test_on_an_untrained_network():
    torch.manual_seed(0)
    model = build_model(NetworkConfig.preset("tiny"))
    r = legal_generation_test(model, n_games=3, n_moves=4, seed=1)
    assert r["moves"] == 12 and r["masked_illegal_rate"] == 0.0
    assert r["raw_illegal_rate"] > 0.5  # near-uniform over 4168 indices: almost always illegal


def test_report_writes_plots_and_summary(smoke_run):
    run, _ = smoke_run
    text, pngs = make_report(run)
    assert {p.name for p in pngs} == {"losses.png", "validation.png", "speed.png"}
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    assert "legal_top1" in text and "target > 0.95" in text
    assert (run / "summary.txt").read_text().strip() == text


def test_cli_generate_supervise_resume_report(tmp_path):
    r = CliRunner()
    d, run = str(tmp_path / "d"), str(tmp_path / "run")
    res = r.invoke(main, ["train", "generate", "--games", "6", "--out", d, "--games-per-shard", "2",
                          "--max-plies", "30", "--seed", "2"])
    assert res.exit_code == 0, res.output
    assert "train" in res.output and "decisive_share" in res.output
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({**TINY.to_dict(), "steps": 6, "stop_after_steps": 3}))
    res = r.invoke(main, ["train", "supervise", "--data", d, "--out", run, "--config", str(cfg)])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout.strip().splitlines()[-1])["step"] == 3
    cfg.write_text(json.dumps({**TINY.to_dict(), "steps": 6}))
    res = r.invoke(main, ["train", "supervise", "--data", d, "--out", run, "--config", str(cfg), "--resume"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout.strip().splitlines()[-1])["finished"] is True
    res = r.invoke(main, ["train", "report", run])
    assert res.exit_code == 0 and "validation.png" in res.output
    res = r.invoke(main, ["train", "evaluate", str(tmp_path / "run" / "final.pt"), "--data", d,
                          "--config", str(cfg)])
    assert res.exit_code == 0, res.output
    final = load_checkpoint(tmp_path / "run" / "final.pt")[1]["metadata"]["metrics"]
    assert json.loads(res.stdout)["legal_top1"] == final["legal_top1"]  # same val samples
    # A damaged shard is reported by file name, not with a traceback.
    f = tmp_path / "d" / "train-00000" / "tokens.npy"
    f.write_bytes(f.read_bytes()[:-3])
    res = r.invoke(main, ["train", "supervise", "--data", d, "--out", str(tmp_path / "r2"),
                          "--config", str(cfg)])
    assert res.exit_code == 1 and str(f) in res.output
