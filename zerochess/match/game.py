"""One game between two engines: the runner's clock, the rules, adjudication and forfeits.

The clock is the runner's, not the engines': the wall time from sending ``position``/``go``
to receiving ``bestmove`` is subtracted from the mover's clock, then the increment is added
(cutechess's convention). A move that arrives after the clock (plus ``timemargin``) ran out
loses on time; the runner stops waiting at that moment, so a silent engine cannot hang the
match. A crash, an illegal or missing move, or a protocol error loses the game too, with the
reason recorded for the PGN and the report.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import chess
import chess.engine

from zerochess.client.uci import MATE_CP, EngineProcess
from zerochess.match.config import MatchConfig
from zerochess.match.openings import Opening


@dataclass
class MoveRecord:
    """An engine move: UCI, think time, the mover's clock after it (None without a clock),
    and the engine's last reported score (mover's view) and depth."""
    move: str
    elapsed: float
    clock: float | None
    score: chess.engine.PovScore | None = None
    depth: int | None = None


@dataclass
class GameRecord:
    """A finished game, enough to write its PGN and count it."""
    round: int  # 1-based game number in the schedule
    pair: int  # 1-based opening pair
    opening_index: int  # 0-based index in the suite
    white: str
    black: str
    opening: Opening
    moves: list[MoveRecord] = field(default_factory=list)
    result: str = "*"
    termination: str = "unterminated"  # PGN Termination tag value
    reason: str = ""  # human-readable: "White mates", "Black loses on time" ...
    forfeit: str | None = None  # name of the engine that forfeited, if any
    start_time: float = field(default_factory=time.time)

    def score_of(self, name: str) -> float:
        """1, 0.5 or 0 for the named engine."""
        if self.result == "1/2-1/2":
            return 0.5
        winner = self.white if self.result == "1-0" else self.black
        return 1.0 if winner == name else 0.0


def rules_outcome(board: chess.Board) -> tuple[str, str] | None:
    """(result, reason) if the game is over by the rules; draws are claimed at once at
    threefold repetition and the fifty-move rule, as match runners do."""
    if board.is_checkmate():
        return ("0-1", "Black mates") if board.turn == chess.WHITE else ("1-0", "White mates")
    if board.is_stalemate():
        return "1/2-1/2", "Draw by stalemate"
    if board.is_insufficient_material():
        return "1/2-1/2", "Draw by insufficient mating material"
    if board.halfmove_clock >= 100:
        return "1/2-1/2", "Draw by fifty moves rule"
    if board.is_repetition(3):
        return "1/2-1/2", "Draw by 3-fold repetition"
    return None


def _cp(score: chess.engine.PovScore | None) -> int | None:
    """The mover's score in centipawns for the adjudication thresholds (a mate in n:
    MATE_CP - n, zerochess.client.uci)."""
    return None if score is None else score.relative.score(mate_score=MATE_CP)


class Adjudicator:
    """Tracks the engines' scores for draw and resign adjudication (None if disabled)."""

    def __init__(self, config: MatchConfig):
        self.draw, self.resign, self.maxmoves = config.draw, config.resign, config.maxmoves
        self.draw_run = 0  # consecutive plies with |score| <= draw.score
        self.losing = {chess.WHITE: 0, chess.BLACK: 0}  # own moves with score <= -resign.score
        self.winning = {chess.WHITE: 0, chess.BLACK: 0}  # own moves with score >= +resign.score

    def update(self, board: chess.Board, mover: chess.Color, cp: int | None
               ) -> tuple[str, str] | None:
        """Call after each engine move (pushed on ``board``); returns (result, reason)."""
        name = "White" if mover == chess.WHITE else "Black"
        if self.draw:
            self.draw_run = self.draw_run + 1 if cp is not None and abs(cp) <= self.draw.score else 0
            if board.fullmove_number >= self.draw.movenumber and self.draw_run >= 2 * self.draw.movecount:
                return "1/2-1/2", "Draw by adjudication: scores near zero"
        if self.resign:
            low = cp is not None and cp <= -self.resign.score
            high = cp is not None and cp >= self.resign.score
            self.losing[mover] = self.losing[mover] + 1 if low else 0
            self.winning[mover] = self.winning[mover] + 1 if high else 0
            opponent_agrees = (not self.resign.twosided
                               or self.winning[not mover] >= self.resign.movecount)
            if self.losing[mover] >= self.resign.movecount and opponent_agrees:
                result = "0-1" if mover == chess.WHITE else "1-0"
                return result, f"{name} resigns by adjudication"
        if self.maxmoves and board.fullmove_number > self.maxmoves:
            return "1/2-1/2", f"Draw by adjudication: {self.maxmoves} moves played"
        return None


