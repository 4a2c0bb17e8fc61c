"""The replay window: the last N self-play positions, read from the shards on disk.

Actors and learner meet only in RUN_DIR/games/: actors add shards (``shard_name``), the
learner maps the newest ones. The window is the newest ``capacity`` positions in shard order
(iteration, worker, chunk), cutting into the oldest shard it reaches, so it is a pure
function of the directory and the iteration: a restarted run sees the same window. It is a
``PositionSet`` like a phase-1 split, so its batches come from the same ``gather``.

    window = ReplayWindow.from_directory(run_dir / "games", capacity=500_000, up_to=7)
    batch = window.gather(window.sample(rng, 256))   # batch.target: the visit distributions
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from zerochess.train.data.batches import Batch, PositionSet
from zerochess.train.data.dataset import open_shard
from zerochess.train.data.format import Shard

#: Shard directory names in RUN_DIR/games: iteration, worker, chunk (the worker's n-th shard).
SHARD_RE = re.compile(r"^it(\d{4})-w(\d{2})-c(\d{4})$")


def shard_name(iteration: int, worker: int, chunk: int) -> str:
    return f"it{iteration:04d}-w{worker:02d}-c{chunk:04d}"


def list_shards(games_dir: str | os.PathLike, up_to: int | None = None) -> list[Path]:
    """Complete shards in ``games_dir`` (iteration <= up_to), oldest first."""
    games_dir = Path(games_dir)
    if not games_dir.is_dir():
        return []
    found = []
    for p in games_dir.iterdir():
        m = SHARD_RE.match(p.name)
        if m and (up_to is None or int(m.group(1)) <= up_to) and (p / "shard.json").is_file():
            found.append(((int(m.group(1)), int(m.group(2)), int(m.group(3))), p))
    return [p for _, p in sorted(found)]


class ReplayWindow(PositionSet):
    """The newest ``capacity`` positions of a list of shards (oldest first)."""

    def __init__(self, shards: list[Shard], capacity: int) -> None:
        self.capacity = capacity
        kept: list[Shard] = []
        total = 0
        for sh in reversed(shards):
            if total >= capacity:
                break
            if len(sh):
                kept.append(sh)
                total += len(sh)
        # the oldest kept shard contributes only its newest positions
        super().__init__(kept[::-1], skip=int(max(0, total - capacity)))

    @classmethod
    def from_directory(cls, games_dir: str | os.PathLike, capacity: int,
                       up_to: int | None = None) -> "ReplayWindow":
        return cls([open_shard(p, verify=False) for p in list_shards(games_dir, up_to)], capacity)

    def sample(self, rng: np.random.Generator, batch_size: int) -> np.ndarray:
        """Uniform positions of the window (with replacement, as the seed's buffer.sample
        over a large buffer is in effect)."""
        if len(self) == 0:
            raise ValueError("the replay window is empty")
        return rng.integers(0, len(self), size=batch_size)

    def gather(self, idx: np.ndarray, with_target: bool = True) -> Batch:
        """The positions at window indices ``idx``, in that order, with their targets."""
        return super().gather(idx, with_target)
