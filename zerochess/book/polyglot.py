"""Polyglot opening books: the 16-byte entry format, a writer and the engine's prober.

A Polyglot ``.bin`` file is a flat array of big-endian entries sorted by key::

    key u64 | move u16 | weight u16 | learn u32

The key is the Polyglot Zobrist hash of the position (``chess.polyglot.zobrist_hash``; our
native ``Board.zobrist()`` computes the same value faster). The move packs
``to | from << 6 | promotion << 12`` (promotion 1 knight .. 4 queen) and writes castling as
king-takes-rook (``e1h1``), which is how every Polyglot reader expects it. We write with the
``struct`` module rather than python-chess because python-chess only reads books; python-chess's
reader is the oracle in the tests.

    >>> key = chess.polyglot.zobrist_hash(chess.Board())
    >>> write_book("my.bin", {(key, "e2e4"): 3, (key, "d2d4"): 1})
    >>> BookProber("my.bin").probe(chess.STARTING_FEN, random.Random(1))
    'e2e4'
"""

from __future__ import annotations

import os
import random
import struct
from bisect import bisect_left
from collections import defaultdict
from typing import Mapping, NamedTuple

import chess
import chess.polyglot

from zerochess.atomic import write_atomic

ENTRY = struct.Struct(">QHHI")
MAX_WEIGHT = 0xFFFF
FILES = "abcdefgh"
PROMOTION_CODES = {"n": 1, "b": 2, "r": 3, "q": 4}
PROMOTION_PIECES = {code: piece for piece, code in PROMOTION_CODES.items()}
# Standard-chess castling in UCI (king two squares) <-> Polyglot (king takes own rook).
CASTLING_TO_POLYGLOT = {"e1g1": "e1h1", "e1c1": "e1a1", "e8g8": "e8h8", "e8c8": "e8a8"}
CASTLING_FROM_POLYGLOT = {v: k for k, v in CASTLING_TO_POLYGLOT.items()}


class BookError(ValueError):
    """A book file that cannot be used: missing, empty, truncated or not sorted by key.

    The message names the file, so that a UCI `info string` or a CLI error points at it."""


class BookEntry(NamedTuple):
    key: int
    move: str  # UCI; from `BookProber` castling is the king's two-square move (e1g1)
    weight: int
    learn: int = 0


def _square(name: str) -> int:
    return FILES.index(name[0]) + 8 * (int(name[1]) - 1)


def _square_name(index: int) -> str:
    return FILES[index & 7] + str((index >> 3) + 1)


def to_polyglot_uci(uci: str, is_king_move: bool) -> str:
    """Castling as Polyglot writes it: the king takes its own rook (e1g1 -> e1h1).

    Only a king's e1g1 is castling (a rook or queen could also go e1 -> g1), so the caller,
    who has the board, says whether the moving piece is a king."""
    return CASTLING_TO_POLYGLOT.get(uci, uci) if is_king_move else uci


def encode_move(uci: str) -> int:
    """Pack a move, already in Polyglot form (see `to_polyglot_uci`), into 16 bits."""
    if len(uci) not in (4, 5) or uci[4:] not in ("", *PROMOTION_CODES) \
            or uci[0] not in FILES or uci[2] not in FILES or uci[1] not in "12345678" \
            or uci[3] not in "12345678":
        raise ValueError(f"not a UCI move: {uci!r}")
    code = _square(uci[2:4]) | _square(uci[0:2]) << 6
    if len(uci) == 5:
        code |= PROMOTION_CODES[uci[4]] << 12
    return code


def decode_move(code: int, king_on_from_square: bool = True) -> str:
    """Unpack Polyglot's 16 bits to UCI, turning king-takes-rook back into castling when the
    king stands on the from-square (the caller checks that on its board)."""
    uci = _square_name((code >> 6) & 0x3F) + _square_name(code & 0x3F)
    promotion = (code >> 12) & 0x7
    if promotion:
        if promotion not in PROMOTION_PIECES:
            raise ValueError(f"bad promotion bits in Polyglot move {code:#06x}")
        uci += PROMOTION_PIECES[promotion]
    elif king_on_from_square:
        uci = CASTLING_FROM_POLYGLOT.get(uci, uci)
    return uci


