"""Time management: turns ``go`` parameters and the clock into a stopping rule.

Small on purpose, like Stockfish's ``timeman.cpp`` (an optimum and a maximum per move) and
Leela Chess Zero's stoppers (each limit is one predicate the search polls after every batch):

* Allocation: from the remaining time, increment and moves to go, minus ``MoveOverhead``,
  an *optimum* time (what a normal move should take) and a hard *maximum* (never exceeded,
  and never more than a fixed share of the clock, so no single move can flag).
* The search stops at the optimum, later (up to the maximum) when the best move keeps
  changing, and earlier when the best move can no longer be overtaken within the budget
  (Leela's "smart pruning": the runner-up would need more visits than the remaining time
  can produce at the measured speed).
* The next network batch is predicted: the search stops when waiting for another batch
  would cross the maximum, because a batch cannot be interrupted.
* ``movetime``, ``nodes``, ``depth`` and ``mate`` are just other stoppers; ``infinite`` and
  ``ponder`` have none until ``stop`` or ``ponderhit``. ``depth`` counts
  ``results.reported_depth``; a ``depth`` or ``mate`` search also ends once the solver has
  proven the root (its answer cannot change, and it leaves nothing to average),
  a ``depth`` search with one move to search at once. ``at_once``: a ``go`` whose limits
  could not be used (a clock for the other side only, say) ends after its first batch.
* Analysis (UCI ``UCI_AnalyseMode``): a clock or ``movetime`` is spent in full, without the
  early stops that serve play (smart pruning, the adaptive rules).

``adaptive`` (the UCI option ``TimeManager``'s default since it beat ``classic`` +52 +- 37 Elo)
adds the two steps Monty measured after soft and hard limits (issue 27: +20 and +32 Elo at
8+0.08 there): the soft limit grows when the root's value falls during the search (the
position is worse than it looked: up to twice the optimum) and shrinks or grows with the
best move's share of the root visits (a move holding most visits is rarely overtaken: down
to half the optimum; a split decision: up to 1.5 times). A root the solver has proven
stops the search at once (a mate found, or every move's result known). The maximum and
the batch prediction bound every rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from zerochess.search.results import SearchProgress, reported_depth  # what the stopper reads


@dataclass
class GoParams:
    """The parameters of a UCI ``go`` command (times in milliseconds)."""
    wtime: Optional[int] = None
    btime: Optional[int] = None
    winc: int = 0
    binc: int = 0
    movestogo: Optional[int] = None
    movetime: Optional[int] = None
    nodes: Optional[int] = None
    depth: Optional[int] = None
    mate: Optional[int] = None      # moves: stop once a mate in at most this many is proven
    infinite: bool = False
    ponder: bool = False
    searchmoves: Optional[tuple[str, ...]] = None
    """None: every legal move; a tuple: only these (empty: none of those given is legal)."""
    at_once: bool = False
    """The go asked for limits none of which can be used (a clock for the other side only,
    a value that is not a number): answer after the first batch, as Stockfish moves at once."""


@dataclass(frozen=True)
class Budget:
    optimum: float   # seconds
    maximum: float   # seconds


def allocate(params: GoParams, white_to_move: bool, overhead_ms: int, ply: int = 0,
             slow_mover: float = 1.0) -> Optional[Budget]:
    """The time budget for one move, or None when the clock does not limit the search.

    ``slow_mover`` (the UCI option ``SlowMover`` / 100, after the option of that name in
    Stockfish's and Leela's past) scales the planned time of a move; the caps below still
    hold, so a larger value spends more of the clock early and never plans to flag."""
    if params.movetime is not None:
        seconds = max(0.0, (params.movetime - overhead_ms) / 1000.0)
        return Budget(seconds, seconds)
    clock = params.wtime if white_to_move else params.btime
    if clock is None:
        return None
    inc = (params.winc if white_to_move else params.binc) or 0
    available = max(0.0, clock - overhead_ms)
    # Moves still to play in this time control: what the GUI says, else an estimate that
    # shrinks as the game goes on (but assumes the game lasts at least 20 more moves).
    moves_left = params.movestogo if params.movestogo else max(20, 50 - ply // 4)
    optimum = (available / moves_left + 0.75 * inc) * slow_mover
    # Never plan to use more than a fifth of what is left on one move, nor more than the
    # clock minus a safety share when movestogo is 1.
    cap = available * (0.8 if params.movestogo == 1 else 0.2)
    optimum = min(optimum, cap)
    maximum = min(optimum * 4.0, cap)
    return Budget(optimum / 1000.0, max(optimum, maximum) / 1000.0)


FALL_GAIN = 4.0          # adaptive: +4x the Q fallen (0.25 of Q doubles the soft limit)
FALL_CAP = 1.0           # ... at most +100%
SHARE_PIVOT = 0.5        # adaptive: a best move with half the root visits leaves the limit as is
SHARE_SLOPE = 1.25       # ... each 0.1 of share above (below) it takes away (adds) 12.5%
SHARE_RANGE = (0.5, 1.5)  # ... within these factors
SHARE_MIN_VISITS = 64    # ... once the root has this many visits (fewer: too noisy to judge)


def fall_factor(q_start: Optional[float], q_now: Optional[float]) -> float:
    """How much longer to think because the root's value fell from ``q_start`` (first seen
    in this search) to ``q_now`` (side to move's view): 1 when it held or rose."""
    if q_start is None or q_now is None:
        return 1.0
    return 1.0 + min(FALL_CAP, max(0.0, FALL_GAIN * (q_start - q_now)))


def share_factor(best_visits: int, root_visits: int) -> float:
    """Scale of the soft limit from the best move's share of the root's visits."""
    if root_visits < SHARE_MIN_VISITS:
        return 1.0
    share = min(1.0, best_visits / root_visits)
    lo, hi = SHARE_RANGE
    return min(hi, max(lo, 1.0 - SHARE_SLOPE * (share - SHARE_PIVOT)))


class Stopper:
    """The predicate the search polls after each batch: ``should_stop(progress) -> bool``.

    ``adaptive`` turns on the value-fall, visit-share and proven-root rules (module
    docstring); without it the stopper behaves exactly as before they existed."""

    def __init__(self, params: GoParams, budget: Optional[Budget], fixed_nodes: int = 0,
                 adaptive: bool = False, root_moves: int = 0, analyse: bool = False):
        """``root_moves``: how many moves the search may choose from (the legal moves, or
        those of ``searchmoves``; 0: not known); ``analyse``: UCI ``UCI_AnalyseMode``."""
        self.params = params
        self.budget = budget
        self.node_limit = params.nodes if params.nodes is not None else (fixed_nodes or None)
        if fixed_nodes and params.nodes is None:
            self.budget = None  # the Nodes option replaces the clock (reproducible matches)
        self.adaptive = adaptive and not analyse
        self.analyse = analyse
        self.single_move = root_moves == 1
        self.q_start: Optional[float] = None   # the root's value at the first poll
        self.reason = ""

    @property
    def unlimited(self) -> bool:
        return (self.budget is None and self.node_limit is None and self.params.depth is None
                and self.params.mate is None and not self.params.at_once)

    def should_stop(self, p: SearchProgress) -> bool:
        if self.params.at_once:
            self.reason = "no usable limit"
            return True
        if self.node_limit is not None and p.nodes >= self.node_limit:
            self.reason = "nodes"
            return True
        if self._depth_or_mate_reached(p):
            return True
        if self.budget is None:
            return False
        b = self.budget
        # A batch cannot be interrupted: stop if the next one would cross the hard limit.
        if p.elapsed + 1.2 * p.last_batch_seconds >= b.maximum:
            self.reason = "maximum time"
            return True
        # Unstable best move: allow up to the maximum, in steps.
        soft = b.optimum * (1.0 + 0.5 * min(p.best_move_changes, 4))
        if self.adaptive:
            if p.root_proven:
                self.reason = "root proven"
                return True
            if self.q_start is None:
                self.q_start = p.q
            soft *= fall_factor(self.q_start, p.q) * share_factor(p.best_visits, p.root_visits)
        target = min(b.maximum, soft)
        if p.elapsed >= target:
            self.reason = "optimum time"
            return True
        # Smart pruning: the runner-up cannot catch up in the time that is left (play only:
        # an analysis spends the time it was given).
        if not self.analyse and p.elapsed > 0.05 * target and p.nodes > 100:
            nps = p.nodes / p.elapsed
            remaining = nps * (target - p.elapsed)
            if p.best_visits - p.second_visits > remaining:
                self.reason = "best move decided"
                return True
        return False

    def _depth_or_mate_reached(self, p: SearchProgress) -> bool:
        """``go depth N`` / ``go mate N``: a proven root ends either (the answer is final and
        leaves nothing to average: results.reported_depth); a depth search also
        ends with one move to search, or at the depth. A mate search without a proof runs
        on until ``stop`` or another limit, as Stockfish's does."""
        depth, mate = self.params.depth, self.params.mate
        if depth is None and mate is None:
            return False
        if p.root_proven:
            self.reason = "root proven"
            return True
        if depth is not None and self.single_move:
            self.reason = "one move to search"
            return True
        if depth is not None and reported_depth(p.depth) >= depth:
            self.reason = "depth"
            return True
        return False
