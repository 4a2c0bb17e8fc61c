"""The tune's objective: games between the two probes through the match runner.

Both sides are the same engine command with different ``setoption`` values, on colour-swapped
pairs of openings; the suite is shuffled once by the seed and walked pair by pair over the
whole tune (iteration ``k`` starts at the opening of pair ``k * P``), so no opening repeats
before the suite is used up.
"""

from __future__ import annotations

from typing import Callable

from zerochess.match import (
    DrawAdjudication, EngineSpec, MatchConfig, ResignAdjudication, TimeControl, run_match,
)
from zerochess.match.config import parse_fields
from zerochess.tune.params import Param
from zerochess.tune.spsa import Outcome, Probe

PLUS, MINUS = "plus", "minus"


class GamesObjective:
    def __init__(self, params: list[Param], engine: list[str], options: dict[str, str],
                 nodes: int | None, tc: str | None, openings: str | None, seed: int,
                 concurrency: int, on_game: Callable | None = None, draw: str | None = None,
                 resign: str | None = None, maxmoves: int | None = None):
        """``draw``, ``resign``: `zerochess match`'s adjudication texts
        (``movenumber=40,movecount=8,score=10``, ``movecount=3,score=600``)."""
        self.params = params
        self.draw = parse_fields(draw, DrawAdjudication) if draw else None
        self.resign = parse_fields(resign, ResignAdjudication) if resign else None
        self.maxmoves = maxmoves
        self.engine = engine
        self.options = options
        self.nodes = nodes
        self.tc = TimeControl.parse(tc) if tc else None
        self.openings = openings
        self.seed = seed
        self.concurrency = concurrency
        self.on_game = on_game

    def config(self, probe: Probe, games: int) -> MatchConfig:
        """The match of iteration ``probe.k`` (also what the tests look at)."""
        def side(name, values):
            sent = {p.name: p.send(x) for p, x in zip(self.params, values)}
            return EngineSpec(name, list(self.engine), {**self.options, **sent})
        return MatchConfig([side(PLUS, probe.plus), side(MINUS, probe.minus)], games=games,
                           nodes=self.nodes, tc=self.tc, openings=self.openings,
                           openings_order="random", openings_start=probe.t + 1, seed=self.seed,
                           concurrency=self.concurrency, draw=self.draw, resign=self.resign,
                           maxmoves=self.maxmoves, event=f"zerochess tune {probe.k + 1}")

    def __call__(self, probe: Probe, games: int) -> Outcome:
        result = run_match(self.config(probe, games), self.on_game)
        scores = result.scores()   # the plus side's, game by game
        return Outcome(scores.count(1.0), scores.count(0.5), scores.count(0.0),
                       len(result.forfeits))
