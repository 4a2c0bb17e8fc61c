"""`zerochess train label`: positions labelled by a teacher engine, in the one data format.

Where the positions come from (``LabelConfig.source``):

* ``"games"`` (default): the teacher plays itself at mixed strength. Each game starts from a
  random opening of ``openings`` (an EPD/PGN book, else the start position), adds 0 to
  ``random_plies`` uniformly random moves, and then plays by sampling the teacher's own
  multipv moves at a per-game temperature, with a per-game share of uniformly random moves
  (up to ``explore``): strong games, sloppy games and the positions a weaker engine
  (zerochess) walks into. Every position of every game is labelled (the labels also choose
  the moves, so generation costs nothing beyond the labelling).
* a path to a ``.pgn`` file: every position of every game (zerochess's own self-play or
  match PGNs, a user's games), or to an ``.epd`` file: every position in it.

Labels per position (``teacher.py``): the teacher's best move and score, its WDL, and a
policy target over its multipv moves. Written as version-3 shards (``format.py``) with the
legal-move CSR, so `train supervise` trains on it like any other data set.

Work is split into chunks of ``games_per_chunk`` games; chunk c covers games
[c * G, (c + 1) * G) and is written as two shards, ``cNNNNN-train`` and ``cNNNNN-val`` (the
split is by game: game 1, then every ``val_every``-th game after it, 21, 41, ..., is a
validation game, ``dataset.is_val_game``, so two games already make a validation split; a
data set begun before this rule, every n-th game from game n - 1, grows by it: each game's
split is decided once, when its chunk is made). A chunk's content is a function of (seed,
chunk) alone: the game's random choices come from
``default_rng([seed, game])`` and the teacher forgets everything between games
(``ucinewgame``; one thread), so a killed run that is started again produces the same data
set as an uninterrupted one. When every chunk exists, positions are deduplicated by Zobrist
key in chunk order (the first occurrence stays), shards rewritten where rows were dropped,
and ``metadata.json`` marked complete. Parallel workers each keep one teacher process.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Callable

import chess
import chess.pgn
import chess.polyglot
import numpy as np

from zerochess.chess.board import Board
from zerochess.chess.encoding import encode_board, legal_move_indices, move_to_index
from zerochess.chess.layout import SEQ_LEN
from zerochess.train.common.pool import map_jobs
from zerochess.train.configfile import ConfigFile, setting
from zerochess.train.data.batches import csr_rows
from zerochess.train.data.dataset import (finish_dataset, is_val_game, open_dataset, shard_entry,
                                          write_metadata)
from zerochess.train.data.format import load_shard, write_shard
from zerochess.train.data.teacher import (Teacher, TeacherConfig, TeacherFailure, line_wdl,
                                          policy_target, position_command)


@dataclass
class LabelConfig(ConfigFile):
    """A labelling run; ``settings()`` is stored in metadata.json and must match on resume.
    The fields declared with ``setting()`` (``configfile``), ``teacher``'s included, are the
    flags of `train label`; ``move_temperatures`` has none."""

    teacher: TeacherConfig = field(default_factory=TeacherConfig)
    source: str = setting(  # "games" (teacher self-play) or a .pgn / .epd path
        "games",
        "'games' (the teacher plays itself at mixed strength) or a .pgn/.epd file to label.")
    games: int = setting(  # all of a file's games when source is one
        1000, "Teacher games to play (source 'games'); rerun with more to grow the data set.",
        min=1)
    games_per_chunk: int = setting(
        20, "Games per unit of work (its train shard and its val shard).", min=1)
    openings: str | None = setting(
        None, "EPD/PGN book the teacher games start from [default: the start position].",
        existing_file=True)
    random_plies: int = setting(
        4, "Up to this many uniformly random plies after the opening (source 'games').", min=0)
    explore: float = setting(  # per game, a share of random moves drawn from [0, explore]
        0.15, "Largest per-game share of random moves in teacher games.", min=0, max=1)
    move_temperatures: tuple = (0.0, 0.01, 0.03)  # per game, one of these (0 = best move)
    max_plies: int = setting(
        250, "Cut a teacher game after this many plies (scored as a draw).", min=1)
    policy_temperature: float = setting(  # of the policy target (teacher.policy_target)
        0.04, "Temperature of the policy target on the expected-score scale (0 = best move only).",
        min=0)
    val_every: int = setting(
        20, "Every n-th game goes to the validation split (games 1, 1 + n, 1 + 2n, ...).", min=2)
    seed: int = setting(0, "Master seed: a game's random choices come from (seed, game).")

    def __post_init__(self) -> None:
        self.check_settings()

    def settings(self) -> dict:
        """What must match when a run is continued. ``games`` is not part of it: a finished
        data set grows by running again with a larger ``--games`` (chunks already made are
        kept; a last chunk that was short is made again with its full games)."""
        d = asdict(self)
        d["move_temperatures"] = list(self.move_temperatures)
        del d["games"]
        return d


@dataclass
class ChunkStats:
    chunk: int
    positions: int
    games: int
    teacher_seconds: float   # the teacher's own reported search time
    wall_seconds: float
    failures: int            # analyses that failed (each followed by a restart)
    skipped: int             # positions given up on after a retry (their game ends there)


# -- position sources ------------------------------------------------------------------------

def read_positions_file(path: str) -> list[tuple[str, list[str]]]:
    """(start FEN, UCI moves) per game of a PGN, or per line of an EPD (no moves)."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    out: list[tuple[str, list[str]]] = []
    if p.suffix.lower() == ".epd":
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if line.strip():
                try:  # a full FEN (books often carry the move counters), else EPD
                    board = chess.Board(line.strip())
                except ValueError:
                    try:
                        board, _ = chess.Board.from_epd(line.strip())
                    except ValueError as e:
                        raise ValueError(f"{path}:{n}: not an EPD position: {e}") from None
                out.append((board.fen(), []))
        return out
    with open(p, encoding="utf-8", errors="replace") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            out.append((game.board().fen(), [m.uci() for m in game.mainline_moves()]))
    return out


