"""The training config dataclasses (``SuperviseConfig``, ``SelfPlayConfig``, and the data
sets' ``GenerateConfig`` and ``LabelConfig``): settings declared once, read from files and
from the command line.

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

A field declared with a plain default is a config-file key only (no flag). A field whose
type is itself a ``ConfigFile`` (``GenerateConfig.play``, ``LabelConfig.teacher``) is a
nested config: its settings are options of the outer command under their own names, and
``replace`` hands those names to it, so one flat command line sets both.
"""

from __future__ import annotations

import difflib
import json
import os
import types
import typing
from dataclasses import MISSING, Field, asdict, field, fields, replace
from pathlib import Path

_NO_RANGE = (None, None, False, False)


def setting(default, help: str, *, flag: str | None = None, short: str | None = None,
            choices: tuple | None = None, min: float | None = None, max: float | None = None,
            min_open: bool = False, max_open: bool = False, multiple: bool = False,
            default_factory=None, parse=None, existing_file: bool = False):
    """A dataclass field that is also a command-line option.

    default: the value, or ``MISSING`` for one every config must be given (a required flag).
    help: the ``--help`` text. flag: the long flag when it is not the field's name with
    dashes (``--layers`` for ``n_layers``); short: a one-letter form (``-s``). choices: the
    values allowed (None too, when the field's type allows None). min / max (open with
    ``min_open`` / ``max_open``): the range of a number. multiple: the flag may repeat and
    gives a list (a field of type ``str | list[str] | None``), or for a ``dict`` field a dict
    of its NAME=VALUE items.

    default_factory (with default ``MISSING``): makes the default when a config is made, for
    one that depends on the machine (an engine found on PATH); ``--help`` cannot show it
    without looking, so the help text says it. parse: turns the flag's text into the
    field's value (a command line's words), None leaving the default; its ValueError is a
    usage error. existing_file: the value names a file, which the flag checks exists."""
    metadata = {"help": help, "flag": flag, "short": short, "choices": choices,
                "range": (min, max, min_open, max_open), "multiple": multiple,
                "computed": default_factory is not None, "parse": parse,
                "existing_file": existing_file}
    if default_factory is not None:
        return field(default_factory=default_factory, metadata=metadata)
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
    """(the type a value of ``f`` has when it is not None, whether None is allowed); the
    container for a ``list[str]`` or ``dict[str, str]``, the first member of a union."""
    hint = typing.get_type_hints(cls)[f.name]
    if typing.get_origin(hint) not in (typing.Union, types.UnionType):
        return typing.get_origin(hint) or hint, False
    args = typing.get_args(hint)
    kinds = [a for a in args if a is not type(None)]
    return kinds[0], len(kinds) < len(args)


def _default_of(f: Field):
    """The field's default value (MISSING for a required one)."""
    if f.default is MISSING and f.default_factory is not MISSING:
        return f.default_factory()
    return f.default


def _is_config(kind) -> bool:
    return isinstance(kind, type) and issubclass(kind, ConfigFile)


def _nested(cls) -> list[tuple[Field, type]]:
    """(field, its config class) for each nested config of ``cls`` (a field that is not a
    setting and whose type is a ``ConfigFile``)."""
    hints = typing.get_type_hints(cls)
    return [(f, hints[f.name]) for f in fields(cls)
            if not is_setting(f) and _is_config(hints[f.name])]


def _settings_of(cls) -> list[tuple[type, Field]]:
    """(owning class, field) of each setting of ``cls`` in declaration order, with a nested
    config's settings in its field's place."""
    inner = dict((f.name, kind) for f, kind in _nested(cls))
    out: list[tuple[type, Field]] = []
    for f in fields(cls):
        if is_setting(f):
            out.append((cls, f))
        elif f.name in inner:
            out.extend(_settings_of(inner[f.name]))
    return out


def _range_text(low, high, low_open, high_open) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high:g}")
    return " and ".join(parts)


