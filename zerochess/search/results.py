"""What a search reports: plain dataclasses, built from a tree once per report.

The search never prints; the UCI layer (``zerochess.uci.format``) turns these into text.

Conventions (all from the root's side to move):

* ``q`` = P(win) - P(loss) of the best move, in [-1, 1]; ``wdl`` = (loss, draw, win), the
  evaluator's order, the best move's averages.
* ``cp`` is on Stockfish 15.1's scale (``q_to_cp``): cp = CP_PER_LOGIT * ln(E / (1 - E))
  with E = (1 + q) / 2 the expected score, fitted on Stockfish's own labels
  (experiments/cp_scale_fit.py, docs/uci.md), so that +100 cp is about what Stockfish
  converts to a win half the time; ``lc0_cp`` is Leela Chess Zero's mapping
  round(90 * tan(1.5637541897 * q)) (UCI ``ScoreType centipawn_lc0``). Both clamp to +-12800.
* ``mate``: UCI convention, in moves, signed: +3 = the side to move mates with its third
  move from now, -2 = it gets mated after its second move; None unless the solver proved a
  mate. ``mate_plies`` is the same distance in plies (+5, -4 in those examples).
* ``depth`` is the average depth of the leaves this search reached and did not know the
  value of exactly (Leela's reading of ``depth``, less the mates, draws and solved nodes,
  which say nothing about how deep it looked), ``seldepth`` the deepest leaf;
  ``reported_depth`` is the whole number a GUI is shown and UCI ``go depth`` counts.
* ``nodes`` counts the playouts of this search (visits added at the root), not the tree
  kept from earlier searches; ``nn_evals`` the positions sent to the evaluator;
  ``cache_hits`` the transposition-table hits that skipped it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from zerochess.search.mcts import known_win, shown_q
from zerochess.search.syzygy import TABLEBASE_PLIES, tablebase_cp

__all__ = ["PVLine", "MoveStats", "NodeStats", "SearchInfo", "SearchResult", "SearchLimits",
           "SearchProgress", "q_to_cp", "lc0_cp", "reported_depth", "build_info", "build_result",
           "root_move_stats"]

CP_LIMIT = 12800
CP_PER_LOGIT = 80.4
"""Centipawns per unit of logit(expected score): the least-squares fit of Stockfish 15.1's
expected score (its WDL: W + D/2) to its centipawns, E = 1 / (1 + exp(-cp / k)), over the
4,854 positions within +-1000 cp of 5,747 it labelled at depth 8 in 60 games
(experiments/cp_scale_fit.py; the figures are in docs/uci.md)."""
LC0_CP_SCALE = 90.0
LC0_CP_STRETCH = 1.5637541897


def q_to_cp(q: float) -> int:
    """Centipawns on Stockfish 15.1's scale from Q = P(win) - P(loss):
    CP_PER_LOGIT * ln((1 + q) / (1 - q)), the logit of the expected score (1 + q) / 2. A
    GUI's thresholds (resign, draw offers, graphs) are written for Stockfish's scale, where
    +100 cp is an advantage won about half the time; Q = +-1 (a proven result) is +-CP_LIMIT."""
    if q >= 1.0 or q <= -1.0:
        return CP_LIMIT if q > 0 else -CP_LIMIT
    cp = CP_PER_LOGIT * math.log((1.0 + q) / (1.0 - q))
    return int(max(-CP_LIMIT, min(CP_LIMIT, round(cp))))


def lc0_cp(q: float) -> int:
    """Centipawns from Q by Leela Chess Zero's formula, 90 tan(1.5637541897 q): what zerochess
    reported before it used Stockfish's scale (UCI ``ScoreType centipawn_lc0``); it grows
    fast near +-1 (q = 0.5: +89 cp, 0.9: +546, 0.99: +4,100)."""
    return int(max(-CP_LIMIT, min(CP_LIMIT, round(LC0_CP_SCALE * math.tan(LC0_CP_STRETCH * q)))))


def reported_depth(average_depth: float, mate_plies: Optional[int] = None) -> int:
    """The search depth a GUI is shown and UCI ``go depth N`` counts: ``average_depth``
    (the average depth of this search's playouts that ended at a position it had to
    evaluate, Tree.stats) rounded down, as Leela Chess Zero's, at least 1, and with a proven
    mate at least the mate's plies (a mate in 3 is seen at depth 5, not 1).

    Playouts that end at an exact value (a mate, a draw, a solved node) are left out of the
    average: a proven draw the search keeps choosing one ply down would otherwise hold the
    depth at 1 for ever. A solved root leaves nothing to average; the time manager ends a
    ``go depth``/``go mate`` search as soon as the root is proven (``timeman.Stopper``)."""
    depth = max(1, int(average_depth))
    if mate_plies:
        depth = max(depth, abs(mate_plies))
    return depth


PROVEN_Q = {1: 1.0, 2: 0.0, 3: -1.0}
"""Exact Q of a proven root move (win, draw, loss), reported even before its first visit
(a mate, or a capture into insufficient material, is known when its parent is expanded)."""


def mate_in_moves(proven: int, plies: int) -> tuple[Optional[int], Optional[int]]:
    """(mate in moves, mate in plies), signed for the root side, from a root child's proof
    (none for a result read from the tablebases: search/syzygy.py)."""
    if plies >= TABLEBASE_PLIES:
        return None, None
    if proven == 1:          # PROVEN_WIN for the root's side to move
        return (plies + 1) // 2, plies
    if proven == 3:          # PROVEN_LOSS
        return -(plies // 2), -plies
    return None, None


@dataclass
class PVLine:
    """One root move with its statistics and principal variation (a MultiPV line)."""
    move: str
    visits: int
    q: float
    wdl: tuple[float, float, float]     # (loss, draw, win)
    cp: int
    mate: Optional[int]
    mate_plies: Optional[int]
    pv: list[str]


@dataclass
class MoveStats:
    """One root move with the numbers the selection works with (Leela Chess Zero's
    ``VerboseMoveStats``), all from the root's side to move.

    Selection takes the move with the largest ``s = q + u + mu`` next (module ``mcts``), so
    a move's ``q`` is the exact value of a proven move (visited or not), else its mean, or
    the first-play-urgency value when it has no visit yet; ``mu`` is the moves-left term
    (0 without a moves-left head)."""
    move: str
    index: int               # policy index of the move
    visits: int              # N: visits of the move's subtree
    prior: float             # P: the network's prior (with root noise, if any)
    wl: Optional[float]      # mean win - loss of the subtree; None before its first visit
    d: Optional[float]       # mean draw probability; None before its first visit
    q: float                 # exact if proven, else wl, or the FPU value for an unvisited move
    u: float                 # exploration bonus the next selection at the root would add
    v: Optional[float]       # the network's value of the position after the move (from the
                             # cache; exact for a game-over position); None if not cached
    proven: int              # 0 none, 1 win, 2 draw, 3 loss (solver; the root's side)
    m: Optional[float] = None  # plies left from the position after the move (moves-left
                               # head, backed up); None without the head or a visit
    mu: float = 0.0          # the moves-left term the next selection at the root adds

    @property
    def s(self) -> float:
        return self.q + self.u + self.mu


@dataclass
class NodeStats:
    """The root itself, as the ``node`` line of ``VerboseMoveStats`` shows it: its visits are
    1 (its own first visit, the evaluation that expanded it) + the sum of its moves' visits."""
    visits: int
    n_moves: int
    visited_policy: float    # sum of the priors of the moves with a visit
    wl: Optional[float]
    d: Optional[float]
    v: Optional[float]       # the network's value of the root position (from the cache)
    m: Optional[float] = None  # the root's plies left (moves-left head); None without it


