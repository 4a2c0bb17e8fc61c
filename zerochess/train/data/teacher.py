"""A teacher: any UCI engine that labels positions, and survives the teacher's failures.

The teacher is driven over plain pipes (``zerochess.client.uci.UciPipe``), synchronously: at low depth the
asyncio machinery of python-chess's ``chess.engine`` cost as much CPU as the search. Every
analysis has a deadline: a teacher that crashes, hangs or answers garbage is killed and
started again, the position retried once and otherwise skipped, and the caller counts both.

    teacher = Teacher(TeacherConfig(command=["stockfish"], depth=8, multipv=4))
    lines = teacher.analyse(board)      # [Line(move, cp, wdl, ...), ...] best first
    teacher.close()

The labeller asks through ``Teacher.lines`` with its own ``position`` text and legality
check (its native board), so no python-chess board is copied or searched per position
(python-chess lists the legal moves only for a game's random moves: ``label._choose``).

Labels (``policy_target``, ``line_wdl``) are documented where they are computed: the
policy target is a softmax over the multipv moves of their expected score on the
win-probability scale, at a temperature; the value target is the teacher's own WDL
(``UCI_ShowWDL``) when it reports one, else its centipawns through python-chess's
``sf15.1`` WDL model.
"""

from __future__ import annotations

import math
import shlex
import shutil
import time
from dataclasses import MISSING, asdict, dataclass
from typing import Callable

import chess
import chess.engine

from zerochess.client.uci import (MATE_CP, MAX_MATE_MOVES, EngineStartError, UciPipe,
                                  info_score, info_wdl, last_info_lines, score_cp)
from zerochess.train.configfile import ConfigFile, setting

#: Expected score from centipawns: 1 / (1 + exp(-cp * WIN_SCALE)), the logistic fit of
#: game results to centipawns that lichess uses for its win% (about 0.5 at 0, 0.76 at +300).
WIN_SCALE = 0.00368208


def default_teacher_command() -> list[str]:
    """Stockfish from PATH, or Debian's games directory (where the package puts it)."""
    found = shutil.which("stockfish") or shutil.which("/usr/games/stockfish")
    return [found or "stockfish"]


def command_words(text: str) -> list[str] | None:
    """``--teacher``'s text split as a shell splits it; None for an empty one (a script's
    ``--teacher "$TEACHER"`` with the variable unset), which leaves the default engine."""
    return shlex.split(text) or None


@dataclass
class TeacherConfig(ConfigFile):
    """What labels a position: the engine, its search limit and its settings. Each field is a
    setting (``configfile.setting``): its flag of `train label` comes from it."""

    command: list[str] = setting(
        MISSING, "Teacher engine command (any UCI engine) [default: stockfish].",
        flag="--teacher", default_factory=default_teacher_command, parse=command_words)
    depth: int | None = setting(8, "Teacher search depth.", min=1)  # search limit: depth ...
    nodes: int | None = setting(  # ... or nodes (exactly one of the two)
        None, "Teacher nodes per position (instead of --depth).", min=1)
    multipv: int = setting(4, "Teacher lines per position (the policy target's moves).", min=1)
    threads: int = setting(1, "Threads per teacher process.", min=1)
    hash_mb: int = setting(16, "Hash (MB) per teacher process.", flag="--hash", min=1)
    timeout: float = setting(
        30.0, "Seconds an analysis may take before the teacher counts as hung and is restarted.",
        min=0, min_open=True)
    options: dict = setting(  # e.g. {"Skill Level": "10"}
        {}, "A further UCI option for the teacher (repeatable).", flag="--teacher-option",
        multiple=True)

    def __post_init__(self) -> None:
        if (self.depth is None) == (self.nodes is None):
            raise ValueError("give the teacher exactly one search limit: depth or nodes")
        self.check_settings()

    @property
    def limit(self) -> chess.engine.Limit:
        return chess.engine.Limit(depth=self.depth, nodes=self.nodes)

    def settings(self) -> dict:
        return asdict(self)


@dataclass
class Line:
    """One multipv line: the first move, its score from the side to move, its WDL."""

    move: str                        # UCI, as the teacher wrote it (checked legal)
    cp: int                          # centipawns; a mate in n is +-(MATE_CP - n)
    wdl: tuple[float, float, float] | None  # (loss, draw, win) from the engine, if reported
    seconds: float                   # the teacher's search time for the position: from
    # ``go`` sent to ``bestmove`` read, by our clock (``UciPipe.ask``)
    key: object = None               # the move as the caller's board checked it (a chess.Move,
    # or the native board's policy index): what the repeated-move test compares


class TeacherFailure(RuntimeError):
    """The teacher could not label a position (crash, hang or garbage), even after a restart."""


