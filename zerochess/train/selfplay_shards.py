"""Self-play shards: phase 1's shard format family with the search's visit counts as target.

Like a phase-1 shard (``zerochess.train.shards``) a self-play shard is a directory of plain
``.npy`` arrays plus ``shard.json`` (format name, version, counts, and per array its dtype,
shape and SHA-256), appears only through an atomic directory rename, and maps with
``np.load(..., mmap_mode="r")``. It also holds ``games.pgn``, the same games as PGN.
Format ``zerochess-selfplay-shard`` version 1, one row per recorded position (a full
search by the network being trained; random-opening moves, fast searches and the pool
opponent's moves are played but not recorded) unless noted:

===============  ===============  ===========================================================
array            dtype, shape     meaning
===============  ===============  ===========================================================
tokens           uint8 [N, 72]    network input (zerochess.engine.encoding, mover's frame)
move             int16 [N]        policy index of the move played from the position
policy_offsets   int64 [N + 1]    CSR offsets: position i's root moves are
                                  policy_indices[policy_offsets[i]:policy_offsets[i + 1]]
policy_indices   int16 [L]        policy indices of the root's moves: every legal move, in
                                  Board.legal_moves() order (so they are also the legal mask)
policy_visits    int32 [L]        root visit count of each of those moves, exactly as the
                                  search left them (``Tree.root_visits()``); the policy
                                  target is visits / sum(visits) of the position
outcome          int8 [N]         game result from the side to move: -1 loss, 0 draw, +1 win
                                  (WDL class = outcome + 1); truncated games count as draws,
                                  resigned games as a loss for the side that resigned
root_q           float32 [N]      the search's value of the position, P(win) - P(loss) for
                                  the side to move (what resignation looks at)
game             int32 [N]        run-wide index of the game the position comes from
ply              int16 [N]        plies played before the position
game_index       int32 [G]        per game: its run-wide index
game_plies       int16 [G]        per game: plies played
game_result      int8 [G]         per game: +1 White won, -1 Black won, 0 draw/truncated
game_end         uint8 [G]        per game: Status value (1 mate, 2 stalemate, 3 material,
                                  4 fifty moves, 5 repetition), 6 truncated, 7 resigned
game_opponent    int32 [G]        per game: -1 self-play, else the pool checkpoint's
                                  iteration the best network played against
game_false_resign int8 [G]        per game: -1 no check (resignation enabled, or nobody
                                  fell below the threshold), 0 the side that would have
                                  resigned lost anyway, 1 it did not lose (a false resignation)
===============  ===============  ===========================================================

Run-wide game indices: iteration * 10**6 + worker * 10**4 + the worker's game number, so
indices stay unique without coordination between workers.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from zerochess.train.shards import ShardError, _sha256, load_arrays, write_json_atomic

FORMAT = "zerochess-selfplay-shard"
FORMAT_VERSION = 1
SEQ_LEN = 72

END_TRUNCATED = 6
END_RESIGNED = 7

SAMPLE_ARRAYS = {
    "tokens": (np.uint8, (SEQ_LEN,)),
    "move": (np.int16, ()),
    "outcome": (np.int8, ()),
    "root_q": (np.float32, ()),
    "game": (np.int32, ()),
    "ply": (np.int16, ()),
}
GAME_ARRAYS = {
    "game_index": np.int32,
    "game_plies": np.int16,
    "game_result": np.int8,
    "game_end": np.uint8,
    "game_opponent": np.int32,
    "game_false_resign": np.int8,
}
CSR_ARRAYS = {"policy_offsets": np.int64, "policy_indices": np.int16, "policy_visits": np.int32}
ALL_ARRAYS = [*SAMPLE_ARRAYS, *CSR_ARRAYS, *GAME_ARRAYS]

#: Shard directory names in RUN_DIR/games: iteration, worker, chunk (the worker's n-th shard).
SHARD_RE = re.compile(r"^it(\d{4})-w(\d{2})-c(\d{4})$")


def shard_name(iteration: int, worker: int, chunk: int) -> str:
    return f"it{iteration:04d}-w{worker:02d}-c{chunk:04d}"


def _check_layout(path: Path, arrays: dict, n: int, g: int) -> None:
    for name, (dtype, trail) in SAMPLE_ARRAYS.items():
        a = arrays[name]
        if a.dtype != dtype or a.shape != (n, *trail):
            raise ShardError(path / f"{name}.npy",
                             f"expected {np.dtype(dtype)} {(n, *trail)}, got {a.dtype} {a.shape}")
    for name, dtype in GAME_ARRAYS.items():
        a = arrays[name]
        if a.dtype != dtype or a.shape != (g,):
            raise ShardError(path / f"{name}.npy",
                             f"expected {np.dtype(dtype)} ({g},), got {a.dtype} {a.shape}")
    off, idx, vis = arrays["policy_offsets"], arrays["policy_indices"], arrays["policy_visits"]
    if off.dtype != np.int64 or off.shape != (n + 1,):
        raise ShardError(path / "policy_offsets.npy",
                         f"expected int64 ({n + 1},), got {off.dtype} {off.shape}")
    if idx.dtype != np.int16 or idx.ndim != 1 or vis.dtype != np.int32 or vis.shape != idx.shape:
        raise ShardError(path / "policy_indices.npy",
                         f"expected int16 [L] indices and int32 [L] visits, got {idx.dtype} "
                         f"{idx.shape} and {vis.dtype} {vis.shape}")
    if off[0] != 0 or off[-1] != len(idx) or np.any(np.diff(off) <= 0):
        raise ShardError(path / "policy_offsets.npy",
                         "offsets must rise strictly from 0 to len(policy_indices)")


def write_selfplay_shard(path: str | os.PathLike, arrays: dict[str, np.ndarray], info: dict,
                         pgn: str = "") -> Path:
    """Validate ``arrays`` against the format and write shard ``path`` (with ``games.pgn``)
    atomically: a temporary directory renamed into place, so a killed actor leaves at most a
    ``*.tmp-*`` directory, which ``remove_partial`` deletes on restart."""
    path = Path(path)
    n, g = len(arrays["move"]), len(arrays["game_index"])
    _check_layout(path, arrays, n, g)
    if path.exists():
        raise ShardError(path, "a shard of that name already exists")
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    header = {"format": FORMAT, "format_version": FORMAT_VERSION, "samples": n, "games": g,
              **info, "arrays": {}}
    for name in ALL_ARRAYS:
        a = np.ascontiguousarray(arrays[name])
        np.save(tmp / f"{name}.npy", a, allow_pickle=False)
        header["arrays"][name] = {"dtype": str(a.dtype), "shape": list(a.shape),
                                  "sha256": _sha256(tmp / f"{name}.npy")}
    (tmp / "games.pgn").write_text(pgn)
    write_json_atomic(tmp / "shard.json", header)
    os.rename(tmp, path)
    return path


@dataclass
class SelfPlayShard:
    """One loaded self-play shard: memory-mapped arrays by name and its header."""

    path: Path
    header: dict
    arrays: dict[str, np.ndarray]

    def __len__(self) -> int:
        return int(self.header["samples"])

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    @property
    def games(self) -> int:
        return int(self.header["games"])

    def visits(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(policy indices, visit counts) of position ``i``."""
        a, b = self.arrays["policy_offsets"][i], self.arrays["policy_offsets"][i + 1]
        return self.arrays["policy_indices"][a:b], self.arrays["policy_visits"][a:b]