def scale_weights(counts: Mapping[tuple[int, str], int]) -> list[BookEntry]:
    """Turn ``{(key, polyglot_uci): weight}`` into entries sorted by (key, move code) with weights that
    fit in u16. Weights of one key are scaled together so that their ratios survive; a
    positive weight never scales down to 0 (it would vanish from weighted choice)."""
    by_key: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for (key, move), weight in counts.items():
        if weight < 0:
            raise ValueError(f"negative weight {weight} for {move} at key {key:#018x}")
        if not 0 <= key < 1 << 64:
            raise ValueError(f"key out of range: {key}")
        by_key[key].append((move, int(weight)))
    entries = []
    for key in sorted(by_key):
        moves = by_key[key]
        top = max(w for _, w in moves)
        scale = MAX_WEIGHT / top if top > MAX_WEIGHT else 1.0
        for move, weight in moves:
            scaled = min(MAX_WEIGHT, max(1 if weight else 0, round(weight * scale)))
            entries.append(BookEntry(key, move, scaled))
    entries.sort(key=lambda e: (e.key, encode_move(e.move)))
    return entries


def write_book(path: str | os.PathLike, counts: Mapping[tuple[int, str], int]) -> int:
    """Write a Polyglot book from ``{(key, polyglot_uci): weight}`` (castling as e1h1, see
    `to_polyglot_uci`); returns the number of entries.

    Written atomically (``zerochess.atomic``), so a reader (or an engine with OwnBook)
    never sees a half-written book."""
    entries = scale_weights(counts)

    def write(out) -> None:
        for e in entries:
            out.write(ENTRY.pack(e.key, encode_move(e.move), e.weight, e.learn))

    write_atomic(path, write)
    return len(entries)


def read_entries(path: str | os.PathLike) -> list[tuple[int, int, int, int]]:
    """Read and validate all raw entries ``(key, move_code, weight, learn)`` of a book.

    Raises `BookError` (naming the file) for a missing, empty, truncated or unsorted file:
    an unsorted book would make every binary-search prober silently miss positions."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise BookError(f"cannot read opening book {os.fspath(path)!r}: {exc.strerror}") from None
    if not data:
        raise BookError(f"opening book {os.fspath(path)!r} is empty")
    if len(data) % ENTRY.size:
        raise BookError(f"opening book {os.fspath(path)!r} is not a Polyglot book: its size "
                        f"{len(data)} is not a multiple of {ENTRY.size} bytes")
    entries = list(ENTRY.iter_unpack(data))
    for i in range(1, len(entries)):
        if entries[i][0] < entries[i - 1][0]:
            raise BookError(f"opening book {os.fspath(path)!r} is not a Polyglot book: "
                            f"entries are not sorted by key (entry {i})")
    return entries


class BookProber:
    """The engine's OwnBook: picks a book move by weighted random choice.

    The whole book is loaded into memory at construction (books for OwnBook are small; ours
    is a few hundred kB), so probing never touches the disk during a game and a bad file
    is reported when the option is set, not in the middle of a search.

        >>> prober = BookProber("zerochess/data/book.bin")
        >>> prober.probe("startpos", random.Random(0))  # e.g. 'e2e4'
    """

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        raw = read_entries(path)
        self._keys = [e[0] for e in raw]
        self._moves = [e[1] for e in raw]
        self._weights = [e[2] for e in raw]

    def __len__(self) -> int:
        return len(self._keys)

    def entries(self, board: chess.Board | str, chess960: bool = False) -> list[BookEntry]:
        """The book's legal moves for a position (a ``chess.Board`` or a FEN, X-FEN or
        Shredder-FEN), weights > 0, in file order. Illegal entries (hash collisions, corrupt
        books) are skipped. Castling is written as Polyglot stores it, king takes rook
        (e1h1), when ``chess960`` is set (UCI_Chess960), else as the king's two-square move."""
        if isinstance(board, str):
            board = chess.Board(chess960=chess960) if board == "startpos" \
                else chess.Board(board, chess960=chess960)
        key = chess.polyglot.zobrist_hash(board)
        found = []
        i = bisect_left(self._keys, key)
        while i < len(self._keys) and self._keys[i] == key:
            code, weight = self._moves[i], self._weights[i]
            i += 1
            if weight <= 0:
                continue
            from_square = (code >> 6) & 0x3F
            uci = decode_move(code, board.piece_type_at(from_square) == chess.KING and not chess960)
            try:
                move = chess.Move.from_uci(uci)
            except ValueError:
                continue
            if board.is_legal(move):
                found.append(BookEntry(key, uci, weight))
        return found

    def probe(self, board: chess.Board | str, rng: random.Random | None = None,
              chess960: bool = False) -> str | None:
        """A book move in UCI for the position, or None when the book has none.

        Moves are chosen with probability proportional to their weight; the same ``rng``
        state gives the same move, so games with a seeded engine are reproducible."""
        found = self.entries(board, chess960)
        if not found:
            return None
        rng = rng or random.Random()
        total = sum(e.weight for e in found)
        pick = rng.randrange(total)
        for e in found:
            pick -= e.weight
            if pick < 0:
                return e.move
        raise AssertionError("unreachable: weights sum to total")
