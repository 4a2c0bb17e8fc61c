"""`train generate` and `train label` take their options from the data sets' config dataclasses
(GenerateConfig with its PlayConfig, LabelConfig with its TeacherConfig), as `train supervise`
does from SuperviseConfig: each setting declared once (zerochess.train.configfile.setting).
What the commands record in metadata.json is pinned here, field by field, because a data set
resumes only when it matches exactly."""

import dataclasses

import click
import pytest
from click.testing import CliRunner

from zerochess.cli import main
from zerochess.train import cli as train_cli
from zerochess.train.configfile import flag_of, is_setting
from zerochess.train.data import generate as generate_mod
from zerochess.train.data import label as label_mod
from zerochess.train.data import label_cli
from zerochess.train.data.generate import GenerateConfig
from zerochess.train.data.label import LabelConfig
from zerochess.train.data.randomplay import PlayConfig
from zerochess.train.data.teacher import TeacherConfig

DEFAULT_TEACHER = {"command": ["stockfish"], "depth": 8, "nodes": None, "multipv": 4,
                   "threads": 1, "hash_mb": 16, "timeout": 30.0, "options": {}}
DEFAULT_LABEL = {"teacher": DEFAULT_TEACHER, "source": "games", "games_per_chunk": 20,
                 "openings": None, "random_plies": 4, "explore": 0.15,
                 "move_temperatures": [0.0, 0.01, 0.03], "max_plies": 250,
                 "policy_temperature": 0.04, "val_every": 20, "seed": 0}
DEFAULT_PLAY = {"max_plies": 200, "min_plies": 10, "capture_weight": 3.0, "check_weight": 2.0,
                "mvv_lva": False, "mate_in_one": True}


def options_of(command: click.Command) -> dict[str, click.Option]:
    return {p.name: p for p in command.params if isinstance(p, click.Option) and p.name != "help"}


@pytest.mark.parametrize("classes, nested, command, cli_only", [
    ((GenerateConfig, PlayConfig), "play", train_cli.generate, train_cli.GENERATE_CLI_ONLY),
    ((LabelConfig, TeacherConfig), "teacher", label_cli.label, label_cli.LABEL_CLI_ONLY),
], ids=["generate", "label"])
def test_every_setting_is_an_option_and_every_option_a_setting(classes, nested, command, cli_only):
    """Every setting of the config and of its nested one is an option with the declared flag
    and help; no option exists beside them but the command-line-only ones (--out, --workers:
    where the data set goes and how fast it is made, not what it holds)."""
    options = options_of(command)
    settings = {f.name: f for cls in classes for f in dataclasses.fields(cls) if is_setting(f)}
    assert len(settings) == sum(1 for cls in classes for f in dataclasses.fields(cls) if is_setting(f))
    assert nested in {f.name for f in dataclasses.fields(classes[0]) if not is_setting(f)}
    assert set(options) - set(cli_only) == set(settings)
    for name, f in settings.items():
        assert flag_of(f) in options[name].opts and options[name].help == f.metadata["help"]
    assert set(cli_only) <= set(options)


def test_the_flags_keep_their_spelling():
    flags = {o for opt in options_of(train_cli.generate).values() for o in opt.opts + opt.secondary_opts}
    assert flags == {"--games", "--out", "--workers", "--seed", "--games-per-shard", "--val-fraction",
                     "--max-plies", "--min-plies", "--capture-weight", "--check-weight", "--mvv-lva",
                     "--no-mvv-lva", "--mate-in-one", "--no-mate-in-one"}
    flags = {o for opt in options_of(label_cli.label).values() for o in opt.opts + opt.secondary_opts}
    assert flags == {"--out", "--teacher", "--depth", "--nodes", "--multipv", "--threads", "--hash",
                     "--teacher-option", "--timeout", "--source", "--games", "--openings",
                     "--random-plies", "--explore", "--policy-temperature", "--games-per-chunk",
                     "--val-every", "--max-plies", "--workers", "--seed"}


@pytest.fixture
def made(monkeypatch):
    """The config and workers each command would make a data set with, without making it."""
    seen = {}

    def fake(cfg, out, workers=1, progress=None):
        seen["cfg"], seen["workers"] = cfg, workers
        raise ValueError("stopped before making")

    monkeypatch.setattr(label_mod, "label", fake)
    monkeypatch.setattr(generate_mod, "generate", fake)
    return seen


def invoke(*args) -> click.testing.Result:
    return CliRunner().invoke(main, ["train", *args])


def test_label_records_the_settings_it_always_recorded(tmp_path, made):
    """The default command's settings() is the dict data sets were made with: a run begun
    before the options came from the dataclass resumes."""
    res = invoke("label", "--out", str(tmp_path / "d"), "--teacher", "stockfish")
    assert "stopped before making" in res.output
    assert made["cfg"].settings() == DEFAULT_LABEL and made["workers"] == 1
    assert LabelConfig(teacher=TeacherConfig(command=["stockfish"])).settings() == DEFAULT_LABEL