def _game_count(cfg: LabelConfig, positions: list | None) -> int:
    return cfg.games if positions is None else len(positions)


# -- one chunk ---------------------------------------------------------------------------

class _Recorder:
    """Rows of one split of a chunk, turned into format arrays at the end. The CSR groups
    grow as flat lists (one extend per position, no array per row)."""

    def __init__(self) -> None:
        self.rows: dict[str, list] = {k: [] for k in
                                      ("tokens", "wdl", "game", "ply", "move", "teacher_cp",
                                       "teacher_best", "key", "outcome_sign")}
        self.pol_idx: list[int] = []
        self.pol_w: list[float] = []
        self.pol_len: list[int] = []
        self.legal: list[np.ndarray] = []
        self.games: list[tuple[int, int, int, int]] = []

    def add(self, nb: Board, game: int, ply: int, lines, temperature: float, move: int,
            legal: np.ndarray) -> None:
        """One position: ``lines`` keyed by policy index (``_native_check``), ``move`` the
        played move's index, ``legal`` every legal move's (``legal_move_indices``)."""
        r = self.rows
        r["tokens"].append(encode_board(nb))
        r["wdl"].append(line_wdl(lines[0], ply))
        r["game"].append(game)
        r["ply"].append(ply)
        r["move"].append(move)
        r["teacher_cp"].append(lines[0].cp)
        r["teacher_best"].append(lines[0].key)
        r["key"].append(nb.zobrist())
        r["outcome_sign"].append(1 if nb.turn else -1)  # White to move: +1
        self.pol_idx.extend([ln.key for ln in lines])
        self.pol_w.extend(policy_target(lines, temperature))
        self.pol_len.append(len(lines))
        self.legal.append(legal)

    def end_game(self, game: int, plies: int, white_result: int, end: int) -> None:
        self.games.append((game, plies, white_result, end))

    def arrays(self) -> dict[str, np.ndarray]:
        r = self.rows
        n = len(r["game"])
        results = {g: res for g, _, res, _ in self.games}
        outcome = [results[g] * s for g, s in zip(r["game"], r["outcome_sign"])]

        def offsets(lens):
            return np.concatenate([[0], np.cumsum(np.array(lens, np.int64))]).astype(np.int64)

        g = self.games
        return {
            "tokens": np.array(r["tokens"], np.uint8).reshape(n, SEQ_LEN),
            "wdl": np.array(r["wdl"], np.float32).reshape(n, 3),
            "game": np.array(r["game"], np.int32),
            "ply": np.array(r["ply"], np.int16),
            "move": np.array(r["move"], np.int16),
            "teacher_cp": np.array(r["teacher_cp"], np.int32),
            "teacher_best": np.array(r["teacher_best"], np.int16),
            "key": np.array(r["key"], np.uint64),
            "outcome": np.array(outcome, np.int8),
            "policy_offsets": offsets(self.pol_len),
            "policy_indices": np.array(self.pol_idx, np.int16),
            "policy_weights": np.array(self.pol_w, np.float32),
            "legal_offsets": offsets([len(x) for x in self.legal]),
            "legal_indices": (np.concatenate(self.legal) if self.legal
                              else np.empty(0)).astype(np.int16),
            "game_index": np.array([x[0] for x in g], np.int32),
            "game_plies": np.array([x[1] for x in g], np.int16),
            "game_result": np.array([x[2] for x in g], np.int8),
            "game_end": np.array([x[3] for x in g], np.uint8),
        }


