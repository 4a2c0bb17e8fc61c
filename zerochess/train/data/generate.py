"""`zerochess train generate`: a phase-1 data set of random-play shards.

A data set directory (``dataset.py``) whose shards (``format.py``, source kind
"random-play") are named by split and unit; unit i holds the games
[i * games_per_shard, (i + 1) * games_per_shard), its training games in ``train-i`` and its
validation games in ``val-i``::

    DIR/metadata.json        settings, status, per-shard counts, data-quality statistics
    DIR/train-00000/ DIR/val-00000/ DIR/train-00001/ ...

The split is by game (``dataset.is_val_game``: game 1, then one game in every
1/val_fraction), so no position of a validation game is seen in training, and a data set of
two or more games has a validation split whatever ``games_per_shard`` is. Each unit is one
piece of work and depends only on (seed, unit index, settings), so the output is the same for
any number of workers, and a run that was killed restarts by making only the shards that do
not exist yet.
"""

from __future__ import annotations

import os
import time
from dataclasses import MISSING, dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from zerochess.chess.layout import SEQ_LEN
from zerochess.train.common.pool import map_jobs
from zerochess.train.configfile import ConfigFile, setting
from zerochess.train.data.dataset import (finish_dataset, is_val_game, open_dataset, open_shard,
                                          shard_entry)
from zerochess.train.data.format import row_normalized, write_shard
from zerochess.train.data.legacy import one_hot_wdl
from zerochess.train.data.randomplay import END_REASONS, KIND_MATE, PlayConfig, play_game

SPLITS = ("train", "val")


@dataclass(frozen=True)
class GenerateConfig(ConfigFile):
    """What `zerochess train generate` makes; all of it is recorded in metadata.json. Each
    field is a setting (``configfile.setting``), ``play``'s too: the command's flags come
    from them."""

    games: int = setting(MISSING, "Random games to play.", min=1)
    """Random games to play (games shorter than play.min_plies are dropped, not replaced)."""
    seed: int = setting(0, "Master seed.")
    """Master seed; game g is played from (seed, g) alone."""
    games_per_shard: int = setting(
        250, "Games per unit of work (its train shard and its val shard).", min=1)
    """Games per unit of work: a train shard and a val shard, each written atomically."""
    val_fraction: float = setting(
        0.1, "Share of games held out for validation: game 1, then one in every 1/F.",
        min=0, max=1, max_open=True)
    """Share of games held out for validation, spread evenly over the run (game 1, then one
    in every 1/val_fraction: ``dataset.is_val_game``), so two games already have one."""
    play: PlayConfig = PlayConfig()
    """How each game is played (randomplay.PlayConfig)."""

    def __post_init__(self) -> None:
        self.check_settings()

    @property
    def n_shards(self) -> int:
        """Units of work (each writes a train and a val shard)."""
        return -(-self.games // self.games_per_shard)

    def games_of(self, shard: int, split: str) -> list[int]:
        """The games of unit ``shard`` that go to ``split`` ('train' or 'val')."""
        first = shard * self.games_per_shard
        val = split == "val"
        return [g for g in range(first, min(first + self.games_per_shard, self.games))
                if is_val_game(g, self.val_fraction) == val]

    @staticmethod
    def shard_name(shard: int, split: str) -> str:
        return f"{split}-{shard:05d}"

    def shard_names(self) -> list[str]:
        return [self.shard_name(s, split) for s in range(self.n_shards) for split in SPLITS]

    def settings(self) -> dict:
        # "split" marks the split by game: a directory begun by the older split by shard
        # (no such key) is refused on a restart instead of mixed with this one.
        return {"games": self.games, "seed": self.seed, "games_per_shard": self.games_per_shard,
                "val_fraction": self.val_fraction, "split": "game", "play": self.play.to_dict()}


def build_shard_arrays(cfg: GenerateConfig, shard: int, split: str) -> dict[str, np.ndarray]:
    """Play unit ``shard``'s games of ``split`` and stack them into the arrays of format.py:
    the legal CSR, the sampler's distribution as the policy target (its moves of non-zero
    probability: all legal moves, or a mate-in-1 sample's mating move), the game result as
    a one-hot WDL, and random play's own arrays (move, outcome, kind, p_max, p_top5)."""
    games = [(g, play_game(cfg.seed, g, cfg.play)) for g in cfg.games_of(shard, split)]
    games = [(g, x) for g, x in games if x is not None]
    legal = [a for _, x in games for a in x.legal]
    lengths = np.fromiter((len(a) for a in legal), dtype=np.int64, count=len(legal))
    offsets = np.zeros(len(legal) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])

    def cat(name: str, dtype, trail=()) -> np.ndarray:
        parts = [getattr(x, name) for _, x in games]
        return np.concatenate(parts).astype(dtype) if parts else np.zeros((0, *trail), dtype)

    probs = (np.concatenate([p for _, x in games for p in x.probs]) if legal
             else np.zeros(0, np.float16))
    legal_indices = np.concatenate(legal).astype(np.int16) if legal else np.zeros(0, np.int16)
    keep = probs > 0
    kept_rows = np.repeat(np.arange(len(legal)), lengths)[keep]
    policy_offsets = np.zeros(len(legal) + 1, dtype=np.int64)
    np.cumsum(np.bincount(kept_rows, minlength=len(legal)), out=policy_offsets[1:])
    outcome = cat("outcome", np.int8)
    return {
        "tokens": cat("tokens", np.uint8, (SEQ_LEN,)),
        "wdl": one_hot_wdl(outcome),
        "policy_offsets": policy_offsets,
        "policy_indices": legal_indices[keep],
        "policy_weights": row_normalized(policy_offsets, probs[keep]),  # float16 -> sums of 1
        "move": cat("move", np.int16),
        "outcome": outcome,
        "kind": cat("kind", np.uint8),
        "game": (np.concatenate([np.full(len(x.move), g, np.int32) for g, x in games])
                 if games else np.zeros(0, np.int32)),
        "ply": cat("ply", np.int16),
        "p_max": cat("p_max", np.float32),
        "p_top5": cat("p_top5", np.float32),
        "legal_offsets": offsets,
        "legal_indices": legal_indices,
        "game_index": np.array([g for g, _ in games], dtype=np.int32),
        "game_plies": np.array([x.plies for _, x in games], dtype=np.int16),
        "game_result": np.array([x.result for _, x in games], dtype=np.int8),
        "game_end": np.array([x.end for _, x in games], dtype=np.uint8),
    }


