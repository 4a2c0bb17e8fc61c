"""Won endgames converted: zerochess with the strong side against Stockfish, and Stockfish
with the strong side against Stockfish as the reference, from the same random positions.

    nice -n 10 python benchmarks/bench_endgames.py --count 10 --tc 5+0.05 [--seed 1]
        [--kind KRvK ...] [--no-reference] [--pgn games.pgn] [--zerochess "CMD"]

Positions come from ``zerochess endgames`` (strong side to move, nothing hanging, both
colours). Each game is played by the match runner's own game loop (its clock, its rules,
forfeits) with the strong side always given to the engine under test, which ``zerochess
match`` cannot do (it swaps colours within each pair). No adjudication: a game ends by
mate, stalemate, the fifty-move rule, repetition or the clock. Stockfish 15.1 plays at full
strength, one thread, 16 MB hash, 100 ms move overhead, no tablebases. Printed: per kind,
mates (wins within the fifty-move rule, since the game is drawn by it otherwise), draws,
games the weak side lost on time (not conversions), losses, and the median plies to mate.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import statistics
import sys
import time
from collections import defaultdict

import chess

from zerochess.client.uci import EngineProcess
from zerochess.match.config import EngineSpec, MatchConfig, TimeControl
from zerochess.match.game import GameRecord, play_game
from zerochess.match.openings import Opening
from zerochess.match.pgn import write_game
from zerochess.tools.endgames import KINDS, generate
from zerochess.train.data.teacher import default_teacher_command

STOCKFISH = default_teacher_command()[0]   # PATH, then Debian's games directory
SF_OPTIONS = {"Threads": "1", "Hash": "16", "Move Overhead": "100"}
"""Move Overhead as zerochess's MoveOverhead default: on a busy machine Stockfish's 10 ms
let it lose won and lost games on time alike."""


async def convert(strong: EngineSpec, weak: EngineSpec, boards: dict[str, list[chess.Board]],
                  config: MatchConfig, pgn) -> dict[str, list[GameRecord]]:
    """Play every position once with ``strong`` on the side to move; games by kind."""
    def process(spec: EngineSpec) -> EngineProcess:
        return EngineProcess(spec.name, spec.command, spec.options, config.start_timeout)

    engines = {spec.name: process(spec) for spec in (strong, weak)}
    games: dict[str, list[GameRecord]] = defaultdict(list)
    try:
        for proc in engines.values():
            await proc.start()
        number = 0
        for kind, positions in boards.items():
            for board in positions:
                number += 1
                white, black = (strong, weak) if board.turn == chess.WHITE else (weak, strong)
                record = GameRecord(number, number, number - 1, white.name, black.name,
                                    Opening(board.fen()))
                for spec in (white, black):             # a forfeit killed it: start afresh
                    if not engines[spec.name].alive:
                        engines[spec.name] = process(spec)
                        await engines[spec.name].start()
                await play_game(record, {chess.WHITE: engines[white.name],
                                         chess.BLACK: engines[black.name]}, config)
                games[kind].append(record)
                if pgn is not None:
                    write_game(pgn, record, config)
                print(f"  {strong.name} {kind} #{len(games[kind])}: {record.result} "
                      f"{len(record.moves)} plies ({record.reason})", file=sys.stderr, flush=True)
    finally:
        for proc in engines.values():
            await proc.quit()
    return games


def table(strong: str, games: dict[str, list[GameRecord]]) -> list[str]:
    """A markdown table of how ``strong`` (the engine given the strong side) did, by kind:
    mates delivered (the conversion), draws, games the weak side lost on time (not counted
    as conversions), losses (of which on time), median plies of the mates."""
    rows = [f"| {strong} strong | games | mates | draws | opponent flagged | losses (on time) "
            "| median plies to mate |", "|---|---|---|---|---|---|---|"]
    for kind, records in games.items():
        scores = [r.score_of(strong) for r in records]
        flagged = [r.termination == "time forfeit" for r in records]
        mates = [len(r.moves) for r, x, f in zip(records, scores, flagged) if x == 1.0 and not f]
        won_on_time = sum(x == 1.0 and f for x, f in zip(scores, flagged))
        lost_on_time = sum(x == 0.0 and f for x, f in zip(scores, flagged))
        median = f"{statistics.median(mates):g}" if mates else "-"
        rows.append(f"| {kind} | {len(records)} | {len(mates)} | {scores.count(0.5)} | "
                    f"{won_on_time} | {scores.count(0.0)} ({lost_on_time}) | {median} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", action="append", choices=list(KINDS),
                    help="Endgame kind (repeatable; default: all).")
    ap.add_argument("--count", type=int, default=10, help="Positions per kind.")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tc", default="5+0.05", help="Time control, base+increment seconds.")
    ap.add_argument("--zerochess", default=f"{shlex.quote(sys.executable)} -m zerochess",
                    help="Command of the engine under test.")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                    help="UCI option of the engine under test (repeatable).")
    ap.add_argument("--no-reference", action="store_true",
                    help="Skip Stockfish's own conversion of the same positions.")
    ap.add_argument("--pgn", help="Append every game to this PGN.")
    args = ap.parse_args()

    kinds = args.kind or list(KINDS)
    boards = {kind: generate(kind, args.count, args.seed) for kind in kinds}
    zc = EngineSpec("zerochess", shlex.split(args.zerochess),
                    dict(o.split("=", 1) for o in args.option))
    sf = EngineSpec("stockfish", [STOCKFISH], dict(SF_OPTIONS))
    sf_strong = EngineSpec("stockfish-strong", [STOCKFISH], dict(SF_OPTIONS))
    config = MatchConfig(engines=[zc, sf], tc=TimeControl.parse(args.tc),
                         event="zerochess endgame conversion")
    pgn = open(args.pgn, "a", encoding="utf-8") if args.pgn else None
    started = time.perf_counter()
    try:
        print(f"positions: {args.count} per kind, seed {args.seed}, tc {args.tc}, "
              "no adjudication, Stockfish 15.1 Threads 1")
        print("\n".join(table(zc.name, asyncio.run(convert(zc, sf, boards, config, pgn)))))
        if not args.no_reference:
            print()
            print("\n".join(table(sf_strong.name, asyncio.run(
                convert(sf_strong, sf, boards, config, pgn)))))
    finally:
        if pgn is not None:
            pgn.close()
    print(f"\nwall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
