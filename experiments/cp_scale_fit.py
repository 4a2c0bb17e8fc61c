"""Fit the engine's centipawns to Stockfish 15.1's scale (zerochess/search/results.py).

Stockfish's labels carry both its centipawns and its WDL (``UCI_ShowWDL``), so the fit
needs no games: on a set made by ``zerochess train label`` it finds the k of

    cp = k * ln(E / (1 - E)),   E = W + D / 2 = (1 + Q) / 2

that best reproduces Stockfish's expected score E from its centipawns, E = 1 / (1 + exp(-cp
/ k)), by least squares in E (the direction in which the labels are well conditioned: from
about +200 cp on Stockfish's WDL says W = 1.000, which fixes no slope, while a fit in
centipawns would hang on how such a label's logit is clipped). Mates are left out, and
|cp| above --max-cp. Then it shows what the fitted mapping makes of the shipped network's
own expected score for the same positions (what the engine reports), beside Leela Chess
Zero's mapping, by Stockfish's centipawns.

    zerochess train label --out DATA --depth 8 --multipv 1 --games 60 --workers 1 \\
        --openings books/balanced_2moves.epd
    python experiments/cp_scale_fit.py DATA [--network default|zero|PATH|none]
"""

from __future__ import annotations

import argparse

import numpy as np

from zerochess.search.results import CP_PER_LOGIT, lc0_cp
from zerochess.train.data.dataset import open_shard, split_names

MATE_CP = 32000 - 500          # teacher_cp beyond this is a mate (format.py: +-(32000 - n))
BINS = [(-30, 30), (30, 70), (70, 130), (130, 200), (200, 300), (300, 500), (500, 1000)]


def load(data: str) -> dict[str, np.ndarray]:
    """Stockfish's cp and (loss, draw, win), the tokens and legal moves of every sample."""
    shards = [open_shard(f"{data}/{name}") for split in ("train", "val")
              for name in split_names(data, split)]
    out = {"cp": np.concatenate([s["teacher_cp"] for s in shards]).astype(float),
           "wdl": np.concatenate([s["wdl"] for s in shards]).astype(float),
           "tokens": np.concatenate([s["tokens"] for s in shards])}
    legal, offsets = [], [0]
    for s in shards:
        o, idx = s["legal_offsets"], s["legal_indices"]
        for i in range(len(s)):
            legal.append(idx[o[i]:o[i + 1]])
            offsets.append(offsets[-1] + o[i + 1] - o[i])
    out["legal"] = np.concatenate(legal).astype(np.int32)
    out["offsets"] = np.asarray(offsets, np.int64)
    return out


def fit_k(cp: np.ndarray, e: np.ndarray) -> tuple[float, float]:
    """(k, rms error in E) minimising sum (e - 1 / (1 + exp(-cp / k)))^2: a fine grid, then
    golden-section search around its best point (numpy only)."""
    def loss(k: float) -> float:
        return float(np.mean((e - 1.0 / (1.0 + np.exp(-cp / k))) ** 2))
    grid = np.arange(10.0, 400.0, 1.0)
    best = grid[int(np.argmin([loss(k) for k in grid]))]
    lo, hi = best - 1.0, best + 1.0
    golden = (np.sqrt(5) - 1) / 2
    for _ in range(60):
        a, b = hi - golden * (hi - lo), lo + golden * (hi - lo)
        lo, hi = (lo, b) if loss(a) < loss(b) else (a, hi)
    k = (lo + hi) / 2
    return k, float(np.sqrt(loss(k)))


def network_e(data: dict, spec: str) -> np.ndarray:
    """The network's expected score W + D/2 of every sample (side to move's view)."""
    from zerochess.neural.backends import make_evaluator
    evaluator = make_evaluator(None if spec == "default" else spec, threads=1)
    tokens, legal, off = data["tokens"], data["legal"], data["offsets"]
    out = []
    for a in range(0, len(tokens), 256):
        b = min(len(tokens), a + 256)
        _, wdl, *_ = evaluator.evaluate(np.ascontiguousarray(tokens[a:b]), legal[off[a]:off[b]],
                                        (off[a:b + 1] - off[a]).astype(np.int32))
        out.append(wdl[:, 2] + wdl[:, 1] / 2)
    return np.concatenate(out).astype(float)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="a data set of `zerochess train label`")
    parser.add_argument("--max-cp", type=float, default=1000.0)
    parser.add_argument("--network", default="default",
                        help="network whose expected score to map (default, zero, PATH; none: skip)")
    args = parser.parse_args()

    data = load(args.data)
    cp, (loss, draw, win) = data["cp"], data["wdl"].T
    e = win + draw / 2
    keep = (np.abs(cp) < MATE_CP) & (np.abs(cp) <= args.max_cp)
    print(f"{len(cp)} positions, {int((np.abs(cp) >= MATE_CP).sum())} mates, "
          f"{int(keep.sum())} with |cp| <= {args.max_cp:g} fitted")
    k, rms = fit_k(cp[keep], e[keep])
    print(f"fit: cp = {k:.1f} * logit(E)   (rms error in E {rms:.4f}; "
          f"results.CP_PER_LOGIT = {CP_PER_LOGIT})")
    w_half = np.abs(cp - 100) <= 10
    print(f"Stockfish at +90..+110 cp: mean W {win[w_half].mean():.3f}, mean E "
          f"{e[w_half].mean():.3f}; the fit maps E = 0.75 (W 0.5, L 0) to "
          f"{k * np.log(3):.0f} cp")
    print("\nStockfish cp   n     its W   its E   fit E(cp)")
    for lo, hi in BINS:
        s = keep & (cp >= lo) & (cp < hi)
        mid = (lo + hi) / 2
        print(f"[{lo:5d},{hi:5d})  {int(s.sum()):4d}  {win[s].mean():.3f}   {e[s].mean():.3f}   "
              f"{1 / (1 + np.exp(-mid / k)):.3f}")
    if args.network == "none":
        return
    mine = network_e(data, args.network)
    clipped = np.clip(mine, 1e-9, 1 - 1e-9)
    fitted = k * np.log(clipped / (1 - clipped))
    lc0 = np.array([lc0_cp(2 * x - 1) for x in mine], float)
    print(f"\nnetwork {args.network}: its E mapped to centipawns, median by Stockfish's cp")
    print("Stockfish cp   n     net E   fitted cp   Lc0's cp")
    for lo, hi in BINS:
        s = keep & (cp >= lo) & (cp < hi)
        print(f"[{lo:5d},{hi:5d})  {int(s.sum()):4d}  {np.median(mine[s]):.3f}   "
              f"{np.median(fitted[s]):8.0f}   {np.median(lc0[s]):8.0f}")
    print(f"median |fitted - Stockfish| {np.median(np.abs(fitted[keep] - cp[keep])):.0f} cp, "
          f"Lc0's {np.median(np.abs(lc0[keep] - cp[keep])):.0f} cp")


if __name__ == "__main__":
    main()