def _limit(limits: dict, clocks: dict, moves_left: dict, turn: chess.Color
           ) -> chess.engine.Limit:
    """The ``go`` for the mover: its nodes or movetime, or the clocks of the sides that have
    one (an opponent on nodes or movetime has none to send)."""
    own = limits[turn]
    if own.nodes is not None:
        return chess.engine.Limit(nodes=own.nodes)
    if own.movetime is not None:
        return chess.engine.Limit(time=own.movetime)
    white, black = limits[chess.WHITE].tc, limits[chess.BLACK].tc
    return chess.engine.Limit(
        white_clock=max(clocks[chess.WHITE], 0.001) if white else None,
        black_clock=max(clocks[chess.BLACK], 0.001) if black else None,
        white_inc=white.increment if white else None,
        black_inc=black.increment if black else None,
        remaining_moves=moves_left[turn] if own.tc.moves else None)


async def play_game(record: GameRecord, engines: dict[chess.Color, EngineProcess],
                    config: MatchConfig) -> GameRecord:
    """Play ``record``'s game to the end; fills in its moves, result and reason. Never raises
    for engine misbehaviour (it becomes a forfeit); engines left in a bad state are killed."""
    record.start_time = time.time()
    board = record.opening.board()
    limits = {chess.WHITE: config.limit_of(record.white),
              chess.BLACK: config.limit_of(record.black)}
    clocks = {c: (limits[c].tc.base if limits[c].tc else 0.0) for c in chess.COLORS}
    moves_left = {c: (limits[c].tc.moves if limits[c].tc and limits[c].tc.moves else 0)
                  for c in chess.COLORS}
    adjudicator = Adjudicator(config)

    def finish(result: str, termination: str, reason: str, forfeit: str | None = None):
        record.result, record.termination, record.reason, record.forfeit = \
            result, termination, reason, forfeit
        return record

    def forfeit(color: chess.Color, why: str, termination: str = "rules infraction"):
        name = record.white if color == chess.WHITE else record.black
        side = "White" if color == chess.WHITE else "Black"
        if termination == "time forfeit" and board.has_insufficient_material(not color):
            return finish("1/2-1/2", termination,
                          f"Draw: {side} {why}, but the opponent cannot mate", name)
        return finish("0-1" if color == chess.WHITE else "1-0", termination,
                      f"{side} {why}", name)

    for color in (chess.WHITE, chess.BLACK):
        engine = engines[color]
        try:
            await engine.new_game()
        except (asyncio.TimeoutError, chess.engine.EngineError,
                chess.engine.EngineTerminatedError) as exc:
            await engine.kill()
            return forfeit(color, f"forfeits: no 'readyok' before the game ({type(exc).__name__})",
                           "abandoned")

    while True:
        outcome = rules_outcome(board)
        if outcome:
            return finish(outcome[0], "normal", outcome[1])
        turn = board.turn
        engine = engines[turn]
        tc = limits[turn].tc
        if tc:
            wait = clocks[turn] + config.timemargin
        elif limits[turn].movetime is not None:
            wait = limits[turn].movetime + config.timemargin + config.move_timeout
        else:
            wait = config.move_timeout
        limit = _limit(limits, clocks, moves_left, turn)
        start = time.monotonic()
        try:
            played = await asyncio.wait_for(engine.play(board, limit), wait)
        except asyncio.TimeoutError:
            await engine.kill()
            if tc:
                return forfeit(turn, "loses on time", "time forfeit")
            return forfeit(turn, f"forfeits: no move within {wait:g} s", "time forfeit")
        except chess.engine.EngineTerminatedError as exc:
            await engine.kill()
            return forfeit(turn, f"forfeits: engine terminated ({exc})", "abandoned")
        except chess.engine.EngineError as exc:
            await engine.kill()
            return forfeit(turn, f"forfeits: protocol error or illegal move ({exc})")
        elapsed = time.monotonic() - start

        if tc:
            if elapsed > clocks[turn] + config.timemargin:
                return forfeit(turn, "loses on time", "time forfeit")
            clocks[turn] += tc.increment - elapsed
            if tc.moves:
                moves_left[turn] -= 1
                if moves_left[turn] == 0:
                    moves_left[turn] = tc.moves
                    clocks[turn] += tc.base
        if played.resigned:  # only XBoard engines can; kept for completeness
            return finish("0-1" if turn == chess.WHITE else "1-0", "normal",
                          f"{'White' if turn == chess.WHITE else 'Black'} resigns")
        move = played.move
        if not move:
            await engine.kill()
            return forfeit(turn, "forfeits: no move (bestmove (none) or 0000) with legal moves left")
        if move not in board.legal_moves:
            await engine.kill()  # its idea of the position differs from ours
            return forfeit(turn, f"forfeits: illegal move {move.uci()}")
        score = played.info.get("score")
        record.moves.append(MoveRecord(move.uci(), elapsed, clocks[turn] if tc else None,
                                       score, played.info.get("depth")))
        board.push(move)
        adjudicated = adjudicator.update(board, turn, _cp(score))
        if adjudicated:
            return finish(adjudicated[0], "adjudication", adjudicated[1])
