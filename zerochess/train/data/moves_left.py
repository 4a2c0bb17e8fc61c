"""The moves-left target: how many plies the game had left from a sample's position.

What the network's moves-left head learns (``NetworkConfig.moves_left``), computed from the
arrays every shard already holds (``format.py``), for any rows, so that a batch reads only
its own samples and the per-game arrays of the shards it touches (streaming stays streaming):

* a game that ended by a rule (``game_end`` 1..5: mate, stalemate, insufficient material,
  fifty moves, repetition) had ``game_plies - ply`` plies left from each of its positions;
* a truncated (6) or resigned (7) game says nothing about its length: no target;
* where a teacher scored a mate (``teacher_cp`` = +-(32000 - n), a mate in n moves), the
  mate distance replaces the game's: mate in n for the side to move is 2n - 1 plies, mated
  in n is 2n plies (the teacher's best play, not what the game then did).

Samples without a target get ``NO_TARGET`` (-1); the loss masks them out.
"""

from __future__ import annotations

import numpy as np

# teacher_cp is +-(MATE_CP - n) for a mate in n; scores beyond MATE_CP - MAX_MATE_MOVES are
# mates (teacher.py reads the same bound as a mate when it makes WDL targets).
from zerochess.client.uci import MATE_CP, MAX_MATE_MOVES
from zerochess.train.data.format import Shard

#: The value of a sample without a moves-left target.
NO_TARGET = -1.0

#: game_end values of games that ended by a rule of chess (Status 1..5, board.pyx): a range.
RULE_ENDS = (1, 2, 3, 4, 5)


def mate_plies(teacher_cp: np.ndarray) -> np.ndarray:
    """Plies to the end of the game under the teacher's mate score, NO_TARGET where the
    score is not a mate: mate in n (cp = 32000 - n) is 2n - 1 plies, mated in n is 2n."""
    cp = np.asarray(teacher_cp, dtype=np.int64)
    n = MATE_CP - np.abs(cp)
    plies = np.where(cp > 0, 2 * n - 1, 2 * n).astype(np.float32)
    return np.where(n <= MAX_MATE_MOVES, plies, np.float32(NO_TARGET)).astype(np.float32)


def plies_left(shard: Shard, rows: np.ndarray) -> np.ndarray:
    """float32 [len(rows)]: the moves-left targets of ``shard``'s samples at local ``rows``
    (module docstring), NO_TARGET where there is none. Reads those rows and the shard's
    per-game arrays (a few hundred entries): about 10 us a call, per shard a batch touches."""
    rows = np.asarray(rows, dtype=np.int64)
    out = np.full(len(rows), NO_TARGET, dtype=np.float32)
    if not len(rows) or "game_index" not in shard:
        return mate_or(shard, rows, out)
    games = shard["game"][rows]
    index = np.asarray(shard["game_index"])
    if not len(index):
        return mate_or(shard, rows, out)
    order = np.argsort(index, kind="stable")  # writers list games in order: already sorted
    j = order[np.minimum(np.searchsorted(index, games, sorter=order), len(index) - 1)]
    ends = np.asarray(shard["game_end"])[j]
    left = np.asarray(shard["game_plies"])[j].astype(np.int64) - shard["ply"][rows]
    by_rule = (index[j] == games) & (ends >= RULE_ENDS[0]) & (ends <= RULE_ENDS[-1]) & (left >= 0)
    out[by_rule] = left[by_rule]
    return mate_or(shard, rows, out)


def mate_or(shard: Shard, rows: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``targets`` with the teacher's mate distances where it saw a mate (no teacher: as is)."""
    if "teacher_cp" not in shard or not len(rows):
        return targets
    mate = mate_plies(shard["teacher_cp"][rows])
    return np.where(mate >= 0, mate, targets).astype(np.float32)