def _make_shard(job: tuple[GenerateConfig, int, str]) -> tuple[int, int, float]:
    """Worker: build and atomically write unit ``shard``'s shards that do not exist yet (a
    run killed between the two writes plays only the missing split's games); returns
    (shard, games, seconds)."""
    cfg, shard, out = job
    t = time.perf_counter()
    games = 0
    for split in SPLITS:
        games += len(cfg.games_of(shard, split))
        path = Path(out) / cfg.shard_name(shard, split)
        if path.is_dir():
            continue
        write_shard(path, build_shard_arrays(cfg, shard, split),
                    source={"kind": "random-play", **cfg.settings()}, split=split,
                    info={"shard": shard, "dataset_seed": cfg.seed})
    return shard, games, time.perf_counter() - t


def generate(cfg: GenerateConfig, out: str | os.PathLike, workers: int = 1,
             progress: Callable[[int], None] | None = None) -> dict:
    """Generate (or finish generating) the data set in ``out``; returns its metadata.

    ``progress(n)`` is called with the number of games each finished shard covered. Running
    again with the same settings after a kill only makes the missing shards; different
    settings on an existing directory are refused rather than mixed.
    """
    out = Path(out)
    meta = open_dataset(out, cfg.settings())

    todo = [s for s in range(cfg.n_shards)
            if not all((out / cfg.shard_name(s, split)).is_dir() for split in SPLITS)]
    pending = set(todo)
    done_games = sum(min(cfg.games_per_shard, cfg.games - s * cfg.games_per_shard)
                     for s in range(cfg.n_shards) if s not in pending)
    if progress and done_games:
        progress(done_games)
    t0 = time.perf_counter()
    busy = 0.0
    jobs = [(cfg, s, str(out)) for s in todo]
    for _, n_games, seconds in map_jobs(_make_shard, jobs, workers):
        busy += seconds
        if progress:
            progress(n_games)
    wall = time.perf_counter() - t0
    meta.update(summarize(out, cfg))
    if todo:  # timing of this run (a resumed run times only the shards it made)
        made = sum(meta["shards"][cfg.shard_name(s, split)]["samples"]
                   for s in todo for split in SPLITS)
        meta["timing"] = {"workers": workers, "wall_seconds": round(wall, 2),
                          "samples_made": made,
                          "samples_per_second_per_core": round(made / busy, 1) if busy else None}
    return finish_dataset(out, meta)


def _row_entropy(sh) -> np.ndarray:
    """Per sample, the entropy (nats) of its policy target (the sampler's distribution)."""
    p = np.asarray(sh["policy_weights"], dtype=np.float64)
    off = np.asarray(sh["policy_offsets"])
    terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return np.add.reduceat(terms, off[:-1])  # every position has at least one legal move


def summarize(out: Path, cfg: GenerateConfig) -> dict:
    """Per-shard counts and the data-quality figures of the seed's risk 2 table."""
    shards, ends, lengths, results, kinds, pmax, p5, ent = {}, {}, [], [], [], [], [], []
    totals = {"train": 0, "val": 0}
    for name in cfg.shard_names():
        sh = open_shard(out / name, verify=False)
        shards[name] = shard_entry(sh)
        totals[sh.split] += len(sh)
        lengths.append(np.asarray(sh["game_plies"]))
        results.append(np.asarray(sh["game_result"]))
        for e in np.asarray(sh["game_end"]):
            ends[END_REASONS[int(e)]] = ends.get(END_REASONS[int(e)], 0) + 1
        kind = np.asarray(sh["kind"])
        kinds.append(kind)
        pmax.append(np.asarray(sh["p_max"])[kind == 0])
        p5.append(np.asarray(sh["p_top5"])[kind == 0])
        if len(sh):
            ent.append(_row_entropy(sh)[kind == 0])
    lengths, results, kinds = np.concatenate(lengths), np.concatenate(results), np.concatenate(kinds)
    n_games = len(lengths)
    stats = {
        "games_kept": n_games,
        "mean_game_plies": round(float(lengths.mean()), 2) if n_games else 0.0,
        "decisive_share": round(float((results != 0).mean()), 4) if n_games else 0.0,
        "end_reasons": ends,
        "mate_in_one_samples": int((kinds == KIND_MATE).sum()),
        "exact_accuracy_ceiling": round(float(np.concatenate(pmax).mean()), 4) if len(kinds) else 0.0,
        "top5_accuracy_ceiling": round(float(np.concatenate(p5).mean()), 4) if len(kinds) else 0.0,
    }
    if ent:  # the least policy loss any network can reach on random-play samples (nats)
        stats["sampler_entropy"] = round(float(np.concatenate(ent).mean()), 4)
    return {"shards": shards, "samples": totals, "stats": stats}
