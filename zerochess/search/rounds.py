"""A round of the search driven from Python: gather leaves, evaluate them, back them up.

The core's three steps (``zerochess.search.mcts``) are ``gather`` (trees -> batch, nogil),
``evaluate_batch`` (the evaluator only: any thread, no tree touched) and ``apply_batch``
(batch -> trees, nogil). ``back_up`` is the last two with the rule every caller needs: an
evaluation that fails abandons the batch (no visit added, no virtual loss and no PENDING
leaf left) before the exception goes on. ``unlocked`` is held around the evaluation only:
the Threads search (``parallel.py``) releases its tree lock there, so that several batches
of one tree are at the network at once. ``play_round`` is one whole round over many trees,
as self-play's forest (``forest.py``) runs them.
"""

from __future__ import annotations

from contextlib import nullcontext

from zerochess.search.mcts import abandon_batch, apply_batch, evaluate_batch, gather

__all__ = ["back_up", "play_round"]


def back_up(batch, evaluator, unlocked=None) -> int:
    """Evaluate the gathered ``batch``'s rows (inside the context manager ``unlocked``, if
    given) and back every leaf up; returns the leaves backed up. If the evaluation raises,
    the batch is abandoned first."""
    priors = wdl = moves_left = None   # no rows: every value known (terminal, cached)
    try:
        if batch.rows:
            with unlocked if unlocked is not None else nullcontext():
                priors, wdl, moves_left = evaluate_batch(evaluator, batch)
    except BaseException:
        abandon_batch(batch)
        raise
    return apply_batch(batch, priors, wdl, moves_left)


def play_round(trees: list, evaluator, batch, leaves_per_tree: int = 0, fill_to: int = 0) -> int:
    """One batch over ``trees``: gather (``mcts.gather``'s arguments), evaluate, back up;
    returns the leaves backed up, 0 when no tree had anything left to do (no evaluation)."""
    if gather(trees, batch, leaves_per_tree, fill_to) == 0:
        return 0
    return back_up(batch, evaluator)
