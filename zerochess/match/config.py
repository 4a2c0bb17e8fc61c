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
    """A UCI engine: a name for the PGN and report, the command (argv), its UCI options and,
    for time or node odds, its own limit (None: the match's)."""
    name: str
    command: list[str]
    options: dict[str, str] = field(default_factory=dict)
    limit: "Limit | None" = None

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
class Limit:
    """How an engine is asked to move: a clock (``tc``), fixed ``nodes`` or fixed seconds
    (``movetime``) per move; exactly one. An engine on nodes or movetime plays without a
    clock, as cutechess-cli's per-engine ``nodes=N tc=inf`` does."""
    tc: TimeControl | None = None
    nodes: int | None = None
    movetime: float | None = None

    def __post_init__(self):
        if sum(x is not None for x in (self.tc, self.nodes, self.movetime)) != 1:
            raise MatchConfigError("a limit is exactly one of a time control, nodes or movetime")
        if (self.nodes is not None and self.nodes < 1) or (
                self.movetime is not None and not self.movetime > 0):
            raise MatchConfigError("nodes must be at least 1 and movetime positive")

    @classmethod
    def parse(cls, text: str) -> "Limit":
        """``tc=10+0.1``, ``nodes=2500`` or ``movetime=0.5`` (seconds)."""
        key, sep, value = (part.strip() for part in text.partition("="))
        if not sep or key not in ("tc", "nodes", "movetime"):
            raise MatchConfigError(f"limit must be tc=[moves/]base[+inc], nodes=N or "
                                   f"movetime=S, got {text!r}")
        if key == "tc":
            return cls(tc=TimeControl.parse(value))
        try:
            number = int(value) if key == "nodes" else float(value)
        except ValueError:
            raise MatchConfigError(f"limit {text!r}: {key} takes a number, not {value!r}") from None
        return cls(nodes=number) if key == "nodes" else cls(movetime=number)

    def pgn(self) -> str:
        """The PGN TimeControl tag's value, ``-`` without a clock."""
        return self.tc.pgn() if self.tc else "-"

    def describe(self) -> str:
        """``10+0.1``, ``nodes=2500`` or ``movetime=0.5s``: the Limit tags and reports."""
        if self.tc:
            return self.tc.pgn()
        return f"nodes={self.nodes}" if self.nodes is not None else f"movetime={self.movetime:g}s"


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
    resume: bool = False  # play only the games pgn_out does not hold yet (match/resume.py)

    def validate(self) -> None:
        if len(self.engines) != 2:
            raise MatchConfigError(f"a match needs exactly two engines, got {len(self.engines)}")
        if self.engines[0].name == self.engines[1].name:
            raise MatchConfigError(f"the two engines need different names, both are "
                                   f"{self.engines[0].name!r}")
        given = sum(x is not None for x in (self.tc, self.nodes, self.movetime))
        if given > 1 or (given == 0 and not all(e.limit for e in self.engines)):
            raise MatchConfigError("give exactly one of a time control (--tc), --nodes or "
                                   "--movetime (or a --limit for each engine)")
        if self.games < 1 or self.concurrency < 1:
            raise MatchConfigError("games and concurrency must be at least 1")
        if self.openings_order not in ("sequential", "random"):
            raise MatchConfigError("openings order must be 'sequential' or 'random'")
        if self.variant not in (None, "standard", "chess960"):
            raise MatchConfigError(f"variant must be 'standard' or 'chess960', got {self.variant!r}")
        if self.resume and not self.pgn_out:
            raise MatchConfigError("--resume needs --pgn: the games played so far are read "
                                   "back from it")
        if self.variant == "chess960" and not self.openings:
            raise MatchConfigError("a Chess960 match needs --openings with Chess960 start "
                                   "positions, e.g. books/FRC_openings.epd")

    @property
    def limit(self) -> Limit | None:
        """The match's limit (``--tc``/``--nodes``/``--movetime``); None when every engine
        has its own."""
        if self.tc is None and self.nodes is None and self.movetime is None:
            return None
        return Limit(self.tc, self.nodes, self.movetime)

    def limit_of(self, name: str) -> Limit:
        """The limit engine ``name`` plays under: its own (``--limit``) or the match's."""
        for spec in self.engines:
            if spec.name == name and spec.limit is not None:
                return spec.limit
        limit = self.limit
        if limit is None:
            raise MatchConfigError(f"engine {name!r} has no limit: give --tc, --nodes or "
                                   f"--movetime, or --limit {name}.nodes=N")
        return limit

    @property
    def odds(self) -> bool:
        """True when the engines play under different limits (time or node odds); False
        without limits (games read back from PGNs by `zerochess rate`)."""
        limits = [e.limit or self.limit for e in self.engines]
        return None not in limits and len(set(limits)) > 1


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


def apply_limit(engines: list[EngineSpec], text: str) -> None:
    """``NAME.tc=...``, ``NAME.nodes=N`` or ``NAME.movetime=S``: engine NAME's own limit
    instead of the match's (time or node odds, cutechess-cli's per-engine ``tc=``/``nodes=``)."""
    name, dot, rest = text.partition(".")
    if not dot:
        raise MatchConfigError(f"limit must be ENGINE.tc=..., ENGINE.nodes=N or "
                               f"ENGINE.movetime=S, got {text!r}")
    for spec in engines:
        if spec.name == name:
            spec.limit = Limit.parse(rest)
            return
    raise MatchConfigError(f"limit {text!r}: no engine named {name!r} "
                           f"(engines: {', '.join(s.name for s in engines)})")
