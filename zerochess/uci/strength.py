"""``UCI_LimitStrength`` / ``UCI_Elo``: weaker play that still looks like chess.

People who ask an engine to play weaker want a game they can win, not an engine that
plays well and then drops its queen. So the engine weakens the way a weaker player is
weaker, and never by a random move:

* it searches fewer nodes (``nodes``: about 30 at UCI_Elo's minimum, 255 just below the
  top), so it sees less deep;
* it then draws its move among the moves the search visited, by a preference that blends
  the root visits with the network's prior (the prior counts as ``PRIOR_VISITS`` visits, so
  a search of 30 nodes leans on the policy, one of hundreds on the visits), at a
  temperature (``temperature``) that falls as the level rises;
* a move is a candidate only if the search visited it (so its value is known: the
  network's view of the position after it, at least), its preference is at least ``share``
  of the best's, and its value is at most ``max_drop`` below the best move's: a move the
  search saw lose material or the game is never played, only one it judged a little worse;
* never a move after which the opponent mates in one (checked on the board, whether or
  not the small search saw it), never a move the solver proved lost, and a mate the search
  proved is always played.

Levels: a skill in Elo-like units sets the knobs (``Strength.at``); ``UCI_Elo`` maps to a
skill through ``CALIBRATION``, the ratings measured by matches against Stockfish 15.1's own
``UCI_Elo`` levels (docs/strength-limit.md has the table and the commands). ``UCI_Elo``
``STRENGTH_ELO_MAX`` is full strength: no limit at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # numpy is imported where a move is drawn: options.py reads this module
    import numpy as np  # before `uciok`, which comes before numpy is imported

STRENGTH_ELO_MIN = 1000
STRENGTH_ELO_MAX = 1800
PRIOR_VISITS = 8.0

#: (skill, measured Elo on Stockfish 15.1's UCI_Elo scale), ascending; between two points
#: UCI_Elo maps to skill linearly. Measured at 5+0.05, 40 games each (docs/strength-limit.md):
#: skill 1300 scored -359 +- 201 against Stockfish's UCI_Elo 1350 (991); skill 1500 -158 +-
#: 118 against 1500 (1342) and, as UCI_Elo 1350 of a first mapping (skill 1505), -319 +-
#: 183 against 1350 (1031): pooled, 1251 +- 99. Skill 1000 lost 0/1/39 to skill 1300 (-759,
#: the error bar unbounded: a rough anchor below UCI_Elo's minimum). The top is full
#: strength, 1800 at 10+0.1 when calibrated (r7's ladder against UCI_Elo 1800, docs/teacher.md).
CALIBRATION: tuple[tuple[float, float], ...] = (
    (1000.0, 232.0), (1300.0, 991.0), (1500.0, 1251.0), (1800.0, 1800.0))


def skill_for_elo(elo: float) -> float:
    """The skill whose measured strength is ``elo``, by the calibration points."""
    points = CALIBRATION
    for (s0, e0), (s1, e1) in zip(points, points[1:]):
        if elo <= e1 or (s1, e1) == points[-1]:
            return s0 + (elo - e0) * (s1 - s0) / (e1 - e0)
    return points[-1][0]


@dataclass(frozen=True)
class Strength:
    """The knobs of one level (the module docstring says what each does)."""
    skill: float
    nodes: int
    temperature: float
    share: float
    max_drop: float

    @classmethod
    def at(cls, skill: float) -> "Strength":
        """The knobs at ``skill`` (1000: the weakest, 1800: just below full strength):
        nodes double every 160 points (8 to 256); temperature, share and the allowed value
        drop move linearly between their ends."""
        x = min(1.0, max(0.0, (skill - 1000.0) / 800.0))
        return cls(skill=skill, nodes=int(round(2 ** (3 + 5 * x))),
                   temperature=1.0 - 0.7 * x, share=0.05 + 0.25 * x, max_drop=0.25 - 0.17 * x)

    @classmethod
    def for_options(cls, options) -> Optional["Strength"]:
        """The level the UCI options ask for, or None for full strength."""
        if not options["UCI_LimitStrength"] or options["UCI_Elo"] >= STRENGTH_ELO_MAX:
            return None
        return cls.at(skill_for_elo(options["UCI_Elo"]))

    def choose(self, result, board, rng: np.random.Generator) -> tuple[Optional[str], Optional[str]]:
        """(move, ponder move) for a finished search of ``board`` (``result.moves`` holds
        the root statistics); the search's own choice when nothing else qualifies."""
        import numpy as np

        best, ponder = result.best_move, result.ponder_move
        stats = {m.move: m for m in result.moves}
        if best is None or best not in stats or stats[best].proven == 1:
            return best, ponder          # nothing to choose from, or a proven win: play it
        top = stats[best]
        children = sum(m.visits for m in result.moves)
        pref = {m.move: (m.visits + PRIOR_VISITS * m.prior) / (children + PRIOR_VISITS)
                for m in result.moves}
        floor = self.share * max(pref.values())
        candidates = [m for m in result.moves
                      if m.visits > 0 and pref[m.move] >= floor and m.proven != 3
                      and (m.move == best or top.wl is None or m.wl >= top.wl - self.max_drop)]
        candidates = [m for m in candidates if not allows_mate_in_one(board, m.move)]
        if not candidates:
            return best, ponder
        weights = np.array([pref[m.move] for m in candidates], dtype=np.float64)
        weights = np.power(weights / weights.max(), 1.0 / self.temperature)
        chosen = candidates[int(rng.choice(len(candidates), p=weights / weights.sum()))].move
        return chosen, (ponder if chosen == best else None)


def allows_mate_in_one(board, move: str) -> bool:
    """Whether the opponent has a checkmating reply after ``move`` on ``board``."""
    after = board.copy()
    after.push_uci(move)
    for reply in after.legal_moves():
        after.push_uci(reply)
        mate = after.is_checkmate()
        after.pop()
        if mate:
            return True
    return False
