"""Many trees, one evaluator: the self-play side of the search.

Self-play keeps hundreds of games going at once so that every network call is a large
batch. A ``Forest`` is one network's share of that: its evaluator (metered: calls,
positions, seconds), its transposition table (``params.hash_mb``), one batch buffer and a
tree per game slot; every round gathers leaves from many of its trees into one evaluator
call. The self-play actor (train/) owns the games; this module owns the search mechanics
they need: root Dirichlet noise, playout cap randomisation and the visit-count target.

Two ways to drive it. Whole searches, all trees together until each has its playouts::

    forest = Forest(evaluator, n_trees=256, params=SearchParams(dirichlet_fraction=0.25))
    nodes, full = zip(*(playout_cap(forest.params, rng) for _ in boards))
    results = forest.search(boards, nodes, noise=full)          # one SearchResult per board

Or round by round, each tree's search started and finished on its own schedule (the
actor's asynchronous games: a finished search plays its move and starts the next one
while the other trees go on)::

    forest.start(i, board, nodes, noise=True)
    while not forest.settle(i):          # root noise goes in once the root is expanded
        forest.step([i, j, k], leaves_per_tree=8)
    move = forest.choose_move(i, temperature=1.0)
    indices, visits = forest.root_visits(i)    # the training target of a full search

Randomness (noise, move choice) draws from ``forest.rng``; forests given one generator
draw from it in the order they are called, so games are reproducible from one seed.
"""

from __future__ import annotations

import time
from typing import Optional, Sequence

import numpy as np

from zerochess.search.mcts import Batch
from zerochess.search.params import SearchParams
from zerochess.search.results import SearchResult, build_result
from zerochess.search.rounds import play_round
from zerochess.search.tree import Tree
from zerochess.search.tt import TranspositionTable

__all__ = ["Forest", "run_many", "playout_cap", "add_dirichlet_noise"]


def add_dirichlet_noise(tree: Tree, rng: np.random.Generator, alpha: float, fraction: float) -> None:
    """Mix Dir(alpha) noise into the root priors: P' = (1 - fraction) P + fraction * eta.

    AlphaZero's exploration at the root; applied once per root (``tree.root_noised``)."""
    if fraction <= 0 or tree.root_noised or not tree.root_expanded:
        return
    priors = tree.root_edges()["prior"].astype(np.float64)
    if len(priors) > 1:
        eta = rng.dirichlet(np.full(len(priors), alpha))
        tree.set_root_priors((1.0 - fraction) * priors + fraction * eta)
    tree.root_noised = True


def playout_cap(params: SearchParams, rng: np.random.Generator) -> tuple[int, bool]:
    """KataGo's playout cap randomisation: ``(nodes, full)`` for the next move.

    With probability ``full_search_probability`` a full search (``full_search_nodes``, with
    noise, recorded as a training target), otherwise a fast one (``fast_search_nodes``,
    no noise, not recorded): more games per hour without diluting the policy targets."""
    if rng.random() < params.full_search_probability:
        return params.full_search_nodes, True
    return params.fast_search_nodes, False