@dataclass
class SearchInfo:
    """A progress report (``on_info``): counters and the best lines so far."""
    nodes: int
    nn_evals: int
    cache_hits: int
    hashfull: int            # transposition table use, per mille
    depth: float             # average depth of the leaves not valued exactly
    seldepth: int            # deepest leaf
    time: float              # seconds since the search started
    lines: list[PVLine]      # best first; len == multipv (fewer if fewer legal moves)
    moves: list[MoveStats] = field(default_factory=list)   # every root move, generation order
    root: Optional[NodeStats] = None
    tbhits: int = 0          # positions the endgame tablebases answered in this search

    @property
    def nps(self) -> float:
        return self.nodes / self.time if self.time > 0 else 0.0

    @property
    def search_depth(self) -> int:
        """The depth to show (``reported_depth``): the average leaf depth, raised to the
        best line's mate distance."""
        return reported_depth(self.depth, self.lines[0].mate_plies if self.lines else None)


@dataclass
class SearchResult(SearchInfo):
    """The final report: the info fields plus the move to play and the training target."""
    best_move: Optional[str] = None       # None when the root has no legal move
    ponder_move: Optional[str] = None
    pv: list[str] = field(default_factory=list)
    q: float = 0.0
    wdl: tuple[float, float, float] = (0.0, 1.0, 0.0)
    cp: int = 0
    mate: Optional[int] = None
    mate_plies: Optional[int] = None
    root_visits: dict[str, int] = field(default_factory=dict)   # uci -> visits
    policy_indices: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    visit_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    tree_reused: bool = False

    @property
    def centipawns(self) -> int:
        return self.cp