END_TRUNCATED = 6


class PositionText:
    """The teacher's ``position`` command for a game on the native board, kept move by move:
    the FEN after the last capture or pawn move (before any, the text the game started with)
    and the moves since. It is ``teacher.position_command`` of the same game, without
    copying and popping a python-chess board at every position: the history the teacher
    sees, and so its repetition draws and its labels, are unchanged."""

    def __init__(self, first: str) -> None:
        root, _, moves = first.partition(" moves ")
        self.root = root
        self.moves = moves.split()

    def push(self, nb: Board, uci: str) -> None:
        """After ``nb.push_uci(uci)``."""
        if nb.halfmove_clock == 0:
            self.root = "position fen " + nb.fen()
            self.moves = []
        else:
            self.moves.append(uci)

    def text(self) -> str:
        return self.root + " moves " + " ".join(self.moves) if self.moves else self.root


def _native_check(nb: Board):
    """The teacher's move check on the native board: its policy index (the key that finds a
    move named twice), IllegalMoveError / InvalidMoveError (ValueErrors) otherwise."""
    return lambda uci: move_to_index(nb, uci)


def _choose(rng: np.random.Generator, lines, nb: Board, explore: float,
            temperature: float) -> tuple[str, int]:
    """The move a teacher game plays (UCI, policy index): random with probability
    ``explore``, else one of the teacher's lines by softmax of expected score / temperature
    (0: the best). The random move is drawn from python-chess's list of legal moves, whose
    order decides which move a draw names; that list is made only when it is needed."""
    if rng.random() < explore:
        legal = list(chess.Board(nb.fen()).legal_moves)
        uci = legal[int(rng.integers(len(legal)))].uci()
        return uci, move_to_index(nb, uci)
    if temperature <= 0 or len(lines) == 1:
        return lines[0].move, lines[0].key
    w = np.array(policy_target(lines, temperature), np.float64)
    line = lines[_draw(rng, w / w.sum())]
    return line.move, line.key


def _draw(rng: np.random.Generator, p: np.ndarray) -> int:
    """``rng.choice(len(p), p=p)``, by numpy's own algorithm (the cumulative sum, normalised,
    searched for one ``rng.random()``): the same index from the same stream, without
    ``choice``'s checks of ``p``, which cost twice the draw (tests/test_label_golden.py)."""
    cdf = p.cumsum()
    cdf /= cdf[-1]
    return int(cdf.searchsorted(rng.random(), side="right"))


