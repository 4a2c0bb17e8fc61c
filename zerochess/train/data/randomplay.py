"""Random-play games for phase 1 (seed §1.3), with tactically biased move sampling (risk 2)
and mate-in-1 positions labelled with their mating moves (§1.4.4).

Pure random chess rarely shows a capture worth making or a mate, so the sampler weights
each legal move: captures by ``capture_weight`` (optionally scaled by MVV-LVA: taking a
queen with a pawn is likelier than the reverse) and checking moves by ``check_weight``.
Finding the checking moves means playing every legal move once; the same pass finds every
mating move, so each position with a mate in 1 also yields one extra sample per mating move
whose target is that move and whose outcome is a win, the unambiguous label that anchors
the value head (§1.4.4).

Each sample also keeps the exact distribution its move was drawn from (the normalised
weights over the legal moves; for a mate-in-1 sample, all mass on its mating move), so the
policy can be trained towards that distribution rather than towards the one draw.

Every game depends only on ``(seed, game index)``, never on which worker plays it, so a
data set is reproducible whatever the number of workers.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from zerochess.chess import Board, Status, encode_board, legal_move_indices
from zerochess.train.configfile import ConfigFile, setting
from zerochess.train.data.format import END_TRUNCATED

# Per-game end reasons stored in the shards: the board's Status values, plus TRUNCATED for
# games stopped at max_plies (scored as draws).
TRUNCATED = END_TRUNCATED
END_REASONS = {int(s): s.name.lower() for s in Status} | {TRUNCATED: "truncated"}

# MVV-LVA piece values (seed risk 2): the king is worth 0 as an attacker.
PIECE_VALUES = {"p": 1, "n": 3, "b": 3, "r": 5, "q": 9, "k": 0}

# Sample kinds stored in the shards.
KIND_RANDOM = 0  # the move actually played in the random game
KIND_MATE = 1  # a mating move of a mate-in-1 position; outcome +1


@dataclass(frozen=True)
class PlayConfig(ConfigFile):
    """How random games are played and which positions they yield. Each field is a setting
    (``configfile.setting``): its flag of `train generate` comes from it."""

    max_plies: int = setting(
        200, "Stop a game after this many positions (scored as a draw).", min=1)
    """Stop a game after this many positions (the seed's MAX_GAME_LENGTH = 200); a stopped
    game is scored as a draw and its end reason stored as 'truncated'."""
    min_plies: int = setting(10, "Drop games that end sooner.", min=1)
    """Drop games that end in fewer plies (the seed's minimum game length)."""
    capture_weight: float = setting(
        3.0, "Sampling weight multiplier of a capture (1 = pure random).", min=0, min_open=True)
    check_weight: float = setting(
        2.0, "Sampling weight multiplier of a checking move (1 = pure random).",
        min=0, min_open=True)
    mvv_lva: bool = setting(False, "Scale capture weights by MVV-LVA.")
    """Scale a capture's weight by 1 + (10 * victim - attacker) / 10 (MVV-LVA, risk 2)."""
    mate_in_one: bool = setting(True, "Add mate-in-1 samples labelled with their mating moves.")
    """Add one sample per mating move of every mate-in-1 position met (§1.4.4)."""

    def __post_init__(self) -> None:
        self.check_settings()
        if self.min_plies > self.max_plies:
            raise ValueError(f"need 1 <= min_plies <= max_plies, got {self.min_plies}, {self.max_plies}")

    @property
    def needs_probe(self) -> bool:
        """Whether every legal move must be played once (to find checks and mates)."""
        return self.check_weight != 1.0 or self.mate_in_one


@dataclass
class Game:
    """The samples of one game, ready to be stacked into a shard (see shards.py for meanings)."""

    tokens: np.ndarray  # uint8 [n, SEQ_LEN]
    move: np.ndarray  # int16 [n]
    legal: list  # n int16 arrays of legal policy indices
    probs: list  # n float16 arrays aligned with ``legal``: the sample's target distribution
    outcome: np.ndarray  # int8 [n], from the side to move
    kind: np.ndarray  # uint8 [n]
    ply: np.ndarray  # int16 [n]
    p_max: np.ndarray  # float32 [n] sampler's largest move probability (exact-accuracy ceiling)
    p_top5: np.ndarray  # float32 [n] sampler's five largest probabilities summed (top-5 ceiling)
    plies: int  # positions played
    result: int  # +1 White won, -1 Black won, 0 draw or truncated
    end: int  # Status value or TRUNCATED


def game_rng(seed: int, game_index: int) -> random.Random:
    """A generator that depends only on (seed, game index)."""
    state = np.random.SeedSequence([seed, game_index]).generate_state(2, dtype=np.uint64)
    return random.Random(int(state[0]) << 64 | int(state[1]))


def capture_value(board: Board, uci: str, mvv_lva: bool) -> float:
    """0 for a quiet move, else the capture's MVV-LVA factor (1 without MVV-LVA)."""
    frm = (ord(uci[0]) - 97) + 8 * (ord(uci[1]) - 49)
    to = (ord(uci[2]) - 97) + 8 * (ord(uci[3]) - 49)
    victim = board.piece_at(to)
    attacker = board.piece_at(frm)
    if victim is None:
        # En passant: a pawn changing file onto an empty square.
        if attacker in ("P", "p") and uci[0] != uci[2]:
            victim = "p"
        else:
            return 0.0
    if not mvv_lva:
        return 1.0
    score = 10 * PIECE_VALUES[victim.lower()] - PIECE_VALUES[attacker.lower()]
    return 1.0 + score / 10.0


def play_game(seed: int, game_index: int, cfg: PlayConfig) -> Game | None:
    """Play one biased random game; None if it ended before ``cfg.min_plies``."""
    rng = game_rng(seed, game_index)
    board = Board()
    tokens, moves, legal, probs, kinds, plies, p_max, p_top5, white_to_move = ([] for _ in range(9))
    ply = 0
    status = board.status()
    while status == Status.ONGOING and ply < cfg.max_plies:
        ucis = board.legal_moves()
        idx = legal_move_indices(board).astype(np.int16)
        row = encode_board(board)
        weights = [1.0] * len(ucis)
        mates = []
        for i, uci in enumerate(ucis):
            w = 1.0
            if cfg.capture_weight != 1.0:
                c = capture_value(board, uci, cfg.mvv_lva)
                if c:
                    w *= cfg.capture_weight * c
            if cfg.needs_probe:
                board.push_uci(uci)
                if board.is_check():
                    w *= cfg.check_weight
                    if cfg.mate_in_one and board.status() == Status.CHECKMATE:
                        mates.append(i)
                board.pop()
            weights[i] = w
        choice = rng.choices(range(len(ucis)), weights=weights)[0]
        total = sum(weights)
        top = sorted(weights, reverse=True)
        sampler = (np.array(weights, dtype=np.float64) / total).astype(np.float16)
        samples = [(int(idx[choice]), KIND_RANDOM, top[0] / total, sum(top[:5]) / total, sampler)]
        for i in mates:  # a mate-in-1 sample's target is its mating move, all mass on it
            onehot = np.zeros(len(ucis), dtype=np.float16)
            onehot[i] = 1.0
            samples.append((int(idx[i]), KIND_MATE, 1.0, 1.0, onehot))
        for move, kind, pm, p5, prob in samples:
            tokens.append(row)
            moves.append(move)
            legal.append(idx)
            probs.append(prob)
            kinds.append(kind)
            plies.append(ply)
            p_max.append(pm)
            p_top5.append(p5)
            white_to_move.append(board.turn)
        board.push_uci(ucis[choice])
        ply += 1
        status = board.status()
    if ply < cfg.min_plies:
        return None
    if status == Status.CHECKMATE:
        result = -1 if board.turn else 1  # the side to move is mated
    else:
        result = 0
    stm = np.where(np.array(white_to_move, dtype=bool), 1, -1).astype(np.int8)
    outcome = (stm * result).astype(np.int8)
    kind = np.array(kinds, dtype=np.uint8)
    outcome[kind == KIND_MATE] = 1
    return Game(
        tokens=np.stack(tokens).astype(np.uint8),
        move=np.array(moves, dtype=np.int16),
        legal=legal,
        probs=probs,
        outcome=outcome,
        kind=kind,
        ply=np.array(plies, dtype=np.int16),
        p_max=np.array(p_max, dtype=np.float32),
        p_top5=np.array(p_top5, dtype=np.float32),
        plies=ply,
        result=result,
        end=TRUNCATED if status == Status.ONGOING else int(status),
    )
