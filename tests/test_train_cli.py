"""The training commands' options come from the config dataclasses: every setting is declared
once (zerochess.train.configfile.setting) and is a flag, a config-file key and a checked value
at the same time."""

import dataclasses
import json

import click
import pytest
from click.testing import CliRunner

from zerochess.cli import main
from zerochess.train import cli as train_cli
from zerochess.train.configfile import flag_of, is_setting
from zerochess.train.selfplay import cli as selfplay_cli
from zerochess.train.selfplay.config import SelfPlayConfig
from zerochess.train.supervised.config import SuperviseConfig


def options_of(command: click.Command) -> dict[str, click.Option]:
    return {p.name: p for p in command.params if isinstance(p, click.Option) and p.name != "help"}


@pytest.mark.parametrize("cls, command, cli_only, everything", [
    (SuperviseConfig, train_cli.supervise, train_cli.SUPERVISE_CLI_ONLY, True),
    (SelfPlayConfig, selfplay_cli.selfplay, selfplay_cli.SELFPLAY_CLI_ONLY, False),
], ids=["supervise", "selfplay"])
def test_every_setting_is_an_option_and_every_option_a_setting(cls, command, cli_only, everything):
    """`train supervise` has a flag for every SuperviseConfig field; `train selfplay` for the
    SelfPlayConfig fields declared as settings (the rest are config-file keys). No option
    exists beside them except the documented command-line-only ones."""
    options = options_of(command)
    settings = {f.name: f for f in dataclasses.fields(cls) if is_setting(f)}
    if everything:
        assert set(settings) == {f.name for f in dataclasses.fields(cls)}
    assert set(options) - set(cli_only) == set(settings)
    for name, f in settings.items():
        opt = options[name]
        assert flag_of(f) in opt.opts and opt.help == f.metadata["help"]
        if f.metadata["choices"]:
            assert list(opt.type.choices) == list(f.metadata["choices"])
    assert set(cli_only) <= set(options)


def test_the_flags_that_existed_keep_their_spelling():
    flags = {o for opt in options_of(train_cli.supervise).values() for o in opt.opts}
    assert {"--data", "--snapshot", "--out", "--preset", "--config", "--device", "--policy-head",
            "--policy-target", "--epochs", "--steps", "--minutes", "--batch-size", "--lr",
            "--threads", "--init-from", "--attention-bias", "--value-squares", "--threat-inputs",
            "--moves-left", "--moves-left-weight", "--qat", "--layers", "--cpu-bf16", "--seed",
            "--resume"} <= flags
    flags = {o for opt in options_of(selfplay_cli.selfplay).values() for o in opt.opts}
    assert flags == {"--init", "--out", "--config", "--device", "--workers", "--iterations",
                     "--backend", "--address"}
    flags = {o for opt in options_of(train_cli.evaluate).values() for o in opt.opts}
    assert flags == {"--data", "--snapshot", "--config", "--threads"}


@pytest.fixture
def captured(monkeypatch):
    """The SuperviseConfig `train supervise` builds, without training."""
    from zerochess.train.supervised import trainer

    seen = {}

    def fake(cfg, data, out, resume=False):
        seen["cfg"], seen["resume"] = cfg, resume
        raise ValueError("stopped before training")

    monkeypatch.setattr(trainer, "Trainer", fake)
    return seen


def test_flags_override_the_config_file_and_flags_not_given_leave_it(tmp_path, captured):
    (tmp_path / "c.toml").write_text('lr = 3e-4\nbatch_size = 64\nreach_mask = false\n'
                                     'data = ["a", "b:2"]\nsteps = 100\n')
    res = CliRunner().invoke(main, ["train", "supervise", "--out", str(tmp_path / "r"),
                                    "--config", str(tmp_path / "c.toml"), "--lr", "5e-4",
                                    "--no-amp", "--layers", "3", "--warmup-steps", "7"])
    assert "stopped before training" in res.output
    cfg = captured["cfg"]
    assert (cfg.lr, cfg.batch_size, cfg.reach_mask, cfg.amp, cfg.n_layers, cfg.warmup_steps) == \
        (5e-4, 64, False, False, 3, 7)
    assert cfg.data == ["a", "b:2"] and cfg.steps == 100 and cfg.minutes is None
    # --data replaces the file's list; --minutes replaces its steps (the run's length)
    res = CliRunner().invoke(main, ["train", "supervise", "--out", str(tmp_path / "r"),
                                    "--config", str(tmp_path / "c.toml"), "--data", "x",
                                    "--data", "y:3", "--minutes", "2", "--reach-mask"])
    cfg = captured["cfg"]
    assert cfg.data == ["x", "y:3"] and cfg.minutes == 2 and cfg.steps is None and cfg.reach_mask
    # nothing given: the dataclass's defaults, exactly
    CliRunner().invoke(main, ["train", "supervise", "--out", str(tmp_path / "r")])
    assert captured["cfg"] == SuperviseConfig() and captured["resume"] is False