def test_label_flags_set_their_fields(tmp_path, made):
    book = tmp_path / "book.epd"
    book.write_text("8/8/8/8/8/8/8/K6k w - -\n")
    invoke("label", "--out", str(tmp_path / "d"), "--teacher", "sf --x 'a b'", "--nodes", "500",
           "--multipv", "2", "--threads", "2", "--hash", "64", "--timeout", "2.5",
           "--teacher-option", "Skill Level = 3", "--teacher-option", "UCI_Elo=1500",
           "--source", "g.pgn", "--games", "7", "--openings", str(book), "--random-plies", "0",
           "--explore", "1", "--policy-temperature", "0", "--games-per-chunk", "3",
           "--val-every", "2", "--max-plies", "9", "--workers", "3", "--seed", "4")
    assert made["workers"] == 3
    assert made["cfg"].settings() == {
        "teacher": {"command": ["sf", "--x", "a b"], "depth": None, "nodes": 500, "multipv": 2,
                    "threads": 2, "hash_mb": 64, "timeout": 2.5,
                    "options": {"Skill Level": "3", "UCI_Elo": "1500"}},
        "source": "g.pgn", "games_per_chunk": 3, "openings": str(book), "random_plies": 0,
        "explore": 1.0, "move_temperatures": [0.0, 0.01, 0.03], "max_plies": 9,
        "policy_temperature": 0.0, "val_every": 2, "seed": 4}
    assert made["cfg"].games == 7
    # --depth alone keeps no nodes limit; an empty --teacher leaves the default engine
    invoke("label", "--out", str(tmp_path / "d"), "--depth", "3", "--teacher", "")
    assert (made["cfg"].teacher.depth, made["cfg"].teacher.nodes) == (3, None)
    assert made["cfg"].teacher.command == TeacherConfig().command


@pytest.mark.parametrize("args, message", [
    (["--depth", "3", "--nodes", "5"], "exactly one search limit"),
    (["--teacher-option", "Hash"], "must be NAME=VALUE, got 'Hash'"),
    (["--teacher", "'sf"], "No closing quotation"),
    (["--val-every", "1"], "x>=2"),
    (["--explore", "1.5"], "0<=x<=1"),
    (["--openings", "/no/such/book.epd"], "does not exist"),
])
def test_label_refuses_bad_flags_as_usage_errors(tmp_path, made, args, message):
    res = invoke("label", "--out", str(tmp_path / "d"), *args)
    assert res.exit_code == 2 and message in res.output and "cfg" not in made


def test_generate_records_the_settings_it_always_recorded(tmp_path, made):
    res = invoke("generate", "--games", "10", "--out", str(tmp_path / "d"))
    assert str(res.exception) == "stopped before making"  # generate lets a ValueError out
    expected = {"games": 10, "seed": 0, "games_per_shard": 250, "val_fraction": 0.1,
                "split": "game", "play": DEFAULT_PLAY}
    assert made["cfg"].settings() == expected and made["workers"] == 1
    assert GenerateConfig(games=10).settings() == expected


def test_generate_flags_set_their_fields(tmp_path, made):
    invoke("generate", "--games", "5", "--out", str(tmp_path / "d"), "--seed", "2",
           "--games-per-shard", "3", "--val-fraction", "0.5", "--max-plies", "30",
           "--min-plies", "4", "--capture-weight", "1", "--check-weight", "1.5", "--mvv-lva",
           "--no-mate-in-one", "--workers", "2")
    assert made["workers"] == 2
    assert made["cfg"] == GenerateConfig(
        games=5, seed=2, games_per_shard=3, val_fraction=0.5,
        play=PlayConfig(max_plies=30, min_plies=4, capture_weight=1.0, check_weight=1.5,
                        mvv_lva=True, mate_in_one=False))


@pytest.mark.parametrize("args, message", [
    ([], "Missing option '--games'"),
    (["--games", "0"], "x>=1"),
    (["--games", "5", "--val-fraction", "1"], "0<=x<1"),
    (["--games", "5", "--capture-weight", "0"], "x>0"),
    (["--games", "5", "--min-plies", "50", "--max-plies", "20"], "min_plies <= max_plies"),
])
def test_generate_refuses_bad_flags_as_usage_errors(tmp_path, made, args, message):
    res = invoke("generate", "--out", str(tmp_path / "d"), *args)
    assert res.exit_code == 2 and message in res.output and "cfg" not in made


def test_the_declared_ranges_hold_for_configs_made_in_code():
    with pytest.raises(ValueError, match="games must be positive, got 0"):
        GenerateConfig(games=0)
    with pytest.raises(ValueError, match=r"val_fraction must be >= 0 and < 1, got 1.0"):
        GenerateConfig(games=1, val_fraction=1.0)
    with pytest.raises(ValueError, match="check_weight must be positive"):
        PlayConfig(check_weight=0.0)
    with pytest.raises(ValueError, match="multipv must be positive, got 0"):
        TeacherConfig(command=["sf"], multipv=0)
    with pytest.raises(ValueError, match="val_every must be >= 2, got 1"):
        LabelConfig(teacher=TeacherConfig(command=["sf"]), val_every=1)
