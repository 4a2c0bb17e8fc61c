"""The labelled data set does not depend on how the teacher is driven.

Small fixed runs must write the shards recorded here, byte for byte: the digests were made by
the asyncio driver (python-chess's command API, commit 97206bf) before the pipe driver
replaced it, and re-recorded once when validation games became game 1, 1 + n, 1 + 2n, ...
instead of n - 1, 2n - 1, ... (dataset.is_val_game): under the old rule the runs still gave
the old digests, and under the new one the same rows with the same labels, split otherwise. Stockfish at a fixed depth or node count, on one thread, after ``ucinewgame``
per game, is deterministic, so the digests are exact; they hold for Debian's Stockfish 15.1
(another build searches differently), and the tests skip for any other teacher.

The three runs cover a teacher's games from a book with random moves and every move
temperature (``games``), a PGN with castling, en passant, a promotion and checks (``pgn``), and
the restart path with the real engine (``nodes``): stopped by a node count in the middle of an
iteration, Stockfish 15.1 sometimes names one move in two multipv lines, which the labeller
takes for garbage, restarting the teacher and retrying, and skipping the position when the
retry repeats it.
"""

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from zerochess.train.data.label import LabelConfig, label
from zerochess.train.data.teacher import TeacherConfig

ROOT = Path(__file__).resolve().parent.parent
STOCKFISH = shutil.which("stockfish") or shutil.which("/usr/games/stockfish")
PGN = """[Event "a"]

1. e4 d5 2. exd5 Qxd5 3. Nc3 Qa5 4. d4 c6 5. Nf3 Bf5 6. Bc4 e6 7. O-O Nf6 8. d5 e5 9. dxc6 e4
10. cxb7 exf3 11. bxa8=Q fxg2 12. Kxg2 *

[Event "b"]

1. e4 a6 2. e5 d5 3. exd6 exd6 4. Qe2+ Be7 5. Qxe7+ Nxe7 *
"""

#: run -> (digest of every array's sha256, teacher failures, positions skipped)
GOLDEN = {
    "games": ("b0be39b42e3fb21171bd03e162a104ced747ada8ec0ca4a5896c913699802401", 0, 0),
    "pgn": ("fd5a91b40eeccfc2b13e5277bebff409782bdb73920fbf2b96cee213bf47d167", 0, 0),
    "nodes": ("05cddec54eba549e1fba531fa18f61123b6a94c8d89a77295b288ee6df2bbbdb", 11, 4),
}


def _is_stockfish_15_1() -> bool:
    if STOCKFISH is None:
        return False
    out = subprocess.run([STOCKFISH], input="uci\nquit\n", capture_output=True, text=True,
                         timeout=30).stdout
    return "id name Stockfish 15.1" in out


needs_stockfish_15_1 = pytest.mark.skipif(not _is_stockfish_15_1(),
                                          reason="the digests are Debian's Stockfish 15.1's")


def run_config(name: str, tmp: Path) -> LabelConfig:
    book = str(ROOT / "books" / "noob_2moves.epd")
    if name == "games":
        return LabelConfig(teacher=TeacherConfig(command=[STOCKFISH], depth=4, multipv=4),
                           games=6, games_per_chunk=3, max_plies=80, val_every=3, seed=12,
                           explore=0.3, openings=book)
    if name == "pgn":
        (tmp / "g.pgn").write_text(PGN)
        return LabelConfig(teacher=TeacherConfig(command=[STOCKFISH], depth=4, multipv=4),
                           source=str(tmp / "g.pgn"), games_per_chunk=1, val_every=2, seed=3)
    return LabelConfig(teacher=TeacherConfig(command=[STOCKFISH], depth=None, nodes=3000,
                                             multipv=3),
                       games=4, games_per_chunk=2, seed=2, max_plies=80, openings=book)


def digest(out: Path, meta: dict) -> str:
    sums = {n: {a: v["sha256"] for a, v in
                json.loads((out / n / "shard.json").read_text())["arrays"].items()}
            for n in sorted(meta["shards"])}
    return hashlib.sha256(json.dumps(sums, sort_keys=True).encode()).hexdigest()


@needs_stockfish_15_1
@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_small_runs_write_the_shards_the_asyncio_driver_wrote(tmp_path, name):
    meta = label(run_config(name, tmp_path), tmp_path / "d")
    want, failures, skipped = GOLDEN[name]
    assert (meta["timing"]["teacher_failures"], meta["timing"]["positions_skipped"]) \
        == (failures, skipped)
    assert digest(tmp_path / "d", meta) == want


def test_the_position_text_kept_move_by_move_is_the_one_python_chess_builds():
    """The labeller keeps the teacher's ``position`` command on its native board; it must be
    the text ``position_command`` builds by popping a python-chess board back to the last
    capture or pawn move (what the teacher sees decides its repetition draws). Random games
    from book openings: castling rights lost and kept, en passant squares shown only when the
    capture is legal, promotions, and long quiet stretches."""
    import chess
    import numpy as np

    from zerochess.chess.board import Board
    from zerochess.train.data.label import PositionText, read_positions_file
    from zerochess.train.data.teacher import position_command

    book = read_positions_file(str(ROOT / "books" / "noob_2moves.epd"))
    rng = np.random.default_rng(5)
    checked = 0
    for game in range(40):
        board = chess.Board(book[int(rng.integers(len(book)))][0])
        for _ in range(int(rng.integers(4))):
            board.push(list(board.legal_moves)[0])
        nb = Board(board.root().fen())
        for m in board.move_stack:
            nb.push_uci(m.uci())
        text = PositionText(position_command(board))
        for _ in range(150):
            assert text.text() == position_command(board)
            checked += 1
            legal = list(board.legal_moves)
            if not legal:
                break
            move = legal[int(rng.integers(len(legal)))]
            board.push(move)
            nb.push_uci(move.uci())
            text.push(nb, move.uci())
    assert checked > 3000


def test_the_move_draw_is_numpys_choice():
    """``_draw`` replaces ``rng.choice(n, p=p)``: the same index, and the stream left in the
    same state, for any weights."""
    import numpy as np

    from zerochess.train.data.label import _draw

    src = np.random.default_rng(0)
    for trial in range(3000):
        n = int(src.integers(1, 12))
        w = np.exp(src.normal(size=n) * 3)
        p = w / w.sum()
        a, b = np.random.default_rng([trial, 1]), np.random.default_rng([trial, 1])
        assert int(a.choice(n, p=p)) == _draw(b, p)
        assert a.random() == b.random()
