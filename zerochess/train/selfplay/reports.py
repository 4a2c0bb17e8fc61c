"""What travels between the self-play driver and its actors, as typed records.

Every actor backend (``zerochess.train.selfplay.backends``) moves the same three things:

    driver -> actor   ChunkTask + the networks' checkpoint bytes (NetworkRef names them)
    actor -> driver   ChunkResult: one finished shard as bytes, its game counters and the
                      actor's running totals (speed, batch fill); or ActorLost when an
                      actor (or its node) died with a chunk in flight

Nothing here holds a path of the driver's machine: an actor on another machine needs only
the installed package, and only the driver writes the run directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields


@dataclass(frozen=True)
class NetworkRef:
    """A network by name; its checkpoint bytes travel beside the task (a Ray object, a
    queue message) and an actor loads each name once. ``iteration`` is the pool
    checkpoint's iteration (-1: the network being trained)."""

    name: str
    iteration: int = -1


@dataclass(frozen=True)
class ChunkTask:
    """Play ``games`` more games and return them as one shard.

    ``iteration`` is the iteration whose game quota the chunk fills and, with ``actor``
    and ``chunk``, names the shard and numbers its games (``worker.game_index``). Games in
    flight when the chunk is full stay in flight for the actor's next task."""

    iteration: int
    actor: int
    chunk: int
    games: int
    best: NetworkRef
    pool: tuple[NetworkRef, ...] = ()

    @property
    def networks(self) -> tuple[NetworkRef, ...]:
        """The networks whose bytes go with the task, in this order."""
        return (self.best, *self.pool)


@dataclass
class GameCounters:
    """Counts over finished games (one chunk, or summed over many with ``add``)."""

    games: int = 0
    plies: int = 0
    positions: int = 0
    resigned: int = 0
    false_resign_checked: int = 0
    false_resign: int = 0
    pool_games: int = 0
    pool_score: float = 0.0
    ends: dict = field(default_factory=dict)

    def add(self, other: "GameCounters") -> None:
        for f in fields(self):
            if f.name == "ends":
                for end, n in other.ends.items():
                    self.ends[end] = self.ends.get(end, 0) + n
            else:
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def summary(self) -> dict:
        """The counters plus the two rates the log and selfplay_metrics.jsonl report."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["false_resign_rate"] = (self.false_resign / self.false_resign_checked
                                    if self.false_resign_checked else None)
        out["pool_score"] = self.pool_score / self.pool_games if self.pool_games else None
        return out


@dataclass(frozen=True)
class ActorTotals:
    """One actor's running totals since it started (they only grow; the driver keeps the
    newest per actor and derives speeds and batch fill from their sums)."""

    actor: int
    node: str                  # where it runs: host name, plus the Ray node id on Ray
    incarnation: int = 0       # replacements of a dead actor in this slot before it
    wall_s: float = 0.0        # time spent playing (inside ChunkTasks)
    search_s: float = 0.0      # inside the search core, network included
    network_s: float = 0.0     # inside evaluator.evaluate
    eval_calls: int = 0
    eval_positions: int = 0    # leaves evaluated (the batch fill's numerator)
    batch_capacity: int = 1    # games in flight x leaves per tree: a full batch
    nodes: int = 0
    searched_plies: int = 0    # moves searched and played, games in flight included
    recorded_positions: int = 0


@dataclass(frozen=True)
class ChunkResult:
    """A finished chunk: the shard (``format.pack_shard`` bytes) and its figures."""

    task: ChunkTask
    shard: bytes
    counters: GameCounters
    totals: ActorTotals


@dataclass(frozen=True)
class ActorLost:
    """An actor died (killed, crashed, its node gone) with ``task`` in flight: the task's
    games are lost, nothing else; the driver hands the quota to the other actors."""

    task: ChunkTask
    reason: str


class ActorFailed(RuntimeError):
    """An actor raised an exception while playing (a bug or a bad network, not a death):
    the run stops with the actor's traceback, as a crash in the driver would."""


def speed_figures(totals: list[ActorTotals], wall_s: float) -> dict:
    """Speeds and batch fill over actors' totals, for ``wall_s`` seconds of driver time."""
    wall = max(1e-9, wall_s)
    calls = sum(t.eval_calls for t in totals)
    evaluated = sum(t.eval_positions for t in totals)
    actor_wall = sum(t.wall_s for t in totals)
    network = sum(t.network_s for t in totals)
    capacity = max([t.batch_capacity for t in totals], default=1)
    return {"positions_per_s": sum(t.recorded_positions for t in totals) / wall,
            "plies_per_s": sum(t.searched_plies for t in totals) / wall,
            "nodes_per_s": sum(t.nodes for t in totals) / wall,
            "batch_fill": evaluated / calls / capacity if calls else 0.0,
            "mean_batch": evaluated / calls if calls else 0.0,
            "network_share": network / actor_wall if actor_wall else 0.0,
            "outside_network_share": 1 - network / actor_wall if actor_wall else 0.0,
            "actors": len(totals), "hosts": sorted({t.node for t in totals})}
