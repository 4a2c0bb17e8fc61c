"""Shared test options and helpers."""

import random

import pytest


def pytest_addoption(parser):
    parser.addoption("--differential-games", type=int, default=2000,
                     help="random games in the board-vs-python-chess differential test")
    parser.addoption("--encoding-positions", type=int, default=100_000,
                     help="positions in the encoding uniqueness/round-trip test")
    parser.addoption("--chess960-all", action="store_true",
                     help="perft all 960 Chess960 starts at depth 4 against python-chess "
                          "(about 13 CPU-minutes; the default run checks a sample of 16)")


def random_game_moves(rng: random.Random, board, max_plies: int):
    """Yield UCI moves of one random game played on `board` (a zerochess Board), pushing
    each; stops at game end or after `max_plies`. Moves are sorted before the draw so the
    game depends only on the seed."""
    for _ in range(max_plies):
        if board.is_game_over():
            return
        move = rng.choice(sorted(board.legal_moves()))
        board.push_uci(move)
        yield move


@pytest.fixture
def rng():
    return random.Random(20261121)


@pytest.fixture
def engine():
    """A zerochess process over raw pipes (tests/uci_process.py) after ``uci``, playing
    with the uniform network: the protocol without a network's cost. Files that need
    another engine (python-chess's client, the shipped network) define their own."""
    from uci_process import UciProcess

    e = UciProcess()
    e.send("uci")
    e.expect("uciok", timeout=15)
    e.send("setoption name WeightsFile value uniform")
    e.sync()
    yield e
    e.close()


@pytest.fixture(scope="session", autouse=True)
def onnx_cache_dir(tmp_path_factory):
    """Exported ONNX models go to a temporary cache, not the user's (engines the tests
    start inherit it)."""
    import os

    path = tmp_path_factory.mktemp("zerochess-cache")
    previous = os.environ.get("ZEROCHESS_CACHE_DIR")
    os.environ["ZEROCHESS_CACHE_DIR"] = str(path)
    yield path
    if previous is None:
        os.environ.pop("ZEROCHESS_CACHE_DIR", None)
    else:
        os.environ["ZEROCHESS_CACHE_DIR"] = previous
