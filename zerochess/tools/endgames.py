"""`zerochess endgames`: random won endgame positions, to measure whether the engine converts.

An engine that calls a position won and then shuffles until the fifty-move rule is the
failure issue 27 measured (KRvK 1 of 5, KBNvK 0 of 5 against Stockfish). These positions
are the test: the basic mates (KQvK, KRvK, KBBvK with bishops on opposite colours, KBNvK)
and KPvK positions won by rule, the strong side to move, both colours.

Every position is legal (python-chess's ``is_valid``), not over, and nothing hangs: the
weak king attacks no piece of the strong side, so the win needs technique, not a first
move that saves a piece. KPvK positions are won by the key-square rule: the strong king
stands on a key square of its pawn (the three squares two ranks ahead for a pawn on its
2nd to 4th rank; one and two ranks ahead from the 5th), rook pawns excluded, and a king on
a key square wins whoever moves. The same kind, count and seed give the same positions.

    zerochess endgames --kind KRvK --count 20 --seed 1 --out krvk.epd
    zerochess match --engine zc=zerochess --engine sf=stockfish --openings krvk.epd ...
"""

from __future__ import annotations

import random
from typing import Callable, Iterator

import chess
import click

Placement = Callable[[random.Random, chess.Color], "chess.Board | None"]

MAX_TRIES = 10_000   # per position; every kind succeeds in a few tries on average


def _board(strong: chess.Color, pieces: dict[chess.Square, chess.Piece]) -> chess.Board:
    board = chess.Board(None)
    board.set_piece_map(pieces)
    board.turn = strong
    return board


def random_placement(pieces: str, rng: random.Random) -> chess.Board:
    """``pieces`` (White's upper case, Black's lower: "KQkr") on distinct random squares,
    White to move, nothing else checked: callers pick the side to move and filter (legal,
    not over, a tablebase verdict). The Syzygy tests and benchmarks draw their positions
    here, so one seed gives them the same positions."""
    board = chess.Board(None)
    for symbol, square in zip(pieces, rng.sample(range(64), len(pieces))):
        board.set_piece_at(square, chess.Piece.from_symbol(symbol))
    return board


def _distinct(rng: random.Random, n: int) -> list[chess.Square]:
    return rng.sample(chess.SQUARES, n)


def _pieces(rng: random.Random, strong: chess.Color, types: tuple[chess.PieceType, ...]
            ) -> chess.Board:
    """Both kings and the strong side's pieces on distinct random squares."""
    squares = _distinct(rng, len(types) + 2)
    pieces = {squares[0]: chess.Piece(chess.KING, strong),
              squares[1]: chess.Piece(chess.KING, not strong)}
    for square, piece_type in zip(squares[2:], types):
        pieces[square] = chess.Piece(piece_type, strong)
    return _board(strong, pieces)


def _opposite_bishops(rng: random.Random, strong: chess.Color) -> chess.Board | None:
    board = _pieces(rng, strong, (chess.BISHOP, chess.BISHOP))
    light = [bool(chess.BB_LIGHT_SQUARES & chess.BB_SQUARES[s])
             for s in board.pieces(chess.BISHOP, strong)]
    return board if light[0] != light[1] else None


def _key_squares(pawn: chess.Square, strong: chess.Color) -> list[chess.Square]:
    """The key squares of a non-rook pawn, as the module docstring defines them."""
    file = chess.square_file(pawn)
    rank = chess.square_rank(pawn) if strong == chess.WHITE else 7 - chess.square_rank(pawn)
    ahead = (2,) if rank <= 3 else (1, 2)          # rank is 0-based: 1..3 = 2nd..4th rank
    squares = []
    for step in ahead:
        r = rank + step
        if r > 7:
            continue
        for f in (file - 1, file, file + 1):
            squares.append(chess.square(f, r if strong == chess.WHITE else 7 - r))
    return squares


