"""EPD lines as opening suites write them.

Suites like ``noob_2moves.epd`` are really FENs, with the halfmove clock and move number
(``... w KQkq - 0 3``), which strict EPD parsers (python-chess's ``Board.from_epd``) reject as
bad operations. cutechess and fastchess accept both, and so do we: six fields whose last two
are integers are a FEN; anything else is EPD with operations."""

from __future__ import annotations

import chess


def parse_epd_line(line: str, chess960: bool = False) -> tuple[chess.Board, dict]:
    """``(board, operations)``; raises ValueError for a bad line. With ``chess960`` the
    castling field may name any rook (X-FEN or Shredder-FEN, as Chess960 suites write it)."""
    fields = line.split()
    if len(fields) >= 6 and fields[4].isdigit() and fields[5].isdigit():
        board, ops = chess.Board.from_epd(" ".join(fields[:4] + fields[6:]), chess960=chess960)
        board.halfmove_clock, board.fullmove_number = int(fields[4]), max(1, int(fields[5]))
        return board, ops
    return chess.Board.from_epd(line, chess960=chess960)
