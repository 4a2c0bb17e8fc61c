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

Two bands, both measured against Stockfish 15.1's own ``UCI_Elo`` levels
(docs/strength-limit.md has the tables and the commands):

* up to where a plain search of ``NODE_LADDER``'s fewest nodes plays, a *skill* in
  Elo-like units sets the knobs above (``Strength.at``) and ``UCI_Elo`` maps to it
  through ``CALIBRATION``;
* above that, the engine plays its own best move with a node budget: ``UCI_Elo`` maps to
  the nodes a move through a line fitted to ``NODE_LADDER`` (Elo against log nodes), the
  shipped network's measured strength at fixed nodes. A clock that allows fewer nodes
  than the budget plays weaker, as full strength does on a slow machine.

``UCI_Elo`` ``STRENGTH_ELO_MAX`` is full strength: no limit at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # numpy is imported where a move is drawn: options.py reads this module
    import numpy as np  # before `uciok`, which comes before numpy is imported

STRENGTH_ELO_MIN = 1000
#: The engine's full strength: r13 at a fixed 3,400 nodes a move scored 53.5% against
#: Stockfish 15.1 UCI_Elo 2000 (+24 +- 49; 52.0% at 10+0.1 where it searched about 3,400
#: nodes a move): docs/model-card.md. The top of the range sets no limit.
STRENGTH_ELO_MAX = 2000
PRIOR_VISITS = 8.0

#: (skill, Elo on Stockfish 15.1's UCI_Elo scale), ascending; between two points UCI_Elo
#: maps to skill linearly (docs/strength-limit.md). Measured first with r7 at 5+0.05, 40
#: games each: skill 1000 = 232 (through skill 1300, a rough anchor), 1300 = 991 +- 201,
#: 1500 = 1251 +- 99 (two runs pooled). With r13 at 10+0.1, 40 games each against Stockfish
#: at the level's own UCI_Elo: skill 1636 (r7's mapping's 1500) 31/2/7, 1741 +- 184; skill
#: 1745 (r7's 1700) 25/2/13, 1808 +- 100; skill 1565 (a shift of 138 from those two)
#: 25/2/13, 1608 +- 130; skill 1549 (a shift of 172 from those three) 25/2/13, 1608 +- 108.
#: r13 plays a level 206 +- 60 above r7 (the four pooled, inverse variance), so r7's three
#: points move up by 206, and the best measured r13 point ends the band.
R13_OVER_R7 = 206.0
CALIBRATION: tuple[tuple[float, float], ...] = (
    (1000.0, 232.0 + R13_OVER_R7), (1300.0, 991.0 + R13_OVER_R7),
    (1500.0, 1251.0 + R13_OVER_R7), (1745.4, 1808.0))

#: (nodes a move, Elo, its 95% error bar): r13 at full strength and a fixed node budget
#: against Stockfish 15.1 UCI_Elo 2000 at 10+0.1 (the model card's score-against-nodes
#: table). ``UCI_Elo`` above the skill band reads the nodes off the weighted line fitted
#: through these points (``ladder_fit``).
NODE_LADDER: tuple[tuple[int, float, float], ...] = (
    (400, 1662.0, 132.0), (850, 1873.0, 80.0), (1700, 2017.0, 89.0), (3400, 2024.0, 49.0))


def ladder_fit() -> tuple[float, float]:
    """(a, b) of Elo = a + b * log2(nodes), least squares weighted by 1 / error^2."""
    w = [1.0 / err ** 2 for _, _, err in NODE_LADDER]
    x = [math.log2(n) for n, _, _ in NODE_LADDER]
    y = [elo for _, elo, _ in NODE_LADDER]
    sw = sum(w)
    mx = sum(wi * xi for wi, xi in zip(w, x)) / sw
    my = sum(wi * yi for wi, yi in zip(w, y)) / sw
    b = (sum(wi * (xi - mx) * (yi - my) for wi, xi, yi in zip(w, x, y))
         / sum(wi * (xi - mx) ** 2 for wi, xi in zip(w, x)))
    return my - b * mx, b


LADDER_A, LADDER_B = ladder_fit()
#: The lowest UCI_Elo (an integer) of the node band: the fitted strength of the ladder's
#: fewest nodes, rounded up.
NODE_BAND_START = math.ceil(LADDER_A + LADDER_B * math.log2(NODE_LADDER[0][0]))


def nodes_for_elo(elo: float) -> int:
    """The node budget a move whose fitted strength is ``elo`` (at least the ladder's fewest)."""
    return max(NODE_LADDER[0][0], int(round(2 ** ((elo - LADDER_A) / LADDER_B))))


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
    def best_move_within(cls, elo: float) -> "Strength":
        """The node band: the engine's own choice, at the nodes whose fitted strength is
        ``elo`` (temperature 0: ``choose`` plays the search's best move)."""
        return cls(skill=elo, nodes=nodes_for_elo(elo), temperature=0.0, share=1.0,
                   max_drop=0.0)

    @classmethod
    def for_options(cls, options) -> Optional["Strength"]:
        """The level the UCI options ask for, or None for full strength."""
        elo = options["UCI_Elo"]
        if not options["UCI_LimitStrength"] or elo >= STRENGTH_ELO_MAX:
            return None
        if elo >= NODE_BAND_START:
            return cls.best_move_within(elo)
        return cls.at(skill_for_elo(elo))

    def choose(self, result, board, rng: np.random.Generator) -> tuple[Optional[str], Optional[str]]:
        """(move, ponder move) for a finished search of ``board`` (``result.moves`` holds
        the root statistics); the search's own choice when nothing else qualifies."""
        import numpy as np

        best, ponder = result.best_move, result.ponder_move
        if self.temperature == 0:
            return best, ponder          # the node band: the search's own choice
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