@dataclass
class SearchProgress:
    """What ``SearchLimits.should_stop`` (the time manager's ``Stopper``) sees after every
    batch: the one description of a running search's progress."""
    elapsed: float            # seconds since the clock started (``SearchLimits.started``)
    nodes: int                # visits added by this search
    depth: float              # average depth of the leaves not valued exactly (reported_depth)
    best_visits: int          # visits of the most visited root move
    second_visits: int        # visits of the runner-up
    best_move_changes: int    # how often the most visited root move changed in this search
    last_batch_seconds: float  # duration of the latest network batch
    nn_evals: int = 0         # positions sent to the evaluator
    tree_full: bool = False   # the tree's memory is used up
    root_proven: bool = False  # the solver has proven the root's result
    q: Optional[float] = None  # the root's value (side to move's view), None before a visit
    root_visits: int = 0      # visits of the root, the reused tree's included


@dataclass
class SearchLimits:
    """When a search stops: ``nodes`` playouts, ``should_stop`` saying so, or ``stop()``.

    With neither, the search runs until ``stop()`` (UCI ``go infinite``) or the tree is
    full. ``should_stop`` is polled after every batch (a batch cannot be interrupted);
    ``Search.update_limits`` replaces it while the search runs (UCI ``ponderhit``)."""
    nodes: Optional[int] = None
    should_stop: Optional[Callable[["SearchProgress"], bool]] = None
    started: Optional[float] = None
    """``time.perf_counter()`` at which ``SearchProgress.elapsed`` starts counting; None:
    when the search starts. UCI passes the moment ``go`` arrived, so that loading or
    configuring before the search is paid from the move's budget."""
    root_moves: tuple = ()
    """UCI ``go searchmoves``: search only these root moves (UCI strings); empty = all."""


def _known_win_root(tree) -> bool:
    """The root is a known win the search values by known_endgames.pxd (as ``_gather`` does)."""
    return tree.params.known_endgames and known_win(tree.root_board) is not None


def _line(tree, edges, i: int, known_win_root: bool) -> PVLine:
    visits = int(edges["visits"][i])
    proven = int(edges["proven"][i])
    q = float(edges["q"][i]) if visits else PROVEN_Q.get(proven, 0.0)
    if proven == 0:
        q = shown_q(q, known_win_root)
    d = float(edges["d"][i]) if visits else float(proven == 2)
    mate, mate_plies = mate_in_moves(proven, int(edges["plies"][i]))
    wdl = ((1.0 - q - d) / 2, d, (1.0 + q - d) / 2)
    plies = int(edges["plies"][i])
    cp = tablebase_cp(proven, plies) if proven and plies >= TABLEBASE_PLIES else q_to_cp(q)
    return PVLine(move=edges["moves"][i], visits=visits, q=q, wdl=wdl, cp=cp,
                  mate=mate, mate_plies=mate_plies, pv=tree.pv(i))


def _cached_value(tt, board) -> Optional[float]:
    """win - loss of the network's cached answer for ``board``'s side to move, or None;
    reads without touching the cache's replacement order."""
    found = tt.lookup(board, touch=False) if tt is not None else None
    if found is None:
        return None
    wdl = found[1]
    return float(wdl[2] - wdl[0])