def cli_options(cls, names: tuple[str, ...] | None = None, help: dict[str, str] | None = None):
    """A decorator adding a click option for each setting of ``cls`` (or those in ``names``),
    nested configs' included, in the order the class declares them. ``--help`` shows the
    config's default, but the command receives None for a flag not given, so that a
    ``--config`` file's value stands. ``help`` replaces texts by field name, for a command
    that uses a setting differently. The command receives each as a keyword argument named
    as the field."""
    import click

    every = _settings_of(cls)
    seen = [f.name for _, f in every]
    clashes = sorted({name for name in seen if seen.count(name) > 1})
    if clashes:  # a nested config's setting would shadow another under the one keyword
        raise ValueError(f"{cls.__name__}: settings {clashes} are declared twice")
    chosen = [(owner, f) for owner, f in every if names is None or f.name in names]
    if names is not None and len(chosen) != len(names):
        unknown = sorted(set(names) - {f.name for _, f in chosen})
        raise ValueError(f"{cls.__name__} has no settings {unknown}")

    def option(owner, f: Field):
        meta = f.metadata
        kind, _ = _base_type(owner, f)
        low, high, low_open, high_open = meta["range"]
        decls = [flag_of(f)] + ([meta["short"]] if meta["short"] else [])
        extra: dict = {}
        parse = meta["parse"]
        if kind is bool and not meta["choices"]:
            decls[0] += f"/--no-{flag_of(f)[2:]}"
        elif meta["choices"]:
            extra["type"] = click.Choice(list(meta["choices"]))
        elif meta["existing_file"]:
            extra["type"] = click.Path(exists=True, dir_okay=False)
        elif kind is int:
            extra["type"] = (click.IntRange(low, high, min_open=low_open, max_open=high_open)
                             if (low, high) != (None, None) else int)
        elif kind is float:
            extra["type"] = (click.FloatRange(low, high, min_open=low_open, max_open=high_open)
                             if (low, high) != (None, None) else float)
        default = None if meta["computed"] else _default_of(f)  # computed: the help says it
        if meta["multiple"]:  # a list (a dict of NAME=VALUE items), or None when not given
            extra["multiple"] = True
            if kind is dict:
                extra["metavar"], parse = "NAME=VALUE", _name_values
            else:
                parse = list
        elif default is MISSING:
            extra["required"] = True
        else:  # click shows the config's default; the command gets None unless it was given
            extra.update(default=default, show_default=default not in (None, ""))
        extra["callback"] = _given_or_none if parse is None else _parsed(parse)
        return click.option(*decls, f.name, help=(help or {}).get(f.name, meta["help"]), **extra)

    def decorate(command):
        for owner, f in reversed(chosen):
            command = option(owner, f)(command)
        return command
    return decorate


def _given_or_none(ctx, param, value):
    """The option's value when the command line gave it, else None (the file's value stays)."""
    from click.core import ParameterSource

    return None if ctx.get_parameter_source(param.name) is ParameterSource.DEFAULT else value


def _parsed(parse):
    """A callback giving ``parse`` of the option's value when the command line gave it, else
    None; the ValueError of a value it cannot parse is the option's usage error."""
    import click

    def callback(ctx, param, value):
        value = _given_or_none(ctx, param, value)
        if value is None:
            return None
        try:
            return parse(value)
        except ValueError as e:
            raise click.BadParameter(str(e), ctx, param) from None
    return callback


def _name_values(items) -> dict[str, str]:
    """{NAME: VALUE} of items 'NAME=VALUE' (both stripped; the value may be empty)."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"must be NAME=VALUE, got {item!r}")
        out[name.strip()] = value.strip()
    return out


class ConfigFile:
    """Mixin for a config dataclass: ``to_dict``, ``replace``, ``from_dict``, ``from_file``,
    and the checks of its settings' choices and ranges."""

    def to_dict(self) -> dict:
        return asdict(self)

    def replace(self, **changes):
        """A copy with the given fields changed (None values are ignored: CLI defaults). A
        nested config's fields are given by their own names, as its flags give them."""
        changes = {k: v for k, v in changes.items() if v is not None}
        for f, kind in _nested(type(self)):
            inner = {g.name: changes.pop(g.name) for g in fields(kind) if g.name in changes}
            if inner:
                changes[f.name] = changes.get(f.name, getattr(self, f.name)).replace(**inner)
        return replace(self, **changes)

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