def test_a_value_out_of_its_declared_range_is_refused_on_the_command_line_and_in_a_file(tmp_path):
    res = CliRunner().invoke(main, ["train", "supervise", "--out", str(tmp_path / "r"),
                                    "--min-lr-ratio", "1.5"])
    assert res.exit_code == 2 and "0<=x<=1" in res.output
    res = CliRunner().invoke(main, ["train", "supervise", "--out", str(tmp_path / "r"),
                                    "--illegal-penalty", "square"])
    assert res.exit_code == 2 and "'square' is not one of 'mass', 'log'" in res.output
    (tmp_path / "c.json").write_text(json.dumps({"min_lr_ratio": 1.5}))
    with pytest.raises(ValueError, match=r"min_lr_ratio must be >= 0 and <= 1, got 1.5"):
        SuperviseConfig.from_file(tmp_path / "c.json")
    with pytest.raises(ValueError, match="batch_size must be positive, got 0"):
        SuperviseConfig(batch_size=0)
    with pytest.raises(ValueError, match="backend must be one of"):
        SelfPlayConfig(backend="cloud")
    assert SuperviseConfig(policy_head=None, n_layers=None).policy_head is None  # None: the preset's


def test_a_config_key_spelled_as_its_flag_is_named_with_the_field(tmp_path):
    (tmp_path / "c.toml").write_text("batch-size = 64\nlayers = 3\nlearning_rate = 1e-3\n")
    with pytest.raises(ValueError, match=r"unknown SuperviseConfig fields \['batch-size', 'layers', "
                                         r"'learning_rate'\]; did you mean batch-size -> batch_size, "
                                         r"layers -> n_layers"):
        SuperviseConfig.from_file(tmp_path / "c.toml")


def test_selfplay_flags_override_its_config_file(tmp_path, monkeypatch):
    from zerochess.train.selfplay import loop

    seen = {}

    def fake(cfg, out, init):
        seen["cfg"] = cfg
        raise ValueError("stopped before playing")

    monkeypatch.setattr(loop, "SelfPlayRun", fake)
    (tmp_path / "c.toml").write_text("workers = 3\niterations = 7\ngames_per_iteration = 12\n")
    res = CliRunner().invoke(main, ["train", "selfplay", "--out", str(tmp_path / "r"),
                                    "--config", str(tmp_path / "c.toml"), "--iterations", "9"])
    assert "stopped before playing" in res.output
    assert (seen["cfg"].workers, seen["cfg"].iterations, seen["cfg"].games_per_iteration) == (3, 9, 12)
    res = CliRunner().invoke(main, ["train", "selfplay", "--out", str(tmp_path / "r"),
                                    "--address", "auto"])
    assert "--address is for the ray backend" in res.output


def test_the_quick_start_commands_work_at_a_small_size(tmp_path, monkeypatch):
    """The training guide's quick start, `zerochess train generate --games 200 --out data`
    then `zerochess train supervise --data data --out run --steps 60`, with 20 games and
    5 steps: one shard unit holds every game, and its validation games (1 and 11) give
    the validation split the trainer needs."""
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["train", "generate", "--games", "20", "--out", "data"])
    assert res.exit_code == 0, res.output
    meta = json.loads((tmp_path / "data" / "metadata.json").read_text())
    assert meta["samples"]["val"] > 0 and sorted(meta["shards"]) == ["train-00000", "val-00000"]
    res = CliRunner().invoke(main, ["train", "supervise", "--data", "data", "--out", "run",
                                    "--steps", "5"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert summary["finished"] and summary["step"] == 5 and summary["val"]["loss"] > 0
    assert (tmp_path / "run" / "best.pt").is_file()
