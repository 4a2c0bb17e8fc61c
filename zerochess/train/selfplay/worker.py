"""One actor: networks from bytes, games in flight, finished games as shard bytes.

``ActorHost`` is what every actor backend runs (a driver thread, a spawned process, a Ray
actor): ``play(ChunkTask, *network_bytes)`` plays the next ``games_per_shard`` games and
returns them as a packed shard of the training-data format (source kind "selfplay", plus
``games.pgn``; ``write_games`` lists its arrays), which the driver writes as
``games/itIIII-wWW-cKKKK``. An actor writes only in its own temporary directory, so it needs
no filesystem shared with the driver. ``run_worker`` plays a fixed number of games without
a driver (tests, benchmarks).
"""

from __future__ import annotations

import io
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from zerochess.chess.layout import SEQ_LEN
from zerochess.train.data.format import row_normalized, write_shard
from zerochess.train.data.legacy import one_hot_wdl
from zerochess.train.data.replay import SHARD_RE, shard_name
from zerochess.train.selfplay.actor import Actor, FinishedGame, Side
from zerochess.train.selfplay.config import SelfPlayConfig
from zerochess.train.selfplay.reports import (ActorTotals, ChunkResult, ChunkTask, GameCounters,
                                              NetworkRef)

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
        "tokens": np.stack([p[0] for p in pos]).astype(np.uint8) if n else np.zeros((0, SEQ_LEN), np.uint8),
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


def _load_side(path: str, name: str, iteration: int, cfg: SelfPlayConfig,
               rng: np.random.Generator) -> Side:
    """The network at ``path`` as a Side: its evaluator in a Forest of ``games_per_worker``
    trees with the config's search parameters (``hash_mb`` included) and the actor's
    generator."""
    from zerochess.neural import make_evaluator
    from zerochess.search.forest import Forest

    ev = make_evaluator(path, device=cfg.device, threads=cfg.threads,
                        max_batch=cfg.games_per_worker * cfg.leaves_per_tree)
    return Side(name, Forest(ev, cfg.games_per_worker, cfg.search_params(), rng), iteration)


def describe_node() -> str:
    """Where this actor runs: the host name, and the Ray node id inside a Ray actor."""
    import socket
    import sys

    node = socket.gethostname()
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        node += f"/ray:{ray.get_runtime_context().get_node_id()[:8]}"
    return node


