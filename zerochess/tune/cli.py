"""`zerochess tune`: SPSA over numeric UCI options, through `zerochess match` games."""

from __future__ import annotations

import logging
import os
import shlex
import sys
import time
from pathlib import Path

import click

from zerochess.tune.params import SPEC, ParamError, format_number, parse_params
from zerochess.tune.state import (
    HISTORY, LOG, PLOT, STATE, StateError, TuneConfig, TuneState, describe, load_state,
    same_params,
)

log = logging.getLogger("zerochess.tune")


@click.command()
@click.option("--engine", default=None, metavar="CMD",
              help="The engine command, split as a shell would  [default: zerochess]")
@click.option("--param", "param_specs", multiple=True, metavar=SPEC,
              help="A numeric UCI option to tune (repeat for each): start value, bounds, the "
                   "perturbation C_END and learning rate R_END at the end, as fishtest's; e.g. "
                   "CPuct=1.5,0.5,4,0.15,0.002.")
@click.option("--option", "fixed_options", multiple=True, metavar="NAME=VALUE",
              help="A UCI option set on both sides and not tuned (e.g. Threads=1).")
@click.option("--iterations", type=click.IntRange(1), help="SPSA iterations.")
@click.option("--pairs-per-iteration", "pairs", type=click.IntRange(1),
              help="Colour-swapped game pairs per iteration (one perturbation)  [default: 2]")
@click.option("--nodes", type=click.IntRange(1), help="Fixed nodes per move, both sides.")
@click.option("--tc", help="A clock instead of --nodes: [moves/]base[+inc] seconds.")
@click.option("--openings", type=click.Path(exists=True, dir_okay=False),
              help="Opening suite, .epd or .pgn (e.g. books/balanced_2moves.epd), shuffled "
                   "by the seed and walked pair by pair.")
@click.option("--draw-adjudication", "draw", metavar="movenumber=40,movecount=8,score=10",
              help="As zerochess match's: shorter games, more games an hour.")
@click.option("--resign-adjudication", "resign", metavar="movecount=3,score=600",
              help="As zerochess match's.")
@click.option("--maxmoves", type=click.IntRange(1), help="Draw after this many moves.")
@click.option("--concurrency", type=click.IntRange(1), default=1, show_default=True,
              help="Games played at once (keep it at most the cores).")
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Run directory: state.json, history.jsonl, tune.log, params.png.")
@click.option("--seed", type=int, help="Seed of the perturbations and the openings  [default: 0]")
@click.option("--resume", is_flag=True, help="Continue the tune in --out where it stopped.")
@click.option("--progress/--no-progress", default=True, help="Show a progress bar.")
@click.option("--objective", type=click.Choice(["games", "synthetic"]), default=None, hidden=True,
              help="For tests: 'synthetic' replaces games by a seeded noisy quadratic.")
@click.option("--synthetic-delay", type=click.FloatRange(0), default=0.0, hidden=True,
              help="For tests: seconds each synthetic iteration sleeps.")
