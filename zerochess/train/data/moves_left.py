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

from zerochess.train.data.format import Shard

#: The value of a sample without a moves-left target.
NO_TARGET = -1.0

#: game_end values of games that ended by a rule of chess (Status 1..5, board.pyx).
RULE_ENDS = (1, 2, 3, 4, 5)

#: teacher_cp is +-(MATE_CP - n) for a mate in n; scores beyond MATE_CP - MAX_MATE_MOVES
#: are mates (teacher.py reads the same bound as a mate when it makes WDL targets).
MATE_CP = 32000
MAX_MATE_MOVES = 500


def mate_plies(teacher_cp: np.ndarray) -> np.ndarray:
    """Plies to the end of the game under the teacher's mate score, NO_TARGET where the
    score is not a mate: mate in n (cp = 32000 - n) is 2n - 1 plies, mated in n is 2n."""
    cp = np.asarray(teacher_cp, dtype=np.int64)
    n = MATE_CP - np.abs(cp)
    plies = np.where(cp > 0, 2 * n - 1, 2 * n).astype(np.float32)
    return np.where(n <= MAX_MATE_MOVES, plies, np.float32(NO_TARGET)).astype(np.float32)


def plies_left(shard: Shard, rows: np.ndarray) -> np.ndarray:
    """float32 [len(rows)]: the moves-left targets of ``shard``'s samples at local ``rows``
    (module docstring), NO_TARGET where there is none."""
    rows = np.asarray(rows, dtype=np.int64)
    out = np.full(len(rows), NO_TARGET, dtype=np.float32)
    if not len(rows) or "game_index" not in shard:
        return out
    games = np.asarray(shard["game"][rows], dtype=np.int64)
    index = np.asarray(shard["game_index"], dtype=np.int64)
    order = np.argsort(index, kind="stable")
    at = np.searchsorted(index[order], games)
    found = at < len(index)
    at = np.where(found, at, 0)
    j = order[at]
    found &= index[j] == games
    ends = np.asarray(shard["game_end"], dtype=np.int64)[j]
    by_rule = found & np.isin(ends, RULE_ENDS)
    left = (np.asarray(shard["game_plies"], dtype=np.int64)[j]
            - np.asarray(shard["ply"][rows], dtype=np.int64))
    by_rule &= left >= 0
    out[by_rule] = left[by_rule]
    if "teacher_cp" in shard:
        mate = mate_plies(shard["teacher_cp"][rows])
        out = np.where(mate >= 0, mate, out).astype(np.float32)
    return out
