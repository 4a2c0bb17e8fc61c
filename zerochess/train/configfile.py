"""The training config dataclasses (``SuperviseConfig``, ``SelfPlayConfig``): settings declared
once, read from files and from the command line.

A setting is one dataclass field declared with ``setting()``: its default, its ``--help``
text, its flag (``--batch-size`` for ``batch_size`` unless it names another), its choices
and its range. From that one declaration come the command's click option
(``cli_options``), the key of a ``--config`` file (JSON or TOML, flat, keys named as the
fields) and the check every value meets however it was given (``check_settings``)::

    @dataclass(frozen=True)
    class Config(ConfigFile):
        lr: float = setting(1e-3, "Peak learning rate.", min=0, min_open=True)

    @click.command()
    @cli_options(Config)
    def train(**settings):
        cfg = Config().replace(**settings)   # flags not given are None: the file's value stays

A field declared with a plain default is a config-file key only (no flag).
"""

from __future__ import annotations

import difflib
import json
import os
import typing
from dataclasses import MISSING, Field, asdict, field, fields, replace
from pathlib import Path

_NO_RANGE = (None, None, False, False)


def setting(default, help: str, *, flag: str | None = None, short: str | None = None,
            choices: tuple | None = None, min: float | None = None, max: float | None = None,
            min_open: bool = False, max_open: bool = False, multiple: bool = False):
    """A dataclass field that is also a command-line option.

    help: the ``--help`` text. flag: the long flag when it is not the field's name with
    dashes (``--layers`` for ``n_layers``); short: a one-letter form (``-s``). choices: the
    values allowed (None too, when the field's type allows None). min / max (open with
    ``min_open`` / ``max_open``): the range of a number. multiple: the flag may repeat and
    gives a list (a field of type ``str | list[str] | None``)."""
    metadata = {"help": help, "flag": flag, "short": short, "choices": choices,
                "range": (min, max, min_open, max_open), "multiple": multiple}
    if isinstance(default, (list, dict, set)):
        return field(default_factory=lambda: type(default)(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def is_setting(f: Field) -> bool:
    """Declared with ``setting()``: the field has a command-line option."""
    return "help" in f.metadata


def flag_of(f: Field) -> str:
    """The field's long flag: ``--batch-size`` for ``batch_size`` unless declared otherwise."""
    return f.metadata.get("flag") or "--" + f.name.replace("_", "-")


def _base_type(cls, f: Field) -> tuple[type, bool]:
    """(the type a value of ``f`` has when it is not None, whether None is allowed)."""
    hint = typing.get_type_hints(cls)[f.name]
    args = typing.get_args(hint)
    if not args:
        return hint, False
    kinds = [a for a in args if a is not type(None)]
    return kinds[0], len(kinds) < len(args)


def _default_of(f: Field):
    return f.default_factory() if f.default is MISSING else f.default


def _range_text(low, high, low_open, high_open) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high:g}")
    return " and ".join(parts)


def cli_options(cls, names: tuple[str, ...] | None = None, help: dict[str, str] | None = None):
    """A decorator adding a click option for each setting of ``cls`` (or those in ``names``),
    in the order the class declares them. ``--help`` shows the config's default, but the
    command receives None for a flag not given, so that a ``--config`` file's value stands. ``help`` replaces texts by field name, for a command that uses a setting
    differently. The command receives each as a keyword argument named as the field."""
    import click

    chosen = [f for f in fields(cls) if is_setting(f) and (names is None or f.name in names)]
    if names is not None and len(chosen) != len(names):
        raise ValueError(f"{cls.__name__} has no settings {sorted(set(names) - {f.name for f in chosen})}")

    def option(f: Field):
        meta = f.metadata
        kind, _ = _base_type(cls, f)
        low, high, low_open, high_open = meta["range"]
        decls = [flag_of(f)] + ([meta["short"]] if meta["short"] else [])
        extra: dict = {}
        if kind is bool and not meta["choices"]:
            decls[0] += f"/--no-{flag_of(f)[2:]}"
        elif meta["choices"]:
            extra["type"] = click.Choice(list(meta["choices"]))
        elif kind is int:
            extra["type"] = (click.IntRange(low, high, min_open=low_open, max_open=high_open)
                             if (low, high) != (None, None) else int)
        elif kind is float:
            extra["type"] = (click.FloatRange(low, high, min_open=low_open, max_open=high_open)
                             if (low, high) != (None, None) else float)
        if meta["multiple"]:  # a list, or None when the flag is not given
            extra.update(multiple=True, callback=lambda ctx, param, value: list(value) or None)
        else:  # click shows the config's default; the command gets None unless it was given
            extra.update(default=_default_of(f), show_default=_default_of(f) not in (None, ""),
                         callback=_given_or_none)
        return click.option(*decls, f.name, help=(help or {}).get(f.name, meta["help"]), **extra)

    def decorate(command):
        for f in reversed(chosen):
            command = option(f)(command)
        return command
    return decorate


def _given_or_none(ctx, param, value):
    """The option's value when the command line gave it, else None (the file's value stays)."""
    from click.core import ParameterSource

    return None if ctx.get_parameter_source(param.name) is ParameterSource.DEFAULT else value


class ConfigFile:
    """Mixin for a config dataclass: ``to_dict``, ``replace``, ``from_dict``, ``from_file``,
    and the checks of its settings' choices and ranges."""

    def to_dict(self) -> dict:
        return asdict(self)

    def replace(self, **changes):
        """A copy with the given fields changed (None values are ignored: CLI defaults)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def check_settings(self) -> None:
        """Raise a ValueError naming the field unless every ``setting()`` value is among its
        choices and within its range (None passes where the field allows None)."""
        for f in fields(self):
            if not is_setting(f):
                continue
            value = getattr(self, f.name)
            kind, optional = _base_type(type(self), f)
            if value is None and optional:
                continue
            if f.metadata["choices"]:
                self.check_choice(f.name, tuple(f.metadata["choices"]))
            low, high, low_open, high_open = f.metadata["range"]
            if (low, high) == (None, None) or f.metadata["multiple"]:
                continue
            if not ((low is None or value > low or (value == low and not low_open))
                    and (high is None or value < high or (value == high and not high_open))):
                rule = ("positive" if (kind is int and low == 1 and high is None)
                        or (low == 0 and low_open and high is None)
                        else _range_text(low, high, low_open, high_open))
                raise ValueError(f"{f.name} must be {rule}, got {value!r}")

    def changed_fields(self, saved: dict, ignore: frozenset | set = frozenset(),
                       legacy: dict | None = None) -> list[str]:
        """Names of the fields (outside ``ignore``) whose values differ from a saved run's
        config dict; fields the saved dict predates take their ``legacy`` values, the ones
        such runs used."""
        base, now = {**(legacy or {}), **saved}, self.to_dict()
        return sorted(k for k in set(base) | set(now) if k not in ignore and base.get(k) != now.get(k))

    def check_choice(self, name: str, choices: tuple) -> None:
        """Raise a ValueError naming the field unless its value is one of ``choices``."""
        value = getattr(self, name)
        if value not in choices:
            raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")

    @classmethod
    def from_dict(cls, d: dict, source: str = "config"):
        by_name = {f.name: f for f in fields(cls)}
        unknown = sorted(set(d) - set(by_name))
        if unknown:
            raise ValueError(f"{source}: unknown {cls.__name__} fields {unknown}"
                             + _suggestions(unknown, by_name))
        return cls(**d)

    @classmethod
    def from_file(cls, path: str | os.PathLike):
        """Read a flat JSON or TOML file of field values (TOML by the .toml extension)."""
        path = Path(path)
        try:
            text = path.read_text()
            d = _load_toml(path, text) if path.suffix == ".toml" else json.loads(text)
        except (OSError, ValueError) as e:
            raise ValueError(f"{path}: cannot read config: {e}") from e
        if not isinstance(d, dict):
            raise ValueError(f"{path}: config must be a table/object of fields")
        return cls.from_dict(d, source=str(path))


def _suggestions(unknown: list[str], by_name: dict[str, Field]) -> str:
    """'; did you mean ...' for keys spelled as a flag (``batch-size``, ``layers``) or close
    to a field's name."""
    flags = {flag_of(f)[2:]: name for name, f in by_name.items() if is_setting(f)}
    hints = []
    for key in unknown:
        name = flags.get(key) or next(iter(difflib.get_close_matches(key, by_name, 1)), None)
        if name:
            hints.append(f"{key} -> {name}")
    return f"; did you mean {', '.join(hints)}?" if hints else ""


def _load_toml(path: Path, text: str) -> dict:
    # tomllib is in the standard library from Python 3.11; zerochess supports 3.10, where
    # JSON configs work and a TOML one gets this clear error instead of an ImportError.
    try:
        import tomllib
    except ImportError:
        raise ValueError(f"{path}: TOML configs need Python 3.11 or later; use JSON") from None
    return tomllib.loads(text)
