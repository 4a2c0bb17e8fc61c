"""Where a network's illegal probability mass sits, on held-out phase-1 samples.

Per sample M = raw-softmax mass on illegal moves; reported as mean / median / p90, by the
position's number of legal moves, and by the kind of illegal move (from a square without an
own piece, onto an own piece, an own piece to a free or enemy square that its rules or a pin
or check forbid, and underpromotions), with the moving piece for the last kind.

    python experiments/illegal_mass_breakdown.py runs/phase1b-tiny/best.pt --data runs/data-phase1b
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from zerochess.engine.checkpoint import load_checkpoint
from zerochess.train.dataset import load_split


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
        by_piece = "  ".join(f"{name} {(a * ((squares[:, frm] == t) & rules)).sum(1).mean():.4f}"
                             for t, name in enumerate("PNBRQK", 1))
        print(f"  own piece, forbidden by its rules, a pin or check: "
              f"{(a * rules).sum(1).mean():.5f}  ({by_piece})")
        print(f"  underpromotions: {ill[:, 4096:].sum(1).mean():.5f}")


if __name__ == "__main__":
    main()
