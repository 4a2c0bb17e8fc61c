"""A teacher: any UCI engine that labels positions, and survives the teacher's failures.

The teacher is driven through python-chess's ``chess.engine`` (the match runner's
``EngineProcess``, so starting, timing out and killing an engine is written once). Every
analysis has a deadline: a teacher that crashes, hangs or answers garbage is killed and
started again, the position retried once and otherwise skipped, and the caller counts both.

    teacher = Teacher(TeacherConfig(command=["stockfish"], depth=8, multipv=4))
    lines = teacher.analyse(board)      # [Line(move, cp, wdl), ...] best first
    teacher.close()

Labels (``policy_target``, ``line_wdl``) are documented where they are computed: the
policy target is a softmax over the multipv moves of their expected score on the
win-probability scale, at a temperature; the value target is the teacher's own WDL
(``UCI_ShowWDL``) when it reports one, else its centipawns through python-chess's
``sf15.1`` WDL model.
"""

from __future__ import annotations

import asyncio
import math
import shutil
from dataclasses import asdict, dataclass, field

import chess
import chess.engine

from zerochess.match.config import EngineSpec
from zerochess.match.engines import EngineProcess, EngineStartError

#: A mate in n is scored as +-(MATE_CP - n) centipawns.
MATE_CP = 32000
#: Expected score from centipawns: 1 / (1 + exp(-cp * WIN_SCALE)), the logistic fit of
#: game results to centipawns that lichess uses for its win% (about 0.5 at 0, 0.76 at +300).
WIN_SCALE = 0.00368208


def default_teacher_command() -> list[str]:
    """Stockfish from PATH, or Debian's games directory (where the package puts it)."""
    found = shutil.which("stockfish") or shutil.which("/usr/games/stockfish")
    return [found or "stockfish"]


@dataclass
class TeacherConfig:
    """What labels a position: the engine, its search limit and its settings."""

    command: list[str] = field(default_factory=default_teacher_command)
    depth: int | None = 8          # search limit: depth ...
    nodes: int | None = None       # ... or nodes (exactly one of the two)
    multipv: int = 4               # lines per position: the policy target's moves
    threads: int = 1               # per teacher process
    hash_mb: int = 16              # per teacher process
    timeout: float = 30.0          # seconds an analysis may take before the teacher is "hung"
    options: dict = field(default_factory=dict)  # further UCI options, e.g. {"Skill Level": 10}

    def __post_init__(self) -> None:
        if (self.depth is None) == (self.nodes is None):
            raise ValueError("give the teacher exactly one search limit: depth or nodes")
        if (self.depth or 1) < 1 or (self.nodes or 1) < 1 or self.multipv < 1:
            raise ValueError("depth, nodes and multipv must be at least 1")

    @property
    def limit(self) -> chess.engine.Limit:
        return chess.engine.Limit(depth=self.depth, nodes=self.nodes)

    def settings(self) -> dict:
        return asdict(self)


@dataclass
class Line:
    """One multipv line: the first move, its score from the side to move, its WDL."""

    move: chess.Move
    cp: int                          # centipawns; a mate in n is +-(MATE_CP - n)
    wdl: tuple[float, float, float] | None  # (loss, draw, win) from the engine, if reported
    seconds: float                   # the teacher's own search time for the position


class TeacherFailure(RuntimeError):
    """The teacher could not label a position (crash, hang or garbage), even after a restart."""


