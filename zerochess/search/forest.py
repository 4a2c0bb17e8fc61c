"""Many trees, one evaluator: the self-play side of the search.

Self-play keeps hundreds of games going at once so that every network call is a large
batch: ``run_many`` gathers leaves from all trees into one evaluator call per round.
The self-play loop (train/) owns the games; this module owns the search mechanics it
needs: root Dirichlet noise, playout cap randomisation and the visit-count target.

    forest = Forest(evaluator, n_trees=256, params=SearchParams(dirichlet_fraction=0.25))
    nodes, full = zip(*(playout_cap(forest.params, rng) for _ in boards))
    results = forest.search(boards, nodes, noise=full)
    move = forest.trees[0].choose_move(temperature=1.0, rng=rng)
    indices, visits = forest.trees[0].root_visits()      # training target if full[0]
"""

from __future__ import annotations

import time
from typing import Optional, Sequence

import numpy as np

from zerochess.search.mcts import Batch, run_round
from zerochess.search.params import SearchParams
from zerochess.search.results import SearchResult, build_result
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
        run_round(fresh, evaluator, batch, 1)
        rounds += 1
    for tree, wants in zip(trees, noisy):
        if wants:
            p = tree.params
            add_dirichlet_noise(tree, rng, p.dirichlet_alpha, p.dirichlet_fraction)
    active = [t for t in trees if not t.done]
    while active:
        if run_round(active, evaluator, batch, leaves_per_tree) == 0:
            break
        rounds += 1
        active = [t for t in active if not t.done]
    return rounds


class Forest:
    """A fixed set of trees sharing one evaluator, one batch buffer and one transposition
    table (``params.hash_mb``): the search object of a self-play worker."""

    def __init__(self, evaluator, n_trees: int, params: Optional[SearchParams] = None):
        self.params = params if params is not None else SearchParams()
        self.evaluator = evaluator
        self.tt = TranspositionTable(self.params.hash_mb)
        self.trees = [Tree(self.params, self.tt) for _ in range(n_trees)]
        self.batch = Batch(max(1, n_trees) * self.params.minibatch)
        self.rng = np.random.default_rng(self.params.seed)

    def search(self, boards, nodes, noise=None) -> list[SearchResult]:
        """Set each tree's root to its board (reusing subtrees), search them together and
        return one SearchResult per board."""
        if len(boards) > len(self.trees):
            raise ValueError(f"{len(boards)} boards for {len(self.trees)} trees")
        trees = self.trees[:len(boards)]
        reused = [t.set_position(b) for t, b in zip(trees, boards)]
        start = time.perf_counter()
        run_many(trees, self.evaluator, nodes, rng=self.rng, noise=noise, batch=self.batch)
        elapsed = time.perf_counter() - start
        return [build_result(t, self.tt, elapsed, self.params.multipv, r)
                for t, r in zip(trees, reused)]
