"""Versioned, memory-mappable training shards.

A shard is a directory of plain ``.npy`` arrays plus ``shard.json``; ``np.load(...,
mmap_mode="r")`` maps every array without reading it, so a data set larger than memory
trains the same way as a small one. Format version 2, one row per sample unless noted:

==============  ===============  ============================================================
array           dtype, shape     meaning
==============  ===============  ============================================================
tokens          uint8 [N, 72]    network input (zerochess.engine.encoding, mover's frame)
move            int16 [N]        policy index of the target move: the move played, or for a
                                 mate-in-1 sample (kind 1) a mating move
legal_offsets   int64 [N + 1]    CSR offsets: sample i's legal moves are
                                 legal_indices[legal_offsets[i]:legal_offsets[i + 1]]
legal_indices   int16 [L]        policy indices of the legal moves, in Board.legal_moves() order
sampler_prob    float16 [L]      (version 2) aligned with legal_indices: the sample's policy
                                 target over its legal moves. For a random-play sample, the
                                 exact probability with which the biased sampler drew each
                                 legal move (sums to 1 up to float16 rounding); for a mate-in-1
                                 sample, 1 on its mating move and 0 elsewhere
outcome         int8 [N]         game result from the side to move: -1 loss, 0 draw, +1 win
                                 (WDL class = outcome + 1); truncated games count as draws
kind            uint8 [N]        0 = random-play move, 1 = mate-in-1 sample (outcome +1)
game            int32 [N]        global index of the game the position comes from
ply             int16 [N]        plies played before the position
p_max           float32 [N]      the sampler's largest move probability in the position: the
                                 mean over kind-0 samples is the exact-accuracy ceiling
p_top5          float32 [N]      the sampler's five largest probabilities summed (top-5 ceiling)
game_index      int32 [G]        per game kept in the shard: its global index
game_plies      int16 [G]        per game: positions played
game_result     int8 [G]         per game: +1 White won, -1 Black won, 0 draw/truncated
game_end        uint8 [G]        per game: Status value, 6 = truncated (randomplay.END_REASONS)
==============  ===============  ============================================================

Versions: 1 lacks ``sampler_prob`` (otherwise identical); ``load_shard`` reads both, and a
version-1 shard simply has no ``sampler_prob`` entry (training with the sampler target then
refuses it). ``write_shard`` always writes the current version.

``shard.json`` holds the format name and version, the split, the sample and game counts and,
per array, dtype, shape and a SHA-256, so that a shard damaged after it was written is
reported by name instead of training on garbage. A shard appears under its final name only
through an atomic directory rename, so a killed writer leaves at most a ``*.tmp-*``
directory behind, which the next run deletes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FORMAT = "zerochess-shard"
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
SEQ_LEN = 72

# name -> (dtype, per-sample trailing shape or None for per-game/CSR arrays)
SAMPLE_ARRAYS = {
    "tokens": (np.uint8, (SEQ_LEN,)),
    "move": (np.int16, ()),
    "outcome": (np.int8, ()),
    "kind": (np.uint8, ()),
    "game": (np.int32, ()),
    "ply": (np.int16, ()),
    "p_max": (np.float32, ()),
    "p_top5": (np.float32, ()),
}
GAME_ARRAYS = {
    "game_index": np.int32,
    "game_plies": np.int16,
    "game_result": np.int8,
    "game_end": np.uint8,
}
CSR_ARRAYS = {"legal_offsets": np.int64, "legal_indices": np.int16}
# Arrays aligned with legal_indices, by the format version that introduced them.
LEGAL_ALIGNED = {"sampler_prob": (np.float16, 2)}
ALL_ARRAYS = [*SAMPLE_ARRAYS, *CSR_ARRAYS, *LEGAL_ALIGNED, *GAME_ARRAYS]


def arrays_of_version(version: int) -> list[str]:
    """The arrays a shard of format ``version`` holds."""
    return [a for a in ALL_ARRAYS if LEGAL_ALIGNED.get(a, (None, 0))[1] <= version]


class ShardError(ValueError):
    """A shard or data set cannot be used; the message names the file and the problem."""

    def __init__(self, path: str | os.PathLike, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def write_json_atomic(path: Path, obj: dict) -> None:
    """Write JSON to a temporary name and rename it into place (never a half-written file)."""
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_shard(path: str | os.PathLike, arrays: dict[str, np.ndarray], info: dict) -> Path:
    """Validate ``arrays`` against the format and write them as shard ``path``, atomically.

    ``info`` (split, generator settings...) is stored in ``shard.json`` next to the format
    header. Raises ValueError for arrays that do not match the documented layout, so a bug
    in a writer fails at write time rather than at training time.
    """
    path = Path(path)
    missing = [a for a in ALL_ARRAYS if a not in arrays]
    if missing:
        raise ShardError(path, f"missing arrays {missing} (format version {FORMAT_VERSION})")
    n = len(arrays["move"])
    g = len(arrays["game_index"])
    _check_layout(path, arrays, n, g)
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
    write_json_atomic(tmp / "shard.json", header)
    os.rename(tmp, path)  # atomic: the shard exists complete or not at all
    return path


def _check_layout(path: Path, arrays: dict, n: int, g: int) -> None:
    for name, (dtype, trail) in SAMPLE_ARRAYS.items():
        a = arrays[name]
        if a.dtype != dtype or a.shape != (n, *trail):
            raise ShardError(path / f"{name}.npy",
                             f"expected {np.dtype(dtype)} {(n, *trail)}, got {a.dtype} {a.shape}")
    for name, dtype in GAME_ARRAYS.items():
        a = arrays[name]
        if a.dtype != dtype or a.shape != (g,):
            raise ShardError(path / f"{name}.npy", f"expected {np.dtype(dtype)} ({g},), got {a.dtype} {a.shape}")
    off, idx = arrays["legal_offsets"], arrays["legal_indices"]
    if off.dtype != np.int64 or off.shape != (n + 1,):
        raise ShardError(path / "legal_offsets.npy", f"expected int64 ({n + 1},), got {off.dtype} {off.shape}")
    if idx.dtype != np.int16 or idx.ndim != 1:
        raise ShardError(path / "legal_indices.npy", f"expected int16 1-d, got {idx.dtype} {idx.shape}")
    if n and (off[0] != 0 or off[-1] != len(idx) or np.any(np.diff(off) < 0)):
        raise ShardError(path / "legal_offsets.npy", "offsets must rise from 0 to len(legal_indices)")
    for name, (dtype, _) in LEGAL_ALIGNED.items():
        a = arrays.get(name)
        if a is not None and (a.dtype != dtype or a.shape != idx.shape):
            raise ShardError(path / f"{name}.npy",
                             f"expected {np.dtype(dtype)} {idx.shape}, got {a.dtype} {a.shape}")


@dataclass
class Shard:
    """One loaded shard: memory-mapped arrays by name and its header."""

    path: Path
    header: dict
    arrays: dict[str, np.ndarray]

    def __len__(self) -> int:
        return int(self.header["samples"])

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    def __contains__(self, name: str) -> bool:
        return name in self.arrays

    @property
    def split(self) -> str:
        return self.header.get("split", "")


def csr_rows(offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gather of a CSR array: the flat positions of every entry of the given rows (row after
    row, in order) and each row's entry count, so ``values[flat]`` are their entries."""
    begin, lens = offsets[rows], offsets[rows + 1] - offsets[rows]
    return np.repeat(begin - np.cumsum(lens) + lens, lens) + np.arange(lens.sum()), lens


