"""Evaluators and oracles shared by the search tests."""

import chess
import numpy as np

from zerochess.neural.evaluator import UniformEvaluator


def mates_within(board: chess.Board, n: int) -> bool:
    """python-chess oracle: the side to move mates in at most n moves."""
    for move in list(board.legal_moves):
        board.push(move)
        try:
            if board.is_checkmate():
                return True
            if n > 1 and not board.is_game_over() and all_replies_mated(board, n - 1):
                return True
        finally:
            board.pop()
    return False


def all_replies_mated(board: chess.Board, n: int) -> bool:
    for reply in list(board.legal_moves):
        board.push(reply)
        try:
            if not mates_within(board, n):
                return False
        finally:
            board.pop()
    return True


class CountingEvaluator:
    """Wraps an evaluator; records every batch size and position count."""

    def __init__(self, inner=None):
        self.inner = inner if inner is not None else UniformEvaluator()
        self.max_batch = 256
        self.batches = []

    def evaluate(self, tokens, legal_idx, offsets):
        self.batches.append(tokens.shape[0])
        return self.inner.evaluate(tokens, legal_idx, offsets)


class SkewedEvaluator:
    """Deterministic non-uniform priors (a function of the policy index) and a value that
    depends on the position, so that cached and fresh answers can be told apart."""

    max_batch = 256

    def evaluate(self, tokens, legal_idx, offsets):
        logits = ((legal_idx.astype(np.int64) * 7919) % 13).astype(np.float32) / 4
        priors = np.empty(len(legal_idx), np.float32)
        for b in range(len(offsets) - 1):
            x = np.exp(logits[offsets[b]:offsets[b + 1]])
            priors[offsets[b]:offsets[b + 1]] = x / x.sum()
        s = (tokens[:, :64].astype(np.int64).sum(axis=1) % 10) / 20.0      # 0 .. 0.45
        wdl = np.stack([0.3 - s / 2, 0.4 + np.zeros_like(s), 0.3 + s / 2], axis=1)
        return priors, wdl.astype(np.float32)


class WhiteWinsEvaluator:
    """Uniform priors; White always wins: WDL (0,0,1) with White to move, (1,0,0) with
    Black to move (token 64 is 13 for White)."""

    max_batch = 256

    def evaluate(self, tokens, legal_idx, offsets):
        priors, _ = UniformEvaluator().evaluate(tokens, legal_idx, offsets)
        white = tokens[:, 64] == 13
        wdl = np.zeros((tokens.shape[0], 3), np.float32)
        wdl[white, 2] = 1.0
        wdl[~white, 0] = 1.0
        return priors, wdl


class FailingEvaluator:
    """Answers `good` calls, then raises."""

    max_batch = 256

    def __init__(self, good: int):
        self.good = good

    def evaluate(self, tokens, legal_idx, offsets):
        if self.good <= 0:
            raise RuntimeError("backend failure")
        self.good -= 1
        return UniformEvaluator().evaluate(tokens, legal_idx, offsets)


def one_full_cache_bucket():
    """A one-bucket transposition table holding four positions (a2a3 .. d2d3, stored oldest
    first) and a fifth position (e2e3) whose store must evict one of them."""
    from zerochess.chess.board import Board
    from zerochess.search.tt import TranspositionTable

    tt = TranspositionTable(1e-6)                    # one bucket of four entries
    boards = []
    for move in ("a2a3", "b2b3", "c2c3", "d2d3", "e2e3"):
        b = Board()
        b.push_uci(move)
        boards.append(b)
    for b in boards[:4]:
        n = len(b.legal_moves())
        tt.store(b, np.full(n, 1.0 / n, np.float32), np.array([0.1, 0.2, 0.7], np.float32))
    return tt, boards
