"""Where a network's illegal probability mass sits, on held-out phase-1 samples.

Per sample M = raw-softmax mass on illegal moves; reported as mean / median / p90, by the
position's number of legal moves, and by the kind of illegal move (from a square without an
own piece, onto an own piece, an own piece to a square it could never reach on an empty board,
an own piece to a square its geometry allows but a blocker, pin, check or missing capture
target forbids, and underpromotions), by moving piece.

    python experiments/illegal_mass_breakdown.py runs/phase1b-tiny/best.pt --data runs/data-phase1b
"""

from __future__ import annotations

import argparse

import chess
import numpy as np
import torch

from zerochess.neural.checkpoint import load_checkpoint
from zerochess.train.data.dataset import load_split


def geometry_table() -> np.ndarray:
    """(7, 64, 64) bool: own piece token t (1..6 = P N B R Q K) on square f could reach
    square s on an empty board, in the mover's frame (pawns move up the board)."""
    geo = np.zeros((7, 64, 64), bool)
    kinds = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
    for f in range(64):
        for t, kind in enumerate(kinds, 1):
            board = chess.Board(None)
            board.set_piece_at(f, chess.Piece(kind, chess.WHITE))
            for s in range(64):
                if kind == chess.PAWN:
                    (r, c), (r2, c2) = divmod(f, 8), divmod(s, 8)
                    geo[t, f, s] = (r2 == r + 1 and abs(c2 - c) <= 1) or (r == 1 and r2 == 3 and c2 == c)
                else:
                    geo[t, f, s] = bool(board.attacks(f) & chess.BB_SQUARES[s]) or (
                        kind == chess.KING and f == 4 and s in (2, 6))  # castling
    return geo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoints", nargs="+")
    ap.add_argument("--data", required=True)
    ap.add_argument("--samples", type=int, default=10000, help="first N validation samples")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    val = load_split(args.data, "val", verify=False)
    b = val.gather(np.arange(min(args.samples, len(val))))
    n_legal = b.legal.sum(1)
    squares = b.tokens[:, :64]
    own = (squares >= 1) & (squares <= 6)  # own P N B R Q K tokens
    frm, to = np.arange(4096) // 64, np.arange(4096) % 64
    geo = geometry_table()
    for path in args.checkpoints:
        model, _ = load_checkpoint(path)
        masses = []
        with torch.inference_mode():
            for s in range(0, len(b.tokens), 500):
                logits, _ = model(torch.from_numpy(b.tokens[s:s + 500]))
                p = torch.softmax(logits.float(), -1).numpy()
                masses.append(p * ~b.legal[s:s + 500])
        ill = np.concatenate(masses)  # (N, 4168) illegal probabilities
        m = ill.sum(1)
        print(f"{path}: mean M {m.mean():.4f}  median {np.median(m):.4f}  p90 "
              f"{np.quantile(m, .9):.4f}  share of samples under 1%: {(m < .01).mean():.3f}")
        for lo, hi in ((1, 10), (10, 20), (20, 30), (30, 40), (40, 300)):
            k = (n_legal >= lo) & (n_legal < hi)
            print(f"  {lo:>2}-{hi:<3} legal moves: {k.sum():6d} samples, mean M {m[k].mean():.4f}")
        a = ill[:, :4096]
        from_own = own[:, frm]
        print(f"  from a square without an own piece: {(a * ~from_own).sum(1).mean():.5f}")
        print(f"  onto an own piece:                  {(a * (from_own & own[:, to])).sum(1).mean():.5f}")
        rules = from_own & ~own[:, to]
        piece = np.where(own, squares, 0)[:, frm]  # (N, 4096) own piece token on the from-square
        reach = geo[piece, frm[None, :], to[None, :]]
        for label, kind in (("never reachable by that piece", rules & ~reach),
                            ("reachable, but blocked / pinned / in check", rules & reach)):
            by_piece = "  ".join(f"{name} {(a * (kind & (piece == t))).sum(1).mean():.4f}"
                                 for t, name in enumerate("PNBRQK", 1))
            print(f"  own piece, {label}: {(a * kind).sum(1).mean():.5f}  ({by_piece})")
        print(f"  underpromotions: {ill[:, 4096:].sum(1).mean():.5f}")


if __name__ == "__main__":
    main()
