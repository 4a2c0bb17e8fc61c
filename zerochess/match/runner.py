"""Run a match: a schedule of colour-swapped game pairs played by K concurrent workers.

Each worker owns one process of each engine and plays its games one after another, so K
games run at once and at most K engines think at any moment. Games are scheduled in pairs:
game 2i-1 and 2i start from the same opening with colours swapped, which cancels most of the
opening's bias (and lets the report use the pentanomial error bar).

    >>> config = MatchConfig([EngineSpec.parse("a=stockfish"), EngineSpec.parse("b=stockfish")],
    ...                      games=4, nodes=1000, concurrency=2)
    >>> result = run_match(config)
    >>> result.estimate.summary()

The library never prints: ``on_game`` is called after each game (the CLI updates its progress
bar there) and ``run_match`` returns a `MatchResult`.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import chess

from zerochess.client.uci import EngineProcess, EngineStartError
from zerochess.match.config import EngineSpec, MatchConfig
from zerochess.match.game import GameRecord, play_game
from zerochess.match.openings import STARTPOS, load_openings, opening_order
from zerochess.match.pgn import write_game
from zerochess.match.resume import resume
from zerochess.match.stats import EloEstimate, estimate


class MatchError(RuntimeError):
    """The match could not run (an engine does not start, a bad option ...)."""


@dataclass
class MatchResult:
    """All games (in schedule order) and the statistics for the first engine."""
    config: MatchConfig
    games: list[GameRecord] = field(default_factory=list)
    stopped: str | None = None  # why the match ended early (an SPRT decision), if it did
    resumed: int = 0  # games read back from the PGN (--resume)
    dropped: int = 0  # ... and games cut short there, played again

    @property
    def name(self) -> str:
        return self.config.engines[0].name

    def scores(self) -> list[float]:
        return [g.score_of(self.name) for g in self.games]

    def pair_scores(self) -> list[float]:
        """Sums of the completed colour-swapped pairs."""
        by_pair: dict[int, list[float]] = {}
        for g in self.games:
            by_pair.setdefault(g.pair, []).append(g.score_of(self.name))
        return [sum(s) for s in by_pair.values() if len(s) == 2]

    @property
    def estimate(self) -> EloEstimate:
        return estimate(self.scores(), self.pair_scores())

    @property
    def forfeits(self) -> list[GameRecord]:
        return [g for g in self.games if g.forfeit]

    def forfeit_counts(self) -> Counter:
        """``{(engine, reason): count}``."""
        return Counter((g.forfeit, g.reason) for g in self.forfeits)

    def terminations(self) -> Counter:
        return Counter(g.reason for g in self.games)


def schedule(config: MatchConfig) -> list[GameRecord]:
    """The games to play, in order: pairs of (A white, B white) on the same opening."""
    if config.openings:
        openings = load_openings(config.openings, config.openings_plies, config.variant)
    else:
        openings = [STARTPOS]
    pairs = (config.games + 1) // 2
    order = opening_order(len(openings), pairs, config.openings_order, config.seed,
                          config.openings_start)
    a, b = (e.name for e in config.engines)
    games = []
    for i in range(config.games):
        pair = i // 2
        white, black = (a, b) if i % 2 == 0 else (b, a)
        games.append(GameRecord(i + 1, pair + 1, order[pair], white, black,
                                openings[order[pair]]))
    return games


def _process(spec: EngineSpec, config: MatchConfig, chess960: bool) -> EngineProcess:
    """The engine ``spec`` names, as a (not yet started) client process."""
    return EngineProcess(spec.name, spec.command, spec.options, config.start_timeout,
                         config.engine_stderr, chess960)


async def _worker(config: MatchConfig, queue: asyncio.Queue, done: Callable[[GameRecord], None],
                  first: dict[str, EngineProcess] | None, chess960: bool) -> None:
    processes = first or {}
    try:
        while True:
            try:
                record = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            engines = {}
            for color, name in ((chess.WHITE, record.white), (chess.BLACK, record.black)):
                proc = processes.get(name)
                if proc is None or not proc.alive:
                    spec = next(s for s in config.engines if s.name == name)
                    proc = _process(spec, config, chess960)
                    try:
                        await proc.start()
                    except EngineStartError as exc:
                        proc = None
                        reason = f"forfeits: could not restart ({exc})"
                    processes[name] = proc
                if proc is None:
                    side = "White" if color == chess.WHITE else "Black"
                    record.result = "0-1" if color == chess.WHITE else "1-0"
                    record.termination, record.reason, record.forfeit = \
                        "abandoned", f"{side} {reason}", name
                    break
                engines[color] = proc
            else:
                await play_game(record, engines, config)
            done(record)
    finally:
        for proc in processes.values():
            if proc is not None:
                await proc.quit()


async def _run(config: MatchConfig, on_game: Callable[[GameRecord], None] | None) -> MatchResult:
    result = MatchResult(config)
    scheduled = schedule(config)
    chess960 = any(record.opening.chess960 for record in scheduled)
    finished: list[GameRecord] = []
    if config.resume:
        back = resume(config, scheduled)
        result.resumed, result.dropped = len(back.games), back.dropped
        finished.extend(back.games)
        if on_game:
            for record in back.games:
                on_game(record)
    played = {record.round for record in finished}
    pending = [record for record in scheduled if record.round not in played]

    def sprt_decides() -> bool:
        result.games = finished
        decision = config.sprt.decision(config.sprt.llr(result.scores(), result.pair_scores()),
                                        len(finished))
        if decision:
            result.stopped = f"SPRT accepts {decision}"
        return bool(decision)

    if config.sprt is not None and finished and sprt_decides():
        pending = []  # the games read back decided it: the match had ended
    if not pending:
        result.games = sorted(finished, key=lambda g: g.round)
        return result
    queue: asyncio.Queue = asyncio.Queue()
    for record in pending:
        queue.put_nowait(record)

    # Start one set of engines up front: a bad command or option stops the match with a
    # clear error instead of turning every game into a forfeit.
    first: dict[str, EngineProcess] = {}
    try:
        for spec in config.engines:
            first[spec.name] = _process(spec, config, chess960)
            await first[spec.name].start()
    except EngineStartError as exc:
        for proc in first.values():
            await proc.kill()
        raise MatchError(str(exc)) from None

    handle = open(config.pgn_out, "a", encoding="utf-8") if config.pgn_out else None

    def done(record: GameRecord) -> None:
        finished.append(record)
        if handle:
            write_game(handle, record, config)
        if on_game:
            on_game(record)
        if config.sprt is not None and result.stopped is None and sprt_decides():
            while not queue.empty():  # let the games in progress finish
                queue.get_nowait()

    try:
        workers = [_worker(config, queue, done, first if k == 0 else None, chess960)
                   for k in range(min(config.concurrency, len(pending)))]
        await asyncio.gather(*workers)
    finally:
        if handle:
            handle.close()
    result.games = sorted(finished, key=lambda g: g.round)
    return result


def run_match(config: MatchConfig, on_game: Callable[[GameRecord], None] | None = None
              ) -> MatchResult:
    """Play the match described by ``config``; blocks until all games are over.

    Raises `MatchConfigError` for bad settings and `MatchError` when an engine cannot be
    started or configured. Engine failures during games are forfeits, never exceptions."""
    config.validate()
    return asyncio.run(_run(config, on_game))
