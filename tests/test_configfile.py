"""Config files for the training commands, JSON and TOML, with clear errors."""

import sys

import pytest

from zerochess.train.selfplay.config import SelfPlayConfig
from zerochess.train.supervised.config import SuperviseConfig


@pytest.mark.parametrize("cls", [SuperviseConfig, SelfPlayConfig])
def test_json_and_toml_configs_load_and_unknown_fields_are_named(tmp_path, cls):
    (tmp_path / "c.json").write_text('{"seed": 7}')
    (tmp_path / "c.toml").write_text("seed = 7\n")
    assert cls.from_file(tmp_path / "c.json").seed == 7
    assert cls.from_file(tmp_path / "c.toml").seed == 7
    (tmp_path / "bad.json").write_text('{"seed": 7, "colour": "blue"}')
    with pytest.raises(ValueError, match=f"unknown {cls.__name__} fields \\['colour'\\]"):
        cls.from_file(tmp_path / "bad.json")
    assert cls().replace(seed=3, lr=None).seed == 3


def test_without_tomllib_json_works_and_toml_says_why(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tomllib", None)  # as on Python 3.10
    (tmp_path / "c.json").write_text('{"seed": 5}')
    (tmp_path / "c.toml").write_text("seed = 5\n")
    assert SuperviseConfig.from_file(tmp_path / "c.json").seed == 5
    with pytest.raises(ValueError, match="TOML configs need Python 3.11"):
        SuperviseConfig.from_file(tmp_path / "c.toml")


@pytest.mark.parametrize("cls", [SuperviseConfig, SelfPlayConfig])
def test_changed_fields_against_a_saved_config(cls):
    """What a resume compares: differing fields by name, ignored fields skipped, fields the
    saved config predates taken from their legacy values, obsolete saved fields reported."""
    cfg = cls(seed=5)
    saved = cls().to_dict()
    assert cfg.changed_fields(saved) == ["seed"]
    assert cfg.changed_fields(saved, ignore={"seed"}) == []
    del saved["seed"]
    assert cfg.changed_fields(saved, legacy={"seed": 5}) == []
    assert cfg.changed_fields({**saved, "seed": 5, "gone": 1}) == ["gone"]
    with pytest.raises(ValueError, match="illegal_penalty must be one of 'mass', 'log'"):
        cls(illegal_penalty="square")
