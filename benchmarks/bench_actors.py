"""Self-play actor backends: throughput, batch fill and learner/actor concurrency.

    python benchmarks/bench_actors.py --quick     # ~3 min on 2 cores
    python benchmarks/bench_actors.py             # more games, 3 repeats per backend

Three measurements, all with the shipped network (or ``--checkpoint``) on this machine:

1. **Backends, same config, same run**: one actors-only iteration (no learner) on the
   ``processes`` and ``ray`` backends, alternated ``--repeats`` times so that a shared
   machine's load falls on both alike. Steady positions/s is measured by the driver from
   the arrival of the first chunk to the last (actor start-up and network loading fall
   before the first chunk and are reported apart); batch fill is leaves per evaluator call
   over the capacity (games in flight x leaves per tree). The ratio ray / processes is the
   issue's target (within 10%). Ray runs on a local cluster on 127.0.0.1.
2. **Search schedule**: one actor in this process, the round-synchronous schedule (every
   game searches once per round and waits for the slowest search) against the
   asynchronous one (a game starts its next search as soon as its last one ends, and a
   round's room left in the batch is refilled from the other searches): batch fill and
   positions/s (target: fill >= 0.8 with the asynchronous actors).
3. **Concurrency**: a 3-iteration run on the processes backend with ``actor_lookahead`` 1:
   the share of the learner's and the gate's wall time during which actors were playing
   (iterations before the last; in the last there is nothing left to play ahead).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from zerochess.neural.backends import network_path  # noqa: E402
from zerochess.train.selfplay.config import SelfPlayConfig  # noqa: E402
from zerochess.train.selfplay.loop import SelfPlayRun  # noqa: E402
from zerochess.train.selfplay.reports import ChunkTask, NetworkRef  # noqa: E402
from zerochess.train.selfplay.worker import ActorHost  # noqa: E402


def base_config(args) -> SelfPlayConfig:
    return SelfPlayConfig(
        iterations=1, games_per_iteration=args.games, workers=2, threads=1, device="cpu",
        games_per_worker=args.games_per_worker, games_per_shard=args.games_per_shard,
        full_search_nodes=args.full_nodes, fast_search_nodes=args.fast_nodes,
        max_game_plies=args.plies, min_replay=10**9, steps_per_iteration=0,
        resign_threshold=-1.0, self_play_ratio=1.0)


def actors_run(cfg: SelfPlayConfig, init: str) -> dict:
    """One actors-only iteration; steady speed from chunk arrival times at the driver."""
    arrivals = []

    def progress(event, data):
        if event == "game":
            arrivals.append((time.perf_counter(), data["new_positions"], data["batch_fill"]))

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        run = SelfPlayRun(cfg, Path(tmp) / "run", init)
        run.run(progress)
        wall = time.perf_counter() - t0
        recs = [json.loads(l) for l in (Path(tmp) / "run" / "selfplay_metrics.jsonl")
                .read_text().splitlines()]
    actors = next(r for r in recs if r["type"] == "actors")
    (t_first, _, _), (t_last, _, _) = arrivals[0], arrivals[-1]
    steady = sum(p for _, p, _ in arrivals[1:]) / (t_last - t_first) if t_last > t_first else 0.0
    return {"wall_s": wall, "first_chunk_s": t_first - t0, "steady_positions_per_s": steady,
            "positions": actors["positions_in_iteration"], "batch_fill": actors["batch_fill"],
            "hosts": actors["hosts"]}


def schedule_run(cfg: SelfPlayConfig, init: str, schedule: str) -> dict:
    """One actor in this process playing ``2 x games_per_worker`` games in chunks, as the
    fleet drives it. The asynchronous actor carries its games in flight from one chunk
    to the next (no tail, as in a run); the round-synchronous one plays each chunk's games
    to the end (its tail is part of that schedule)."""
    c = cfg.replace(search_schedule=schedule, workers=1, games_per_shard=cfg.games_per_worker)
    blob = Path(init).read_bytes()
    host = ActorHost(0, c.to_dict())
    t0 = time.perf_counter()
    try:
        for chunk in range(2):
            host.play(ChunkTask(1, 0, chunk, c.games_per_shard, NetworkRef("bench")), blob)
        t = host.totals()
    finally:
        host.close()
    return {"batch_fill": t.eval_positions / t.eval_calls / t.batch_capacity,
            "positions_per_s": t.recorded_positions / t.wall_s,
            "wall_s": time.perf_counter() - t0}


def concurrency_run(cfg: SelfPlayConfig, init: str, steps: int) -> dict:
    c = cfg.replace(iterations=3, backend="processes", actor_lookahead=1, min_replay=1,
                    steps_per_iteration=steps, batch_size=128, eval_games=2, eval_nodes=32,
                    pool_eval_games=0, eval_max_moves=40)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        SelfPlayRun(c, Path(tmp) / "run", init).run()
        wall = time.perf_counter() - t0
        recs = [json.loads(l) for l in (Path(tmp) / "run" / "selfplay_metrics.jsonl")
                .read_text().splitlines()]
    phases = [r for r in recs if r["type"] in ("learn", "gate") and r["iteration"] < 3]
    return {"wall_s": wall,
            "learn_gate_s": sum(r["seconds"] for r in phases),
            "actors_concurrent_share": statistics.mean(r["actors_concurrent_share"]
                                                       for r in phases)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--checkpoint", default=None,
                    help="network: default (the shipped one, the default), zero or a path")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--games", type=int, default=None, help="games per backend run")
    ap.add_argument("--games-per-worker", type=int, default=32)
    ap.add_argument("--games-per-shard", type=int, default=8)
    ap.add_argument("--full-nodes", type=int, default=100)
    ap.add_argument("--fast-nodes", type=int, default=25)
    ap.add_argument("--plies", type=int, default=80)
    ap.add_argument("--skip", default="", help="comma list of: backends,schedule,concurrency")
    args = ap.parse_args()
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.games = args.games or (96 if args.quick else 192)
    init = str(network_path(args.checkpoint))
    cfg = base_config(args)
    skip = set(filter(None, args.skip.split(",")))
    print(f"# {os.cpu_count()} cores; network {init}; {cfg.workers} actors x "
          f"{cfg.games_per_worker} games, {cfg.full_search_nodes}/{cfg.fast_search_nodes} nodes, "
          f"{cfg.leaves_per_tree} leaves per tree", flush=True)

    if "backends" not in skip:
        from zerochess.train.selfplay.backends import start_local_ray

        start_local_ray()  # outside the timed runs: the cluster, not the backend, costs this
        runs: dict[str, list[dict]] = {"processes": [], "ray": []}
        for _ in range(args.repeats):
            for backend in runs:
                r = actors_run(cfg.replace(backend=backend), init)
                runs[backend].append(r)
                print(json.dumps({"backend": backend, **{k: (round(v, 3) if isinstance(v, float)
                                                             else v) for k, v in r.items()}}),
                      flush=True)
        med = {b: {k: statistics.median(r[k] for r in rs) for k in
                   ("steady_positions_per_s", "batch_fill", "first_chunk_s", "wall_s")}
               for b, rs in runs.items()}
        ratio = med["ray"]["steady_positions_per_s"] / med["processes"]["steady_positions_per_s"]
        print("\n| backend | steady positions/s | batch fill | first chunk (s) | wall (s) |")
        print("|---|---|---|---|---|")
        for b, m in med.items():
            print(f"| {b} | {m['steady_positions_per_s']:.1f} | {m['batch_fill']:.3f} | "
                  f"{m['first_chunk_s']:.1f} | {m['wall_s']:.1f} |")
        print(f"\nray / processes steady positions/s: {ratio:.3f} (target >= 0.90)", flush=True)

    if "schedule" not in skip:
        res = {s: schedule_run(cfg, init, s) for s in ("rounds", "async")}
        print("\n| search schedule | batch fill | positions/s (one actor) |")
        print("|---|---|---|")
        for s, r in res.items():
            print(f"| {s} | {r['batch_fill']:.3f} | {r['positions_per_s']:.1f} |")
        print(f"\nasync / rounds positions/s: "
              f"{res['async']['positions_per_s'] / res['rounds']['positions_per_s']:.2f}; "
              f"async batch fill {res['async']['batch_fill']:.3f} (target >= 0.8)", flush=True)

    if "concurrency" not in skip:
        r = concurrency_run(cfg.replace(games_per_iteration=args.games // 2), init,
                            steps=50 if args.quick else 200)
        print(f"\nlearner + gate ran {r['learn_gate_s']:.1f} s in iterations 1-2; actors were "
              f"playing during {100 * r['actors_concurrent_share']:.0f}% of it "
              f"(actor_lookahead 1, processes backend)", flush=True)


if __name__ == "__main__":
    main()
