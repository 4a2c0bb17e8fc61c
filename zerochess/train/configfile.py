"""Reading and copying the training config dataclasses (``SuperviseConfig``, ``SelfPlayConfig``).

Both are flat dataclasses of documented fields, loaded from JSON or TOML files given with
``--config``; the mixin keeps the file handling and its error messages in one place.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, fields, replace
from pathlib import Path


class ConfigFile:
    """Mixin for a config dataclass: ``to_dict``, ``replace``, ``from_dict``, ``from_file``."""

    def to_dict(self) -> dict:
        return asdict(self)

    def replace(self, **changes):
        """A copy with the given fields changed (None values are ignored: CLI defaults)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

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
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"{source}: unknown {cls.__name__} fields {unknown}")
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


def _load_toml(path: Path, text: str) -> dict:
    # tomllib is in the standard library from Python 3.11; zerochess supports 3.10, where
    # JSON configs work and a TOML one gets this clear error instead of an ImportError.
    try:
        import tomllib
    except ImportError:
        raise ValueError(f"{path}: TOML configs need Python 3.11 or later; use JSON") from None
    return tomllib.loads(text)
