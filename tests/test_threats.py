"""Threat inputs (encoding version 2, zerochess/engine/threats.pyx): the flags against
python-chess's attack maps, the token arithmetic, and the networks that read them."""

import random

import chess
import numpy as np
import pytest

from zerochess.engine import Board, encode_board
from zerochess.engine.layout import SEQ_LEN, VOCAB_SIZE
from zerochess.engine.threats import (N_THREAT_FLAGS, THREAT_VOCAB_SIZE, add_threats,
                                      add_threats_inplace, network_tokens)

#: Positions whose attacks are easy to get wrong: pins (a pinned piece still attacks),
#: en passant (the capturable pawn is not "attacked" by it), promotions one step away,
#: batteries and x-rays (a slider stops at the first piece), kings next to each other,
#: checks, Chess960 castling rights, pawns on the edge files.
HANDPICKED = (
    "4k3/8/8/8/4r3/8/4B3/4K3 w - - 0 1",
    "4k3/8/8/b7/8/8/3N4/4K3 w - - 0 1",
    "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3",
    "rnbqkbnr/ppppp1pp/8/4Pp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "8/1P4k1/8/8/8/8/6p1/K6R w - - 0 1",
    "3r3k/1P6/8/8/8/8/6p1/K4B1R b - - 0 1",
    "4k3/8/8/8/3Q4/3R4/3R4/3K4 w - - 0 1",
    "q3k3/1b6/8/8/8/8/8/4K2B b - - 0 1",
    "8/8/8/2k1K3/8/8/8/8 w - - 0 1",
    "4k3/4q3/8/8/8/8/8/4K3 w - - 0 1",
    "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1",
    "7k/P6P/8/8/8/8/p6p/K7 b - - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1",
)


def random_game_fens(count: int, seed: int) -> list[str]:
    """FENs of positions from random games (python-chess plays them)."""
    rng = random.Random(seed)
    fens: list[str] = []
    while len(fens) < count:
        board = chess.Board()
        while not board.is_game_over() and len(fens) < count and board.ply() < 200:
            fens.append(board.fen())
            board.push(rng.choice(list(board.legal_moves)))
    return fens


def expected_flags(fen: str) -> np.ndarray:
    """The 64 flags python-chess gives, in the mover's frame: square s of the frame is s on
    the real board for White to move and s ^ 56 for Black."""
    board = chess.Board(fen, chess960=True)  # reads X-FEN castling too; attacks are the same
    us = board.turn
    flip = 0 if us == chess.WHITE else 56
    return np.array([int(board.is_attacked_by(not us, s ^ flip))
                     | int(board.is_attacked_by(us, s ^ flip)) << 1 for s in range(64)], np.uint8)


def v1_tokens(fens) -> np.ndarray:
    return np.stack([encode_board(Board(f)) for f in fens]).astype(np.uint8)


def check_flags(fens) -> int:
    """Assert the flags of every FEN; return how many positions had flagged squares."""
    v1 = v1_tokens(fens)
    v2 = add_threats(v1)
    for fen, row in zip(fens, v2):
        assert np.array_equal(row[:64] // VOCAB_SIZE, expected_flags(fen)), fen
    return int((v2[:, :64] >= VOCAB_SIZE).any(axis=1).sum())


def test_flags_are_python_chess_attack_maps_over_random_games():
    fens = random_game_fens(400, seed=3)
    assert sum(" b " in f for f in fens) > 150  # both frames
    assert check_flags(fens) == len(fens)  # every position has attacked squares


def test_flags_of_handpicked_positions():
    check_flags(HANDPICKED)


def test_flags_by_hand_at_the_start():
    """The start position, read by hand: White's rank 3 is defended and not attacked,
    rank 6 attacked and not defended (a1 and h1 are defended by nothing, b1 by the rook, ...);
    with Black to move the frame is mirrored, so the same squares carry the same flags."""
    for fen in ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1"):
        flags = add_threats(v1_tokens([fen]))[0, :64] // VOCAB_SIZE
        assert (flags[16:24] == 2).all() and (flags[40:48] == 1).all()
        assert (flags[24:40] == 0).all()
        assert flags[0] == 0 and flags[7] == 0 and flags[1] == 2 and flags[4] == 2  # a1 h1 b1 e1


def test_version_2_tokens_are_version_1_plus_44_times_the_flags():
    v1 = v1_tokens(random_game_fens(200, seed=5) + list(HANDPICKED))
    kept = v1.copy()
    v2 = add_threats(v1)
    assert np.array_equal(v1, kept)  # the input is not touched
    assert v2.dtype == np.uint8 and v2.shape == v1.shape
    assert np.array_equal(v2[:, 64:], v1[:, 64:])  # side, castling, ep, fifty, repetition
    assert np.array_equal(v2 % VOCAB_SIZE, v1)
    assert v2.max() < THREAT_VOCAB_SIZE == VOCAB_SIZE * N_THREAT_FLAGS == 176
    assert set(np.unique(v2[:, :64] // VOCAB_SIZE)) == {0, 1, 2, 3}
    inplace = v1.copy()
    assert add_threats_inplace(inplace) is None and np.array_equal(inplace, v2)
    assert np.array_equal(add_threats(v1[0]), v2[0])  # one position: shape [72]
    assert add_threats(np.zeros((0, SEQ_LEN), np.uint8)).shape == (0, SEQ_LEN)
    assert network_tokens(v1, False) is v1
    assert np.array_equal(network_tokens(v1, True), v2)


def test_add_threats_refuses_what_is_not_version_1_tokens():
    v2 = add_threats(v1_tokens(HANDPICKED))
    with pytest.raises(ValueError, match="not version-1 tokens"):
        add_threats(v2)  # twice: the flags would be counted again
    with pytest.raises(ValueError, match="shape"):
        add_threats_inplace(np.zeros((2, 71), np.uint8))
    with pytest.raises(ValueError, match="uint8"):
        add_threats_inplace(np.zeros((2, SEQ_LEN), np.int64))
    with pytest.raises(ValueError, match="contiguous"):
        add_threats_inplace(np.zeros((SEQ_LEN, 2), np.uint8).T)
