"""`zerochess match`: engine-vs-engine matches between any UCI engines."""

from __future__ import annotations

import logging
import math

import click
from tqdm import tqdm

from zerochess.match.config import (
    DrawAdjudication, EngineSpec, MatchConfig, MatchConfigError, ResignAdjudication,
    TimeControl, apply_limit, apply_option, parse_fields,
)
from zerochess.match.runner import MatchError, MatchResult, run_match
from zerochess.match.stats import Sprt


def report(result: MatchResult) -> list[str]:
    """The final report's lines (also used by the tests)."""
    a, b = (e.name for e in result.config.engines)
    est = result.estimate
    lines = [
        f"{a} vs {b}: {est.games} games, W/D/L {est.wins}/{est.draws}/{est.losses}, "
        f"score {100 * est.score:.1f}%" if est.games else f"{a} vs {b}: no games",
    ]
    if est.games:
        lines.append(est.summary())
    forfeits = result.forfeit_counts()
    if result.config.odds:
        lines.append("limits: " + ", ".join(f"{e.name} {result.config.limit_of(e.name).describe()}"
                                            for e in result.config.engines))
    if any(g.opening.chess960 for g in result.games):
        lines.append("variant: Chess960 (UCI_Chess960 on, castling as king takes rook)")
    lines.append(f"forfeits: {sum(forfeits.values())}")
    for (name, reason), n in sorted(forfeits.items()):
        lines.append(f"  {n} x {name}: {reason}")
    lines.append("endings: " + ", ".join(f"{reason} {n}" for reason, n in
                                         result.terminations().most_common()))
    if result.resumed or result.dropped:
        lines.append(f"resumed: {result.resumed} games read back from the PGN"
                     + (f", {result.dropped} cut short there played again" if result.dropped else ""))
    if result.stopped:
        lines.append(f"stopped early: {result.stopped}")
    return lines


@click.command()
@click.option("--engine", "engines", multiple=True, required=True, metavar="NAME=CMD",
              help="A UCI engine (give two). CMD may have arguments: 'zc=zerochess uci'.")
@click.option("--option", "options", multiple=True, metavar="NAME.OPT=VALUE",
              help="A UCI option of engine NAME, e.g. sf.UCI_LimitStrength=true sf.UCI_Elo=1350 "
                   "(the lowest Stockfish 15.1 accepts; 16+ accept 1320).")
@click.option("--games", type=click.IntRange(1), default=2, show_default=True,
              help="Games to play; each opening is played twice, colours swapped.")
@click.option("--tc", help="Time control [moves/]base[+inc] in seconds: 10+0.1, 1+0.01, 40/60.")
@click.option("--nodes", type=click.IntRange(1), help="Fixed nodes per move instead of a clock.")
@click.option("--movetime", type=click.FloatRange(0, min_open=True),
              help="Fixed seconds per move instead of a clock.")
@click.option("--limit", "limits", multiple=True, metavar="NAME.nodes=N",
              help="Engine NAME's own limit instead of the match's, for time or node odds: "
                   "NAME.tc=10+0.1, NAME.nodes=N or NAME.movetime=S (cutechess's per-engine "
                   "tc=/nodes=); on nodes or movetime it plays without a clock.")
@click.option("--openings", type=click.Path(exists=True, dir_okay=False),
              help="Opening suite, .epd or .pgn (default: the start position).")
@click.option("--openings-order", type=click.Choice(["sequential", "random"]),
              default="sequential", show_default=True)
@click.option("--openings-plies", type=click.IntRange(0), help="PGN openings: at most N plies.")
@click.option("--openings-start", type=click.IntRange(1), default=1, show_default=True,
              help="1-based index of the first opening.")
@click.option("--variant", type=click.Choice(["standard", "chess960", "fischerandom"]),
              help="Chess960 (fastchess and cutechess call it fischerandom): castling from any "
                   "start, UCI_Chess960 set on both engines. Default: chess960 when an "
                   "opening has Chess960 castling rights (FRC/DFRC suites), else standard.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random order.")
@click.option("--concurrency", type=click.IntRange(1), default=1, show_default=True,
              help="Games played at once.")
@click.option("--pgn", "pgn_out", type=click.Path(dir_okay=False), help="Append games to this PGN.")
@click.option("--resume", is_flag=True,
              help="Go on with the match --pgn holds: play only its missing games (run the "
                   "same command again after a kill) and report on all of them.")
@click.option("--event", default="zerochess match", show_default=True, help="PGN Event tag.")
@click.option("--timemargin", type=click.FloatRange(0), default=0.0, show_default=True,
              help="Milliseconds a move may overrun the clock before it is a time forfeit.")
@click.option("--move-timeout", type=click.FloatRange(0, min_open=True), default=60.0,
              show_default=True, help="Seconds to wait for a --nodes/--movetime move (hang guard).")
