"""Self-play actors: hundreds of games at once through the batched search core.

One actor keeps ``games_per_worker`` games going, each in a slot. Each network it plays
with is a ``Forest`` (``zerochess.search.forest``: the network's evaluator, transposition
table and one tree per slot); each round steps every game whose side to move needs a
search, grouped by network, so one evaluator call holds leaves of all those games. A game
whose search is over records its position (full searches of the trained network only),
picks a move by the temperature schedule, checks resignation, and ends or goes on; a
finished game's slot starts the next game at once, so the batch stays full until the last
games. The actor drives the search only through its forests.

The seed's anti-collapse measures live here (risk 6): random opening plies, the
1.5 / 1.0 / 0.3 temperature schedule (never the argmax), games against a pool of recent
checkpoints; plus AlphaGo Zero's resignation with a no-resign share that measures false
resignations, a maximum game length and KataGo's playout cap randomisation.

Determinism: every random choice (the forests' noise and move choices included) draws from
one ``numpy`` Generator and the search breaks ties by move order, so the same seed, worker
and network give the same games.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from zerochess.chess import Board, Status, encode_board, move_to_index
from zerochess.search.forest import Forest, playout_cap
from zerochess.train.data.format import END_RESIGNED, END_TRUNCATED
from zerochess.train.selfplay.config import SelfPlayConfig

WHITE, BLACK = True, False


@dataclass
class Side:
    """A network as the actor uses it: its forest (its evaluator, its own transposition
    table: the table caches that network's answers, so it is never shared between networks;
    one tree per slot). ``iteration`` names a pool checkpoint (-1: the network being
    trained). The forest's generator must be the actor's."""

    name: str
    forest: Forest
    iteration: int = -1


@dataclass
class FinishedGame:
    """A game as the shard writer needs it."""

    index: int
    moves: list[str]
    result: int              # +1 White won, -1 Black won, 0 draw
    end: int                 # Status value, END_TRUNCATED or END_RESIGNED
    opponent: int            # -1 self-play, else the pool checkpoint's iteration
    main_color: Optional[bool]   # colour of the trained network in a pool game
    false_resign: int        # -1 / 0 / 1, see worker.write_games
    positions: list[tuple]   # (tokens, indices, visits, move index, root q, ply, turn, outcome)
    white: str
    black: str
    resigned: Optional[bool] = None  # colour that resigned


class _Game:
    """One game in progress in a slot: each side searches with its forest's tree ``slot``
    (the trained network's tree of a slot is kept from game to game; a pool opponent's is
    fresh for each game)."""

    def __init__(self, index: int, slot: int, main: Side, opponent: Optional[Side],
                 main_color: bool, no_resign: bool) -> None:
        self.index = index
        self.slot = slot
        self.board = Board()
        self.moves: list[str] = []
        self.main, self.opponent, self.main_color = main, opponent, main_color
        self.no_resign = no_resign
        if opponent is not None:
            opponent.forest.drop(slot)
        self.positions: list[tuple] = []
        self.low_streak = {WHITE: 0, BLACK: 0}
        self.would_resign: Optional[bool] = None
        self.full = False            # the search in flight (or just ended) is a full one
        self.searching = False       # a search for the side to move is in flight

    def side_to_move(self) -> Side:
        if self.opponent is None or self.board.turn == self.main_color:
            return self.main
        return self.opponent

    def forest(self) -> Forest:
        """The forest of the side to move (its tree ``slot`` searches this game)."""
        return self.side_to_move().forest


def _result_of(status: Status, board: Board) -> int:
    if status == Status.CHECKMATE:
        return -1 if board.turn == WHITE else 1
    return 0


class Actor:
    """Plays games of the trained network (``main``) against itself and the pool.

    ``opponents`` are pool networks; a game plays one of them with probability
    ``1 - cfg.self_play_ratio`` (when there are any). ``play(n_games, on_game)`` calls
    ``on_game(FinishedGame)`` as each game ends and returns when all have ended.
    """

    def __init__(self, cfg: SelfPlayConfig, main: Side, opponents: list[Side],
                 rng: np.random.Generator, game_index0: int = 0) -> None:
        self.cfg = cfg
        self.params = cfg.search_params()
        self.main = main
        self.opponents = opponents
        self.rng = rng
        self.next_index = game_index0
        self.slots: list[Optional[_Game]] = [None] * cfg.games_per_worker
        self.ready: list[FinishedGame] = []   # ended, not yet handed out by play()
        self.play_seconds = 0.0     # wall time inside play()
        self.search_seconds = 0.0   # wall time inside the search core (network included)
        self.rounds = 0
        self.nodes = 0
        self.plies = 0              # moves searched and played, games in flight included
        self.recorded = 0           # positions recorded, games in flight included

    def _new_game(self, slot: int) -> _Game:
        cfg, rng = self.cfg, self.rng
        opponent = None
        main_color = WHITE
        if self.opponents and rng.random() >= cfg.self_play_ratio:
            opponent = self.opponents[int(rng.integers(len(self.opponents)))]
            main_color = bool(rng.random() < 0.5)
        no_resign = bool(rng.random() < cfg.no_resign_fraction)
        game = _Game(self.next_index, slot, self.main, opponent, main_color, no_resign)
        self.next_index += 1
        return game

    def _random_opening(self, game: _Game) -> None:
        """Play the uniformly random opening moves that fall to this game now."""
        cfg = self.cfg
        while (len(game.moves) < cfg.random_opening_plies and game.board.status() == Status.ONGOING
               and self.rng.random() < cfg.random_opening_prob):
            legal = game.board.legal_moves()
            move = legal[int(self.rng.integers(len(legal)))]
            game.board.push_uci(move)
            game.moves.append(move)

    def _finish(self, game: _Game, result: int, end: int, resigned: Optional[bool] = None
                ) -> FinishedGame:
        if game.opponent is not None:  # the pool opponent's tree goes with its game
            game.opponent.forest.drop(game.slot)
        false_resign = -1
        if game.would_resign is not None:
            loser_lost = result == (-1 if game.would_resign == WHITE else 1)
            false_resign = 0 if loser_lost else 1
        names = {WHITE: self.main.name, BLACK: self.main.name}
        if game.opponent is not None:
            names[not game.main_color] = game.opponent.name
        # outcome of each recorded position from its mover's view
        positions = [(*p[:7], (result if p[6] == WHITE else -result)) for p in game.positions]
        return FinishedGame(game.index, game.moves, result, end,
                            game.opponent.iteration if game.opponent else -1,
                            game.main_color if game.opponent else None, false_resign,
                            positions, names[WHITE], names[BLACK], resigned)

    def _after_search(self, game: _Game, full: bool) -> Optional[FinishedGame]:
        """Record, choose and play a move; return the finished game if it ended."""
        cfg = self.cfg
        forest, slot = game.forest(), game.slot
        board = game.board
        ply = len(game.moves)
        turn = board.turn
        wdl = forest.root_wdl(slot)
        q = wdl[0] if wdl is not None else 0.0
        move = forest.choose_move(slot, cfg.temperature(ply))
        self.plies += 1
        if full and game.side_to_move() is self.main:
            self.recorded += 1
            indices, visits = forest.root_visits(slot)
            game.positions.append((encode_board(board), indices.astype(np.int16),
                                   visits.astype(np.int32), move_to_index(board, move),
                                   float(q), ply, turn))
        # Resignation (AlphaGo Zero): value below the threshold for N own moves in a row.
        game.low_streak[turn] = game.low_streak[turn] + 1 if q < cfg.resign_threshold else 0
        if game.low_streak[turn] >= cfg.resign_consecutive:
            if not game.no_resign:
                return self._finish(game, -1 if turn == WHITE else 1, END_RESIGNED, turn)
            if game.would_resign is None:
                game.would_resign = turn
        board.push_uci(move)
        game.moves.append(move)
        return self._check_end(game)

    def _check_end(self, game: _Game) -> Optional[FinishedGame]:
        status = game.board.status()
        if status != Status.ONGOING:
            return self._finish(game, _result_of(status, game.board), int(status))
        if len(game.moves) >= self.cfg.max_game_plies:
            return self._finish(game, 0, END_TRUNCATED)
        return None

    # -- playing ---------------------------------------------------------------------
    def set_main(self, main: Side) -> None:
        """Play on with another trained network (a newly promoted best): games in flight
        keep their moves and recorded positions, and the new network's fresh trees search
        their next moves (a search in flight for the old network is dropped)."""
        if main.name == self.main.name:
            return
        old = self.main
        self.main = main
        main.forest.clear()
        for game in self.slots:
            if game is None:
                continue
            if game.side_to_move() is old:
                game.searching = False
            game.main = main

    def set_opponents(self, opponents: list[Side]) -> None:
        """New games draw their pool opponent from ``opponents``; games in flight keep theirs."""
        self.opponents = list(opponents)

    def play(self, n_games: int, on_game: Callable[[FinishedGame], None],
             max_started: Optional[int] = None) -> None:
        """Play until ``n_games`` more games have ended, calling ``on_game`` for each.

        Asynchronous (the default): every game has its own search in flight, and each
        round gathers leaves from all of them into one evaluator call per network; a game
        whose search is complete plays its move and starts its next search in the very next
        round, so fast and full searches, finished games and new games never leave the batch
        half empty; and a round whose searches leave room in the batch (searches ending,
        a root's first evaluation, cache hits) refills it from the other games' searches
        (``run_round``'s ``fill_to``). Games still in flight when ``n_games`` have ended
        stay in their slots and go on at the next call (an actor's chunks follow each other without a tail).
        ``max_started`` caps the games this actor ever starts (a fixed number of games:
        the last ones then drain). ``cfg.search_schedule == "rounds"`` keeps the older
        round-synchronous schedule."""
        if self.cfg.search_schedule == "rounds":
            self._play_rounds(n_games, on_game)
            return
        cfg = self.cfg
        ready = self.ready  # games that ended beyond the last call's n_games come first
        t_start = time.perf_counter()
        while len(ready) < n_games:
            for s in range(len(self.slots)):
                while self.slots[s] is None and (max_started is None
                                                 or self.next_index < max_started):
                    game = self._new_game(s)
                    self._random_opening(game)
                    done = self._check_end(game)
                    if done is None:
                        self.slots[s] = game
                    else:
                        ready.append(done)
                game = self.slots[s]
                if game is not None and not game.searching:
                    self._start_search(game)
            live = [g for g in self.slots if g is not None]
            if not live:
                break  # max_started reached and every game ended
            groups: dict[str, list[_Game]] = {}
            for game in live:
                groups.setdefault(game.side_to_move().name, []).append(game)
            t0 = time.perf_counter()
            for games in groups.values():
                # a search with nothing left to expand anywhere ends (run_many stops there too)
                games[0].forest().step([g.slot for g in games], cfg.leaves_per_tree,
                                       len(games) * cfg.leaves_per_tree)
                self.rounds += 1
            self.search_seconds += time.perf_counter() - t0
            for s, game in enumerate(self.slots):
                if game is None:
                    continue
                if game.forest().settle(game.slot):
                    game.searching = False
                    done = self._after_search(game, game.full)
                    if done is not None:
                        ready.append(done)
                        self.slots[s] = None
        self.play_seconds += time.perf_counter() - t_start
        delivered, self.ready = ready[:n_games], ready[n_games:]
        for done in delivered:
            on_game(done)

    def _start_search(self, game: _Game) -> None:
        nodes, full = playout_cap(self.params, self.rng)
        game.forest().start(game.slot, game.board, nodes, noise=full)  # noise: full searches
        self.nodes += nodes
        game.full = full
        game.searching = True

    def _play_rounds(self, n_games: int, on_game: Callable[[FinishedGame], None]) -> None:
        """The round-synchronous schedule: every game searches once per round and the round
        ends with the slowest search (batch fill falls as fast searches finish); plays
        exactly ``n_games`` games and lets the last ones drain. Kept as the baseline of
        benchmarks/bench_actors.py."""
        cfg = self.cfg
        t_start = time.perf_counter()
        started = 0
        slots: list[Optional[_Game]] = [None] * min(cfg.games_per_worker, n_games)
        while True:
            # Fill empty slots and play the random opening moves that fall due.
            for s in range(len(slots)):
                while slots[s] is None and started < n_games:
                    slots[s] = self._new_game(s)
                    started += 1
                game = slots[s]
                if game is None:
                    continue
                self._random_opening(game)
                done = self._check_end(game)
                if done is not None:
                    on_game(done)
                    slots[s] = None
            active = [(s, g) for s, g in enumerate(slots) if g is not None]
            if not active:
                if started >= n_games:
                    break
                continue
            # One search per game, grouped by the network to move.
            caps = [playout_cap(self.params, self.rng) for _ in active]
            groups: dict[str, list[int]] = {}
            for k, (_, g) in enumerate(active):
                groups.setdefault(g.side_to_move().name, []).append(k)
            t0 = time.perf_counter()
            for name, ks in groups.items():
                games = [active[k][1] for k in ks]
                self.rounds += games[0].forest().run(
                    [g.slot for g in games], [g.board for g in games], [caps[k][0] for k in ks],
                    noise=[caps[k][1] for k in ks], leaves_per_tree=cfg.leaves_per_tree)
                self.nodes += sum(caps[k][0] for k in ks)
            self.search_seconds += time.perf_counter() - t0
            for k, (s, g) in enumerate(active):
                done = self._after_search(g, caps[k][1])
                if done is not None:
                    on_game(done)
                    slots[s] = None
        self.play_seconds += time.perf_counter() - t_start
