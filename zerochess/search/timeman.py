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
* ``movetime``, ``nodes`` and ``depth`` are just other stoppers; ``infinite`` and ``ponder``
  have none until ``stop`` or ``ponderhit``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from zerochess.search.results import SearchProgress  # what the stopper reads, each batch


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
    infinite: bool = False
    ponder: bool = False
    searchmoves: tuple[str, ...] = ()


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


class Stopper:
    """The predicate the search polls after each batch: ``should_stop(progress) -> bool``."""

    def __init__(self, params: GoParams, budget: Optional[Budget], fixed_nodes: int = 0):
        self.params = params
        self.budget = budget
        self.node_limit = params.nodes if params.nodes is not None else (fixed_nodes or None)
        if fixed_nodes and params.nodes is None:
            self.budget = None  # the Nodes option replaces the clock (reproducible matches)
        self.reason = ""

    @property
    def unlimited(self) -> bool:
        return (self.budget is None and self.node_limit is None and self.params.depth is None)

    def should_stop(self, p: SearchProgress) -> bool:
        if self.node_limit is not None and p.nodes >= self.node_limit:
            self.reason = "nodes"
            return True
        if self.params.depth is not None and p.depth >= self.params.depth:
            self.reason = "depth"
            return True
        if self.budget is None:
            return False
        b = self.budget
        # A batch cannot be interrupted: stop if the next one would cross the hard limit.
        if p.elapsed + 1.2 * p.last_batch_seconds >= b.maximum:
            self.reason = "maximum time"
            return True
        # Unstable best move: allow up to the maximum, in steps.
        target = min(b.maximum, b.optimum * (1.0 + 0.5 * min(p.best_move_changes, 4)))
        if p.elapsed >= target:
            self.reason = "optimum time"
            return True
        # Smart pruning: the runner-up cannot catch up in the time that is left.
        if p.elapsed > 0.05 * target and p.nodes > 100:
            nps = p.nodes / p.elapsed
            remaining = nps * (target - p.elapsed)
            if p.best_visits - p.second_visits > remaining:
                self.reason = "best move decided"
                return True
        return False
