"""The parameters a tune moves: ``NAME=START,MIN,MAX,C_END,R_END`` as fishtest writes them,
checked against the options the engine declares in its ``uci`` answer.

A UCI ``spin`` option is an integer: the tuner keeps its value as a float and rounds what it
sends. A ``string`` option whose default is a number is a float (zerochess and Leela Chess
Zero advertise floats that way, UCI having no float type); UCI declares no range for it, so
the engine is asked to accept MIN and MAX before any game (see ``engine.probe``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace


class ParamError(ValueError):
    """A parameter spec that cannot be tuned; the message says which and why."""


SPEC = "NAME=START,MIN,MAX,C_END,R_END"


@dataclass(frozen=True)
class Param:
    """One tuned option. ``c_end``: the perturbation at the last game pair (in the option's
    units); ``r_end``: the learning rate there (fishtest's meaning: the step is
    ``r_end * c_end * result`` at the end). ``integer``: the engine takes whole numbers."""
    name: str
    start: float
    min: float
    max: float
    c_end: float
    r_end: float
    integer: bool = False

    def clamp(self, x: float) -> float:
        return min(self.max, max(self.min, x))

    def send(self, x: float) -> str:
        """The text ``setoption ... value`` carries for the value ``x`` (clamped; integer
        options rounded half up)."""
        x = self.clamp(x)
        if self.integer:
            return str(int(math.floor(x + 0.5)))
        return format_number(x)

    def spec(self) -> str:
        """The command-line spec that gives this parameter back."""
        fields = (self.start, self.min, self.max, self.c_end, self.r_end)
        return f"{self.name}=" + ",".join(format_number(v) for v in fields)

    def as_dict(self) -> dict:
        return {"name": self.name, "start": self.start, "min": self.min, "max": self.max,
                "c_end": self.c_end, "r_end": self.r_end, "integer": self.integer}

    @classmethod
    def from_dict(cls, d: dict) -> "Param":
        return cls(str(d["name"]), float(d["start"]), float(d["min"]), float(d["max"]),
                   float(d["c_end"]), float(d["r_end"]), bool(d["integer"]))


def format_number(x: float) -> str:
    """A short decimal for logs and setoption (8 significant digits, no trailing zeros)."""
    return f"{x:.8g}"


def parse_param(text: str) -> Param:
    """``NAME=START,MIN,MAX,C_END,R_END``; the name may contain spaces (``Move Overhead``)."""
    name, sep, values = text.rpartition("=")
    name = name.strip()
    if not sep or not name:
        raise ParamError(f"{text!r}: expected {SPEC}")
    fields = [f.strip() for f in values.split(",")]
    if len(fields) != 5:
        raise ParamError(f"{text!r}: expected 5 numbers after '=' ({SPEC}), got "
                         f"{len(fields)}; fishtest's usual C_END is (MAX-MIN)/20 and R_END 0.002")
    numbers = []
    for label, field in zip(("START", "MIN", "MAX", "C_END", "R_END"), fields):
        if not field:
            raise ParamError(f"{text!r}: {label} is missing")
        try:
            value = float(field)
        except ValueError:
            raise ParamError(f"{text!r}: {label} must be a number, not {field!r}") from None
        if not math.isfinite(value):
            raise ParamError(f"{text!r}: {label} must be finite, not {field!r}")
        numbers.append(value)
    start, lo, hi, c_end, r_end = numbers
    if lo >= hi:
        raise ParamError(f"{text!r}: MIN ({fields[1]}) must be below MAX ({fields[2]})")
    if not lo <= start <= hi:
        raise ParamError(f"{text!r}: START ({fields[0]}) is outside [MIN, MAX] = "
                         f"[{fields[1]}, {fields[2]}]")
    if c_end <= 0 or r_end <= 0:
        raise ParamError(f"{text!r}: C_END and R_END must be positive")
    return Param(name, start, lo, hi, c_end, r_end)


def parse_params(texts) -> list[Param]:
    """Every ``--param``; at least one, no name twice (UCI names ignore case)."""
    params = [parse_param(t) for t in texts]
    if not params:
        raise ParamError(f"give at least one --param {SPEC}")
    seen = set()
    for p in params:
        if p.name.lower() in seen:
            raise ParamError(f"{p.name}: given twice")
        seen.add(p.name.lower())
    return params


@dataclass(frozen=True)
class UciOption:
    """An ``option name ... type ...`` line of an engine's ``uci`` answer."""
    name: str
    type: str
    default: str | None = None
    min: int | None = None
    max: int | None = None
    vars: tuple[str, ...] = ()


def parse_option_line(line: str) -> UciOption | None:
    """The option an ``option`` line declares, or None for a line that is not one. The name
    runs up to the first ``type`` token and may contain spaces (``option name Skill Level
    type spin ...``), as may a string default."""
    tokens = line.split()
    if len(tokens) < 5 or tokens[:2] != ["option", "name"] or "type" not in tokens[3:]:
        return None
    at = tokens.index("type", 3)
    name = " ".join(tokens[2:at])
    fields: dict[str, list[str]] = {"type": []}
    vars_: list[list[str]] = []
    current = fields["type"]
    for token in tokens[at + 1:]:
        if token in ("default", "min", "max"):
            current = fields.setdefault(token, [])
        elif token == "var":
            current = []
            vars_.append(current)
        else:
            current.append(token)
    if not fields["type"]:
        return None

    def number(key):
        try:
            return int(" ".join(fields[key])) if key in fields else None
        except ValueError:
            return None

    default = " ".join(fields["default"]) if "default" in fields else None
    return UciOption(name, " ".join(fields["type"]).lower(), default, number("min"),
                     number("max"), tuple(" ".join(v) for v in vars_))


def bind(params: list[Param], options: dict[str, UciOption]) -> list[Param]:
    """``params`` with the engine's spelling of each name and ``integer`` set from its type;
    ``ParamError`` for a name the engine does not declare, an option that is not a number
    (check, combo, button, a string such as a path) or a range outside a spin's."""
    by_lower = {name.lower(): o for name, o in options.items()}
    bound = []
    for p in params:
        option = by_lower.get(p.name.lower())
        if option is None:
            numeric = sorted(o.name for o in options.values() if _numeric(o))
            raise ParamError(f"{p.name}: the engine declares no option {p.name!r} "
                             f"(its numeric options: {', '.join(numeric) or 'none'})")
        if not _numeric(option):
            what = f"type {option.type}"
            if option.type == "string":
                what += f", default {option.default!r}"
            raise ParamError(f"{p.name}: option {option.name} is not numeric ({what}); "
                             "only spin options and string options holding a number can be tuned")
        integer = option.type == "spin"
        if integer and ((option.min is not None and p.min < option.min)
                        or (option.max is not None and p.max > option.max)):
            raise ParamError(f"{p.name}: [MIN, MAX] = [{format_number(p.min)}, "
                             f"{format_number(p.max)}] is outside the engine's range "
                             f"[{option.min}, {option.max}]")
        bound.append(replace(p, name=option.name, integer=integer))
    return bound


def _numeric(option: UciOption) -> bool:
    if option.type == "spin":
        return True
    if option.type != "string" or option.default is None:
        return False
    try:
        return math.isfinite(float(option.default))
    except ValueError:
        return False
