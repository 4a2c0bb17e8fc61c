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
import time
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
    seconds: float                   # the teacher's search time for the position: from
    # ``go`` sent to ``bestmove`` read, by our clock (``_LabelCommand``)


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
        self._last_game = None
        self._multipv = None
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
        self._last_game = self._multipv = None
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
        new_game = self._game is not self._last_game
        self._last_game = self._game
        command = _position_command(board)
        go = f"go depth {self.cfg.depth}" if self.cfg.depth else f"go nodes {self.cfg.nodes}"
        setup = []
        if new_game:
            setup.append("ucinewgame")
        if want != self._multipv:
            setup.append(f"setoption name MultiPV value {want}")
            self._multipv = want
        coro = proto.communicate(lambda engine: _LabelCommand(engine, [*setup, command, go]))
        raw, seconds = self.loop.run_until_complete(asyncio.wait_for(coro, self.cfg.timeout))
        lines = []
        for k in sorted(raw):
            line = _parse_line(raw[k], board, seconds)
            if line is not None:
                if any(ln.move == line.move for ln in lines):
                    raise ValueError(f"garbage from the teacher: {line.move} twice")
                lines.append(line)
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


def _position_command(board: chess.Board) -> str:
    """``position fen ... moves ...`` from the last irreversible move on: a position before a
    capture or pawn move can never repeat, so the engine sees every repetition that matters
    and the command stays short."""
    stack = board.move_stack
    root = board.copy(stack=True)
    back = 0
    while back < len(stack) and root.halfmove_clock > 0:
        root.pop()
        back += 1
    moves = " ".join(m.uci() for m in stack[len(stack) - back:])
    return f"position fen {root.fen()}" + (f" moves {moves}" if moves else "")


class _LabelCommand(chess.engine.BaseCommand):
    """One analysis through python-chess's command API, keeping each multipv index's last
    ``info`` line as text and parsing only those at ``bestmove``. python-chess's own
    ``analyse`` parses every intermediate line with its whole PV (28 lines a position at
    depth 7, multipv 4): that parsing, not the teacher, was most of the labelling time.

    The result is (lines, seconds from ``go`` sent to ``bestmove`` read). That wait is the
    teacher's time as the labeller sees it, timed here because the engine's own ``info ...
    time`` cannot serve: Stockfish reports whole milliseconds plus one (``Time.elapsed() +
    1``), about twice the real search at depth 4, where a position takes about a millisecond."""

    def __init__(self, engine, commands: list[str]) -> None:
        super().__init__(engine)
        self.commands = commands
        self.lines: dict[int, str] = {}
        self.sent = 0.0

    def start(self) -> None:
        for c in self.commands[:-1]:
            self._engine.send_line(c)
        self.sent = time.perf_counter()
        self._engine.send_line(self.commands[-1])

    def line_received(self, line: str) -> None:
        if line.startswith("info ") and " pv " in line and " score " in line \
                and "bound" not in line:
            tokens = line.split()
            k = int(tokens[tokens.index("multipv") + 1]) if "multipv" in tokens else 1
            self.lines[k] = line
        elif line.startswith("bestmove"):
            if not self.result.done():
                self.result.set_result((self.lines, time.perf_counter() - self.sent))
            self.set_finished()

    def cancel(self) -> None:
        self._engine.send_line("stop")

    def engine_terminated(self, exc: Exception) -> None:
        self._handle_exception(exc)


def _parse_line(text: str, board: chess.Board, seconds: float) -> Line | None:
    """A Line from one ``info`` line; ValueError for garbage (an illegal first move)."""
    t = text.split()
    try:
        kind, value = t[t.index("score") + 1], int(t[t.index("score") + 2])
        move = chess.Move.from_uci(t[t.index("pv") + 1])
    except (ValueError, IndexError) as e:
        raise ValueError(f"garbage from the teacher: {text!r}") from e
    if not board.is_legal(move):
        raise ValueError(f"garbage from the teacher: illegal move in {text!r}")
    if kind == "cp":
        cp = value
    elif kind == "mate":
        cp = (MATE_CP - abs(value)) * (1 if value > 0 else -1)
    else:
        return None
    wdl = None
    if "wdl" in t:
        i = t.index("wdl")
        w, d, lo = (int(x) for x in t[i + 1:i + 4])
        total = w + d + lo
        if total > 0:
            wdl = (lo / total, d / total, w / total)
    return Line(move, int(max(-MATE_CP, min(MATE_CP, cp))), wdl, seconds)
