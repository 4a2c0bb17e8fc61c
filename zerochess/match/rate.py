"""`zerochess rate`: the match report of games already played, read back from PGN files.

A ladder is often played as several matches (two side by side on a 2-core machine, or one
run stopped and resumed with later openings); the figure that matters is all of them
together. This reads the PGNs (ours, cutechess's or fastchess's), rebuilds the games as
`GameRecord`s and prints the very report `zerochess match` prints, so the two cannot
disagree:

- games are paired by file, opening (the start position and any moves marked ``{book}``)
  and the two players, in file order: a game with the rated engine as White pairs with the
  next one on the same opening where it is Black.
  When every game has its partner the error bar is pentanomial, as in a match;
- a forfeit is a game whose ``Termination`` is ``time forfeit``, ``rules infraction`` or
  ``abandoned``; the engine that forfeited is the loser (or, in a drawn time forfeit, the
  side the reason names);
- unfinished games (``*``) and games the engine did not play are skipped and counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.pgn
import click

from zerochess.match.cli import report
from zerochess.match.config import EngineSpec, MatchConfig
from zerochess.match.game import GameRecord
from zerochess.match.openings import Opening
from zerochess.match.pgn import RESULTS, book_end, ending_of
from zerochess.match.runner import MatchResult


class RateError(ValueError):
    """The PGNs hold no game that can be rated (none played by the engine, or unreadable)."""


@dataclass
class Rated:
    """The games rebuilt for the report, and what was left out and why."""
    result: MatchResult
    skipped: Counter = field(default_factory=Counter)
    unpaired: int = 0


def read_games(paths: list[Path], name: str | None = None) -> Rated:
    """Every finished game of ``name`` (default: White of the first finished game) as a
    `MatchResult` whose first engine is ``name``."""
    records: list[GameRecord] = []
    skipped: Counter = Counter()
    opponents: list[str] = []
    waiting: dict[tuple, list[GameRecord]] = {}  # (file, opening, opponent, colour) -> unpaired
    pair = 0
    for file_index, path in enumerate(paths):
        with open(path, encoding="utf-8-sig", errors="replace") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                h = game.headers
                if game.errors:
                    skipped["unreadable"] += 1
                    continue
                if h.get("Result") not in RESULTS:
                    skipped["unfinished"] += 1
                    continue
                name = name or h.get("White")
                if name not in (h.get("White"), h.get("Black")) or h["White"] == h["Black"]:
                    skipped["not played by " + name] += 1
                    continue
                other = h["Black"] if h["White"] == name else h["White"]
                if other not in opponents:
                    opponents.append(other)
                termination, reason, forfeit = ending_of(game)
                fen = game.board().fen()
                _, book = book_end(game)
                opening = Opening(fen, book)
                record = GameRecord(
                    round=len(records) + 1, pair=0, opening_index=0, white=h["White"],
                    black=h["Black"], opening=opening, result=h["Result"],
                    termination=termination, reason=reason, forfeit=forfeit)
                as_white = h["White"] == name
                partners = waiting.get((file_index, opening, other, not as_white))
                if partners:
                    record.pair = partners.pop(0).pair
                else:
                    pair += 1
                    record.pair = pair
                    waiting.setdefault((file_index, opening, other, as_white), []).append(record)
                records.append(record)
    if not records:
        what = ", ".join(f"{n} {why}" for why, n in skipped.items()) or "no games"
        raise RateError(f"no game to rate in {', '.join(map(str, paths))} ({what})")
    engines = [EngineSpec(name, []), EngineSpec(" + ".join(opponents), [])]
    unpaired = sum(len(v) for v in waiting.values())
    return Rated(MatchResult(MatchConfig(engines), records), skipped, unpaired)


@click.command()
@click.argument("pgns", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--engine", "name", metavar="NAME",
              help="The engine to rate, as the PGNs name it (default: White of the first game).")
def rate(pgns, name):
    """Report W/D/L, score and Elo (with its error bar) of games already played, from PGNs.

    Example: zerochess rate ladder-a.pgn ladder-b.pgn --engine zc"""
    try:
        rated = read_games(list(pgns), name)
    except (RateError, UnicodeError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    for line in report(rated.result):
        click.echo(line)
    if rated.unpaired:
        click.echo(f"unpaired games: {rated.unpaired} (their opening lacks the other colour; "
                   "the error bar is per game)")
    for why, n in rated.skipped.items():
        click.echo(f"skipped: {n} {why}")
