"""Syzygy probing speed, and the search's speed in endgames with and without tablebases.

    python benchmarks/bench_syzygy.py [--syzygy ../shared/syzygy] [--repeats 5]
        [--nodes 800] [--backend default|uniform]

1. The prober (python-chess's ``chess.syzygy``, pure Python): probes per second for random
   positions of four materials, as the library does them from a ``chess.Board``, as the
   tree does them (``Tablebases.probe_leaf``: a ``chess.Board`` built from the leaf's
   bitboards, then the probe; and from its cache), what building the board from a FEN
   instead would cost, and the root's ranking (``Tablebases.rank_root``: a DTZ probe per
   move) in milliseconds a position.
2. The search: nodes per second over 4-man positions (the root in the tables: root ranking
   plus leaf probes) and 5-man positions (captures lead into the tables), ``--nodes`` each,
   one thread, the engine's preset, without tables and with them, the two interleaved
   ``--repeats`` times (a fresh tree and cache each time); medians and the same-run ratio.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

import chess
import chess.polyglot
import chess.syzygy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from zerochess.chess.board import Board  # noqa: E402
from zerochess.search.params import ENGINE_PARAMS  # noqa: E402
from zerochess.search.search import Search  # noqa: E402
from zerochess.search.syzygy import Tablebases  # noqa: E402
from zerochess.tools.endgames import random_placement  # noqa: E402

DEFAULT_SYZYGY = os.environ.get("ZEROCHESS_SYZYGY") or str(ROOT.parent / "shared" / "syzygy")
MATERIALS = ["KQkr", "KRkp", "KPkp", "KPk"]
SEARCH_4 = ["KQkr", "KRkp", "KPkp", "KRkr"]
SEARCH_5 = ["KQPkr", "KRPkp", "KPPkp"]


def material(pieces: str) -> str:
    """"KQkr" -> "KQvKR"."""
    return "".join(c for c in pieces if c.isupper()) + "v" + "".join(
        c for c in pieces if c.islower()).upper()


def random_positions(pieces: str, count: int, rng: random.Random):
    found = []
    while len(found) < count:
        board = random_placement(pieces, rng)
        board.turn = rng.random() < 0.5
        if board.is_valid() and not board.is_game_over() and not board.is_check():
            found.append(board)
    return found


def bitboards(board: chess.Board):
    return (board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK], board.pawns,
            board.knights, board.bishops, board.rooks, board.queens, board.kings, board.turn,
            board.ep_square)


def rate(fn, items) -> float:
    start = time.perf_counter()
    for item in items:
        fn(item)
    return len(items) / (time.perf_counter() - start)


def prober(path: str, repeats: int) -> None:
    print("| material | python-chess probe_wdl/s | leaf probe/s (bitboards) | cached leaf/s "
          "| chess.Board(fen)/s | root ranking ms |")
    print("|---|---|---|---|---|---|")
    oracle = chess.syzygy.open_tablebase(path)
    for pieces in MATERIALS:
        boards = random_positions(pieces, 300, random.Random(pieces))
        fens = [b.fen() for b in boards]
        keys = [chess.polyglot.zobrist_hash(b) for b in boards]
        bbs = [bitboards(b) for b in boards]
        library, leaf, cached, fen_rate, root = [], [], [], [], []
        for _ in range(repeats):
            tables = Tablebases(path)                         # a fresh cache each repeat
            library.append(rate(oracle.probe_wdl, boards))
            leaf.append(rate(lambda i: tables.probe_leaf(keys[i], bbs[i]), range(len(boards))))
            cached.append(rate(lambda i: tables.probe_leaf(keys[i], bbs[i]), range(len(boards))))
            fen_rate.append(rate(chess.Board, fens))
            zboards = [Board(f) for f in fens[:20]]
            root.append(1000 / rate(tables.rank_root, zboards))
        name = material(pieces)
        print(f"| {name} | {statistics.median(library):,.0f} | {statistics.median(leaf):,.0f} "
              f"| {statistics.median(cached):,.0f} | {statistics.median(fen_rate):,.0f} "
              f"| {statistics.median(root):.1f} |")


def search_rate(evaluator, boards, nodes: int, tables) -> tuple[float, int]:
    """(nodes/s over the positions, tbhits) with a fresh tree and cache per position."""
    total_nodes = total_hits = 0
    elapsed = 0.0
    for board in boards:
        search = Search(evaluator, ENGINE_PARAMS)
        if tables is not None:
            search.set_tablebases(tables)
        start = time.perf_counter()
        result = search.search(board, nodes=nodes)
        elapsed += time.perf_counter() - start
        total_nodes += result.nodes
        total_hits += result.tbhits
    return total_nodes / elapsed, total_hits


def searches(path: str, repeats: int, nodes: int, backend: str) -> None:
    from zerochess.neural.backends import make_evaluator

    evaluator = make_evaluator(backend, device="cpu", threads=1)
    rng = random.Random(7)
    sets = {"4 men (root in the tables)": [Board(b.fen()) for p in SEARCH_4
                                            for b in random_positions(p, 3, rng)],
            "5 men (captures into them)": [Board(b.fen()) for p in SEARCH_5
                                           for b in random_positions(p, 3, rng)]}
    search_rate(evaluator, sets["4 men (root in the tables)"][:1], 64, None)   # warm-up
    print(f"\n{backend} backend, {nodes} nodes a position, one thread, {repeats} interleaved "
          "repeats (medians)\n")
    print("| positions | nodes/s without | nodes/s with tables | ratio | tbhits a search |")
    print("|---|---|---|---|---|")
    for name, boards in sets.items():
        without, with_, ratios, hits = [], [], [], 0
        for _ in range(repeats):
            a, _ = search_rate(evaluator, boards, nodes, None)
            b, hits = search_rate(evaluator, boards, nodes, Tablebases(path))
            without.append(a)
            with_.append(b)
            ratios.append(b / a)
        print(f"| {name}, {len(boards)} | {statistics.median(without):,.0f} | "
              f"{statistics.median(with_):,.0f} | {statistics.median(ratios):.2f}x | "
              f"{hits / len(boards):.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--syzygy", default=DEFAULT_SYZYGY, help="Syzygy directory.")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--nodes", type=int, default=800)
    ap.add_argument("--backend", default="default", help="default (the shipped network), uniform")
    args = ap.parse_args()
    if not os.path.isfile(os.path.join(args.syzygy, "KQvKR.rtbw")):
        sys.exit(f"no Syzygy tables in {args.syzygy}")
    print(f"python-chess {chess.__version__}, tables {os.path.relpath(args.syzygy, ROOT)}, "
          f"{args.repeats} repeats (medians)\n")
    prober(args.syzygy, args.repeats)
    searches(args.syzygy, args.repeats, args.nodes, args.backend)


if __name__ == "__main__":
    main()
