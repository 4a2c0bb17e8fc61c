"""The baseline: a straightforward pure-Python PUCT MCTS on python-chess.

Written the way most Python AlphaZero projects write it (and the way the project seed's
section 2.2 sketches it): a node object per position with a ``children`` dict, a copy of
the root board per simulation with the path's moves pushed onto it, ``board.outcome()`` for
terminal positions, a pure-Python encoder for the network input, and one evaluator call
per leaf. It uses the same PUCT formula (growing c(N), Leela's FPU reduction), the same
parameters and the same ``UniformEvaluator`` as zerochess's Cython core, so
``bench_search.py`` compares search machinery only.

Not used by the engine; kept honest rather than tuned (no batching, no solver, no cache).
"""

from __future__ import annotations

import math

import chess
import numpy as np

from zerochess.chess.layout import SEQ_LEN
from zerochess.search.params import SearchParams

PIECE_TOKEN = {(chess.PAWN, True): 1, (chess.KNIGHT, True): 2, (chess.BISHOP, True): 3,
               (chess.ROOK, True): 4, (chess.QUEEN, True): 5, (chess.KING, True): 6}
PIECE_TOKEN.update({(p, False): t + 6 for (p, _), t in list(PIECE_TOKEN.items())})


def encode(board: chess.Board) -> np.ndarray:
    """SEQ_LEN tokens from the side to move's view (the layout of zerochess.chess.encoding)."""
    tokens = np.zeros(SEQ_LEN, dtype=np.uint8)
    flip = 0 if board.turn == chess.WHITE else 56
    for square, piece in board.piece_map().items():
        own = piece.color == board.turn
        tokens[square ^ flip] = PIECE_TOKEN[(piece.piece_type, own)]
    us, them = board.turn, not board.turn
    tokens[64] = 13 if board.turn == chess.WHITE else 14
    tokens[65] = 15 if board.has_kingside_castling_rights(us) else 16
    tokens[66] = 17 if board.has_queenside_castling_rights(us) else 18
    tokens[67] = 19 if board.has_kingside_castling_rights(them) else 20
    tokens[68] = 21 if board.has_queenside_castling_rights(them) else 22
    tokens[69] = 24 + chess.square_file(board.ep_square) if board.has_legal_en_passant() else 23
    tokens[70] = 32 + min(board.halfmove_clock, 99) // 10
    tokens[71] = 42
    return tokens


def move_index(board: chess.Board, move: chess.Move) -> int:
    flip = 0 if board.turn == chess.WHITE else 56
    frm, to = move.from_square ^ flip, move.to_square ^ flip
    if move.promotion in (chess.KNIGHT, chess.BISHOP, chess.ROOK):
        return 4096 + ((frm % 8) * 3 + (to % 8 - frm % 8 + 1)) * 3 + (move.promotion - 2)
    return frm * 64 + to


class Node:
    __slots__ = ("prior", "visits", "value_sum", "children")

    def __init__(self, prior: float):
        self.prior = prior
        self.visits = 0
        self.value_sum = 0.0      # from the side that moved into this node
        self.children: dict[chess.Move, Node] = {}

    def q(self) -> float:
        return self.value_sum / self.visits


class PurePythonMCTS:
    def __init__(self, evaluator, params: SearchParams | None = None):
        self.evaluator = evaluator
        self.params = params or SearchParams()

    def evaluate(self, board: chess.Board) -> tuple[dict[chess.Move, float], float]:
        moves = list(board.legal_moves)
        legal = np.array([move_index(board, m) for m in moves], dtype=np.int32)
        priors, wdl = self.evaluator.evaluate(encode(board)[None, :], legal,
                                              np.array([0, len(moves)], dtype=np.int32))[:2]
        return dict(zip(moves, priors.tolist())), float(wdl[0, 2] - wdl[0, 0])

    def select(self, node: Node) -> tuple[chess.Move, Node]:
        p = self.params
        cpuct = p.cpuct(node.visits) * math.sqrt(max(node.visits - 1, 1))
        visited = sum(c.prior for c in node.children.values() if c.visits)
        fpu = -node.q() - p.fpu_reduction * math.sqrt(visited)
        best, best_score = None, -math.inf
        for move, child in node.children.items():
            q = child.q() if child.visits else fpu
            score = q + cpuct * child.prior / (1 + child.visits)
            if score > best_score:
                best, best_score = (move, child), score
        return best

    def search(self, root_board: chess.Board, nodes: int) -> Node:
        root = Node(1.0)
        for _ in range(nodes):
            board = root_board.copy()
            node, path = root, [root]
            while node.children:
                move, node = self.select(node)
                board.push(move)
                path.append(node)
            outcome = board.outcome()
            if outcome is not None:
                value = -1.0 if outcome.winner is not None else 0.0   # side to move lost
            else:
                priors, value = self.evaluate(board)
                node.children = {m: Node(pr) for m, pr in priors.items()}
            for n in reversed(path):             # value is from the leaf's side to move
                n.visits += 1
                n.value_sum -= value
                value = -value
        return root
