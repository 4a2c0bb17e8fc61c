"""Search parameters: one dataclass, every field documented, defaults in one place.

The PUCT constants are Leela Chess Zero's tuned defaults (``--cpuct``, ``--cpuct-base``,
``--cpuct-factor``, ``--fpu-value``); the Dirichlet values are AlphaZero's for chess; the
playout-cap values follow KataGo's paper (a full search on 25% of moves). The UCI layer
maps its options onto these fields; self-play builds one per game or shares one.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

__all__ = ["SearchParams", "ENGINE_PARAMS"]


@dataclass
class SearchParams:
    """Knobs of the MCTS core. See docs/search.md for the formulas they enter."""

    cpuct_init: float = 1.745
    """c_init in c(N) = c_init + c_factor * ln((N + c_base) / c_base), the PUCT exploration
    constant at the parent's visit count N."""
    cpuct_factor: float = 3.894
    """c_factor: how fast exploration grows with N (AlphaZero used 1.0 with c_init 1.25)."""
    cpuct_base: float = 38739.0
    """c_base: the visit count at which the growth term reaches c_factor * ln 2."""
    fpu_reduction: float = 0.330
    """First-play urgency: an unvisited child is valued at the parent's Q minus
    fpu_reduction * sqrt(sum of the priors of the visited children), as Leela does."""
    fpu_reduction_root: float | None = None
    """FPU reduction at the root; None means the same as fpu_reduction. With noise in
    self-play a smaller value (0.0) lets the noised moves get their first visit."""
    virtual_loss: float = 1.0
    """Each in-flight simulation counts as this many lost visits while its leaf waits for
    the evaluator, so that one batch spreads over different leaves."""
    tactical_prior: float = 0.0
    """Selection's floor under the prior of a tactical move (a capture, a promotion or a
    move that gives check): PUCT's exploration term uses max(prior, tactical_prior) for
    such a move, so a small network's near-zero prior on a capture or check cannot hide it
    from the search, while its value still decides. The priors themselves (reported,
    recorded, noised, and the FPU's visited mass) are unchanged. 0: off (the UCI option
    ``TacticalPrior``)."""
    minibatch: int = 32
    """Leaves gathered per evaluator call (per tree in a Forest)."""
    threads: int = 1
    """Minibatches of one tree at the evaluator at once, each evaluated on its own thread
    (the UCI ``Threads``; Stockfish's and Leela's search threads, here evaluator threads):
    one thread owns the tree and gathers the next batch while the others run the network,
    virtual loss keeping the batches apart. 1: one batch at a time, deterministic. Only
    ``Search`` reads it; self-play's ``Forest`` batches many trees instead."""
    max_collisions: int = 32
    """Stop gathering a batch after this many selections ended at a leaf already waiting
    for the evaluator (a collision); their virtual loss is undone at once."""
    known_endgames: bool = True
    """Value a leaf where one side has a bare king and the other mating material without
    pawns (KQvK, KRvK, KBBvK, KBNvK, ...) by how far the weak king is driven to the edge (to
    the bishop's corner with bishop and knight) and the kings' closeness, as Stockfish's
    KXK and KBNK evaluations do, instead of by the network, which calls all of them won
    alike (zerochess/search/known_endgames.pxd). False: the network's value everywhere."""
    moves_left_max_effect: float = 0.0345
    """Moves-left utility (Lc0's ``MovesLeftMaxEffect``): with a network that predicts the
    plies left (a moves-left head), selection adds to a visited child's score
    clamp(moves_left_slope * (M_child - M_parent), -max, max), signed so that the side
    that is winning prefers the child with fewer plies left and the losing side the one
    with more, and scaled by how decisive the child's Q is (the factors below). 0: off.
    Without plies left from the evaluator (no head, the uniform backend) the search is
    exactly what it is without this. Defaults: Lc0's tuned values (docs/moves-left.md)."""
    moves_left_threshold: float = 0.0
    """|Q| of the parent beyond which the utility applies, and the point where the Q
    scaling starts (Lc0's ``MovesLeftThreshold``): q' = max(0, |q| - t) / (1 - t)."""
    moves_left_slope: float = 0.0027
    """Utility per ply of difference between a child's M and its parent's (Lc0's
    ``MovesLeftSlope``): 0.0027 makes 10 plies worth 0.027 of Q before the Q scaling."""
    moves_left_constant_factor: float = 0.0
    """Q scaling: a + b |q'| + c q'^2, this is a (Lc0's ``MovesLeftConstantFactor``)."""
    moves_left_scaled_factor: float = 1.6521
    """Q scaling's b (Lc0's ``MovesLeftScaledFactor``)."""
    moves_left_quadratic_factor: float = -0.6521
    """Q scaling's c (Lc0's ``MovesLeftQuadraticFactor``); with b it gives 1 at |q'| = 1
    and fades the utility towards equal positions."""
    dirichlet_alpha: float = 0.3
    """Dirichlet concentration of the root noise (AlphaZero: 0.3 for chess)."""
    dirichlet_fraction: float = 0.0
    """Share of root prior replaced by noise; 0 disables noise (play), 0.25 for self-play."""
    hash_mb: int = 16
    """Memory of the transposition table (cached priors + WDL), the UCI ``Hash`` option."""
    tree_mb: int = 512
    """Upper bound on the tree's node and edge arrays; the search stops when it is full."""
    seed: int = 0
    """Seed of the random choices (noise, temperature sampling): same seed, same result."""
    multipv: int = 1
    """Number of root moves reported with their own principal variation."""
    full_search_nodes: int = 800
    """Playout cap randomisation (KataGo): nodes of a full search, whose root visits become
    a training target."""
    fast_search_nodes: int = 160
    """Playout cap randomisation: nodes of a fast search (no noise, not recorded)."""
    full_search_probability: float = 0.25
    """Playout cap randomisation: chance that a move gets a full search; 1.0 disables."""

    def __post_init__(self) -> None:
        for name in ("cpuct_init", "cpuct_factor", "virtual_loss",
                     "dirichlet_alpha", "moves_left_max_effect", "moves_left_slope"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if not 0.0 <= self.moves_left_threshold < 1.0:
            raise ValueError(f"moves_left_threshold must be in [0, 1), got {self.moves_left_threshold!r}")
        # FPU may be negative (an unvisited move looks better than its parent: optimistic
        # first-play urgency, which the UCI option's range -10 .. 10 offers to a tuner).
        if self.fpu_reduction_root is not None and not math.isfinite(self.fpu_reduction_root):
            raise ValueError(f"fpu_reduction_root must be a finite number, got {self.fpu_reduction_root!r}")
        for name in ("moves_left_constant_factor", "moves_left_scaled_factor",
                     "moves_left_quadratic_factor", "fpu_reduction"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, got {getattr(self, name)!r}")
        if not self.cpuct_base > 0:
            raise ValueError(f"cpuct_base must be > 0, got {self.cpuct_base!r}")
        if not 0.0 <= self.tactical_prior <= 1.0:
            raise ValueError(f"tactical_prior must be in [0, 1], got {self.tactical_prior!r}")
        if not 0.0 <= self.dirichlet_fraction <= 1.0:
            raise ValueError(f"dirichlet_fraction must be in [0, 1], got {self.dirichlet_fraction!r}")
        if not 0.0 <= self.full_search_probability <= 1.0:
            raise ValueError("full_search_probability must be in [0, 1]")
        for name in ("minibatch", "threads", "max_collisions", "hash_mb", "tree_mb", "multipv",
                     "full_search_nodes", "fast_search_nodes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")

    @property
    def root_fpu_reduction(self) -> float:
        return self.fpu_reduction if self.fpu_reduction_root is None else self.fpu_reduction_root

    def cpuct(self, n: float) -> float:
        """The exploration constant at a parent with n visits (the formula the core uses)."""
        return self.cpuct_init + self.cpuct_factor * math.log((n + self.cpuct_base) / self.cpuct_base)

    def moves_left_utility(self, child_m: float, parent_m: float, q: float) -> float:
        """The moves-left term selection adds to a visited or proven child's score (the
        formula the core uses, mcts._m_utility): ``q`` is the child's Q from the chooser's
        side, the M's are plies left from each position."""
        m = min(max(self.moves_left_slope * (child_m - parent_m), -self.moves_left_max_effect),
                self.moves_left_max_effect)
        if q > 0.0:
            m = -m
        a, t = abs(q), self.moves_left_threshold
        if t > 0.0:
            a = (a - t) / (1.0 - t) if a > t else 0.0
        return m * (self.moves_left_constant_factor + self.moves_left_scaled_factor * a
                    + self.moves_left_quadratic_factor * a * a)

    def replace(self, **changes) -> "SearchParams":
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)


#: The engine's search, the one preset that the UCI engine, ``zerochess bench``, the
#: benchmarks and the matches all play with: the library's defaults with a larger cache,
#: because a GUI game keeps one tree and its cache for many moves (self-play trees keep
#: 16 MB), and small minibatches: at a clock on a CPU the engine searches a few hundred to a
#: few thousand nodes per move, and 32 leaves under virtual loss spread a search that small
#: too thin. MinibatchSize 8 beat 32 by 31/2/7 (+241 +- 120 Elo) at 10+0.1 with the shipped
#: network; on a GPU a larger value pays.
ENGINE_PARAMS = SearchParams(hash_mb=64, minibatch=8)