def run_many(trees: Sequence[Tree], evaluator, nodes, *, rng: Optional[np.random.Generator] = None,
             noise=None, batch: Optional[Batch] = None, leaves_per_tree: int = 0) -> int:
    """Search every tree (root set by ``Tree.set_position``) for its playouts, sharing
    evaluator calls. Returns the number of rounds (evaluator calls at most).

    nodes: an int for all trees or one per tree. noise: None (each tree's
    ``params.dirichlet_fraction`` decides), a bool, or one bool per tree: whether to mix
    Dirichlet noise into the root (needs ``rng``). leaves_per_tree: leaves each tree adds
    to a round (0: its ``params.minibatch``).
    """
    trees = list(trees)
    counts = [int(nodes)] * len(trees) if np.isscalar(nodes) else [int(n) for n in nodes]
    if len(counts) != len(trees):
        raise ValueError(f"{len(counts)} node counts for {len(trees)} trees")
    if noise is None:
        noisy = [t.params.dirichlet_fraction > 0 for t in trees]
    elif isinstance(noise, (bool, np.bool_)):
        noisy = [bool(noise)] * len(trees)
    else:
        noisy = [bool(x) for x in noise]
    if any(noisy) and rng is None:
        raise ValueError("root noise needs an rng")
    batch = batch if batch is not None else Batch()
    for tree, n in zip(trees, counts):
        tree.begin(n)
    rounds = 0
    # Expand the roots first, so that noise is mixed in before the search proper.
    fresh = [t for t in trees if not t.root_expanded and not t.done]
    if fresh:
        play_round(fresh, evaluator, batch, 1)
        rounds += 1
    for tree, wants in zip(trees, noisy):
        if wants:
            p = tree.params
            add_dirichlet_noise(tree, rng, p.dirichlet_alpha, p.dirichlet_fraction)
    active = [t for t in trees if not t.done]
    while active:
        if play_round(active, evaluator, batch, leaves_per_tree) == 0:
            break
        rounds += 1
        active = [t for t in active if not t.done]
    return rounds