def _pawn_on_key_square(rng: random.Random, strong: chess.Color) -> chess.Board | None:
    file = rng.randrange(1, 7)                      # b..g: no rook pawns
    rank = rng.randrange(1, 6)                      # its 2nd..6th rank
    pawn = chess.square(file, rank if strong == chess.WHITE else 7 - rank)
    king = rng.choice(_key_squares(pawn, strong))
    weak = rng.choice([s for s in chess.SQUARES if s not in (pawn, king)])
    return _board(strong, {pawn: chess.Piece(chess.PAWN, strong),
                           king: chess.Piece(chess.KING, strong),
                           weak: chess.Piece(chess.KING, not strong)})


KINDS: dict[str, Placement] = {
    "KQvK": lambda rng, strong: _pieces(rng, strong, (chess.QUEEN,)),
    "KRvK": lambda rng, strong: _pieces(rng, strong, (chess.ROOK,)),
    "KBBvK": _opposite_bishops,
    "KBNvK": lambda rng, strong: _pieces(rng, strong, (chess.BISHOP, chess.KNIGHT)),
    "KPvK": _pawn_on_key_square,
}
"""Each kind's placement: a random board (strong side to move) or None to draw again."""


def acceptable(board: chess.Board) -> bool:
    """Legal, not over, the strong side (to move) not in check, and the weak king attacks
    none of its pieces: nothing hangs."""
    if not board.is_valid() or board.is_game_over() or board.is_check():
        return False
    weak_king = board.king(not board.turn)
    return not (board.attacks_mask(weak_king) & board.occupied_co[board.turn])


def generate(kind: str, count: int, seed: int) -> list[chess.Board]:
    """``count`` distinct positions of ``kind``, from a generator seeded with (kind, seed);
    the strong side alternates White, Black, White... so both colours are measured."""
    if kind not in KINDS:
        raise ValueError(f"unknown endgame kind {kind!r}; expected one of {', '.join(KINDS)}")
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    rng = random.Random(f"{kind}/{seed}")
    boards: list[chess.Board] = []
    seen: set[str] = set()
    while len(boards) < count:
        strong = chess.WHITE if len(boards) % 2 == 0 else chess.BLACK
        board = _draw(rng, KINDS[kind], strong)
        if board.epd() not in seen:
            seen.add(board.epd())
            boards.append(board)
    return boards


def _draw(rng: random.Random, place: Placement, strong: chess.Color) -> chess.Board:
    for _ in range(MAX_TRIES):
        board = place(rng, strong)
        if board is not None and acceptable(board):
            return board
    raise RuntimeError(f"no acceptable position in {MAX_TRIES} tries")   # a placement bug


def epd_lines(kind: str, boards: list[chess.Board], seed: int) -> Iterator[str]:
    """EPD with an ``id`` naming the kind, seed and number (``zerochess match`` reads it)."""
    for number, board in enumerate(boards, 1):
        yield board.epd(id=f"{kind} seed {seed} #{number}")


@click.command()
@click.option("--kind", "kinds", multiple=True, type=click.Choice(list(KINDS)), required=True,
              help="Endgame kind (repeat for several).")
@click.option("--count", type=click.IntRange(1), default=20, show_default=True,
              help="Positions per kind.")
@click.option("--seed", type=int, default=1, show_default=True, help="Same seed, same positions.")
@click.option("--out", type=click.Path(dir_okay=False, writable=True), required=True,
              help="EPD file to write (one position per line).")
def endgames(kinds, count, seed, out):
    """Write random won endgame positions (strong side to move, nothing hanging) to an EPD
    file, for `zerochess match --openings` or benchmarks/bench_endgames.py."""
    lines = [line for kind in dict.fromkeys(kinds)
             for line in epd_lines(kind, generate(kind, count, seed), seed)]
    try:
        with open(out, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    except OSError as exc:
        raise click.ClickException(f"cannot write {out}: {exc.strerror}") from None
    click.echo(f"wrote {len(lines)} positions to {out}")
