"""The replay window: the last N self-play positions, read from the shards on disk.

Actors and learner meet only in RUN_DIR/games/: actors add shards, the learner maps the
newest ones. The window is the newest ``capacity`` positions in shard order
(iteration, worker, chunk), cutting into the oldest shard it reaches, so it is a pure
function of the directory and the iteration: a restarted run sees the same window.

    window = ReplayWindow.from_directory(run_dir / "games", capacity=500_000, up_to=7)
    batch = window.gather(window.sample(rng, 256))
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from zerochess.train.selfplay_shards import SHARD_RE, SelfPlayShard, load_selfplay_shard
from zerochess.train.shards import csr_rows

POLICY_SIZE = 4168


@dataclass
class ReplayBatch:
    """A training batch as numpy arrays (the learner moves them to the device)."""

    tokens: np.ndarray   # uint8 [B, 72]
    policy: np.ndarray   # float32 [B, POLICY_SIZE]: visit distribution, 0 off the root moves
    legal: np.ndarray    # bool [B, POLICY_SIZE]: the root's moves (all legal moves)
    wdl: np.ndarray      # int64 [B]: 0 loss, 1 draw, 2 win (outcome + 1)


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


class ReplayWindow:
    """The newest ``capacity`` positions of a list of shards (oldest first)."""

    def __init__(self, shards: list[SelfPlayShard], capacity: int) -> None:
        self.capacity = capacity
        kept: list[SelfPlayShard] = []
        total = 0
        for sh in reversed(shards):
            if total >= capacity:
                break
            if len(sh):
                kept.append(sh)
                total += len(sh)
        self.shards = kept[::-1]
        sizes = np.array([len(s) for s in self.shards], dtype=np.int64)
        # the oldest kept shard contributes only its newest positions
        self.skip = int(max(0, total - capacity))
        if len(sizes):
            sizes[0] -= self.skip
        self.starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    @classmethod
    def from_directory(cls, games_dir: str | os.PathLike, capacity: int,
                       up_to: int | None = None) -> "ReplayWindow":
        return cls([load_selfplay_shard(p) for p in list_shards(games_dir, up_to)], capacity)

    def __len__(self) -> int:
        return int(self.starts[-1])

    @property
    def names(self) -> list[str]:
        return [s.path.name for s in self.shards]

    def sample(self, rng: np.random.Generator, batch_size: int) -> np.ndarray:
        """Uniform positions of the window (with replacement, as the seed's buffer.sample
        over a large buffer is in effect)."""
        if len(self) == 0:
            raise ValueError("the replay window is empty")
        return rng.integers(0, len(self), size=batch_size)

    def gather(self, idx: np.ndarray) -> ReplayBatch:
        """The positions at window indices ``idx``, in that order."""
        b = len(idx)
        tokens = np.empty((b, 72), np.uint8)
        policy = np.zeros((b, POLICY_SIZE), np.float32)
        legal = np.zeros((b, POLICY_SIZE), bool)
        outcome = np.empty(b, np.int8)
        which = np.searchsorted(self.starts, idx, side="right") - 1
        for s in np.unique(which):
            rows = np.nonzero(which == s)[0]
            local = idx[rows] - self.starts[s] + (self.skip if s == 0 else 0)
            sh = self.shards[s]
            tokens[rows] = sh["tokens"][local]
            outcome[rows] = sh["outcome"][local]
            flat, lens = csr_rows(sh["policy_offsets"], local)
            r = np.repeat(rows, lens)
            cols = sh["policy_indices"][flat].astype(np.int64)
            visits = sh["policy_visits"][flat].astype(np.float32)
            totals = np.add.reduceat(visits, np.concatenate([[0], np.cumsum(lens)[:-1]]))
            policy[r, cols] = visits / np.repeat(np.maximum(totals, 1), lens)
            legal[r, cols] = True
        return ReplayBatch(tokens, policy, legal, outcome.astype(np.int64) + 1)