def root_move_stats(tree, tt, edges=None, known_win_root=None
                    ) -> tuple[list[MoveStats], Optional[NodeStats]]:
    """Every root move's statistics and the root's, as the next selection at the root sees
    them (search paused): c(N) and the FPU as in ``mcts._select``, with no simulation in
    flight, where the sum of the moves' visits is the root's visits minus its own first.
    ``edges`` and ``known_win_root`` (``_known_win_root``): the caller's, when it has them."""
    edges = tree.root_edges() if edges is None else edges
    if known_win_root is None:
        known_win_root = _known_win_root(tree)
    n_moves = len(edges["moves"])
    if n_moves == 0:
        return [], None
    params, board = tree.params, tree.root_board
    visits = edges["visits"]
    root = tree.root_wdl()
    root_visits = tree.stats()["root_visits"]
    visited_policy = float(edges["prior"][visits > 0].sum())
    parent_q = root[0] if root is not None else 0.0
    fpu = parent_q - params.root_fpu_reduction * math.sqrt(visited_policy)
    u_scale = params.cpuct(root_visits) * math.sqrt(max(int(visits.sum()), 1))
    root_m = tree.root_moves_left()      # None without a moves-left head
    use_m = (root_m is not None and params.moves_left_max_effect > 0
             and abs(parent_q) > params.moves_left_threshold
             and not known_win_root)
    moves = []
    for i, move in enumerate(edges["moves"]):
        n, proven = int(visits[i]), int(edges["proven"][i])
        wl = float(edges["q"][i]) if n else None
        child = board.copy()
        child.push_uci(move)
        v = _cached_value(tt, child)
        v = -v if v is not None else PROVEN_Q.get(proven)   # the child's mover = root's side
        q = PROVEN_Q[proven] if proven in PROVEN_Q else (wl if n else fpu)   # as _select
        m = float(edges["m"][i]) if root_m is not None and not math.isnan(edges["m"][i]) else None
        mu = params.moves_left_utility(m, root_m, q) if use_m and m is not None else 0.0
        moves.append(MoveStats(
            move=move, index=int(edges["index"][i]), visits=n, prior=float(edges["prior"][i]),
            wl=wl, d=float(edges["d"][i]) if n else None, q=q,
            u=u_scale * float(edges["prior"][i]) / (1 + n), v=v, proven=proven, m=m, mu=mu))
    node = NodeStats(visits=root_visits, n_moves=n_moves, visited_policy=visited_policy,
                     wl=parent_q if root is not None else None,
                     d=root[1][1] if root is not None else None, v=_cached_value(tt, board),
                     m=root_m)
    return moves, node


def build_info(tree, tt, elapsed: float, multipv: int = 1) -> SearchInfo:
    """A SearchInfo from a tree's current state (called with the search paused)."""
    stats = tree.stats()
    edges = tree.root_edges()
    known_win_root = _known_win_root(tree)
    lines = [_line(tree, edges, i, known_win_root) for i in tree.ranked_root_edges(multipv)]
    moves, root = root_move_stats(tree, tt, edges, known_win_root)
    return SearchInfo(nodes=stats["playouts"], nn_evals=stats["nn_evals"],
                      cache_hits=stats["cache_hits"],
                      hashfull=tt.hashfull() if tt is not None else 0,
                      depth=stats["depth"], seldepth=stats["seldepth"], time=elapsed,
                      lines=lines, moves=moves, root=root, tbhits=stats["tb_hits"])


def build_result(tree, tt, elapsed: float, multipv: int = 1, reused: bool = False) -> SearchResult:
    """The SearchResult of a finished search."""
    info = build_info(tree, tt, elapsed, max(1, multipv))
    edges = tree.root_edges()
    result = SearchResult(**vars(info), tree_reused=reused)
    result.root_visits = {m: int(v) for m, v in zip(edges["moves"], edges["visits"])}
    result.policy_indices = edges["index"]
    result.visit_counts = edges["visits"]
    if info.lines:
        best = info.lines[0]
        result.best_move = best.move
        result.pv = list(best.pv)
        result.ponder_move = best.pv[1] if len(best.pv) > 1 else None
        result.q, result.wdl, result.cp = best.q, best.wdl, best.cp
        result.mate, result.mate_plies = best.mate, best.mate_plies
    return result
