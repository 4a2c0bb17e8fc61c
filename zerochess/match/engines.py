"""A UCI engine process for the match runner, on python-chess's asyncio API.

Every call that waits for the engine has a timeout, because a match must never hang on an
engine that stops answering. An engine that timed out, crashed or broke the protocol is
killed; the runner starts a fresh process for its next game.
"""

from __future__ import annotations

import asyncio
import subprocess

import chess
import chess.engine

from zerochess.match.config import EngineSpec

INFO = chess.engine.INFO_BASIC | chess.engine.INFO_SCORE


class EngineStartError(RuntimeError):
    """The engine could not be started or configured; the message says which and why."""


class EngineProcess:
    """One running engine. ``play`` is timed by the caller; ``new_game`` is untimed."""

    def __init__(self, spec: EngineSpec, start_timeout: float = 30.0, stderr: bool = False,
                 chess960: bool = False):
        self.spec = spec
        # Chess960 games need the engine's UCI_Chess960; python-chess sets it before every
        # `go` from the board (and writes castling as king takes rook), we check it is there.
        self.chess960 = chess960
        self.start_timeout = start_timeout
        self.stderr = stderr
        self.transport: asyncio.SubprocessTransport | None = None
        self.protocol: chess.engine.UciProtocol | None = None
        # python-chess sends ucinewgame itself when the `game` token changes; we keep it
        # constant and send ucinewgame in new_game(), outside the timed region.
        self._game_token = object()

    @property
    def alive(self) -> bool:
        return self.protocol is not None and self.protocol.returncode.done() is False

    async def start(self) -> None:
        """Start the process, wait for ``uciok``, set the options, wait for ``readyok``."""
        name = self.spec.name
        popen_args = {} if self.stderr else {"stderr": subprocess.DEVNULL}
        try:
            # popen_uci's two steps, so that we hold the transport while waiting for uciok.
            loop = asyncio.get_running_loop()
            self.transport, self.protocol = await loop.subprocess_exec(
                chess.engine.UciProtocol, *self.spec.command, **popen_args)
            await asyncio.wait_for(self.protocol.initialize(), self.start_timeout)
        except asyncio.TimeoutError:
            await self.kill()
            raise EngineStartError(f"engine {name}: no 'uciok' within {self.start_timeout:g} s "
                                   f"from {self.spec.command}") from None
        except (OSError, chess.engine.EngineError, chess.engine.EngineTerminatedError) as exc:
            await self.kill()
            raise EngineStartError(f"engine {name}: cannot start {self.spec.command}: {exc}") from None
        if self.chess960 and "UCI_Chess960" not in self.protocol.options:
            await self.kill()
            raise EngineStartError(f"engine {name} does not declare UCI_Chess960, so it cannot "
                                   "play Chess960 openings")
        try:
            await asyncio.wait_for(self.protocol.configure(self.spec.options), self.start_timeout)
            await asyncio.wait_for(self.protocol.ping(), self.start_timeout)
        except asyncio.TimeoutError:
            await self.kill()
            raise EngineStartError(f"engine {name}: no 'readyok'' within {self.start_timeout:g} s "
                                   "after setting its options") from None
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as exc:
            await self.kill()
            raise EngineStartError(f"engine {name}: options {self.spec.options}: {exc}") from None

    async def new_game(self) -> None:
        """``ucinewgame`` + ``isready``, so that clearing hash tables is not on the clock."""
        assert self.protocol is not None
        self.protocol._ucinewgame()  # python-chess's own helper; also resets its first_game
        await asyncio.wait_for(self.protocol.ping(), self.start_timeout)

    async def play(self, board: chess.Board, limit: chess.engine.Limit) -> chess.engine.PlayResult:
        assert self.protocol is not None
        return await self.protocol.play(board, limit, info=INFO, game=self._game_token)

    async def kill(self) -> None:
        """Stop the process now (no ``quit`` handshake: it may not be listening) and wait
        briefly for it to be reaped, so that no zombie or child-watcher warning is left."""
        transport, protocol = self.transport, self.protocol
        self.transport = self.protocol = None
        if transport is None:
            return
        try:
            transport.kill()
        except ProcessLookupError:
            pass
        if protocol is not None:
            try:
                await asyncio.wait_for(asyncio.shield(protocol.returncode), 5.0)
            except asyncio.TimeoutError:
                pass
        transport.close()

    async def quit(self) -> None:
        """``quit`` and wait a moment for the process to exit, then kill it regardless."""
        if self.protocol is not None and self.alive:
            try:
                await asyncio.wait_for(self.protocol.quit(), 2.0)
            except (asyncio.TimeoutError, chess.engine.EngineError,
                    chess.engine.EngineTerminatedError):
                pass
        await self.kill()
