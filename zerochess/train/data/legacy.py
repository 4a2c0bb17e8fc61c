"""The training data written before format version 3, read as version-3 shards.

Two older formats exist on disk: phase 1's ``zerochess-shard`` (version 1; version 2 added
``sampler_prob``) and the self-play loop's ``zerochess-selfplay-shard`` (version 1). Both
are directories of ``.npy`` arrays with a ``shard.json`` that lists every array with dtype,
shape and SHA-256, like version 3, so they map the same way; this module only renames and
derives arrays (nothing is copied to disk):

=====================  ===================================  =================================
version-3 array        zerochess-shard v1 / v2              zerochess-selfplay-shard v1
=====================  ===================================  =================================
wdl                    one-hot of ``outcome``               one-hot of ``outcome``
policy CSR             v2: ``sampler_prob`` over the legal  ``policy_visits`` / their row sum
                       CSR (float16 as stored: the reader   (``visits`` keeps the counts)
                       renormalises rows); v1: one-hot on
                       ``move``, and the source says
                       ``"policy": "played-move"``
legal CSR              the legal CSR                        absent: the visit CSR covers every
                                                            root move, i.e. the legal moves
everything else        same name                            same name
=====================  ===================================  =================================

``zerochess train convert`` writes such shards out as real version-3 shards.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from zerochess.train.data.format import (FORMAT, FORMAT_VERSION, Shard, ShardError, map_arrays,
                                         row_normalized)

PHASE1_FORMAT = "zerochess-shard"
PHASE1_VERSIONS = (1, 2)
SELFPLAY_FORMAT = "zerochess-selfplay-shard"
SELFPLAY_VERSIONS = (1,)

_PHASE1 = ("tokens", "move", "outcome", "kind", "game", "ply", "p_max", "p_top5",
           "legal_offsets", "legal_indices", "game_index", "game_plies", "game_result", "game_end")
_SELFPLAY = ("tokens", "move", "outcome", "root_q", "game", "ply", "game_index", "game_plies",
             "game_result", "game_end", "game_opponent", "game_false_resign")
#: Header fields of the old formats that are not data: the rest becomes the source settings.
_LAYOUT_FIELDS = {"format", "format_version", "samples", "games", "split", "arrays"}


def is_legacy(header: dict) -> bool:
    return header.get("format") in (PHASE1_FORMAT, SELFPLAY_FORMAT)


def one_hot_wdl(outcome: np.ndarray) -> np.ndarray:
    """float32 [N, 3] (loss, draw, win) from outcomes -1 / 0 / +1 (the side to move's)."""
    wdl = np.zeros((len(outcome), 3), np.float32)
    wdl[np.arange(len(outcome)), np.asarray(outcome, np.int64) + 1] = 1.0
    return wdl


def load_legacy_shard(path: str | Path, header: dict, verify: bool = True) -> Shard:
    """A ``zerochess-shard`` v1/v2 or ``zerochess-selfplay-shard`` v1 directory as a
    version-3 Shard (memory-mapped where the arrays are unchanged). ShardError names the
    file that is missing, corrupt or of a version no zerochess wrote."""
    path = Path(path)
    meta = path / "shard.json"
    fmt, version = header.get("format"), header.get("format_version")
    known = PHASE1_VERSIONS if fmt == PHASE1_FORMAT else SELFPLAY_VERSIONS
    if version not in known:
        raise ShardError(meta, f"{fmt} format version {version!r}; this zerochess reads "
                         f"versions {list(known)} of it and writes version {FORMAT_VERSION}")
    old = map_arrays(path, header, verify)
    names = _PHASE1 if fmt == PHASE1_FORMAT else (*_SELFPLAY, "policy_offsets", "policy_indices",
                                                   "policy_visits")
    missing = [a for a in names if a not in old]
    if missing:
        raise ShardError(meta, f"missing arrays {missing} ({fmt} version {version})")
    n = int(header.get("samples", -1))
    if len(old["tokens"]) != n:
        raise ShardError(meta, "sample count differs from the arrays")
    settings = {k: v for k, v in header.items() if k not in _LAYOUT_FIELDS}
    converted = f"{fmt} v{version}"
    if fmt == PHASE1_FORMAT:
        arrays = {k: old[k] for k in _PHASE1}
        if "sampler_prob" in old:
            arrays.update(policy_offsets=old["legal_offsets"], policy_indices=old["legal_indices"],
                          policy_weights=old["sampler_prob"])
            policy = "sampler"
        else:
            arrays.update(policy_offsets=np.arange(n + 1, dtype=np.int64),
                          policy_indices=np.asarray(old["move"]), policy_weights=np.ones(n, np.float32))
            policy = "played-move"
        source = {"kind": "random-play", "policy": policy, "converted_from": converted, **settings}
    else:
        arrays = {k: old[k] for k in _SELFPLAY}
        arrays.update(policy_offsets=old["policy_offsets"], policy_indices=old["policy_indices"],
                      visits=old["policy_visits"],
                      policy_weights=row_normalized(old["policy_offsets"], old["policy_visits"]))
        source = {"kind": "selfplay", "converted_from": converted, **settings}
    arrays["wdl"] = one_hot_wdl(old["outcome"])
    for off, idx in (("policy_offsets", "policy_indices"), ("legal_offsets", "legal_indices")):
        if off in arrays and (arrays[off].shape != (n + 1,) or arrays[off][-1] != len(arrays[idx])):
            raise ShardError(path / f"{off}.npy", f"offsets do not match {idx}")
    v3 = {"format": FORMAT, "format_version": FORMAT_VERSION, "samples": n,
          "games": int(header.get("games", len(old["game_index"]))), "split": header.get("split", ""),
          "source": source, "legacy": {"format": fmt, "format_version": version}}
    return Shard(path, v3, arrays)
