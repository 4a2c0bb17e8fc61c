"""Engine-vs-engine matches (`zerochess match`) as a library: `run_match(MatchConfig)`.

Modules: `config` (what a match is), `openings` (EPD/PGN suites), `game` (one game: clocks,
rules, adjudication, forfeits), `runner` (game pairs, concurrency), `stats` (Elo, error bars,
SPRT), `pgn` (output, and reading a game's ending back), `cli`, `rate` (the report of games
already played, from PGNs: `zerochess rate`), `resume` (`zerochess match --resume`: go on
from the games the PGN holds). The engines are UCI processes of `zerochess.client.uci` (timeouts on every
wait, python-chess's asyncio protocol).
"""

from zerochess.match.config import (
    DrawAdjudication, EngineSpec, Limit, MatchConfig, MatchConfigError, ResignAdjudication,
    TimeControl,
)
from zerochess.match.runner import MatchError, MatchResult, run_match
from zerochess.match.stats import EloEstimate, Sprt, estimate

__all__ = [
    "run_match", "MatchConfig", "MatchResult", "MatchError", "MatchConfigError", "EngineSpec",
    "Limit", "TimeControl", "DrawAdjudication", "ResignAdjudication", "EloEstimate", "Sprt", "estimate",
]