class Teacher:
    """One teacher process with its own event loop, restarted on failure."""

    def __init__(self, cfg: TeacherConfig) -> None:
        self.cfg = cfg
        opts = {"Threads": cfg.threads, "Hash": cfg.hash_mb, **cfg.options}
        self.spec = EngineSpec("teacher", list(cfg.command), opts)
        self.loop = asyncio.new_event_loop()
        self.engine: EngineProcess | None = None
        self.name = ""
        self.restarts = 0
        self.failures = 0
        self._game = None
        self._start()

    def _start(self) -> None:
        self.engine = EngineProcess(self.spec, start_timeout=self.cfg.timeout)
        self.loop.run_until_complete(self.engine.start())
        proto = self.engine.protocol
        self.name = proto.id.get("name", " ".join(self.cfg.command))
        if "UCI_ShowWDL" in proto.options:
            self.loop.run_until_complete(proto.configure({"UCI_ShowWDL": True}))

    def new_game(self) -> None:
        """Forget the previous game (the engine's hash and histories: ``ucinewgame``), so a
        game's labels depend only on that game's positions, whatever ran before."""
        self._game = object()

    def _restart(self) -> None:
        self.restarts += 1
        self.loop.run_until_complete(self.engine.kill())
        self._start()

    def analyse(self, board: chess.Board) -> list[Line]:
        """The teacher's lines for ``board``, best first; TeacherFailure if two tries fail."""
        for attempt in range(2):
            try:
                return self._analyse_once(board)
            except (asyncio.TimeoutError, chess.engine.EngineError,
                    chess.engine.EngineTerminatedError, ValueError) as exc:
                self.failures += 1
                last = exc
                try:
                    self._restart()
                except EngineStartError as start_exc:
                    raise TeacherFailure(str(start_exc)) from None
        raise TeacherFailure(f"teacher failed twice on {board.fen()}: "
                             f"{type(last).__name__}: {last}")

    def _analyse_once(self, board: chess.Board) -> list[Line]:
        proto = self.engine.protocol
        if proto is None or not self.engine.alive:
            raise chess.engine.EngineTerminatedError("the teacher is not running")
        want = min(self.cfg.multipv, board.legal_moves.count())
        coro = proto.analyse(board, self.cfg.limit, multipv=want, game=self._game,
                             info=chess.engine.INFO_SCORE | chess.engine.INFO_PV)
        infos = self.loop.run_until_complete(asyncio.wait_for(coro, self.cfg.timeout))
        lines, seen = [], set()
        for info in infos:
            pv, score = info.get("pv"), info.get("score")
            if not pv or score is None:
                continue
            move = pv[0]
            if move in seen or not board.is_legal(move):
                raise ValueError(f"garbage from the teacher: line {info}")
            seen.add(move)
            rel = score.relative
            cp = rel.score(mate_score=MATE_CP)
            wdl = info.get("wdl")
            wdl_t = None
            if wdl is not None:
                w = wdl.relative
                total = w.wins + w.draws + w.losses
                if total > 0:
                    wdl_t = (w.losses / total, w.draws / total, w.wins / total)
            lines.append(Line(move, int(max(-MATE_CP, min(MATE_CP, cp))), wdl_t,
                              float(info.get("time", 0.0))))
        if not lines:
            raise ValueError(f"garbage from the teacher: no usable line for {board.fen()}")
        lines.sort(key=lambda ln: -ln.cp)  # stable: the engine's order among equal scores
        return lines

    def close(self) -> None:
        if self.engine is not None:
            self.loop.run_until_complete(self.engine.quit())
            self.engine = None
        self.loop.close()


def expected_score(cp: int) -> float:
    """Win probability + half the draw probability from centipawns (WIN_SCALE)."""
    return 1.0 / (1.0 + math.exp(-cp * WIN_SCALE))


def policy_target(lines: list[Line], temperature: float) -> list[float]:
    """Weights over the lines' moves: softmax of expected score / temperature. On this scale
    a move 50 cp worse than the best, near equality, gets exp(-0.046 / T) of the best's weight
    (0.32 at T = 0.04), a 300 cp blunder exp(-6.4) ~ 0.002: the target keeps near-equal
    alternatives and drops mistakes. Temperature 0 puts everything on the best move."""
    if temperature <= 0:
        return [1.0] + [0.0] * (len(lines) - 1)
    e = [expected_score(ln.cp) for ln in lines]
    best = max(e)
    w = [math.exp((x - best) / temperature) for x in e]
    total = sum(w)
    return [x / total for x in w]


def line_wdl(line: Line, ply: int) -> tuple[float, float, float]:
    """(loss, draw, win) of the best line: the engine's own WDL, else its centipawns through
    python-chess's ``sf15.1`` model (Stockfish 15.1's WDL fit, which depends on the ply)."""
    if line.wdl is not None:
        return line.wdl
    w = chess.engine.Cp(line.cp).wdl(model="sf15.1", ply=ply) if abs(line.cp) < MATE_CP - 500 \
        else (chess.engine.Mate(1) if line.cp > 0 else chess.engine.Mate(-1)).wdl()
    return (w.losses / 1000, w.draws / 1000, w.wins / 1000)
