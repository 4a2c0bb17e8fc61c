"""Evaluators: the search's only view of a neural network.

Like Leela Chess Zero's backends, an evaluator takes a whole batch of encoded positions at
once and answers with priors over exactly the legal moves and a WDL triple per position.
The MCTS core fills a uint8 token buffer and a CSR list of legal-move policy indices and
calls ``evaluate`` once per batch; it never knows which backend it talks to.

ABI (fixed, called from Cython)::

    priors, wdl = evaluator.evaluate(tokens, legal_idx, offsets)
    priors, wdl, moves_left = evaluator.evaluate(tokens, legal_idx, offsets)  # or three

    tokens     np.uint8  [B, SEQ_LEN], C-contiguous
    legal_idx  np.int32  [N]     policy indices of the legal moves of all B positions
    offsets    np.int32  [B + 1] position b's moves are legal_idx[offsets[b]:offsets[b+1]]
    priors     np.float32 [N]    softmax over each position's legal moves, aligned with legal_idx
    wdl        np.float32 [B, 3] (loss, draw, win) from the side to move; rows sum to 1
    moves_left np.float32 [B]    optional third output: the plies the game has left from
                                 each position (a network's moves-left head, >= 0); a
                                 backend without one returns two arrays, and every caller
                                 accepts either (the search then ignores game length)

A position with zero legal moves never reaches an evaluator (the search scores it itself).

This module is the ABI and the weightless backend only, without torch: the torch backend is
``zerochess.neural.torch_evaluator`` and ``zerochess.neural.backends.make_evaluator`` picks a
backend from a spec. Imports run one way (backends -> api -> torch_evaluator -> evaluator).
"""

from __future__ import annotations

import logging
from typing import Protocol, runtime_checkable

import numpy as np

logger = logging.getLogger(__name__)

__all__ = ["Evaluator", "UniformEvaluator", "check_batch", "legal_flat_index", "legal_softmax",
           "gather_index", "empty_outputs"]


@runtime_checkable
class Evaluator(Protocol):
    """What the search needs from a backend: one call per batch, numpy in, numpy out."""

    #: Largest batch the backend is tuned for; the search may send smaller ones.
    max_batch: int

    def evaluate(
        self, tokens: np.ndarray, legal_idx: np.ndarray, offsets: np.ndarray
    ) -> tuple[np.ndarray, ...]:
        """Return ``(priors float32 [N], wdl float32 [B, 3])`` for the batch, optionally with
        ``moves_left float32 [B]`` third (see module doc)."""
        ...


def check_batch(tokens: np.ndarray, legal_idx: np.ndarray, offsets: np.ndarray) -> int:
    """Validate the ABI's arrays cheaply and return B.

    The check is O(1) apart from numpy's dtype/shape attributes, so it stays on the hot path:
    a malformed buffer from a buggy caller should fail loudly here, not produce silent garbage.
    """
    if tokens.ndim != 2 or tokens.dtype != np.uint8:
        raise ValueError(f"tokens must be uint8 [B, T], got {tokens.dtype} {tokens.shape}")
    b = tokens.shape[0]
    if offsets.dtype != np.int32 or offsets.shape != (b + 1,):
        raise ValueError(f"offsets must be int32 [{b + 1}], got {offsets.dtype} {offsets.shape}")
    if legal_idx.dtype != np.int32 or legal_idx.ndim != 1:
        raise ValueError(f"legal_idx must be int32 [N], got {legal_idx.dtype} {legal_idx.shape}")
    if b and (offsets[0] != 0 or offsets[-1] != legal_idx.shape[0]):
        raise ValueError(
            f"offsets must run from 0 to len(legal_idx)={legal_idx.shape[0]}, "
            f"got {offsets[0]}..{offsets[-1]}"
        )
    return b


def legal_flat_index(legal_idx: np.ndarray, offsets: np.ndarray, policy_size: int) -> np.ndarray:
    """``row * policy_size + move`` for every legal move: its place in the flattened
    ``[B, policy_size]`` logits, so one gather picks all N legal logits of a batch.

    Raises ValueError for a position without legal moves (the search never sends one).
    """
    counts = np.diff(offsets)  # (B,)
    if counts.size and counts.min() <= 0:
        raise ValueError("every position must have at least one legal move")
    rows = np.repeat(np.arange(counts.size, dtype=np.int64), counts)  # (N,) position of each move
    return rows * policy_size + legal_idx  # (N,) int64


def gather_index(tokens: np.ndarray, legal_idx: np.ndarray, offsets: np.ndarray,
                 policy_size: int) -> np.ndarray | None:
    """The start of every logit backend's ``evaluate``: validate the batch (``check_batch``)
    and return ``legal_flat_index``; None for an empty batch (answer ``empty_outputs()``)."""
    if check_batch(tokens, legal_idx, offsets) == 0:
        return None
    return legal_flat_index(legal_idx, offsets, policy_size)


def empty_outputs(moves_left: bool = False) -> tuple[np.ndarray, ...]:
    """``(priors, wdl)`` of an empty batch, and ``moves_left`` for a backend that has it."""
    if moves_left:
        return np.zeros(0, np.float32), np.zeros((0, 3), np.float32), np.zeros(0, np.float32)
    return np.zeros(0, np.float32), np.zeros((0, 3), np.float32)


def legal_softmax(picked: np.ndarray, offsets: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Priors float32 [N]: softmax(logit / temperature) over each position's legal moves.

    ``picked`` holds the legal moves' logits in CSR order (``legal_idx``'s); every backend
    that produces logits normalises them here, so all of them treat temperature and
    numerics alike.
    """
    picked = np.asarray(picked, dtype=np.float32)
    if temperature != 1.0:
        picked = picked / np.float32(temperature)
    starts, counts = offsets[:-1], np.diff(offsets)
    # Segment softmax over CSR runs (no empty runs, so reduceat is exact).
    e = np.exp(picked - np.repeat(np.maximum.reduceat(picked, starts), counts))  # (N,)
    priors = e / np.repeat(np.add.reduceat(e, starts), counts)
    return priors.astype(np.float32, copy=False)


class UniformEvaluator:
    """Weightless backend: uniform priors over the legal moves and value 0 (all draw).

    Used by tests and by search-speed benchmarks, so that the search can run and be timed
    without torch or a network, like Leela's ``trivial``/``random`` backends. WDL is
    (0, 1, 0): value P(win) - P(loss) = 0 and a confident draw, which keeps any WDL-based
    search logic (e.g. draw scoring) well defined.
    """

    def __init__(self, max_batch: int = 256) -> None:
        self.max_batch = max_batch

    def evaluate(
        self, tokens: np.ndarray, legal_idx: np.ndarray, offsets: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        b = check_batch(tokens, legal_idx, offsets)
        counts = np.diff(offsets)  # (B,)
        if b and counts.min() <= 0:
            raise ValueError("every position must have at least one legal move")
        priors = np.repeat((1.0 / counts).astype(np.float32), counts)  # (N,)
        wdl = np.zeros((b, 3), dtype=np.float32)
        wdl[:, 1] = 1.0
        return priors, wdl

    def __repr__(self) -> str:
        return f"UniformEvaluator(max_batch={self.max_batch})"