def tune(engine, param_specs, fixed_options, iterations, pairs, nodes, tc, openings, draw,
         resign, maxmoves, concurrency, out, seed, resume, progress, objective, synthetic_delay):
    """Tune numeric UCI options by SPSA (as fishtest does for Stockfish): each iteration
    plays the engine at theta + c*delta against theta - c*delta at fixed nodes and moves
    theta toward the side that scored more. Resumable after a kill (--resume).

    Example: zerochess tune --param CPuct=1.745,0.5,4,0.2,0.002 --param
    FpuReduction=0.33,0,1.5,0.08,0.002 --iterations 500 --pairs-per-iteration 4
    --nodes 400 --openings books/balanced_2moves.epd --resign-adjudication
    movecount=3,score=600 --concurrency 2 --out runs/tune-cpuct (docs/tune.md)"""
    try:
        argv = shlex.split(engine) if engine is not None else None
    except ValueError as exc:
        raise click.BadParameter(f"cannot split {engine!r}: {exc}", param_hint="--engine")
    given = {"engine": argv,
             "options": _fixed(fixed_options) if fixed_options else None,
             "iterations": iterations, "pairs": pairs, "nodes": nodes, "tc": tc,
             "openings": os.path.abspath(openings) if openings else None, "draw": draw,
             "resign": resign, "maxmoves": maxmoves, "seed": seed, "objective": objective}
    out = Path(out)
    if resume:
        state = _resume(out, param_specs, given, concurrency)
    else:
        state = TuneState.new(_new_config(out, param_specs, given, concurrency))
    config = state.config

    out.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(out / LOG, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    logging.getLogger("chess.engine").setLevel(logging.CRITICAL)
    try:
        if resume:
            log.info("resumed at iteration %d/%d: theta %s", state.k, config.iterations,
                     describe(config.params, state.theta))
        else:
            log.info("zerochess %s", shlex.join(sys.argv[1:]))
            log.info("parameters: %s", " ".join(p.spec() + (" (integer)" if p.integer else "")
                                                for p in config.params))
        state.save(out)
        state.rewrite_history(out)
        _run(state, out, progress, synthetic_delay)
    finally:
        log.removeHandler(handler)
        handler.close()
    for line in final_lines(state, out):
        click.echo(line)


def _fixed(texts) -> dict[str, str]:
    options = {}
    for text in texts:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise click.UsageError(f"--option must be NAME=VALUE, got {text!r}")
        options[name.strip()] = value.strip()
    return options


def _new_config(out: Path, param_specs, given: dict, concurrency: int) -> TuneConfig:
    if (out / STATE).exists():
        raise click.UsageError(f"{out} already holds a tune ({STATE}): add --resume to "
                               "continue it, or choose another --out")
    try:
        params = parse_params(param_specs)
    except ParamError as exc:
        raise click.BadParameter(str(exc), param_hint="--param") from None
    if given["iterations"] is None:
        raise click.UsageError("--iterations is required")
    config = TuneConfig(params, given["iterations"], given["pairs"] or 2, given["seed"] or 0,
                        given["objective"] or "games",
                        ["zerochess"] if given["engine"] is None else given["engine"],
                        given["options"] or {}, given["nodes"], given["tc"], given["openings"],
                        given["draw"], given["resign"], given["maxmoves"], concurrency)
    if config.objective == "games":
        _check_games(config)
    return config


def _check_games(config: TuneConfig) -> None:
    """Settings of a games tune; then the engine is asked about every parameter, before any
    game (the parameters come back with the engine's spelling and integer flags)."""
    from zerochess.match import (
        DrawAdjudication, MatchConfigError, ResignAdjudication, TimeControl,
    )
    from zerochess.match.config import parse_fields
    from zerochess.match.openings import load_openings
    from zerochess.tune.engine import ProbeError, probe

    if (config.nodes is None) == (config.tc is None):
        raise click.UsageError("give exactly one of --nodes N and --tc base+inc")
    if not config.engine:
        raise click.UsageError("--engine is empty")
    if config.openings is None:
        raise click.UsageError("--openings is required: at fixed nodes every pair from the same "
                               "position would play the same two games")
    try:
        if config.tc:
            TimeControl.parse(config.tc)
        if config.draw:
            parse_fields(config.draw, DrawAdjudication)
        if config.resign:
            parse_fields(config.resign, ResignAdjudication)
        load_openings(config.openings)
    except MatchConfigError as exc:
        raise click.UsageError(str(exc)) from None
    try:
        config.params = probe(config.engine, config.options, config.params)
    except ParamError as exc:
        raise click.BadParameter(str(exc), param_hint="--param") from None
    except ProbeError as exc:
        raise click.ClickException(str(exc)) from None
    for p in config.params:
        if p.integer and p.c_end < 0.5:
            click.echo(f"warning: {p.name} is an integer and C_END {format_number(p.c_end)} "
                       "< 0.5: near the end both sides will often send the same value", err=True)


def _resume(out: Path, param_specs, given: dict, concurrency: int) -> TuneState:
    try:
        state = load_state(out)
    except StateError as exc:
        raise click.ClickException(str(exc)) from None
    config = state.config
    if param_specs:
        try:
            params = parse_params(param_specs)
        except ParamError as exc:
            raise click.BadParameter(str(exc), param_hint="--param") from None
        if not same_params(params, config.params):
            raise click.UsageError(
                f"refusing to resume {out} with a different parameter set: it tunes "
                f"{' '.join(p.spec() for p in config.params)}; give the same --param "
                "flags (or none), or start a new tune in another --out")
    stored = config.as_dict()
    for key, value in given.items():
        if value is not None and value != stored[key]:
            flag = {"pairs": "pairs-per-iteration", "options": "option", "draw":
                    "draw-adjudication", "resign": "resign-adjudication"}.get(key, key)
            raise click.UsageError(f"refusing to resume {out}: --{flag} {value!r} differs from "
                                   f"the tune's {stored[key]!r} (leave it out to keep it)")
    config.concurrency = concurrency
    return state


def _objective(config: TuneConfig, synthetic_delay: float, bar):
    if config.objective == "synthetic":
        from zerochess.tune.spsa import SyntheticObjective

        synthetic = SyntheticObjective(config.params, config.seed)

        def objective(probe, games):
            if synthetic_delay:
                time.sleep(synthetic_delay)
            return synthetic(probe, games)
        return objective

    from zerochess.tune.games import GamesObjective

    played = {"games": 0}

    def on_game(record):
        played["games"] += 1
        bar.set_postfix_str(f"game {played['games']}/{2 * config.pairs}", refresh=True)

    def objective(probe, games):
        played["games"] = 0
        return GamesObjective(config.params, config.engine, config.options, config.nodes,
                              config.tc, config.openings, config.seed, config.concurrency,
                              on_game, config.draw, config.resign, config.maxmoves)(probe, games)
    return objective


def _run(state: TuneState, out: Path, progress: bool, synthetic_delay: float) -> None:
    from tqdm import tqdm

    from zerochess.match import MatchConfigError, MatchError
    from zerochess.tune.run import run_tune

    config = state.config
    with tqdm(total=config.iterations, initial=state.k, unit="it", desc="tune",
              disable=not progress) as bar:
        def on_iteration(state, entry):
            bar.set_postfix_str(f"result {entry['result']:+d} "
                                f"{describe(config.params, state.theta)}", refresh=False)
            bar.update(1)

        try:
            run_tune(state, out, _objective(config, synthetic_delay, bar), on_iteration)
        except (MatchError, MatchConfigError) as exc:
            raise click.ClickException(f"{exc} (iteration {state.k + 1}; the tune resumes "
                                       "there with --resume)") from None
        except KeyboardInterrupt:
            bar.close()
            click.echo(f"interrupted after iteration {state.k}/{config.iterations}; continue "
                       f"with: zerochess tune --out {shlex.quote(str(out))} --resume", err=True)
            raise SystemExit(130) from None


def final_lines(state: TuneState, out: Path) -> list[str]:
    """What the tune prints at the end: the values as setoption lines and as match flags,
    and the SPRT that confirms them."""
    config = state.config
    lines = [f"tune {'done' if state.done else 'stopped'}: {state.k}/{config.iterations} "
             f"iterations x {config.pairs} pair(s); {out / STATE}, {out / HISTORY}, "
             f"{out / PLOT}, {out / LOG}", "final values:"]
    sent = state.sent()
    lines += [f"setoption name {name} value {value}" for name, value in sent.items()]
    new = [f"new.{name}={value}" for name, value in sent.items()]
    flags = " ".join(f"--option {shlex.quote(o)}" for o in new)
    lines.append(f"flags for zerochess match: {flags}")
    if config.objective != "games":
        return lines
    old = [f"old.{p.name}={p.send(p.start)}" for p in config.params]
    both = [f"{side}.{name}={value}" for name, value in config.options.items()
            for side in ("new", "old")]
    limit = f"--nodes {config.nodes}" if config.nodes else f"--tc {config.tc}"
    command = shlex.join(config.engine)
    words = ["zerochess", "match", "--engine", f"new={command}", "--engine", f"old={command}"]
    for option in both + new + old:
        words += ["--option", option]
    for flag, value in (("--draw-adjudication", config.draw),
                        ("--resign-adjudication", config.resign), ("--maxmoves", config.maxmoves)):
        if value is not None:
            words += [flag, str(value)]
    try:
        openings = os.path.relpath(config.openings)
    except ValueError:       # another drive (Windows)
        openings = config.openings
    if openings.startswith(os.pardir):
        openings = config.openings
    words += [*limit.split(), "--openings", openings, "--openings-order", "random",
              "--seed", str(config.seed + 1), "--games", "2000",
              "--concurrency", str(config.concurrency),
              "--sprt", "elo0=0,elo1=5,alpha=0.05,beta=0.05"]
    lines.append("confirm against the start values with an SPRT (fresh openings order):")
    lines.append(" ".join(shlex.quote(w) for w in words))
    return lines
