"""What a match is: engines, time control, openings, adjudication. One dataclass per concern,
parsed from the command line's strings here so that the library and the CLI agree."""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field


class MatchConfigError(ValueError):
    """A match setting that cannot be used (bad engine spec, time control, option ...)."""


@dataclass
class EngineSpec:
    """A UCI engine: a name for the PGN and report, the command (argv) and its UCI options."""
    name: str
    command: list[str]
    options: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> "EngineSpec":
        """``NAME=CMD``; CMD may carry arguments, split as a POSIX shell would."""
        name, sep, command = text.partition("=")
        name = name.strip()
        if not sep or not name or not command.strip():
            raise MatchConfigError(f"engine must be NAME=COMMAND, got {text!r}")
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise MatchConfigError(f"engine {name}: cannot split command {command!r}: {exc}")
        return cls(name, argv)


@dataclass(frozen=True)
class TimeControl:
    """``[moves/]base[+inc]`` in seconds, as cutechess and fastchess write it: ``10+0.1``,
    ``1+0.01``, ``40/60+0.6``. ``moves`` (a repeating period) adds ``base`` to the clock after
    every ``moves`` moves."""
    base: float
    increment: float = 0.0
    moves: int | None = None

    @classmethod
    def parse(cls, text: str) -> "TimeControl":
        m = re.fullmatch(r"\s*(?:(\d+)/)?(\d+(?:\.\d*)?|\.\d+)(?:\+(\d+(?:\.\d*)?|\.\d+))?\s*", text)
        if not m:
            raise MatchConfigError(f"time control must be [moves/]base[+inc] in seconds, got {text!r}")
        moves = int(m.group(1)) if m.group(1) else None
        tc = cls(float(m.group(2)), float(m.group(3) or 0.0), moves)
        if tc.base <= 0 or (moves is not None and moves <= 0):
            raise MatchConfigError(f"time control {text!r}: base time and moves must be positive")
        return tc

    def pgn(self) -> str:
        """The PGN TimeControl tag: ``base+inc`` or ``moves/base+inc`` (seconds)."""
        text = f"{self.base:g}" + (f"+{self.increment:g}" if self.increment else "")
        return f"{self.moves}/{text}" if self.moves else text


@dataclass(frozen=True)
class DrawAdjudication:
    """Draw when, from move ``movenumber`` on, both engines' scores stayed within ``score``
    centipawns for ``movecount`` consecutive moves each (fastchess's ``-draw``)."""
    movenumber: int = 40
    movecount: int = 8
    score: int = 10


@dataclass(frozen=True)
class ResignAdjudication:
    """An engine loses when its own score was at most ``-score`` cp for ``movecount``
    consecutive moves of its own; with ``twosided`` the opponent must also have scored
    at least ``+score`` for as many moves (fastchess's ``-resign``)."""
    movecount: int = 3
    score: int = 600
    twosided: bool = False


def parse_fields(text: str, cls):
    """``key=value,key=value`` into ``cls`` (a dataclass of ints/bools)."""
    values = {}
    names = {f for f in cls.__dataclass_fields__}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key not in names:
            raise MatchConfigError(f"{text!r}: expected comma-separated key=value with keys "
                                   f"{sorted(names)}")
        if key == "twosided":
            values[key] = value.lower() in ("1", "true", "yes", "on")
        else:
            try:
                values[key] = int(value)
            except ValueError:
                raise MatchConfigError(f"{text!r}: {key} must be an integer") from None
    return cls(**values)


@dataclass
class MatchConfig:
    """Everything `run_match` needs. The first engine is the one the report is about."""
    engines: list[EngineSpec]
    games: int = 2
    tc: TimeControl | None = None
    nodes: int | None = None
    movetime: float | None = None
    openings: str | os.PathLike | None = None
    openings_order: str = "sequential"  # or "random" (seeded)
    openings_plies: int | None = None  # PGN openings: use at most this many plies
    openings_start: int = 1  # 1-based index of the first opening used
    seed: int = 0
    concurrency: int = 1
    pgn_out: str | os.PathLike | None = None
    event: str = "zerochess match"
    timemargin: float = 0.0  # seconds a move may exceed the clock without forfeiting
    move_timeout: float = 60.0  # hang guard per move when the clock does not bound it
    start_timeout: float = 30.0  # engine start (uci/uciok, options, isready)
    draw: DrawAdjudication | None = None
    resign: ResignAdjudication | None = None
    maxmoves: int | None = None  # draw after this many moves (full moves)
    sprt: object | None = None  # a stats.Sprt: stop when it decides
    engine_stderr: bool = False  # let engines' stderr through (default: discarded)
    variant: str | None = None  # "standard", "chess960", or None: as the openings need

    def validate(self) -> None:
        if len(self.engines) != 2:
            raise MatchConfigError(f"a match needs exactly two engines, got {len(self.engines)}")
        if self.engines[0].name == self.engines[1].name:
            raise MatchConfigError(f"the two engines need different names, both are "
                                   f"{self.engines[0].name!r}")
        if sum(x is not None for x in (self.tc, self.nodes, self.movetime)) != 1:
            raise MatchConfigError("give exactly one of a time control (--tc), --nodes or --movetime")
        if self.games < 1 or self.concurrency < 1:
            raise MatchConfigError("games and concurrency must be at least 1")
        if self.openings_order not in ("sequential", "random"):
            raise MatchConfigError("openings order must be 'sequential' or 'random'")
        if self.variant not in (None, "standard", "chess960"):
            raise MatchConfigError(f"variant must be 'standard' or 'chess960', got {self.variant!r}")
        if self.variant == "chess960" and not self.openings:
            raise MatchConfigError("a Chess960 match needs --openings with Chess960 start "
                                   "positions, e.g. books/FRC_openings.epd")


def apply_option(engines: list[EngineSpec], text: str) -> None:
    """``NAME.OPTION=VALUE`` sets a UCI option of the engine called NAME (option names may
    contain spaces: ``sf.Skill Level=0``)."""
    target, sep, value = text.partition("=")
    name, dot, option = target.partition(".")
    if not sep or not dot or not option.strip():
        raise MatchConfigError(f"option must be ENGINE.OPTION=VALUE, got {text!r}")
    for spec in engines:
        if spec.name == name:
            spec.options[option.strip()] = value.strip()
            return
    raise MatchConfigError(f"option {text!r}: no engine named {name!r} "
                           f"(engines: {', '.join(s.name for s in engines)})")
