"""`zerochess train selfplay`: the AlphaZero loop, resumable at any moment.

Each iteration runs three phases, and RUN_DIR/state.json (written atomically) records which
one is under way::

    actors  wait until the iteration's games_per_iteration games are in games/ (shards
            + PGN, every games_per_shard games)
    learn   the learner trains steps_per_iteration steps on the replay window (the newest
            replay_window positions on disk) and writes checkpoints/itIIII.pt + learner.pt
    gate    the checkpoint plays the best at fixed nodes; >= 55% makes it the best; all
            evaluation games are refitted into ratings (elo.jsonl, elo.png); stagnation
            check

The actors are not a phase of their own: a ``Fleet`` (fleet.py) keeps them playing the
best network on the chosen backend (backends.py: threads, processes or a Ray cluster)
while the learner trains and the gate runs, up to ``actor_lookahead`` iterations ahead
(AlphaZero's continuous training; 0 takes turns). Every iteration still trains on the
window after its own quota of games, which holds the ratio of training samples to new
positions. Only this driver writes the run directory; actors send shards as bytes.

Run directory::

    config.json            the SelfPlayConfig the run was started with (and the init network)
    state.json             iteration, phase, best, pool, rated players, interventions
    games/itIIII-wWW-cKKKK self-play shards (zerochess.train.data.format, written by
                           worker.write_games) with games.pgn
    checkpoints/itIIII.pt  network checkpoints (it0000 = the initial network)
    learner.pt             learner weights + AdamW state
    metrics.jsonl          learner steps (`zerochess train report` plots them)
    selfplay_metrics.jsonl one record per phase: actor speed and game statistics, learner
                           losses, gate results
    eval_games.jsonl       every evaluation game; eval/itIIII.pgn the games as PGN
    elo.jsonl, elo.png     ratings of every checkpoint after each evaluation
    selfplay.log           the log

Resume: killed at any moment and started again with the same command, the loop reads
state.json, deletes half-written ``*.tmp-*`` files and continues the phase it was in:
the fleet counts the games already in each iteration's shards and plays the rest (games in
flight are lost); a learn phase whose checkpoint was already written is not repeated; an
interrupted gate is played again from its start (its partial games are dropped first).
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from zerochess.atomic import write_json_atomic
from zerochess.neural.backends import network_path
from zerochess.train.common.jsonl import append_jsonl, keep_jsonl
from zerochess.train.common.runlog import attach_log, detach_log
from zerochess.train.common.state import check_version
from zerochess.train.data.format import remove_partial
from zerochess.train.selfplay.config import RESUMABLE_CHANGES, SelfPlayConfig

log = logging.getLogger("zerochess.selfplay")

STATE_FORMAT = "zerochess-selfplay-run"
STATE_VERSION = 1

Progress = Callable[[str, dict], None]
"""``progress(event, data)``: "actors" (start: total, done), "game" (a finished game and the
running speed figures), "learn" (start: steps), "step" (k, losses), "gate" (start: games),
"gate_game", "iteration" (end of an iteration: summary). The CLI turns them into tqdm bars."""


class SelfPlayError(ValueError):
    """The run cannot start or resume as asked; the message says why."""


def ckpt_name(iteration: int) -> str:
    return f"it{iteration:04d}"


class SelfPlayRun:
    """One self-play run in ``run_dir``; ``run()`` plays iterations up to cfg.iterations."""

    def __init__(self, cfg: SelfPlayConfig, run_dir: str | os.PathLike,
                 init: str | os.PathLike | None = None) -> None:
        """``init``: the network a new run starts from, as ``WeightsFile`` names one
        (``default``, ``zero`` or a checkpoint path); a resumed run reads it from config.json."""
        if init is not None:
            spec, init = init, network_path(init)
            if not init.is_file():
                raise SelfPlayError(f"--init {spec}: no checkpoint file at {init}")
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.games_dir = self.run_dir / "games"
        self.ckpt_dir = self.run_dir / "checkpoints"
        self.state_path = self.run_dir / "state.json"
        self.fleet = None   # the actors, while run() runs
        self.log_path = self.run_dir / "selfplay.log"
        attach_log(log, self.log_path)
        for sub in (self.games_dir, self.ckpt_dir, self.run_dir / "eval"):
            sub.mkdir(exist_ok=True)
            for p in remove_partial(sub):
                log.info("removed half-written %s", p)
        for p in remove_partial(self.run_dir):
            log.info("removed half-written %s", p)
        if self.state_path.exists():
            self.state = check_version(json.loads(self.state_path.read_text()), self.state_path,
                                       STATE_FORMAT, STATE_VERSION, "self-play state", SelfPlayError)
            saved = json.loads((self.run_dir / "config.json").read_text())
            diff = cfg.changed_fields(saved["selfplay"], RESUMABLE_CHANGES,
                                      legacy={"illegal_penalty": "mass"})
            if diff:
                raise SelfPlayError(f"{self.run_dir}: config differs from the run's config.json "
                                    f"in {diff}; use the same settings or another RUN_DIR")
            if init is not None and Path(init).resolve() != Path(saved["init"]).resolve():
                raise SelfPlayError(f"{self.run_dir} was started from {saved['init']}, not {init}")
            self.init = saved["init"]
            self.base_cfg = cfg
            log.info("resuming at iteration %d, phase %s", self.state["iteration"], self.state["phase"])
        else:
            if init is None:
                raise SelfPlayError("a new run needs --init (default, zero or a checkpoint path)")
            self.init = str(Path(init).resolve())
            self.base_cfg = cfg
            self._start(cfg)
        write_json_atomic(self.run_dir / "config.json", {"selfplay": cfg.to_dict(), "init": self.init})

    # -- bookkeeping -------------------------------------------------------------------
    def close(self) -> None:
        detach_log(log, self.log_path)

    def _start(self, cfg: SelfPlayConfig) -> None:
        from zerochess.neural.checkpoint import load_checkpoint, save_checkpoint

        model, info = load_checkpoint(self.init)
        first = self.ckpt_dir / f"{ckpt_name(0)}.pt"
        save_checkpoint(first, model, {**info["metadata"], "selfplay_iteration": 0,
                                       "selfplay_init": self.init})
        player = {"name": ckpt_name(0), "iteration": 0, "path": str(first)}
        self.state = {"format": STATE_FORMAT, "format_version": STATE_VERSION,
                      "iteration": 1, "phase": "actors", "best": player, "pool": [player],
                      "players": [player], "best_history": [], "overrides": {},
                      "interventions": [], "last_intervention": 0, "window": [],
                      "games_total": 0, "positions_total": 0, "started": time.time()}
        self._save_state()
        log.info("new run from %s with %s", self.init, cfg)

    def _save_state(self) -> None:
        write_json_atomic(self.state_path, self.state)

    def _emit(self, record: dict) -> None:
        append_jsonl(self.run_dir / "selfplay_metrics.jsonl", {"time": time.time(), **record})

    @property
    def cfg(self) -> SelfPlayConfig:
        """The run's config with the stagnation interventions applied."""
        return self.base_cfg.replace(**self.state["overrides"])

    # -- the loop ----------------------------------------------------------------------
    def run(self, progress: Optional[Progress] = None) -> dict:
        progress = progress or (lambda event, data: None)
        fleet = None
        try:
            fleet = self.fleet = self._start_fleet()
            while self.state["iteration"] <= self.base_cfg.iterations:
                it = self.state["iteration"]
                fleet.allow(it + self.cfg.actor_lookahead)
                if self.state["phase"] == "actors":
                    self.actors(it, fleet, progress)
                    self.state["phase"] = "learn"
                    self._save_state()
                if self.state["phase"] == "learn":
                    trained = self.learn(it, progress, fleet)
                    self.state["phase"] = "gate" if trained else "done"
                    self._save_state()
                if self.state["phase"] == "gate":
                    self.gate(it, progress, fleet)
                    self.state["phase"] = "done"
                    self._save_state()
                    fleet.set_networks(self.state["best"], self.state["pool"])
                summary = {"iteration": it, "best": self.state["best"]["name"],
                           "games_total": self.state["games_total"],
                           "positions_total": self.state["positions_total"]}
                self.state.update(iteration=it + 1, phase="actors")
                self._save_state()
                log.info("iteration %d done: %s", it, summary)
                progress("iteration", summary)
        finally:
            if fleet is not None:
                fleet.close()
            self.close()
        return {"iteration": self.state["iteration"] - 1, "best": self.state["best"],
                "games_total": self.state["games_total"],
                "positions_total": self.state["positions_total"]}

    def _start_fleet(self):
        from zerochess.train.selfplay.backends import make_backend
        from zerochess.train.selfplay.fleet import Fleet

        cfg = self.cfg
        fleet = Fleet(cfg, self.games_dir, make_backend(cfg))
        fleet.set_networks(self.state["best"], self.state["pool"])
        log.info("actors: %d on the %s backend, %d games in flight each, up to %d "
                 "iteration(s) ahead of the learner", cfg.workers, fleet.backend.name,
                 cfg.games_per_worker, cfg.actor_lookahead)
        fleet.start()
        return fleet

    # -- actors ------------------------------------------------------------------------
    def actors(self, it: int, fleet, progress: Progress) -> dict:
        """Wait until iteration ``it``'s games are written (the fleet's actors may have
        played some of them already, during the previous learn and gate phases)."""
        cfg = self.cfg
        done, _ = fleet.done(it)
        best = self.state["best"]
        log.info("iteration %d actors: %d games to play (%d already in shards), %d %s actors, "
                 "best %s, pool %s", it, max(0, cfg.games_per_iteration - done), done,
                 cfg.workers, fleet.backend.name, best["name"],
                 [p["name"] for p in self.state["pool"] if p["name"] != best["name"]])
        progress("actors", {"iteration": it, "total": cfg.games_per_iteration,
                            "done": min(done, cfg.games_per_iteration)})
        t0 = time.perf_counter()

        def on_chunk(result) -> None:
            progress("game", {**fleet.figures(), "new": result.counters.games,
                              "new_positions": result.counters.positions,
                              "best": best["name"], "best_elo": self._best_elo()})

        fleet.wait_iteration(it, on_chunk)
        # The fleet counts the shards on disk at its start and each one it writes, so
        # games written before a kill count once.
        games, positions = fleet.done(it)
        self.state["games_total"] += games
        self.state["positions_total"] += positions
        counters = fleet.counters_of(it).summary()
        figures = fleet.figures()
        rec = {"type": "actors", "iteration": it, "games_in_iteration": games,
               "positions_in_iteration": positions, "wait_s": time.perf_counter() - t0,
               "backend": fleet.backend.name, **figures,
               **{k: v for k, v in counters.items() if k not in figures}}
        self._emit(rec)
        log.info("iteration %d actors: %s", it, json.dumps(rec, sort_keys=True))
        return rec

    # -- learner -----------------------------------------------------------------------
    def learn(self, it: int, progress: Progress, fleet=None) -> bool:
        """Train on the window; False when the window is below min_replay (no checkpoint).
        The fleet's actors play on meanwhile (``actor_lookahead``)."""
        import torch

        from zerochess.neural.torch_evaluator import resolve_device
        from zerochess.train.data.replay import ReplayWindow
        from zerochess.train.selfplay.learner import Learner

        cfg = self.cfg
        ckpt = self.ckpt_dir / f"{ckpt_name(it)}.pt"
        torch.set_num_threads(cfg.threads)
        learner = Learner(cfg, self.run_dir, self.init, resolve_device(cfg.device))
        if learner.iteration >= it and ckpt.exists():
            log.info("iteration %d: learner state already saved, not training again", it)
            return True
        window = ReplayWindow.from_directory(self.games_dir, cfg.replay_window, up_to=it)
        self.state["window"] = window.names
        if len(window) < cfg.min_replay or cfg.steps_per_iteration == 0:
            log.info("iteration %d: %d positions in the window, min_replay %d: no training",
                     it, len(window), cfg.min_replay)
            self._emit({"type": "learn", "iteration": it, "window": len(window), "trained": False})
            return False
        _drop_metrics_from(self.run_dir / "metrics.jsonl", it)
        progress("learn", {"iteration": it, "steps": cfg.steps_per_iteration, "window": len(window)})
        t0 = time.perf_counter()
        if fleet is not None:
            fleet.phase("learn")
        losses = learner.train(window, it, lambda k, out: progress("step", {"k": k, **out}),
                               metrics_path=self.run_dir / "metrics.jsonl")
        seconds = time.perf_counter() - t0
        overlap = fleet.phase(None) if fleet is not None else {}
        meta = {**{k: v for k, v in learner.init_metadata.items() if k in ("preset", "supervise")},
                "selfplay_iteration": it, "selfplay_step": learner.step,
                "selfplay_init": self.init, "window_positions": len(window),
                "games_total": self.state["games_total"], "losses": losses}
        learner.save(it, ckpt, meta)
        player = {"name": ckpt_name(it), "iteration": it, "path": str(ckpt)}
        self.state["players"] = [p for p in self.state["players"] if p["name"] != player["name"]]
        self.state["players"].append(player)
        rec = {"type": "learn", "iteration": it, "window": len(window), "trained": True,
               "steps": cfg.steps_per_iteration, "seconds": seconds,
               "actors_concurrent_share": overlap.get("actors_concurrent_share"), **losses}
        self._emit(rec)
        log.info("iteration %d learner: %s", it, json.dumps(rec, sort_keys=True))
        return True

    # -- evaluation --------------------------------------------------------------------
    def _best_elo(self) -> Optional[float]:
        h = self.state["best_history"]
        return h[-1] if h else None

    def gate(self, it: int, progress: Progress, fleet=None) -> dict:
        from zerochess.train.selfplay.elo_report import plot_elo
        from zerochess.train.selfplay.gating import (Player, append_games, drop_games_from,
                                                     evaluate, read_games)
        from zerochess.train.selfplay.ratings import fit_ratings
        from zerochess.train.selfplay.stagnation import intervention, is_stagnating

        cfg = self.cfg
        games_path = self.run_dir / "eval_games.jsonl"
        elo_path = self.run_dir / "elo.jsonl"
        dropped = drop_games_from(games_path, it)
        keep_jsonl(elo_path, lambda r: r["iteration"] < it)
        if dropped:
            log.info("iteration %d: dropped %d games of an interrupted evaluation", it, dropped)
        cand = Player(**next(p for p in self.state["players"] if p["name"] == ckpt_name(it)))
        best = Player(**self.state["best"])
        pool = [Player(**p) for p in self.state["pool"]]
        pool_games = cfg.pool_eval_games if any(p.name not in (cand.name, best.name)
                                                for p in pool) else 0
        progress("gate", {"iteration": it, "games": cfg.eval_games + pool_games,
                          "candidate": cand.name, "best": best.name})
        t0 = time.perf_counter()
        rng = np.random.default_rng([cfg.seed, it, 11])
        if fleet is not None:
            fleet.phase("gate")
        result, records = evaluate(cand, best, pool, cfg, it, self.run_dir, rng,
                                   on_game=lambda g: progress("gate_game", {"result": g.result}))
        overlap = fleet.phase(None) if fleet is not None else {}
        append_games(games_path, records)
        everything = read_games(games_path)
        names = [p["name"] for p in self.state["players"]]
        ratings = fit_ratings(names, [(g["white"], g["black"], g["score_white"]) for g in everything])
        player = next(p for p in self.state["players"] if p["name"] == cand.name)
        if result.promoted:
            self.state["best"] = player
        self.state["pool"] = ([p for p in self.state["pool"] if p["name"] != cand.name]
                              + [player])[-cfg.pool_size:]
        best_name = self.state["best"]["name"]
        self.state["best_history"].append(ratings[best_name].elo)
        by_iter = {p["name"]: p["iteration"] for p in self.state["players"]}
        line = {"iteration": it, "time": time.time(), "candidate": cand.name,
                "gate_opponent": best.name, "gate_score": result.score,
                "gate_wdl": [result.wins, result.draws, result.losses],
                "gate_elo": result.elo, "gate_error": result.error,
                "promoted": result.promoted, "promote_score": cfg.promote_score,
                "pool_opponent": result.pool_opponent, "pool_score": result.pool_score,
                "best": best_name, "games_total": len(everything),
                "ratings": [{"name": r.name, "iteration": by_iter[r.name], "elo": r.elo,
                             "error": r.error, "games": r.games, "score": r.score}
                            for r in ratings.values()]}
        append_jsonl(elo_path, line)
        plot_elo(self.run_dir)
        rec = {"type": "gate", "iteration": it, "seconds": time.perf_counter() - t0,
               "actors_concurrent_share": overlap.get("actors_concurrent_share"),
               **{k: v for k, v in line.items() if k not in ("ratings", "time")}}
        self._emit(rec)
        log.info("iteration %d gate: %s scored %.3f (W/D/L %d/%d/%d) vs %s -> best %s "
                 "(%+.0f +- %.0f Elo)", it, cand.name, result.score, result.wins, result.draws,
                 result.losses, best.name, best_name, ratings[best_name].elo,
                 ratings[best_name].error)
        if is_stagnating(self.state["best_history"], cfg, self.state["last_intervention"]):
            changes = intervention(cfg)
            self.state["last_intervention"] = len(self.state["best_history"])
            if changes:
                self.state["overrides"].update(changes)
                self.state["interventions"].append({"iteration": it, "changes": changes})
                log.info("iteration %d: best rating stagnant over %d iterations; intervention %s",
                         it, cfg.stagnation_iters, changes)
                self._emit({"type": "intervention", "iteration": it, "changes": changes})
        return line


def _drop_metrics_from(path: Path, iteration: int) -> None:
    """Learner records of an interrupted iteration (epoch = iteration) are logged again."""
    keep_jsonl(path, lambda r: r["epoch"] < iteration)