@click.option("--draw-adjudication", metavar="movenumber=40,movecount=8,score=10",
              help="Draw when both scores stay within score cp for movecount moves each.")
@click.option("--resign-adjudication", metavar="movecount=3,score=600[,twosided=true]",
              help="A side loses when its score stays <= -score cp for movecount moves.")
@click.option("--maxmoves", type=click.IntRange(1), help="Draw after this many moves.")
@click.option("--sprt", metavar="elo0=0,elo1=5,alpha=0.05,beta=0.05[,min_games=20]",
              help="Stop when the SPRT for the first engine decides (not before min_games).")
@click.option("--engine-stderr", is_flag=True, help="Show the engines' stderr.")
@click.option("--fail-on-forfeit", is_flag=True, help="Exit with status 1 if any game was forfeited.")
@click.option("--progress/--no-progress", default=True, help="Show a progress bar.")
def match(engines, options, games, tc, nodes, movetime, limits, openings, openings_order, openings_plies,
          openings_start, variant, seed, concurrency, pgn_out, event, timemargin, move_timeout,
          draw_adjudication, resign_adjudication, maxmoves, sprt, engine_stderr,
          fail_on_forfeit, progress, resume):
    """Play a match between two UCI engines and report W/D/L, score and Elo difference.

    Example: zerochess match --engine sf=/usr/games/stockfish --engine sf2=/usr/games/stockfish
    --option sf2.UCI_LimitStrength=true --option sf2.UCI_Elo=1350 --games 10 --tc 1+0.1
    --openings books/balanced_2moves.epd --concurrency 2 --pgn out.pgn"""
    try:
        specs = [EngineSpec.parse(text) for text in engines]
        for text in options:
            apply_option(specs, text)
        for text in limits:
            apply_limit(specs, text)
        config = MatchConfig(
            specs, games=games, tc=TimeControl.parse(tc) if tc else None, nodes=nodes,
            movetime=movetime, openings=openings, openings_order=openings_order,
            openings_plies=openings_plies, openings_start=openings_start, seed=seed,
            concurrency=concurrency, pgn_out=pgn_out, event=event, timemargin=timemargin / 1000,
            move_timeout=move_timeout,
            draw=parse_fields(draw_adjudication, DrawAdjudication) if draw_adjudication else None,
            resign=parse_fields(resign_adjudication, ResignAdjudication) if resign_adjudication else None,
            maxmoves=maxmoves, sprt=parse_sprt(sprt) if sprt else None,
            engine_stderr=engine_stderr, resume=resume,
            variant="chess960" if variant == "fischerandom" else variant)
        config.validate()
    except MatchConfigError as exc:
        raise click.UsageError(str(exc)) from None
    # python-chess logs every odd line a broken engine sends; the report says what matters.
    logging.getLogger("chess.engine").setLevel(logging.CRITICAL)

    a = specs[0].name
    with tqdm(total=games, unit="game", disable=not progress, desc="match") as bar:
        tally = {"W": 0, "D": 0, "L": 0, "forfeits": 0}

        def on_game(record):
            s = record.score_of(a)
            tally["W" if s == 1 else "D" if s == 0.5 else "L"] += 1
            tally["forfeits"] += bool(record.forfeit)
            bar.set_postfix(tally, refresh=False)
            bar.update(1)

        try:
            result = run_match(config, on_game)
        except (MatchError, MatchConfigError) as exc:
            raise click.ClickException(str(exc)) from None
    for line in report(result):
        click.echo(line)
    if pgn_out:
        click.echo(f"PGN: {pgn_out}")
    if fail_on_forfeit and result.forfeits:
        raise SystemExit(1)


def parse_sprt(text: str) -> Sprt:
    """The ``--sprt`` text (``elo0=0,elo1=5[,alpha=,beta=,min_games=]``) as an ``Sprt``;
    ``MatchConfigError`` names what is wrong with it."""
    values = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key not in ("elo0", "elo1", "alpha", "beta", "min_games"):
            raise MatchConfigError(f"--sprt {text!r}: expected elo0=,elo1=,alpha=,beta=[,min_games=]")
        try:
            values[key] = int(value) if key == "min_games" else float(value)
        except ValueError:
            kind = "a whole number" if key == "min_games" else "a number"
            raise MatchConfigError(f"--sprt {text!r}: {key} must be {kind}") from None
    sprt = Sprt(**values)
    if not (sprt.elo1 > sprt.elo0 and 0 < sprt.alpha < 1 and 0 < sprt.beta < 1
            and math.isfinite(sprt.elo0) and sprt.min_games >= 1):
        raise MatchConfigError(f"--sprt {text!r}: need elo1 > elo0, 0 < alpha, beta < 1 "
                               "and min_games >= 1")
    return sprt