class Teacher:
    """One teacher process over plain pipes (``UciPipe``), restarted on failure."""

    def __init__(self, cfg: TeacherConfig) -> None:
        self.cfg = cfg
        self.options = {"Threads": cfg.threads, "Hash": cfg.hash_mb, **cfg.options}
        self.go = f"go depth {cfg.depth}\n" if cfg.depth else f"go nodes {cfg.nodes}\n"
        self.engine: UciPipe | None = None
        self.name = ""
        self.restarts = 0
        self.failures = 0
        self._game = None
        self._last_game = None
        self._multipv = None
        self._start()

    def _start(self) -> None:
        self.engine = UciPipe(self.cfg.command, self.options, self.cfg.timeout)
        self.name = self.engine.name or " ".join(self.cfg.command)
        if "uci_showwdl" in self.engine.options:  # after isready, as python-chess sent it
            try:
                self.engine.set_options({"UCI_ShowWDL": True})
            except OSError as exc:
                self.engine.kill()
                raise EngineStartError(f"engine teacher: {self.cfg.command} exited while "
                                       f"starting ({type(exc).__name__})") from None

    def new_game(self) -> None:
        """Forget the previous game (the engine's hash and histories: ``ucinewgame``), so a
        game's labels depend only on that game's positions, whatever ran before."""
        self._game = object()

    def _restart(self) -> None:
        self.restarts += 1
        self._last_game = self._multipv = None
        if self.engine is not None:
            self.engine.kill()
            self.engine = None
        self._start()

    def analyse(self, board: chess.Board) -> list[Line]:
        """The teacher's lines for ``board``, best first; TeacherFailure if two tries fail."""
        def check(uci: str) -> chess.Move:
            move = chess.Move.from_uci(uci)
            if not board.is_legal(move):
                raise ValueError(f"garbage from the teacher: illegal move {uci}")
            return move
        return self.lines(position_command(board), board.legal_moves.count(), check, board.fen)

    def lines(self, position: str, legal: int, check: Callable[[str], object],
              describe: Callable[[], str]) -> list[Line]:
        """The teacher's lines for a ``position ...`` command with ``legal`` legal moves,
        best first; ``check(uci)`` returns the move's key (its identity for the repeated-move
        test) or raises ValueError for a move that is not legal. A crash, hang or garbage
        restarts the teacher and retries once; TeacherFailure (naming ``describe()``) if the
        retry fails too."""
        for attempt in range(2):
            try:
                return self._lines_once(position, legal, check, describe)
            except (TimeoutError, EOFError, OSError, ValueError) as exc:
                self.failures += 1
                last = exc
                try:
                    self._restart()
                except EngineStartError as start_exc:
                    raise TeacherFailure(str(start_exc)) from None
        raise TeacherFailure(f"teacher failed twice on {describe()}: "
                             f"{type(last).__name__}: {last}")

    def _lines_once(self, position: str, legal: int, check, describe) -> list[Line]:
        if self.engine is None:
            raise EOFError("the teacher is not running")
        want = min(self.cfg.multipv, legal)
        ask = position + "\n" + self.go
        if want != self._multipv:
            ask = f"setoption name MultiPV value {want}\n" + ask
            self._multipv = want
        if self._game is not self._last_game:
            ask = "ucinewgame\n" + ask
            self._last_game = self._game
        text, seconds = self.engine.ask(ask, time.monotonic() + self.cfg.timeout)
        raw = last_info_lines(text)
        lines: list[Line] = []
        for k in sorted(raw):
            line = _parse_line(raw[k], check, seconds)
            if line is not None:
                for ln in lines:
                    if ln.key == line.key:
                        raise ValueError(f"garbage from the teacher: {line.move} twice")
                lines.append(line)
        if not lines:
            raise ValueError(f"garbage from the teacher: no usable line for {describe()}")
        lines.sort(key=_minus_cp)  # stable: the engine's order among equal scores
        return lines

    def close(self) -> None:
        if self.engine is not None:
            self.engine.quit()
            self.engine = None


def _minus_cp(line: Line) -> int:
    return -line.cp


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
    w = chess.engine.Cp(line.cp).wdl(model="sf15.1", ply=ply) if abs(line.cp) < MATE_CP - MAX_MATE_MOVES \
        else (chess.engine.Mate(1) if line.cp > 0 else chess.engine.Mate(-1)).wdl()
    return (w.losses / 1000, w.draws / 1000, w.wins / 1000)


def position_command(board: chess.Board) -> str:
    """``position fen ... moves ...`` from the last irreversible move on: a position before a
    capture or pawn move can never repeat, so the engine sees every repetition that matters
    and the command stays short. (The labeller keeps the same text move by move on its native
    board: ``label.PositionText``.)"""
    stack = board.move_stack
    root = board.copy(stack=True)
    back = 0
    while back < len(stack) and root.halfmove_clock > 0:
        root.pop()
        back += 1
    moves = " ".join(m.uci() for m in stack[len(stack) - back:])
    return f"position fen {root.fen()}" + (f" moves {moves}" if moves else "")


def _parse_line(text: str, check: Callable[[str], object], seconds: float) -> Line | None:
    """A Line from one ``info`` line; ValueError for garbage (a move ``check`` refuses)."""
    t = text.split()
    try:
        kind, value = info_score(t)
        uci = t[t.index("pv") + 1]
        key = check(uci)
    except (ValueError, IndexError) as e:
        raise ValueError(f"garbage from the teacher: {text!r}") from e
    cp = score_cp(kind, value)
    if cp is None:
        return None
    wdl = info_wdl(t)
    return Line(uci, int(max(-MATE_CP, min(MATE_CP, cp))), wdl, seconds, key)