def load_arrays(path: Path, meta: Path, header: dict, names, verify: bool) -> dict:
    """Memory-map the named arrays of a shard directory, checking each against the header's
    dtype, shape and (with ``verify``) SHA-256; ShardError names the file at fault. Shared by
    the phase-1 and self-play shard readers, whose headers list arrays the same way."""
    arrays = {}
    for name in names:
        file = path / f"{name}.npy"
        want = header.get("arrays", {}).get(name)
        if want is None:
            raise ShardError(meta, f"no entry for array {name!r}")
        if not file.is_file():
            raise ShardError(file, "missing array file")
        if verify and _sha256(file) != want["sha256"]:
            raise ShardError(file, "checksum mismatch: the file is corrupt or was modified")
        try:
            a = np.load(file, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:
            raise ShardError(file, f"corrupt array: {e}") from e
        if str(a.dtype) != want["dtype"] or list(a.shape) != want["shape"]:
            raise ShardError(file, f"expected {want['dtype']} {want['shape']}, "
                             f"found {a.dtype} {list(a.shape)}")
        arrays[name] = a
    return arrays


def load_shard(path: str | os.PathLike, verify: bool = True) -> Shard:
    """Memory-map a shard, checking its version, every array's dtype and shape and, with
    ``verify``, its SHA-256. Raises ShardError naming the offending file."""
    path = Path(path)
    meta = path / "shard.json"
    if not meta.is_file():
        raise ShardError(meta, "missing shard header (not a shard, or an interrupted write)")
    try:
        header = json.loads(meta.read_text())
    except (OSError, ValueError) as e:
        raise ShardError(meta, f"unreadable shard header: {e}") from e
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ShardError(meta, "not a zerochess shard header")
    version = header.get("format_version")
    if version not in READABLE_VERSIONS:
        raise ShardError(meta, f"shard format version {version!r}; this zerochess reads "
                         f"versions {list(READABLE_VERSIONS)} (regenerate the data)")
    arrays = load_arrays(path, meta, header, arrays_of_version(version), verify)
    _check_layout(path, arrays, int(header["samples"]), int(header["games"]))
    return Shard(path, header, arrays)