def _play_game(teacher: Teacher, cfg: LabelConfig, game: int, start: tuple[str, list[str]] | None,
               openings: list | None, rec: _Recorder, stats: dict) -> None:
    """Label one game (a teacher game when ``start`` is None, else the given game's positions).
    python-chess plays the opening and the random plies; from there on only the native board
    is moved."""
    rng = np.random.default_rng([cfg.seed, game])
    if start is None:
        fen = chess.STARTING_FEN
        if openings:
            fen, moves = openings[int(rng.integers(len(openings)))]
        else:
            moves = []
    else:
        fen, moves = start
    board = chess.Board(fen)
    for uci in moves if start is None else []:
        board.push_uci(uci)
    if start is None:
        for _ in range(int(rng.integers(cfg.random_plies + 1))):
            legal = list(board.legal_moves)
            if not legal or board.is_game_over(claim_draw=True):
                break
            board.push(legal[int(rng.integers(len(legal)))])
    nb = Board(board.root().fen())
    for m in board.move_stack:
        nb.push_uci(m.uci())
    position = PositionText(position_command(board))
    check = _native_check(nb)
    explore = float(rng.uniform(0, cfg.explore))
    temperature = float(cfg.move_temperatures[int(rng.integers(len(cfg.move_temperatures)))])
    teacher.new_game()
    script = list(moves) if start is not None else None
    ply = 0
    end = END_TRUNCATED
    while True:
        status = nb.status()
        if int(status) != 0:
            end = int(status)
            break
        if ply >= (cfg.max_plies if script is None else len(script)):
            break
        legal = legal_move_indices(nb)
        try:
            lines = teacher.lines(position.text(), len(legal), check, nb.fen)
        except TeacherFailure:
            stats["skipped"] += 1
            break
        stats["teacher_seconds"] += lines[0].seconds
        if script is None:
            uci, move = _choose(rng, lines, nb, explore, temperature)
        else:
            uci = script[ply]
            move = move_to_index(nb, uci)
        game_ply = 2 * (nb.fullmove_number - 1) + (0 if nb.turn else 1)
        rec.add(nb, game, game_ply, lines, cfg.policy_temperature, move, legal)
        nb.push_uci(uci)
        position.push(nb, uci)
        ply += 1
    result = {"1-0": 1, "0-1": -1}.get(nb.result(), 0) if end != END_TRUNCATED else 0
    rec.end_game(game, ply, result, end)


_WORKER: dict = {}


def _worker_init(teacher_cfg: TeacherConfig) -> None:
    _WORKER["teacher"] = None
    _WORKER["cfg"] = teacher_cfg


def _teacher() -> Teacher:
    if _WORKER.get("teacher") is None:
        _WORKER["teacher"] = Teacher(_WORKER["cfg"])
    return _WORKER["teacher"]


def chunk_names(chunk: int) -> tuple[str, str]:
    return f"c{chunk:05d}-train", f"c{chunk:05d}-val"


def _make_chunk(job: tuple) -> ChunkStats:
    """Worker: label chunk ``chunk`` and write its two shards (atomically, each)."""
    cfg, chunk, out, n_games, positions, openings = job
    t0 = time.perf_counter()
    teacher = _teacher()
    f0 = teacher.failures
    stats = {"teacher_seconds": 0.0, "skipped": 0}
    recs = {"train": _Recorder(), "val": _Recorder()}
    first = chunk * cfg.games_per_chunk
    for game in range(first, min(first + cfg.games_per_chunk, n_games)):
        split = "val" if is_val_game(game, Fraction(1, cfg.val_every)) else "train"
        start = positions[game] if positions is not None else None
        _play_game(teacher, cfg, game, start, openings, recs[split], stats)
    source = {**cfg.settings(), "kind": "teacher", "engine": teacher.name}
    games = min(first + cfg.games_per_chunk, n_games) - first
    for split, name in zip(("train", "val"), chunk_names(chunk)):
        write_shard(Path(out) / name, recs[split].arrays(), source, split=split,
                    info={"chunk": chunk, "chunk_games": games})
    n = sum(len(r.rows["game"]) for r in recs.values())
    return ChunkStats(chunk, n, games, stats["teacher_seconds"], time.perf_counter() - t0,
                      teacher.failures - f0, stats["skipped"])


# -- the data set ----------------------------------------------------------------------

def _chunk_done(out: Path, chunk: int, games: int) -> bool:
    """Both shards of the chunk exist and cover its ``games`` games."""
    for name in chunk_names(chunk):
        try:
            header = json.loads((out / name / "shard.json").read_text())
        except (OSError, ValueError):
            return False
        if header.get("chunk_games") != games:
            return False
    return True


def deduplicate(out: Path, n_chunks: int) -> dict:
    """Drop repeated positions (by Zobrist key) in chunk order, rewriting affected shards.
    Idempotent: a shard already deduplicated against its predecessors drops nothing, so a
    run killed in the middle of this finishes it when started again."""
    seen: set[int] = set()
    dropped = 0
    for chunk in range(n_chunks):
        for name in chunk_names(chunk):
            path = out / name
            sh = load_shard(path, verify=False)
            keys = np.asarray(sh["key"])
            keep = np.zeros(len(keys), bool)
            for i, k in enumerate(keys.tolist()):
                if k not in seen:
                    seen.add(k)
                    keep[i] = True
            if keep.all():
                continue
            dropped += int((~keep).sum())
            arrays = _subset({k: np.asarray(v) for k, v in sh.arrays.items()}, keep)
            tmp_new = out / f"{name}.tmp-dedup"
            shutil.rmtree(tmp_new, ignore_errors=True)
            write_shard(tmp_new, arrays, sh.source, split=sh.split,
                        info={"chunk": chunk, "chunk_games": sh.header["chunk_games"],
                              "deduplicated": True})
            old = out / f"{name}.tmp-old"
            shutil.rmtree(old, ignore_errors=True)
            os.rename(path, old)        # killed here: the chunk is redone, identically
            os.rename(tmp_new, path)
            shutil.rmtree(old, ignore_errors=True)
    return {"duplicates_dropped": dropped, "unique_positions": len(seen)}


