"""Writers of the shard formats before version 3, as the old code wrote them, so the tests
can check that data sets made by earlier zerochess versions still load and convert.

``zerochess-shard`` v2 (phase 1): tokens, move, outcome, kind, game, ply, p_max, p_top5, the
legal CSR with ``sampler_prob`` (float16) aligned to it, per-game arrays; v1 the same without
``sampler_prob``. ``zerochess-selfplay-shard`` v1: tokens, move, outcome, root_q, game, ply,
the policy CSR with ``policy_visits`` (int32), per-game arrays with opponent and false
resignation. Headers list every array with dtype, shape and SHA-256.
"""

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np

from zerochess.train.data.dataset import open_shard

PHASE1 = ["tokens", "move", "outcome", "kind", "game", "ply", "p_max", "p_top5",
          "legal_offsets", "legal_indices", "game_index", "game_plies", "game_result", "game_end"]
SELFPLAY = ["tokens", "move", "outcome", "root_q", "game", "ply", "policy_offsets",
            "policy_indices", "policy_visits", "game_index", "game_plies", "game_result",
            "game_end", "game_opponent", "game_false_resign"]


def write_old(path: Path, arrays: dict, header: dict) -> None:
    path.mkdir(parents=True)
    header = {**header, "samples": len(arrays["tokens"]), "games": len(arrays["game_index"]),
              "arrays": {}}
    for name, a in arrays.items():
        np.save(path / f"{name}.npy", a, allow_pickle=False)
        header["arrays"][name] = {"dtype": str(a.dtype), "shape": list(a.shape),
                                  "sha256": hashlib.sha256((path / f"{name}.npy").read_bytes()).hexdigest()}
    (path / "shard.json").write_text(json.dumps(header, indent=1))


def phase1_arrays(sh, version: int) -> dict:
    """A random-play version-3 shard's arrays as zerochess-shard ``version`` held them."""
    arrays = {k: np.asarray(sh[k]) for k in PHASE1}
    if version >= 2:  # the sampler's probabilities over every legal move, float16
        prob = np.zeros(len(arrays["legal_indices"]), np.float16)
        off, idx = np.asarray(sh["legal_offsets"]), arrays["legal_indices"]
        poff, pidx, pw = (np.asarray(sh[k]) for k in ("policy_offsets", "policy_indices", "policy_weights"))
        for r in range(len(off) - 1):
            where = {int(m): off[r] + j for j, m in enumerate(idx[off[r]:off[r + 1]])}
            for m, w in zip(pidx[poff[r]:poff[r + 1]], pw[poff[r]:poff[r + 1]]):
                prob[where[int(m)]] = w
        arrays["sampler_prob"] = prob
    return arrays


def downgrade_dataset(src: Path, dst: Path, version: int) -> Path:
    """Copy the random-play data set ``src`` with every shard in zerochess-shard ``version``."""
    dst.mkdir(parents=True)
    shutil.copy(src / "metadata.json", dst / "metadata.json")
    for name in json.loads((src / "metadata.json").read_text())["shards"]:
        sh = open_shard(src / name)
        write_old(dst / name, phase1_arrays(sh, version),
                  {"format": "zerochess-shard", "format_version": version, "split": sh.split,
                   "shard": sh.header.get("shard"), "dataset_seed": sh.header.get("dataset_seed")})
    return dst


def downgrade_selfplay(src: Path, dst: Path) -> Path:
    """Write the self-play version-3 shard ``src`` as a zerochess-selfplay-shard v1 ``dst``."""
    sh = open_shard(src)
    arrays = {k: np.asarray(sh["visits" if k == "policy_visits" else k]) for k in SELFPLAY}
    write_old(dst, arrays, {"format": "zerochess-selfplay-shard", "format_version": 1,
                            "iteration": sh.header.get("iteration"), "worker": sh.header.get("worker")})
    shutil.copy(src / "games.pgn", dst / "games.pgn")
    return dst
