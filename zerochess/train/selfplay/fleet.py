"""The driver's side of the actors: keep them busy, write what they send, count it.

A ``Fleet`` runs one collector thread beside the driver's main thread (learner, gate):

* it hands every idle actor a ``ChunkTask`` for the lowest iteration (up to the horizon
  the driver allows, ``allow``) whose quota of ``games_per_iteration`` games is not yet
  written or in flight, with the current best network and pool (``set_networks``);
* it writes each returned shard (``unpack_shard``: atomic, checksums verified) as
  ``games/itIIII-wWW-cKKKK``: only the driver writes the run directory;
* an actor that died loses its chunk in flight; the chunk's games go back to the quota,
  the actor is replaced (``actor_restarts`` times per slot) and the log says so;
* it keeps the newest totals of every actor (speed, batch fill) and the time the actors
  were busy while the driver said the learner or gate ran (``phase``).

The driver waits for an iteration's games with ``wait_iteration``; an error in the
collector (an actor's exception, no actor left) is raised there.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Callable, Optional

from zerochess.train.data.dataset import open_shard
from zerochess.train.data.format import unpack_shard
from zerochess.train.data.replay import SHARD_RE, shard_name
from zerochess.train.selfplay.backends import ActorBackend
from zerochess.train.selfplay.config import SelfPlayConfig
from zerochess.train.selfplay.reports import (ActorLost, ActorTotals, ChunkResult, ChunkTask,
                                              GameCounters, NetworkRef, speed_figures)

log = logging.getLogger("zerochess.selfplay")


class Fleet:
    def __init__(self, cfg: SelfPlayConfig, games_dir: str | Path, backend: ActorBackend) -> None:
        self.cfg = cfg
        self.games_dir = Path(games_dir)
        self.backend = backend
        self.lock = threading.Condition()
        self.games: dict[int, int] = {}       # iteration -> games written
        self.positions: dict[int, int] = {}
        self.assigned: dict[int, int] = {}    # iteration -> games in flight
        self.next_chunk: dict[tuple[int, int], int] = {}
        for p in self.games_dir.iterdir():
            m = SHARD_RE.match(p.name)
            if m:
                it, actor, chunk = (int(x) for x in m.groups())
                sh = open_shard(p, verify=False)
                self.games[it] = self.games.get(it, 0) + sh.games
                self.positions[it] = self.positions.get(it, 0) + len(sh)
                key = (it, actor)
                self.next_chunk[key] = max(self.next_chunk.get(key, 0), chunk + 1)
        self.horizon = 0
        self.best: Optional[tuple[NetworkRef, str]] = None
        self.pool: list[tuple[NetworkRef, str]] = []
        self.blobs: dict[str, bytes] = {}
        self.totals: dict[tuple[int, int], ActorTotals] = {}   # (actor, incarnation) ->
        self.counters: dict[int, GameCounters] = {}   # iteration -> counters of its games
        self.lost = 0
        self.arrived = 0   # games received since the fleet started
        self.error: Optional[BaseException] = None
        self.stopping = False
        self.thread: Optional[threading.Thread] = None
        self.t0 = time.perf_counter()
        self.phase_name: Optional[str] = None
        self.clock = {"last": time.perf_counter(), "phase_s": 0.0, "overlap_s": 0.0,
                      "busy_s": 0.0}
        self.on_chunk: Optional[Callable[[ChunkResult], None]] = None

    # -- the driver's side -------------------------------------------------------------
    def start(self) -> None:
        self.backend.start()
        self.t0 = time.perf_counter()
        self.thread = threading.Thread(target=self._collect, name="zerochess-fleet", daemon=True)
        self.thread.start()

    def close(self) -> None:
        with self.lock:
            self.stopping = True
            self.lock.notify_all()
        if self.thread is not None:
            self.thread.join(timeout=30)
        self.backend.close()

    def set_networks(self, best: dict, pool: list[dict]) -> None:
        """The networks of chunks handed out from now on (players of state.json)."""
        with self.lock:
            self.best = (NetworkRef(best["name"]), best["path"])
            self.pool = [(NetworkRef(p["name"], p["iteration"]), p["path"]) for p in pool
                         if p["name"] != best["name"]]
            for name in [n for n in self.blobs
                         if n not in {r.name for r, _ in [self.best, *self.pool]}]:
                del self.blobs[name]
            self.lock.notify_all()

    def allow(self, horizon: int) -> None:
        """Actors may play games of iterations up to ``horizon``."""
        with self.lock:
            self.horizon = min(horizon, self.cfg.iterations)
            self.lock.notify_all()

    def done(self, iteration: int) -> tuple[int, int]:
        """(games, positions) written for ``iteration``."""
        with self.lock:
            return self.games.get(iteration, 0), self.positions.get(iteration, 0)

    def wait_iteration(self, iteration: int, on_chunk: Callable[[ChunkResult], None]) -> None:
        """Block until ``iteration``'s quota is written; ``on_chunk`` (called here, in the
        driver's thread) sees each of its chunks as it arrives."""
        seen: list[ChunkResult] = []
        self.on_chunk = seen.append
        try:
            while True:
                with self.lock:
                    if self.error is not None:
                        raise self.error
                    if self.games.get(iteration, 0) >= self.cfg.games_per_iteration:
                        complete = True
                    else:
                        complete = False
                        self.lock.wait(timeout=0.5)
                    arrived, seen[:] = list(seen), []
                for r in arrived:
                    if r.task.iteration == iteration:
                        on_chunk(r)
                if complete:
                    return
        finally:
            self.on_chunk = None

    def check(self) -> None:
        """Raise the collector's error, if any (the driver calls it between phases)."""
        with self.lock:
            if self.error is not None:
                raise self.error

    def phase(self, name: Optional[str]) -> dict:
        """The driver enters phase ``name`` (learn, gate) or leaves it (None); returns the
        figures of the phase that ended: its seconds and the share of them during which
        at least one actor was playing."""
        with self.lock:
            self._tick()
            c = self.clock
            out = {"phase_s": c["phase_s"],
                   "actors_concurrent_share": c["overlap_s"] / c["phase_s"] if c["phase_s"] else 0.0}
            self.phase_name = name
            c["phase_s"] = c["overlap_s"] = 0.0
            return out

    def figures(self) -> dict:
        """Speeds and batch fill over all actors since the fleet started."""
        with self.lock:
            wall = time.perf_counter() - self.t0
            out = speed_figures(list(self.totals.values()), wall)
            out["games_per_hour"] = 3600 * self.arrived / wall if wall > 0 else 0.0
            out["actors_lost"] = self.lost
            return out

    def counters_of(self, iteration: int) -> GameCounters:
        with self.lock:
            return self.counters.get(iteration, GameCounters())

    # -- the collector thread ----------------------------------------------------------
    def _tick(self) -> None:
        now = time.perf_counter()
        dt, self.clock["last"] = now - self.clock["last"], now
        busy = bool(self.backend.inflight)
        if busy:
            self.clock["busy_s"] += dt
        if self.phase_name is not None:
            self.clock["phase_s"] += dt
            if busy:
                self.clock["overlap_s"] += dt

    def _next_task(self, actor: int) -> Optional[ChunkTask]:
        if self.best is None:
            return None
        quota = self.cfg.games_per_iteration
        for it in range(1, self.horizon + 1):
            left = quota - self.games.get(it, 0) - self.assigned.get(it, 0)
            if left > 0:
                n = min(left, self.cfg.games_per_shard)
                key = (it, actor)
                chunk = self.next_chunk.get(key, 0)
                self.next_chunk[key] = chunk + 1
                self.assigned[it] = self.assigned.get(it, 0) + n
                return ChunkTask(it, actor, chunk, n, self.best[0], tuple(r for r, _ in self.pool))
        return None

    def _blob(self, name: str, path: str) -> bytes:
        if name not in self.blobs:
            self.blobs[name] = Path(path).read_bytes()
        return self.blobs[name]

    def _collect(self) -> None:
        try:
            while True:
                with self.lock:
                    if self.stopping:
                        return
                    self._tick()
                    for actor in self.backend.idle():
                        task = self._next_task(actor)
                        if task is None:
                            break
                        paths = dict([(self.best[0].name, self.best[1])]
                                     + [(r.name, p) for r, p in self.pool])
                        blobs = [self._blob(r.name, paths[r.name]) for r in task.networks]
                        self.backend.submit(task, blobs)
                for outcome in self.backend.poll(timeout=0.2):
                    if isinstance(outcome, ActorLost):
                        self._lost(outcome)
                    else:
                        self._arrived(outcome)
        except BaseException as e:  # hand it to the driver's thread
            with self.lock:
                self.error = e
                self.lock.notify_all()

    def _lost(self, lost: ActorLost) -> None:
        t = lost.task
        restarted = self.backend.restart(t.actor)
        with self.lock:
            self.assigned[t.iteration] -= t.games
            self.lost += 1
            log.warning("actor %d lost its chunk in flight (iteration %d, %d games): %s; %s",
                        t.actor, t.iteration, t.games, lost.reason,
                        "replaced it" if restarted else "no restarts left, going on without it")
            if len(self.backend.dead) == self.cfg.workers:
                raise RuntimeError("every actor died and none can be replaced")

    def _arrived(self, r: ChunkResult) -> None:
        t = r.task
        path = self.games_dir / shard_name(t.iteration, t.actor, t.chunk)
        sh = unpack_shard(r.shard, path)
        with self.lock:
            self.assigned[t.iteration] -= t.games
            self.games[t.iteration] = self.games.get(t.iteration, 0) + sh.games
            self.positions[t.iteration] = self.positions.get(t.iteration, 0) + len(sh)
            self.counters.setdefault(t.iteration, GameCounters()).add(r.counters)
            self.arrived += sh.games
            self.totals[(t.actor, r.totals.incarnation)] = r.totals
            if self.on_chunk is not None:
                self.on_chunk(r)
            self.lock.notify_all()