def _subset(a: dict[str, np.ndarray], keep: np.ndarray) -> dict[str, np.ndarray]:
    """The rows ``keep`` of a shard's arrays (per-sample, both CSR groups; per-game kept)."""
    out = {}
    rows = np.nonzero(keep)[0]
    for name, v in a.items():
        if name.startswith("game_") or name.endswith(("_offsets", "_indices", "_weights")) \
                or name == "visits":
            continue
        out[name] = v[rows]
    for off, idx, vals in (("policy_offsets", "policy_indices", ("policy_weights",)),
                           ("legal_offsets", "legal_indices", ())):
        flat, lens = csr_rows(a[off], rows)
        out[off] = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        out[idx] = a[idx][flat]
        for v in vals:
            out[v] = a[v][flat]
    for name in a:
        if name.startswith("game_"):
            out[name] = a[name]
    return out


def label(cfg: LabelConfig, out: str | os.PathLike, workers: int = 1,
          progress: Callable[[ChunkStats], None] | None = None) -> dict:
    """Label (or finish labelling) the data set in ``out``; returns its metadata.

    Running again with the same settings after a kill makes only the missing chunks; other
    settings on an existing directory are refused rather than mixed."""
    out = Path(out)
    positions = None if cfg.source == "games" else read_positions_file(cfg.source)
    openings = read_positions_file(cfg.openings) if (cfg.openings and cfg.source == "games") else None
    n_games = _game_count(cfg, positions)
    n_chunks = max(1, math.ceil(n_games / cfg.games_per_chunk))
    meta = open_dataset(out, cfg.settings())
    todo = []
    for c in range(n_chunks):
        if not _chunk_done(out, c, min(cfg.games_per_chunk, n_games - c * cfg.games_per_chunk)):
            for name in chunk_names(c):  # half a chunk (killed between its two shards)
                shutil.rmtree(out / name, ignore_errors=True)
            todo.append(c)
    if todo and meta.get("status") != "in-progress":  # growing a finished data set
        meta["status"] = "in-progress"
        write_metadata(out, meta)
    t0 = time.perf_counter()
    done: list[ChunkStats] = []
    jobs = [(cfg, c, str(out), n_games, positions, openings) for c in todo]
    try:
        for st in map_jobs(_make_chunk, jobs, workers, _worker_init, (cfg.teacher,)):
            done.append(st)
            if progress:
                progress(st)
    finally:  # the teacher of a run in this process (pool workers' end with their process)
        if _WORKER.get("teacher") is not None:
            _WORKER["teacher"].close()
            _WORKER["teacher"] = None
    wall = time.perf_counter() - t0
    meta["dedup"] = deduplicate(out, n_chunks)
    shards, totals = {}, {"train": 0, "val": 0}
    for c in range(n_chunks):
        for name in chunk_names(c):
            shards[name] = shard_entry(load_shard(out / name, verify=False))
            totals[shards[name]["split"]] += shards[name]["samples"]
    meta.update({"games": n_games, "samples": totals})
    if done:  # timing of this run (a resumed run times only the chunks it made)
        made = sum(s.positions for s in done)
        busy = sum(s.wall_seconds for s in done)
        meta["timing"] = {
            "workers": workers, "wall_seconds": round(wall, 2), "positions_made": made,
            "positions_per_second_per_core": round(made / busy, 1) if busy else None,
            "outside_teacher_share": round(1 - sum(s.teacher_seconds for s in done) / busy, 4)
            if busy else None,
            "teacher_failures": sum(s.failures for s in done),
            "positions_skipped": sum(s.skipped for s in done)}
    return finish_dataset(out, meta, shards)