class ActorHost:
    """One actor between tasks: its networks (loaded once per name from checkpoint bytes),
    its ``Actor`` with the games in flight, and a private temporary directory, the only
    place it writes. The same object runs in a driver thread, a spawned process or a Ray
    actor (``zerochess.train.selfplay.backends``); ``play`` is its one remote method.

    ``incarnation`` counts replacements of a dead actor in the same slot: it salts the
    random generator, so a replacement does not replay the games of the one it replaces.
    """

    def __init__(self, actor_id: int, cfg: dict, incarnation: int = 0,
                 chdir: bool = False) -> None:
        import tempfile

        import torch

        self.actor_id = actor_id
        self.incarnation = incarnation
        self.cfg = SelfPlayConfig.from_dict(cfg)
        torch.set_num_threads(self.cfg.threads)
        self.workdir = Path(tempfile.mkdtemp(prefix=f"zerochess-actor{actor_id}-"))
        if chdir:  # a process of its own: nothing relative can reach the driver's files
            os.chdir(self.workdir)
        self.node = describe_node()
        self.rng = np.random.default_rng([self.cfg.seed, actor_id, incarnation, 5])
        self.sides: dict[str, Side] = {}
        self.pool_names: tuple[str, ...] = ()
        self.actor: Actor | None = None
        self.t0 = time.perf_counter()

    def _side(self, ref: NetworkRef, blob: bytes) -> Side:
        if ref.name not in self.sides:
            path = self.workdir / f"network-{len(self.sides)}.pt"
            path.write_bytes(blob)
            try:
                self.sides[ref.name] = _load_side(str(path), ref.name, ref.iteration, self.cfg,
                                                  self.rng)
            finally:
                path.unlink(missing_ok=True)
        return self.sides[ref.name]

    def _opponents(self, pool: list[tuple[NetworkRef, bytes]]) -> list[Side]:
        """The pool networks this actor plays against (drawn again when the pool changes)."""
        cfg = self.cfg
        if not pool or not cfg.pool_opponents_per_worker or cfg.self_play_ratio >= 1:
            return []
        picks = self.rng.choice(len(pool), size=min(len(pool), cfg.pool_opponents_per_worker),
                                replace=False)
        return [self._side(*pool[i]) for i in sorted(picks)]

    def _forget_unused(self) -> None:
        used = {self.actor.main.name, *(o.name for o in self.actor.opponents)}
        for game in self.actor.slots:
            if game is not None and game.opponent is not None:
                used.add(game.opponent.name)
        for name in [n for n in self.sides if n not in used]:
            del self.sides[name]

    def play(self, task: ChunkTask, *blobs: bytes, max_started: int | None = None) -> ChunkResult:
        """Play ``task.games`` more games with the task's networks (``blobs``: their
        checkpoint bytes, in ``task.networks`` order) and return them as a packed shard."""
        import shutil

        from zerochess.train.data.format import pack_shard

        if len(blobs) != len(task.networks):
            raise ValueError(f"{len(blobs)} network blobs for {len(task.networks)} networks")
        if task.games > self.cfg.games_per_shard:
            raise ValueError(f"a chunk holds at most games_per_shard={self.cfg.games_per_shard} "
                             f"games, not {task.games}")
        main = self._side(task.best, blobs[0])
        pool = list(zip(task.pool, blobs[1:]))
        names = tuple(r.name for r in task.pool)
        if self.actor is None:
            self.actor = Actor(self.cfg, main, self._opponents(pool), self.rng)
        else:
            self.actor.set_main(main)
            if names != self.pool_names:
                self.actor.set_opponents(self._opponents(pool))
        self.pool_names = names
        self._forget_unused()
        finished: list[FinishedGame] = []
        self.actor.play(task.games, finished.append, max_started)
        counters = GameCounters()
        for g in finished:
            counters.add(_count(g))
        for j, g in enumerate(finished):
            g.index = game_index(task.iteration, task.actor, task.chunk * self.cfg.games_per_shard + j)
        source = {"kind": "selfplay", "network": task.best.name, "network_name": task.best.name,
                  "seed": self.cfg.seed, "search": {k: self.cfg.to_dict()[k] for k in (
                      "full_search_nodes", "fast_search_nodes", "full_search_probability",
                      "cpuct", "dirichlet_alpha", "dirichlet_fraction", "leaves_per_tree",
                      "search_schedule")}}
        info = {"iteration": task.iteration, "worker": task.actor, "chunk": task.chunk,
                "node": self.node}
        path = self.workdir / shard_name(task.iteration, task.actor, task.chunk)
        write_games(path, finished, source, info, task.iteration)
        try:
            blob = pack_shard(path)
        finally:
            shutil.rmtree(path, ignore_errors=True)
        return ChunkResult(task, blob, counters, self.totals())

    def where(self) -> tuple[str, str, str]:
        """(node, working directory, private directory) of this actor."""
        return self.node, os.getcwd(), str(self.workdir)

    def totals(self) -> ActorTotals:
        a = self.actor
        sides = list(self.sides.values())
        return ActorTotals(
            actor=self.actor_id, node=self.node, incarnation=self.incarnation,
            wall_s=a.play_seconds if a else 0.0, search_s=a.search_seconds if a else 0.0,
            network_s=sum(s.forest.network_seconds for s in sides),
            eval_calls=sum(s.forest.evaluations for s in sides),
            eval_positions=sum(s.forest.positions for s in sides),
            batch_capacity=self.cfg.games_per_worker * self.cfg.leaves_per_tree,
            nodes=a.nodes if a else 0, searched_plies=a.plies if a else 0,
            recorded_positions=a.recorded if a else 0)

    def close(self) -> None:
        import shutil

        shutil.rmtree(self.workdir, ignore_errors=True)


def _count(g: FinishedGame) -> GameCounters:
    c = GameCounters(games=1, plies=len(g.moves), positions=len(g.positions),
                     resigned=int(g.resigned is not None),
                     ends={END_NAMES.get(g.end, str(g.end)): 1})
    if g.false_resign >= 0:
        c.false_resign_checked, c.false_resign = 1, g.false_resign
    if g.opponent >= 0:
        sign = 1 if g.main_color else -1
        c.pool_games, c.pool_score = 1, (1 + sign * g.result) / 2
    return c


def run_worker(job: WorkerJob, report: Callable[[dict], None] | None = None) -> dict:
    """Play ``job.games`` games with one ``ActorHost`` in this process and write them as
    shards into ``job.run_dir``/games: the actor side of an iteration without a driver
    (tests, benchmarks/bench_selfplay.py). Returns the game counters and the actor's
    totals; ``report`` gets the same after every shard."""
    from zerochess.train.data.format import unpack_shard

    cfg = SelfPlayConfig.from_dict(job.cfg)
    games_dir = Path(job.run_dir) / "games"
    games_dir.mkdir(parents=True, exist_ok=True)
    chunk = 1 + max([int(m.group(3)) for p in games_dir.iterdir()
                     if (m := SHARD_RE.match(p.name)) and int(m.group(1)) == job.iteration
                     and int(m.group(2)) == job.worker], default=-1)
    host = ActorHost(job.worker, job.cfg)
    blobs = [Path(job.best).read_bytes()] + [Path(p[2]).read_bytes() for p in job.pool]
    best = NetworkRef(job.best_name)
    pool = tuple(NetworkRef(name, it) for it, name, _ in job.pool)
    counters = GameCounters()
    out: dict = {}
    try:
        done = 0
        while done < job.games:
            n = min(cfg.games_per_shard, job.games - done)
            task = ChunkTask(job.iteration, job.worker, chunk, n, best, pool)
            result = host.play(task, *blobs, max_started=job.games)
            unpack_shard(result.shard, games_dir / shard_name(job.iteration, job.worker, chunk))
            counters.add(result.counters)
            done += n
            chunk += 1
            out = {**counters.summary(), **asdict(result.totals), "shards": chunk}
            if report is not None:
                report(out)
    finally:
        host.close()
    return out
