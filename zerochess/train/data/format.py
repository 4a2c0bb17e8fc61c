"""The one training-data format: every source writes the same sample.

Random play, self-play visit counts, a teacher engine's multipv scores and a user's PGN all
become the same thing: a position (tokens), a value target (WDL), and a **sparse policy
target** (CSR: move indices + weights summing to 1). Like KataGo's npz files, a shard is
versioned and every array is documented here, where it is written.

A shard is a directory of plain ``.npy`` arrays plus ``shard.json`` (and optionally
``games.pgn``); ``np.load(..., mmap_mode="r")`` maps every array over 1 MiB without reading
it, so a data set of large shards larger than memory trains like a small one, and reads the
smaller ones (``SMALL_ARRAY_BYTES``: a mapping holds a file descriptor). Format ``zerochess-data`` version 3
(versions 1-2 were the phase-1 ``zerochess-shard`` format and version 1 of the self-play
``zerochess-selfplay-shard``; ``legacy.py`` reads both into this layout).

Required arrays, one row per sample unless noted:

===============  ===============  ============================================================
array            dtype, shape     meaning
===============  ===============  ============================================================
tokens           uint8 [N, 72]    network input (zerochess.chess.encoding, mover's frame)
wdl              float32 [N, 3]   value target (loss, draw, win) from the side to move, each
                                  row sums to 1: one-hot of the game result for game data, a
                                  teacher's WDL estimate for labelled data
policy_offsets   int64 [N + 1]    CSR offsets: sample i's policy target is the moves
                                  policy_indices[policy_offsets[i]:policy_offsets[i + 1]]
policy_indices   int16 [L]        policy indices (zerochess.chess.encoding) of those moves,
                                  all legal in the position
policy_weights   float32 [L]      their target probabilities; each sample's sum to 1
game             int32 [N]        index of the game the position comes from (data-set wide;
                                  the train/validation split is by game)
ply              int16 [N]        plies played before the position in that game
===============  ===============  ============================================================

Optional arrays (a source writes those it has; readers check ``name in shard``):

=================  ===============  ==========================================================
array              dtype, shape     meaning
=================  ===============  ==========================================================
legal_offsets      int64 [N + 1]    CSR of every legal move of the position (the legality
legal_indices      int16 [L2]       target of the illegal-move penalty); without them the
                                    policy target's moves are the legal set (self-play
                                    targets cover every root move)
outcome            int8 [N]         game result from the side to move: -1, 0, +1
move               int16 [N]        policy index of the move played from the position
kind               uint8 [N]        random play: 0 random move, 1 mate-in-1 sample
p_max              float32 [N]      random play: the sampler's largest move probability
p_top5             float32 [N]      random play: its five largest probabilities summed
root_q             float32 [N]      self-play: the search's value of the position
visits             int32 [L]        self-play: root visit counts behind policy_weights
teacher_cp         int32 [N]        labelled: the teacher's score of its best move, in
                                    centipawns from the side to move; a mate in n is
                                    +-(32000 - n)
teacher_best       int16 [N]        labelled: policy index of the teacher's best move
key                uint64 [N]       Polyglot Zobrist key of the position (deduplication)
game_index         int32 [G]        per game in the shard: its data-set-wide index
game_plies         int16 [G]        per game: plies played
game_result        int8 [G]         per game: +1 White won, -1 Black won, 0 draw/truncated
game_end           uint8 [G]        per game: Status value; 6 truncated, 7 resigned
game_opponent      int32 [G]        self-play: -1, or the pool checkpoint played against
game_false_resign  int8 [G]         self-play: -1 no check, 0 correct, 1 false resignation
=================  ===============  ==========================================================

``shard.json`` holds the format name and version, the split, the sample and game counts, a
``source`` object saying what produced the data and with which settings (``source["kind"]``
is "random-play", "selfplay", "teacher" or "pgn"), and per array its dtype, shape and
SHA-256, so a shard damaged after it was written is reported by name instead of training
on garbage. A shard appears under its final name only through an atomic directory rename:
a killed writer leaves at most a ``*.tmp-*`` directory, which ``remove_partial`` deletes.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import io
import json
import os
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from zerochess.atomic import temporary_name, write_json_atomic
from zerochess.chess.layout import POLICY_SIZE, SEQ_LEN

__all__ = ["FORMAT", "FORMAT_VERSION", "Shard", "ShardError", "load_shard", "remove_partial",
           "pack_shard", "unpack_shard",
           "row_normalized", "validate", "write_json_atomic", "write_shard"]

FORMAT = "zerochess-data"
FORMAT_VERSION = 3

#: game_end values beyond the board's Status values (1 mate .. 5 repetition).
END_TRUNCATED = 6
END_RESIGNED = 7

#: name -> (dtype, trailing shape); per-sample arrays have N rows.
REQUIRED_SAMPLE = {
    "tokens": (np.uint8, (SEQ_LEN,)),
    "wdl": (np.float32, (3,)),
    "game": (np.int32, ()),
    "ply": (np.int16, ()),
}
OPTIONAL_SAMPLE = {
    "outcome": (np.int8, ()),
    "move": (np.int16, ()),
    "kind": (np.uint8, ()),
    "p_max": (np.float32, ()),
    "p_top5": (np.float32, ()),
    "root_q": (np.float32, ()),
    "teacher_cp": (np.int32, ()),
    "teacher_best": (np.int16, ()),
    "key": (np.uint64, ()),
}
#: CSR groups: offsets name -> (indices name, {aligned value arrays: dtype}, required)
CSR_GROUPS = {
    "policy_offsets": ("policy_indices", {"policy_weights": np.float32, "visits": np.int32}, True),
    "legal_offsets": ("legal_indices", {}, False),
}
GAME_ARRAYS = {
    "game_index": np.int32,
    "game_plies": np.int16,
    "game_result": np.int8,
    "game_end": np.uint8,
    "game_opponent": np.int32,
    "game_false_resign": np.int8,
}
REQUIRED_GAME = ("game_index", "game_plies", "game_result", "game_end")
OPTIONAL_ALIGNED = {"visits"}
SOURCE_KINDS = ("random-play", "selfplay", "teacher", "pgn")


class ShardError(ValueError):
    """A shard or data set cannot be used; the message names the file and the problem."""

    def __init__(self, path: str | os.PathLike, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def row_normalized(offsets: np.ndarray, values: np.ndarray) -> np.ndarray:
    """float32 weights: each CSR row of ``values`` divided by its sum (a row summing to 0
    becomes uniform), e.g. a search's visit counts or float16 sampler probabilities made
    into a policy target whose rows sum to 1."""
    offsets = np.asarray(offsets, dtype=np.int64)
    lens = np.diff(offsets)
    rows = np.repeat(np.arange(len(lens)), lens)
    v = np.asarray(values, dtype=np.float32)
    sums = np.bincount(rows, weights=v, minlength=len(lens)).astype(np.float32)
    empty = sums[rows] == 0
    out = v / np.where(empty, 1, sums[rows])
    out[empty] = (1 / lens[rows[empty]]).astype(np.float32)
    return out.astype(np.float32)


def known_arrays() -> dict[str, object]:
    """Every array name the format defines -> its dtype."""
    names: dict[str, object] = {k: v[0] for k, v in {**REQUIRED_SAMPLE, **OPTIONAL_SAMPLE}.items()}
    for off, (idx, aligned, _) in CSR_GROUPS.items():
        names[off], names[idx] = np.int64, np.int16
        names.update(aligned)
    names.update(GAME_ARRAYS)
    return names


def validate(path: Path, arrays: dict[str, np.ndarray], check_values: bool = True) -> tuple[int, int]:
    """Check ``arrays`` against the format; return (samples, games). ShardError names the
    array (as ``path/<name>.npy``) that breaks the layout. With ``check_values`` also the
    contents that a wrong writer gets wrong: WDL and policy rows summing to 1, offsets rising,
    indices inside the policy."""
    path = Path(path)
    known = known_arrays()
    unknown = sorted(set(arrays) - set(known))
    if unknown:
        raise ShardError(path, f"arrays {unknown} are not part of format version {FORMAT_VERSION}")
    missing = [a for a in [*REQUIRED_SAMPLE, "policy_offsets", "policy_indices", "policy_weights"]
               if a not in arrays]
    if missing:
        raise ShardError(path, f"missing arrays {missing} (format version {FORMAT_VERSION})")
    n = len(arrays["tokens"])

    def bad(name: str, problem: str) -> ShardError:
        return ShardError(path / f"{name}.npy", problem)

    for name, (dtype, trail) in {**REQUIRED_SAMPLE, **OPTIONAL_SAMPLE}.items():
        a = arrays.get(name)
        if a is not None and (a.dtype != dtype or a.shape != (n, *trail)):
            raise bad(name, f"expected {np.dtype(dtype)} {(n, *trail)}, got {a.dtype} {a.shape}")
    for off_name, (idx_name, aligned, required) in CSR_GROUPS.items():
        off, idx = arrays.get(off_name), arrays.get(idx_name)
        if off is None and idx is None and not required:
            continue
        if off is None or idx is None:
            raise bad(off_name if off is None else idx_name, "a CSR group needs both offsets and indices")
        if off.dtype != np.int64 or off.shape != (n + 1,):
            raise bad(off_name, f"expected int64 ({n + 1},), got {off.dtype} {off.shape}")
        if idx.dtype != np.int16 or idx.ndim != 1:
            raise bad(idx_name, f"expected int16 1-d, got {idx.dtype} {idx.shape}")
        if check_values and (off[0] != 0 or off[-1] != len(idx) or np.any(np.diff(off) < 0)):
            raise bad(off_name, f"offsets must rise from 0 to len({idx_name})")
        if check_values and len(idx) and (idx.min() < 0 or idx.max() >= POLICY_SIZE):
            raise bad(idx_name, f"policy index outside 0..{POLICY_SIZE - 1}")
        for name, dtype in aligned.items():
            a = arrays.get(name)
            if a is None:
                if name not in OPTIONAL_ALIGNED:
                    raise bad(name, "missing")
                continue
            if a.dtype != dtype or a.shape != idx.shape:
                raise bad(name, f"expected {np.dtype(dtype)} {idx.shape}, got {a.dtype} {a.shape}")
    if check_values:
        off = arrays["policy_offsets"]
        if n and np.any(np.diff(off) == 0):
            raise bad("policy_offsets", "every sample needs at least one policy-target move")
        sums = np.add.reduceat(arrays["policy_weights"].astype(np.float64), off[:-1]) if n else []
        if n and (np.any(arrays["policy_weights"] < 0) or np.abs(sums - 1).max() > 1e-3):
            raise bad("policy_weights", "policy target rows must be non-negative and sum to 1")
        wdl = arrays["wdl"]
        if n and (np.any(wdl < 0) or np.abs(wdl.sum(1) - 1).max() > 1e-3):
            raise bad("wdl", "WDL rows must be non-negative and sum to 1")
    game_present = [g for g in GAME_ARRAYS if g in arrays]
    g = 0
    if game_present:
        lacking = [a for a in REQUIRED_GAME if a not in arrays]
        if lacking:
            raise ShardError(path, f"per-game arrays need {lacking} too")
        g = len(arrays["game_index"])
        for name in game_present:
            a = arrays[name]
            if a.dtype != GAME_ARRAYS[name] or a.shape != (g,):
                raise bad(name, f"expected {np.dtype(GAME_ARRAYS[name])} ({g},), got {a.dtype} {a.shape}")
    return n, g


def write_shard(path: str | os.PathLike, arrays: dict[str, np.ndarray], source: dict,
                split: str = "", pgn: str | None = None, info: dict | None = None) -> Path:
    """Validate ``arrays`` and write them as shard ``path``, atomically (a temporary
    directory renamed into place). ``source`` says what produced the data (``kind`` one of
    SOURCE_KINDS, plus its settings); ``info`` adds other header fields. A bug in a writer
    fails here, at write time, rather than at training time."""
    path = Path(path)
    if source.get("kind") not in SOURCE_KINDS:
        raise ShardError(path, f"source kind {source.get('kind')!r} is not one of {SOURCE_KINDS}")
    n, g = validate(path, arrays)
    if path.exists():
        raise ShardError(path, "a shard of that name already exists")
    tmp = temporary_name(path)
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    header = {**(info or {}), "format": FORMAT, "format_version": FORMAT_VERSION, "samples": n,
              "games": g, "split": split, "source": source, "arrays": {}}
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        np.save(tmp / f"{name}.npy", a, allow_pickle=False)
        header["arrays"][name] = {"dtype": str(a.dtype), "shape": list(a.shape),
                                  "sha256": sha256_file(tmp / f"{name}.npy")}
    if pgn is not None:
        (tmp / "games.pgn").write_text(pgn)
    write_json_atomic(tmp / "shard.json", header)
    os.rename(tmp, path)  # the shard exists complete or not at all
    return path


@dataclass
class Shard:
    """One loaded shard: arrays by name (read-only; the large ones memory-mapped) and its header."""

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
    def games(self) -> int:
        """Games whose per-game arrays the shard holds."""
        return int(self.header.get("games", 0))

    @property
    def split(self) -> str:
        return self.header.get("split", "")

    @property
    def source(self) -> dict:
        return self.header.get("source", {})


def read_header(path: Path) -> dict:
    meta = path / "shard.json"
    if not meta.is_file():
        raise ShardError(meta, "missing shard header (not a shard, or an interrupted write)")
    try:
        header = json.loads(meta.read_text())
    except (OSError, ValueError) as e:
        raise ShardError(meta, f"unreadable shard header: {e}") from e
    if not isinstance(header, dict):
        raise ShardError(meta, "not a zerochess shard header")
    return header


#: Arrays up to this size are read into memory rather than memory-mapped: a mapping holds a
#: file descriptor for its lifetime, and a labelled shard's arrays are all smaller than this
#: (20 games, ~2,200 positions), so a data set of thousands of them maps nothing; the large
#: arrays of big shards stay mapped (paged in on demand, shared between processes).
SMALL_ARRAY_BYTES = 1 << 20

@functools.cache
def raise_open_file_limit() -> None:
    """Lift this process's soft limit on open files to its hard limit, once.

    Every memory-mapped array holds a file descriptor for as long as it lives (Python's
    mmap keeps a duplicate of the file's), and a shard has up to 18 arrays, so a data set of
    a few thousand shards (``train label --games 24000`` writes 2,400) needs tens of
    thousands of descriptors, while many systems start a process with a soft limit of 1,024.
    Raising the soft limit up to the hard one needs no privilege (Ray and many data loaders
    do the same). Where there is no such limit (Windows) or it cannot move, nothing changes
    and ``map_arrays`` says what to do if the descriptors run out."""
    try:
        import resource
    except ImportError:  # Windows
        return
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        if soft != resource.RLIM_INFINITY and soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    except (ValueError, OSError):  # e.g. macOS refuses more than OPEN_MAX: keep the limit
        pass


def map_arrays(path: Path, header: dict, verify: bool) -> dict[str, np.ndarray]:
    """Memory-map every array the header lists (read the small ones: ``SMALL_ARRAY_BYTES``),
    checking dtype, shape and (with ``verify``) SHA-256 against it; ShardError names the
    file at fault."""
    meta = path / "shard.json"
    listed = header.get("arrays")
    if not isinstance(listed, dict):
        raise ShardError(meta, "the header lists no arrays")
    raise_open_file_limit()
    arrays = {}
    for name, want in listed.items():
        file = path / f"{name}.npy"
        if not file.is_file():
            raise ShardError(file, "missing array file")
        if verify and sha256_file(file) != want.get("sha256"):
            raise ShardError(file, "checksum mismatch: the file is corrupt or was modified")
        try:
            mapped = file.stat().st_size > SMALL_ARRAY_BYTES
            a = np.load(file, mmap_mode="r" if mapped else None, allow_pickle=False)
            if not mapped:
                a.flags.writeable = False  # as read-only as a mapped one
        except OSError as e:
            if e.errno in (errno.EMFILE, errno.ENFILE):  # the shard is fine; the process is not
                raise ShardError(file, "too many open files: every memory-mapped array holds "
                                 "one; raise the limit (`ulimit -n`) and run again") from e
            raise ShardError(file, f"corrupt array: {e}") from e
        except (ValueError, EOFError) as e:
            raise ShardError(file, f"corrupt array: {e}") from e
        if str(a.dtype) != want.get("dtype") or list(a.shape) != want.get("shape"):
            raise ShardError(file, f"expected {want.get('dtype')} {want.get('shape')}, "
                             f"found {a.dtype} {list(a.shape)}")
        arrays[name] = a
    return arrays


def load_shard(path: str | os.PathLike, verify: bool = True) -> Shard:
    """Memory-map a version-3 shard, checking its header, every array's dtype and shape
    and, with ``verify``, its SHA-256. Raises ShardError naming the offending file."""
    path = Path(path)
    header = read_header(path)
    if header.get("format") != FORMAT:
        raise ShardError(path / "shard.json", f"not a {FORMAT} shard header")
    if header.get("format_version") != FORMAT_VERSION:
        raise ShardError(path / "shard.json", f"format version {header.get('format_version')!r}; "
                         f"this zerochess reads version {FORMAT_VERSION}")
    arrays = map_arrays(path, header, verify)
    n, g = validate(path, arrays, check_values=False)
    if n != int(header.get("samples", -1)) or g != int(header.get("games", -1)):
        raise ShardError(path / "shard.json", "sample or game count differs from the arrays")
    return Shard(path, header, arrays)


def pack_shard(path: str | os.PathLike) -> bytes:
    """A written shard as one byte string (an uncompressed tar of its files), so that it can
    travel where no filesystem is shared (a Ray actor's result, a process queue)."""
    path = Path(path)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for f in sorted(path.iterdir()):
            tar.add(f, arcname=f.name, recursive=False)
    return out.getvalue()


def unpack_shard(blob: bytes, path: str | os.PathLike) -> Shard:
    """Write a ``pack_shard`` byte string as shard ``path``, atomically, and return it loaded
    with every checksum verified: a shard damaged in transit fails here with ShardError and
    leaves nothing behind."""
    path = Path(path)
    if path.exists():
        raise ShardError(path, "a shard of that name already exists")
    tmp = temporary_name(path)
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        try:
            with tarfile.open(fileobj=io.BytesIO(blob), mode="r") as tar:
                for member in tar.getmembers():
                    name = member.name
                    if not member.isfile() or "/" in name or name in ("", ".", ".."):
                        raise ShardError(path, f"packed shard holds an unexpected entry {name!r}")
                    (tmp / name).write_bytes(tar.extractfile(member).read())
        except tarfile.TarError as e:
            raise ShardError(path, f"packed shard is not readable ({e})") from e
        load_shard(tmp, verify=True)
        os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return load_shard(path, verify=False)


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