class _Metered:
    """The evaluator, counting its calls, positions and seconds (batch fill and the
    search / network time split of self-play come from these)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls = 0
        self.positions = 0
        self.seconds = 0.0

    def evaluate(self, tokens, legal_idx, offsets):
        t0 = time.perf_counter()
        out = self.inner.evaluate(tokens, legal_idx, offsets)
        self.seconds += time.perf_counter() - t0
        self.calls += 1
        self.positions += len(tokens)
        return out


class Forest:
    """Trees of one network sharing its evaluator, one batch buffer and one transposition
    table (``params.hash_mb``): the search object of a self-play worker, one per network it
    plays with. Tree ``i`` (0 <= i < n_trees) is made when first used and kept between
    searches (``set_position`` reuses its subtree) until ``drop(i)``."""

    def __init__(self, evaluator, n_trees: int, params: Optional[SearchParams] = None,
                 rng: Optional[np.random.Generator] = None):
        self.params = params if params is not None else SearchParams()
        self.evaluator = evaluator
        self._metered = _Metered(evaluator)
        self.tt = TranspositionTable(self.params.hash_mb)
        self._trees: list[Optional[Tree]] = [None] * n_trees
        self.batch = Batch(max(1, n_trees) * self.params.minibatch)
        self.rng = rng if rng is not None else np.random.default_rng(self.params.seed)
        self._noise_pending: set[int] = set()   # trees whose root noise waits for the root
        self._stuck: set[int] = set()           # trees whose last round found nothing to do

    # -- the trees -------------------------------------------------------------------
    @property
    def n_trees(self) -> int:
        return len(self._trees)

    def tree(self, i: int) -> Tree:
        """Tree ``i`` (made now if it is new or was dropped)."""
        if self._trees[i] is None:
            self._trees[i] = Tree(self.params, self.tt)
        return self._trees[i]

    @property
    def trees(self) -> list[Tree]:
        return [self.tree(i) for i in range(self.n_trees)]

    def drop(self, i: int) -> None:
        """Forget tree ``i`` (its memory goes): its next search starts a fresh tree."""
        self._trees[i] = None
        self._noise_pending.discard(i)
        self._stuck.discard(i)

    def clear(self) -> None:
        """Forget every tree (the transposition table keeps the network's answers)."""
        for i in range(self.n_trees):
            self.drop(i)

    # -- the evaluator's figures -----------------------------------------------------
    @property
    def evaluations(self) -> int:
        """Evaluator calls so far."""
        return self._metered.calls

    @property
    def positions(self) -> int:
        """Positions the evaluator was given so far."""
        return self._metered.positions

    @property
    def network_seconds(self) -> float:
        """Seconds spent inside the evaluator so far."""
        return self._metered.seconds

    # -- whole searches --------------------------------------------------------------
    def run(self, ids: Sequence[int], boards, nodes, noise=None, leaves_per_tree: int = 0) -> int:
        """Set tree ``ids[k]``'s root to ``boards[k]`` (reusing its subtree) and search them
        together until each has its playouts (``run_many``'s ``nodes`` and ``noise``);
        returns the rounds it took."""
        trees = [self.tree(i) for i in ids]
        for tree, board in zip(trees, boards):
            tree.set_position(board)
        return run_many(trees, self._metered, nodes, rng=self.rng, noise=noise, batch=self.batch,
                        leaves_per_tree=leaves_per_tree)

    def search(self, boards, nodes, noise=None) -> list[SearchResult]:
        """Search ``boards`` on trees 0, 1, ... together (``run``) and return one
        SearchResult per board."""
        if len(boards) > self.n_trees:
            raise ValueError(f"{len(boards)} boards for {self.n_trees} trees")
        ids = range(len(boards))
        reused = [self.tree(i).set_position(b) for i, b in zip(ids, boards)]
        start = time.perf_counter()
        self.run(ids, boards, nodes, noise)
        elapsed = time.perf_counter() - start
        return [build_result(self.tree(i), self.tt, elapsed, self.params.multipv, r)
                for i, r in zip(ids, reused)]

    # -- round by round --------------------------------------------------------------
    def start(self, i: int, board, nodes: int, noise: bool = False) -> bool:
        """Begin tree ``i``'s search of ``board`` for ``nodes`` playouts (its subtree kept
        when ``board`` extends its last root: returns True then). With ``noise``, root
        Dirichlet noise goes in now if the root is expanded, else once it is (``settle``)."""
        tree = self.tree(i)
        reused = tree.set_position(board)
        tree.begin(nodes)
        self._stuck.discard(i)
        self._noise_pending.discard(i)
        if noise:
            if tree.root_expanded:       # a reused subtree: noise before the search proper
                self._add_noise(tree)
            else:
                self._noise_pending.add(i)
        return reused

    def step(self, ids: Sequence[int], leaves_per_tree: int = 0, fill_to: int = 0) -> int:
        """One evaluator call for the trees ``ids`` (``mcts.gather``'s ``leaves_per_tree``
        and ``fill_to``); returns the leaves backed up. When it is 0 no tree in ``ids`` had
        anything left to do: each of their searches counts as over (``settle``)."""
        leaves = play_round([self.tree(i) for i in ids], self._metered, self.batch,
                            leaves_per_tree, fill_to)
        if leaves == 0:
            self._stuck.update(ids)
        return leaves

    def settle(self, i: int) -> bool:
        """After a round: mix the root noise of tree ``i``'s search in if it waits for a
        root just expanded, and say whether the search is over (its playouts done, the
        tree full, the root decided, or nothing left to expand)."""
        tree = self.tree(i)
        if i in self._noise_pending and tree.root_expanded:
            self._add_noise(tree)
            self._noise_pending.discard(i)
        if tree.done or i in self._stuck:
            self._stuck.discard(i)
            return True
        return False

    def _add_noise(self, tree: Tree) -> None:
        p = self.params
        add_dirichlet_noise(tree, self.rng, p.dirichlet_alpha, p.dirichlet_fraction)

    # -- what a search left ----------------------------------------------------------
    def root_wdl(self, i: int):
        """Tree ``i``'s root value ``(q, (loss, draw, win))`` from its side to move, None
        before any playout."""
        return self.tree(i).root_wdl()

    def root_visits(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Tree ``i``'s root moves (policy indices) and their visit counts."""
        return self.tree(i).root_visits()

    def choose_move(self, i: int, temperature: float) -> Optional[str]:
        """A move of tree ``i``'s root (UCI) drawn by visits ** (1 / temperature) from
        ``self.rng`` (0: the best move), None without a legal move."""
        return self.tree(i).choose_move(temperature, self.rng)
