"""`zerochess match --resume`: go on with a match from the games its PGN already holds.

A 200-game match at a few thousand nodes a move takes longer than many machines stay up; the
PGN already has every finished game (the writer flushes after each), so the same command
with ``--resume`` plays only the games that are not in it and reports on all of them, as if
the match had never stopped (fastchess keeps a config file for this; the PGN is enough here).

A game counts when it is the match's own: its ``Round`` is a game of this schedule, with the
same players in the same colours, from the same opening, under the same limits. Anything
else in the file means the command is not the one that wrote it, which is an error, not a
guess. A game the kill cut short (a result still ``*``, fewer moves than its ``PlyCount``,
text that stops before the result) is dropped and played again; the file is rewritten
without it first (`zerochess.atomic`: a temporary file, then a rename), so a second kill loses
nothing either.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

import chess
import chess.pgn

from zerochess.atomic import write_text_atomic
from zerochess.match.config import MatchConfig, MatchConfigError
from zerochess.match.game import GameRecord
from zerochess.match.pgn import RESULTS, book_end, ending_of, limit_tags


@dataclass
class Resumed:
    """The finished games a PGN gave back (schedule order) and how many it dropped."""
    games: list[GameRecord]
    dropped: int = 0


def _finished(game: chess.pgn.Game, raw: str) -> bool:
    """Whether ``game`` (with its text ``raw``) was written whole."""
    result = game.headers.get("Result")
    if result not in RESULTS or game.errors or not raw.rstrip().endswith(result):
        return False
    plies = game.headers.get("PlyCount")
    return plies is None or (plies.isdigit() and int(plies) == len(list(game.mainline_moves())))


def _mismatch(game: chess.pgn.Game, record: GameRecord, config: MatchConfig) -> str | None:
    """Why ``game`` is not game ``record.round`` of this match, or None when it is."""
    h = game.headers
    if (h.get("White"), h.get("Black")) != (record.white, record.black):
        return (f"it has {h.get('White')} against {h.get('Black')}, this match "
                f"{record.white} against {record.black}")
    if book_end(game)[0].board().fen() != record.opening.board().fen():
        return "it starts from another opening"
    for tag, value in limit_tags(record.white, record.black, config).items():
        if h.get(tag) != value:
            return f"its {tag} is {h.get(tag)!r}, this match's {value!r}"
    return None


def resume(config: MatchConfig, scheduled: list[GameRecord]) -> Resumed:
    """The games of ``scheduled`` that ``config.pgn_out`` already holds, rebuilt for the
    report (no moves); rewrites the file without a game cut short. Raises
    `MatchConfigError` when the file holds a game this match would not have played."""
    path = config.pgn_out  # MatchConfig.validate: --resume has one
    if not os.path.exists(path):
        return Resumed([])
    try:
        with open(path, encoding="utf-8-sig") as handle:
            text = handle.read()
    except (OSError, UnicodeError) as exc:
        raise MatchConfigError(f"--resume: cannot read {os.fspath(path)!r}: {exc}") from None
    stream = io.StringIO(text)
    where = f"--resume: {os.fspath(path)!r} was not written by this match"
    kept: dict[int, GameRecord] = {}
    kept_text: list[str] = []
    dropped = 0
    while True:
        start = stream.tell()
        game = chess.pgn.read_game(stream)
        if game is None:
            break
        raw = text[start:stream.tell()]
        if not _finished(game, raw):
            dropped += 1
            continue
        round_tag = game.headers.get("Round", "")
        if not round_tag.isdigit() or not 1 <= int(round_tag) <= len(scheduled):
            raise MatchConfigError(f"{where}: a game has Round {round_tag!r}, this match has "
                                   f"games 1-{len(scheduled)} (another --games? another --pgn)")
        record = scheduled[int(round_tag) - 1]
        if record.round in kept:
            raise MatchConfigError(f"{where}: game {record.round} is in it twice")
        why = _mismatch(game, record, config)
        if why:
            raise MatchConfigError(f"{where}: game {record.round}: {why}")
        termination, reason, forfeit = ending_of(game)
        kept[record.round] = GameRecord(
            record.round, record.pair, record.opening_index, record.white, record.black,
            record.opening, result=game.headers["Result"], termination=termination,
            reason=reason, forfeit=forfeit)
        kept_text.append(raw.strip() + "\n\n")
    if dropped:
        write_text_atomic(path, "".join(kept_text))
    return Resumed([kept[r] for r in sorted(kept)], dropped)
