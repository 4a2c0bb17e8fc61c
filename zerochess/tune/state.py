"""What a tune is and how far it got: ``DIR/state.json``, written atomically after every
iteration, and ``DIR/history.jsonl``, one line per iteration (the same records).

The state holds the settings, theta, the next iteration ``k`` and every iteration's record.
The random perturbation of iteration ``k`` is drawn from a generator seeded by (seed, k)
(``spsa.perturbation``), so the seed is the whole RNG state: a tune killed at any moment
loses at most the iteration in flight and, resumed, plays exactly what it would have played.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from zerochess.atomic import write_json_atomic, write_text_atomic
from zerochess.tune.params import Param, format_number

FORMAT = "zerochess-tune"
VERSION = 1
STATE = "state.json"
HISTORY = "history.jsonl"
LOG = "tune.log"
PLOT = "params.png"


class StateError(ValueError):
    """A state file that cannot be resumed (missing, corrupt, another tune's)."""


@dataclass
class TuneConfig:
    """The settings of a tune. All but ``concurrency`` decide what it plays, so a resume
    must keep them."""
    params: list[Param]
    iterations: int
    pairs: int
    seed: int = 0
    objective: str = "games"           # or "synthetic" (tests: no engine, no games)
    engine: list[str] = field(default_factory=lambda: ["zerochess"])
    options: dict[str, str] = field(default_factory=dict)   # set on both sides, not tuned
    nodes: int | None = None
    tc: str | None = None
    openings: str | None = None
    draw: str | None = None            # `zerochess match` --draw-adjudication text
    resign: str | None = None          # --resign-adjudication
    maxmoves: int | None = None
    concurrency: int = 1

    def as_dict(self) -> dict:
        return {"params": [p.as_dict() for p in self.params], "iterations": self.iterations,
                "pairs": self.pairs, "seed": self.seed, "objective": self.objective,
                "engine": list(self.engine), "options": dict(self.options), "nodes": self.nodes,
                "tc": self.tc, "openings": self.openings, "draw": self.draw,
                "resign": self.resign, "maxmoves": self.maxmoves,
                "concurrency": self.concurrency}

    @classmethod
    def from_dict(cls, d: dict) -> "TuneConfig":
        return cls([Param.from_dict(p) for p in d["params"]], int(d["iterations"]),
                   int(d["pairs"]), int(d["seed"]), str(d["objective"]),
                   [str(a) for a in d["engine"]], {str(k): str(v) for k, v in d["options"].items()},
                   None if d["nodes"] is None else int(d["nodes"]),
                   None if d["tc"] is None else str(d["tc"]),
                   None if d["openings"] is None else str(d["openings"]),
                   None if d["draw"] is None else str(d["draw"]),
                   None if d["resign"] is None else str(d["resign"]),
                   None if d["maxmoves"] is None else int(d["maxmoves"]),
                   int(d["concurrency"]))


def same_params(a: list[Param], b: list[Param]) -> bool:
    """The same parameter specs (names compared as UCI does, without case)."""
    def key(p: Param):
        return (p.name.lower(), p.start, p.min, p.max, p.c_end, p.r_end)
    return [key(p) for p in a] == [key(p) for p in b]


@dataclass
class TuneState:
    config: TuneConfig
    theta: list[float]
    k: int = 0                                   # the next iteration to play
    history: list[dict] = field(default_factory=list)

    @classmethod
    def new(cls, config: TuneConfig) -> "TuneState":
        return cls(config, [p.start for p in config.params])

    @property
    def done(self) -> bool:
        return self.k >= self.config.iterations

    def values(self) -> dict[str, float]:
        return {p.name: x for p, x in zip(self.config.params, self.theta)}

    def sent(self) -> dict[str, str]:
        """theta as the engine is sent it (integers rounded)."""
        return {p.name: p.send(x) for p, x in zip(self.config.params, self.theta)}

    def as_dict(self) -> dict:
        return {"format": FORMAT, "format_version": VERSION, "config": self.config.as_dict(),
                "k": self.k, "theta": self.theta,
                "rng": {"kind": "seeded per iteration from (seed, k)", "seed": self.config.seed,
                        "next_k": self.k},
                "history": self.history}

    def save(self, out: str | os.PathLike) -> None:
        write_json_atomic(Path(out) / STATE, self.as_dict())

    def rewrite_history(self, out: str | os.PathLike) -> None:
        """history.jsonl from the state (after a resume: drops what a kill left half-written
        or written for an iteration the state never recorded)."""
        text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in self.history)
        write_text_atomic(Path(out) / HISTORY, text)

    def append_history(self, out: str | os.PathLike, record: dict) -> None:
        with open(Path(out) / HISTORY, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")


def load_state(out: str | os.PathLike) -> TuneState:
    """The state in ``out``; ``StateError`` saying what is wrong otherwise."""
    path = Path(out) / STATE
    if not path.is_file():
        raise StateError(f"{path}: no tune state to resume (start without --resume)")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StateError(f"{path}: corrupt tune state, not readable JSON ({exc}); restore it "
                         "or start a new tune in another directory") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise StateError(f"{path}: not a zerochess tune state")
    if raw.get("format_version") != VERSION:
        raise StateError(f"{path}: tune state version {raw.get('format_version')!r}, this "
                         f"zerochess reads version {VERSION}")
    try:
        config = TuneConfig.from_dict(raw["config"])
        state = TuneState(config, [float(x) for x in raw["theta"]], int(raw["k"]),
                          list(raw["history"]))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise StateError(f"{path}: corrupt tune state ({type(exc).__name__}: {exc})") from None
    if (len(state.theta) != len(config.params) or len(state.history) != state.k
            or not 0 <= state.k <= config.iterations):
        raise StateError(f"{path}: corrupt tune state (theta, k and history disagree)")
    return state


def describe(params: list[Param], values) -> str:
    """``CPuct=1.85 FpuReduction=0.31``."""
    return " ".join(f"{p.name}={format_number(x)}" for p, x in zip(params, values))
