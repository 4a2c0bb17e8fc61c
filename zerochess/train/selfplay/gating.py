"""Evaluation of a new checkpoint: the gating match and rating games, through `zerochess.match`.

Each iteration's checkpoint plays the current best at a fixed node count (seed §2.5.1:
400) over colour-swapped pairs of openings from the evaluation book, both sides being the
real UCI engine (``python -m zerochess uci`` with ``WeightsFile`` and ``Nodes``), so the
gate measures what a user would run. It becomes the best at a score of ``promote_score``
(seed §2.5.3: 55%) or more. A share of extra games against a random member of the pool of
recent checkpoints ties the ratings of the whole history together. Every game goes to
RUN_DIR/eval_games.jsonl (one JSON object per line) and RUN_DIR/eval/itIIII.pgn; the
ratings are refitted from all of them (``ratings.fit_ratings``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from zerochess.match import EngineSpec, MatchConfig, run_match
from zerochess.train.common.jsonl import append_jsonl, keep_jsonl, read_jsonl
from zerochess.train.selfplay.config import SelfPlayConfig

REPO_ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Player:
    """A checkpoint that can play: its rating name, iteration and file."""

    name: str
    iteration: int
    path: str


@dataclass
class GateResult:
    candidate: str
    best: str
    wins: int
    draws: int
    losses: int
    score: float
    elo: float          # the match's own logistic Elo difference and 95% error (match.stats)
    error: float
    promoted: bool
    pool_opponent: Optional[str] = None
    pool_score: Optional[float] = None


def resolve_openings(name: str) -> Optional[str]:
    """The evaluation book: absolute, relative to the working directory, or to the
    repository root; None for the start position. Raises FileNotFoundError naming it."""
    if not name:
        return None
    for p in (Path(name), REPO_ROOT / name):
        if p.is_file():
            return str(p)
    raise FileNotFoundError(f"evaluation openings {name!r} not found (looked in the working "
                            f"directory and {REPO_ROOT}); set eval_openings to a file or ''")


def engine(player: Player, cfg: SelfPlayConfig) -> EngineSpec:
    device = cfg.device if cfg.device in ("auto", "cpu", "cuda") else "auto"
    return EngineSpec(player.name, [sys.executable, "-m", "zerochess", "uci"],
                      {"WeightsFile": player.path, "Threads": "1", "Device": device})


def play_match(a: Player, b: Player, games: int, cfg: SelfPlayConfig, seed: int,
               pgn: Path, on_game: Callable | None = None) -> list[dict]:
    """Play ``games`` games of a against b at ``cfg.eval_nodes``; return them as records."""
    config = MatchConfig([engine(a, cfg), engine(b, cfg)], games=games, nodes=cfg.eval_nodes,
                         openings=resolve_openings(cfg.eval_openings), openings_order="random",
                         seed=seed, concurrency=cfg.eval_concurrency, pgn_out=pgn,
                         maxmoves=cfg.eval_max_moves, event="zerochess self-play evaluation")
    result = run_match(config, on_game=on_game)
    out = []
    for g in result.games:
        white_score = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(g.result)
        if white_score is None:
            continue
        out.append({"pair": g.pair, "white": g.white, "black": g.black, "result": g.result,
                    "score_white": white_score, "termination": g.termination,
                    "reason": g.reason, "forfeit": g.forfeit, "plies": len(g.moves)})
    return out


def score_of(records: list[dict], name: str) -> tuple[int, int, int]:
    """(wins, draws, losses) of ``name`` in ``records``."""
    w = d = l = 0
    for r in records:
        s = r["score_white"] if r["white"] == name else 1 - r["score_white"]
        w, d, l = w + (s == 1), d + (s == 0.5), l + (s == 0)
    return w, d, l


def evaluate(candidate: Player, best: Player, pool: list[Player], cfg: SelfPlayConfig,
             iteration: int, run_dir: Path, rng, on_game: Callable | None = None
             ) -> tuple[GateResult, list[dict]]:
    """Gate ``candidate`` against ``best`` and play the pool games; return the result and
    the game records (tagged with the iteration and kind), not yet written anywhere."""
    from zerochess.match.stats import estimate

    eval_dir = run_dir / "eval"
    eval_dir.mkdir(exist_ok=True)
    pgn = eval_dir / f"it{iteration:04d}.pgn"
    pgn.unlink(missing_ok=True)  # a rerun after a kill replaces the interrupted match
    seed = cfg.seed * 100_003 + iteration
    gate = play_match(candidate, best, cfg.eval_games, cfg, seed, pgn, on_game)
    records = [{"iteration": iteration, "kind": "gate", **r} for r in gate]
    w, d, l = score_of(gate, candidate.name)
    n = max(1, w + d + l)
    scores = [r["score_white"] if r["white"] == candidate.name else 1 - r["score_white"]
              for r in gate]
    pairs: dict[int, list[float]] = {}
    for r, x in zip(gate, scores):
        pairs.setdefault(r["pair"], []).append(x)
    est = estimate(scores, [sum(v) for v in pairs.values() if len(v) == 2])
    score = (w + d / 2) / n
    result = GateResult(candidate.name, best.name, w, d, l, score, est.elo, est.error,
                        score >= cfg.promote_score)
    others = [p for p in pool if p.name not in (candidate.name, best.name)]
    if others and cfg.pool_eval_games:
        opp = others[int(rng.integers(len(others)))]
        games = play_match(candidate, opp, cfg.pool_eval_games, cfg, seed + 1, pgn, on_game)
        records += [{"iteration": iteration, "kind": "pool", **r} for r in games]
        pw, pd, pl = score_of(games, candidate.name)
        result.pool_opponent = opp.name
        result.pool_score = (pw + pd / 2) / max(1, pw + pd + pl)
    return result, records


def read_games(path: Path) -> list[dict]:
    return read_jsonl(path)


def append_games(path: Path, records: list[dict]) -> None:
    append_jsonl(path, records, sync=True)


def drop_games_from(path: Path, iteration: int) -> int:
    """Remove records of ``iteration`` and later (a gate interrupted after writing some of
    its games is played again whole); returns how many were dropped."""
    return keep_jsonl(path, lambda g: g["iteration"] < iteration)
