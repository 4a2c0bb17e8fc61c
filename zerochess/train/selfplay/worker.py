"""One actor worker: load the networks, play its share of an iteration's games, write shards.

``run_worker(job, report)`` runs in the main process (``workers = 1``) or as the target of
a spawned process. Finished games are written every ``games_per_shard`` games as shard
``games/itIIII-wWW-cKKKK`` (the training-data format, source kind "selfplay", plus
``games.pgn``; ``write_games`` lists its arrays), so a kill loses only games in flight and
the unwritten chunk. ``report`` receives small dicts (one per
finished game, and a final ``{"type": "done", ...}`` with the worker's counters).
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from zerochess.train.data.format import row_normalized, write_shard
from zerochess.train.data.legacy import one_hot_wdl
from zerochess.train.data.replay import SHARD_RE, shard_name
from zerochess.train.selfplay.actor import Actor, FinishedGame, Side, TimedEvaluator
from zerochess.train.selfplay.config import SelfPlayConfig

END_NAMES = {1: "checkmate", 2: "stalemate", 3: "insufficient material", 4: "fifty-move rule",
             5: "threefold repetition", 6: "truncated", 7: "resignation"}


@dataclass
class WorkerJob:
    """What one worker plays in one iteration (picklable for a spawned process)."""

    run_dir: str
    iteration: int
    worker: int
    games: int
    best: str                      # checkpoint path of the network that plays (and learns)
    best_name: str
    pool: list = field(default_factory=list)   # [(iteration, name, path)] possible opponents
    cfg: dict = field(default_factory=dict)    # SelfPlayConfig.to_dict()


def game_index(iteration: int, worker: int, number: int) -> int:
    """Run-wide game index: iteration * 10**6 + worker * 10**4 + the worker's game number
    (int32 holds it up to iteration 2146; more than 10**4 games per worker and iteration
    would collide, so that is refused)."""
    if not (0 <= number < 10_000 and 0 <= worker < 100):
        raise ValueError(f"game number {number} of worker {worker} outside the index scheme")
    return iteration * 1_000_000 + worker * 10_000 + number


def _pgn(games: list[FinishedGame], iteration: int) -> str:
    import chess
    import chess.pgn

    out = io.StringIO()
    for g in games:
        game = chess.pgn.Game()
        h = game.headers
        h["Event"] = "zerochess self-play"
        h["Site"] = "?"
        h["Round"] = str(iteration)
        h["White"], h["Black"] = g.white, g.black
        h["Result"] = {1: "1-0", -1: "0-1", 0: "1/2-1/2"}[g.result]
        h["GameIndex"] = str(g.index)
        h["Termination"] = END_NAMES.get(g.end, "normal")
        h["PlyCount"] = str(len(g.moves))
        node = game
        board = chess.Board()
        for uci in g.moves:
            move = chess.Move.from_uci(uci)
            node = node.add_variation(move)
            board.push(move)
        if g.resigned is not None:
            node.comment = f"{'White' if g.resigned else 'Black'} resigns"
        out.write(str(game) + "\n\n")
    return out.getvalue()


def write_games(path: Path, games: list[FinishedGame], source: dict, info: dict,
                iteration: int) -> Path:
    """Write finished games as a shard of the training-data format (zerochess.train.data.format).

    One sample per recorded position (a full search by the network being trained;
    random-opening moves, fast searches and the pool opponent's moves are played but not
    recorded). The policy CSR holds every root move, i.e. every legal move, in
    Board.legal_moves() order (so it is also the legal mask: no legal CSR), its weights are
    the root visit counts over their sum and ``visits`` the counts exactly as the search left
    them (``Tree.root_visits()``). ``wdl`` is the one-hot game result from the side to move
    (truncated games are draws, resigned games a loss for the side that resigned);
    ``root_q`` the search's value P(win) - P(loss) of the position (what resignation looks
    at). Per game also ``game_opponent`` (-1 self-play, else the pool checkpoint's iteration
    the best network played) and ``game_false_resign`` (-1 no check: resignation enabled or
    nobody fell below the threshold; 0 the side that would have resigned lost anyway; 1 it
    did not lose, a false resignation). Run-wide game indices: ``game_index``."""
    pos = [p for g in games for p in g.positions]
    n = len(pos)
    lens = np.array([len(p[1]) for p in pos], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    visits = (np.concatenate([p[2] for p in pos]) if n else np.zeros(0)).astype(np.int32)
    outcome = np.array([p[7] for p in pos], dtype=np.int8)
    arrays = {
        "tokens": np.stack([p[0] for p in pos]).astype(np.uint8) if n else np.zeros((0, 72), np.uint8),
        "wdl": one_hot_wdl(outcome),
        "move": np.array([p[3] for p in pos], dtype=np.int16),
        "outcome": outcome,
        "root_q": np.array([p[4] for p in pos], dtype=np.float32),
        "game": np.array([g.index for g in games for _ in g.positions], dtype=np.int32),
        "ply": np.array([p[5] for p in pos], dtype=np.int16),
        "policy_offsets": offsets,
        "policy_indices": (np.concatenate([p[1] for p in pos]) if n else np.zeros(0)).astype(np.int16),
        "policy_weights": row_normalized(offsets, visits),
        "visits": visits,
        "game_index": np.array([g.index for g in games], dtype=np.int32),
        "game_plies": np.array([len(g.moves) for g in games], dtype=np.int16),
        "game_result": np.array([g.result for g in games], dtype=np.int8),
        "game_end": np.array([g.end for g in games], dtype=np.uint8),
        "game_opponent": np.array([g.opponent for g in games], dtype=np.int32),
        "game_false_resign": np.array([g.false_resign for g in games], dtype=np.int8),
    }
    return write_shard(path, arrays, source, info=info, pgn=_pgn(games, iteration))


def _load_side(path: str, name: str, iteration: int, cfg: SelfPlayConfig, hash_mb: int) -> Side:
    from zerochess.engine import make_evaluator

    ev = make_evaluator(path, device=cfg.device, threads=cfg.threads,
                        max_batch=cfg.games_per_worker * cfg.leaves_per_tree)
    return Side(name, TimedEvaluator(ev), iteration, hash_mb)


def run_worker(job: WorkerJob, report: Callable[[dict], None]) -> dict:
    """Play ``job.games`` games and write them as shards; return the worker's counters."""
    import torch

    cfg = SelfPlayConfig.from_dict(job.cfg)
    torch.set_num_threads(cfg.threads)
    games_dir = Path(job.run_dir) / "games"
    games_dir.mkdir(parents=True, exist_ok=True)
    chunk = 1 + max([int(m.group(3)) for p in games_dir.iterdir()
                     if (m := SHARD_RE.match(p.name)) and int(m.group(1)) == job.iteration
                     and int(m.group(2)) == job.worker], default=-1)
    rng = np.random.default_rng([cfg.seed, job.iteration, job.worker, chunk])
    main = _load_side(job.best, job.best_name, -1, cfg, 64)
    pool = list(job.pool)
    opponents = []
    if pool and cfg.pool_opponents_per_worker and cfg.self_play_ratio < 1:
        picks = rng.choice(len(pool), size=min(len(pool), cfg.pool_opponents_per_worker),
                           replace=False)
        for i in sorted(picks):
            it, name, path = pool[i]
            opponents.append(_load_side(path, name, it, cfg, 16))
    actor = Actor(cfg, main, opponents, rng)
    pending: list[FinishedGame] = []
    counters = {"games": 0, "plies": 0, "positions": 0, "resigned": 0, "false_resign_checked": 0,
                "false_resign": 0, "pool_games": 0, "pool_score": 0.0, "shards": 0,
                "ends": {}}
    t0 = time.perf_counter()

    def flush() -> None:
        nonlocal chunk, pending
        if not pending:
            return
        for j, g in enumerate(pending):
            g.index = game_index(job.iteration, job.worker, chunk * cfg.games_per_shard + j)
        source = {"kind": "selfplay", "network": job.best, "network_name": job.best_name,
                  "seed": cfg.seed, "search": {k: cfg.to_dict()[k] for k in (
                      "full_search_nodes", "fast_search_nodes", "full_search_probability",
                      "cpuct", "dirichlet_alpha", "dirichlet_fraction", "leaves_per_tree")}}
        info = {"iteration": job.iteration, "worker": job.worker, "chunk": chunk}
        write_games(games_dir / shard_name(job.iteration, job.worker, chunk), pending, source,
                    info, job.iteration)
        counters["shards"] += 1
        chunk += 1
        pending = []

    def on_game(g: FinishedGame) -> None:
        pending.append(g)
        c = counters
        c["games"] += 1
        c["plies"] += len(g.moves)
        c["positions"] += len(g.positions)
        c["resigned"] += g.resigned is not None
        if g.false_resign >= 0:
            c["false_resign_checked"] += 1
            c["false_resign"] += g.false_resign
        end = END_NAMES.get(g.end, str(g.end))
        c["ends"][end] = c["ends"].get(end, 0) + 1
        if g.opponent >= 0:
            c["pool_games"] += 1
            sign = 1 if g.main_color else -1
            c["pool_score"] += (1 + sign * g.result) / 2
        report({"type": "game", "worker": job.worker, "plies": len(g.moves),
                "positions": len(g.positions), **_timing(actor, main, opponents, t0)})
        if len(pending) >= cfg.games_per_shard:
            flush()

    actor.play(job.games, on_game)
    flush()
    counters.update(_timing(actor, main, opponents, t0))
    counters["type"] = "done"
    counters["worker"] = job.worker
    report(counters)
    return counters


def _timing(actor: Actor, main: Side, opponents: list[Side], t0: float) -> dict:
    sides = [main, *opponents]
    return {"wall_s": time.perf_counter() - t0,
            "search_s": actor.search_seconds,
            "network_s": sum(s.evaluator.seconds for s in sides),
            "eval_calls": sum(s.evaluator.calls for s in sides),
            "eval_positions": sum(s.evaluator.positions for s in sides),
            "nodes": actor.nodes,
            "searched_plies": actor.plies,
            "recorded_positions": actor.recorded,
            "batch_capacity": actor.cfg.games_per_worker * actor.cfg.leaves_per_tree}


def worker_process(job: WorkerJob, queue) -> None:
    """Entry point of a spawned worker: reports and errors go through ``queue``."""
    import os
    import traceback

    parent = os.getppid()

    def report(msg: dict) -> None:
        if os.getppid() != parent:  # the run was killed: stop instead of writing on
            raise SystemExit(1)
        queue.put(msg)

    try:
        run_worker(job, report)
    except BaseException as e:  # hand the error to the parent, which stops the run
        queue.put({"type": "error", "worker": job.worker,
                   "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()})
