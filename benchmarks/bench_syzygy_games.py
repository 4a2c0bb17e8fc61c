"""Tablebase play against Stockfish: zerochess with ``SyzygyPath`` set converts won 3- and
4-man positions and holds drawn ones.

    nice -n 10 python benchmarks/bench_syzygy_games.py --won 5 --drawn 2 --tc 10+0.1
        [--seed 1] [--syzygy ../shared/syzygy] [--pgn games.pgn] [--zerochess "CMD"]

Positions are random placements of each material (``WON_KINDS``: ``--won`` each;
``DRAWN_KINDS``: ``--drawn`` each), seeded, fifty-move counter 0, chosen by python-chess's
prober: a won position is a win for the side to move (WDL 2: within the fifty-move rule);
a drawn one is a draw (WDL 0) in which at least one legal move loses and none captures
(no draw by taking the last pawn at once), so holding it is a choice. zerochess plays the side to move in every game (benchmarks/bench_endgames.py's
``convert``: the match runner's own game loop, clock and rules, no adjudication) against
Stockfish 15.1 at full strength, one thread, 16 MB, no tablebases. A won game counts only
as a mate (the runner calls the fifty-move draw itself); a drawn game counts if it is not
lost. Printed: per material, games, converted or held, and how the others ended.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shlex
import statistics
import sys
import time
from pathlib import Path

import chess
import chess.syzygy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_endgames import SF_OPTIONS, STOCKFISH, convert  # noqa: E402
from zerochess.match.config import EngineSpec, MatchConfig, TimeControl  # noqa: E402
from zerochess.tools.endgames import random_placement  # noqa: E402

DEFAULT_SYZYGY = os.environ.get("ZEROCHESS_SYZYGY") or str(ROOT.parent / "shared" / "syzygy")
WON_KINDS = ["KRvK", "KQvK", "KPvK", "KBNvK", "KQvKR", "KRvKP", "KQvKP", "KPvKP"]
DRAWN_KINDS = ["KvKP", "KPvKR", "KPvKQ", "KPvKP", "KRvKR"]   # the side to move's men first


def placements(kind: str) -> str:
    """"KRvKP" -> "KRkp": the side to move's men first (upper case), then the other's."""
    strong, weak = kind.split("v")
    return strong + weak.lower()


def random_position(kind: str, rng: random.Random, oracle, wanted: int) -> chess.Board:
    """A random legal position of ``kind`` with the side to move holding the first part, not
    in check, not over, whose WDL for the side to move is ``wanted`` (a drawn one: with a
    losing move among its legal ones and no capture)."""
    pieces = placements(kind)
    while True:
        board = random_placement(pieces, rng)
        if rng.random() < 0.5:                               # Black holds the first part
            board = board.mirror()
        if (not board.is_valid() or board.is_game_over() or board.is_check()
                or oracle.probe_wdl(board) != wanted):
            continue
        if wanted == 0 and (any(board.is_capture(move) for move in board.legal_moves)
                            or not any(_loses(board, move, oracle)
                                       for move in board.legal_moves)):
            continue
        return board


def _loses(board: chess.Board, move: chess.Move, oracle) -> bool:
    board.push(move)
    try:
        return not board.is_game_over() and oracle.probe_wdl(board) == 2
    finally:
        board.pop()


def summary(games, won: bool) -> list[str]:
    rows = [f"| {'won' if won else 'drawn'} material | games | "
            f"{'mates' if won else 'held (draws, wins)'} | not converted: how they ended |",
            "|---|---|---|---|"]
    for kind, records in games.items():
        scores = [r.score_of("zerochess") for r in records]
        good = [s == 1.0 and r.termination != "time forfeit" if won else s >= 0.5
                for r, s in zip(records, scores)]
        others = [f"{r.result} {r.reason}" for r, g in zip(records, good) if not g]
        plies = [len(r.moves) for r, g in zip(records, good) if g]
        detail = f" (median {statistics.median(plies):g} plies)" if won and plies else ""
        if not won:
            detail = f" ({scores.count(0.5)}, {scores.count(1.0)})"
        rows.append(f"| {kind} | {len(records)} | {sum(good)}{detail} | "
                    f"{'; '.join(others) or '-'} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--won", type=int, default=5, help="Won positions per material.")
    ap.add_argument("--drawn", type=int, default=2, help="Drawn positions per material.")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tc", default="10+0.1", help="Time control, base+increment seconds.")
    ap.add_argument("--syzygy", default=DEFAULT_SYZYGY, help="Syzygy directory.")
    ap.add_argument("--zerochess", default=f"{shlex.quote(sys.executable)} -m zerochess",
                    help="Command of the engine under test.")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                    help="Another UCI option of the engine under test (repeatable).")
    ap.add_argument("--pgn", help="Append every game to this PGN.")
    args = ap.parse_args()
    if not os.path.isfile(os.path.join(args.syzygy, "KQvKR.rtbw")):
        sys.exit(f"no Syzygy tables in {args.syzygy}")

    rng = random.Random(args.seed)
    with chess.syzygy.open_tablebase(args.syzygy) as oracle:
        won = {k: [random_position(k, rng, oracle, 2) for _ in range(args.won)] for k in WON_KINDS}
        drawn = {k: [random_position(k, rng, oracle, 0) for _ in range(args.drawn)]
                 for k in DRAWN_KINDS}
    options = {"SyzygyPath": os.path.abspath(args.syzygy),
               **dict(o.split("=", 1) for o in args.option)}
    if options["SyzygyPath"] == "<empty>":
        options["SyzygyPath"] = ""
    zc = EngineSpec("zerochess", shlex.split(args.zerochess), options)
    sf = EngineSpec("stockfish", [STOCKFISH], dict(SF_OPTIONS))
    config = MatchConfig(engines=[zc, sf], tc=TimeControl.parse(args.tc),
                         event="zerochess tablebase play")
    pgn = open(args.pgn, "a", encoding="utf-8") if args.pgn else None
    started = time.perf_counter()
    try:
        shown = os.path.relpath(options["SyzygyPath"], ROOT) if options["SyzygyPath"] else "<empty>"
        print(f"positions: {args.won} won and {args.drawn} drawn per material, seed "
              f"{args.seed}, tc {args.tc}, zerochess to move, SyzygyPath {shown}, "
              "Stockfish 15.1 Threads 1 without tables, no adjudication")
        for kind, boards in (*won.items(), *drawn.items()):
            for board in boards:
                print(f"  {kind}: {board.fen()}", file=sys.stderr)
        print("\n".join(summary(asyncio.run(convert(zc, sf, won, config, pgn)), True)))
        print()
        print("\n".join(summary(asyncio.run(convert(zc, sf, drawn, config, pgn)), False)))
    finally:
        if pgn is not None:
            pgn.close()
    print(f"\nwall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