def load_selfplay_shard(path: str | os.PathLike, verify: bool = False) -> SelfPlayShard:
    """Memory-map a self-play shard, checking its version and every array's dtype and shape
    (and with ``verify`` its SHA-256). Raises ShardError naming the offending file."""
    path = Path(path)
    meta = path / "shard.json"
    if not meta.is_file():
        raise ShardError(meta, "missing shard header (not a shard, or an interrupted write)")
    try:
        header = json.loads(meta.read_text())
    except (OSError, ValueError) as e:
        raise ShardError(meta, f"unreadable shard header: {e}") from e
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ShardError(meta, "not a zerochess self-play shard header")
    if header.get("format_version") != FORMAT_VERSION:
        raise ShardError(meta, f"self-play shard format version {header.get('format_version')!r};"
                         f" this zerochess reads version {FORMAT_VERSION}")
    arrays = load_arrays(path, meta, header, ALL_ARRAYS, verify)
    _check_layout(path, arrays, int(header["samples"]), int(header["games"]))
    return SelfPlayShard(path, header, arrays)


def remove_partial(directory: str | os.PathLike) -> list[Path]:
    """Delete ``*.tmp-*`` leftovers of writers killed mid-write; return what was removed."""
    removed = []
    directory = Path(directory)
    if not directory.is_dir():
        return removed
    for p in directory.iterdir():
        if ".tmp-" in p.name:
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
            removed.append(p)
    return removed
