"""`zerochess train selfplay`: the command-line face of the self-play loop (prints here only).

Registered in ``zerochess/train/cli.py``; the loop itself is ``zerochess.train.selfplay.loop``.
"""

from __future__ import annotations

import json
import sys

import click

from zerochess.train.configfile import cli_options
from zerochess.train.selfplay.config import SelfPlayConfig


#: `train selfplay` options that are not SelfPlayConfig fields (tests/test_train_cli.py checks
#: that every other option is a SelfPlayConfig setting, and every setting an option).
SELFPLAY_CLI_ONLY = ("init", "out", "config_file")


@click.command()
@click.option("--init", "init", metavar="NETWORK", default=None,
              help="Network to start from: default, zero (the shipped networks) or a "
                   "checkpoint path (needed for a new run; a restart reads it from "
                   "RUN_DIR/config.json).")
@click.option("--out", "out", type=click.Path(file_okay=False), required=True,
              help="Run directory; run the same command again to resume a killed run.")
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="JSON or TOML file of SelfPlayConfig fields (zerochess/train/selfplay/config.py).")
@cli_options(SelfPlayConfig)
def selfplay(init, out, config_file, **settings):
    """Self-play reinforcement: actors -> learner -> gating, iterated, in OUT."""
    from tqdm import tqdm

    from zerochess.neural.checkpoint import CheckpointError
    from zerochess.match import MatchConfigError, MatchError
    from zerochess.train.data.format import ShardError
    from zerochess.train.selfplay.loop import SelfPlayError, SelfPlayRun

    try:
        cfg = SelfPlayConfig.from_file(config_file) if config_file else SelfPlayConfig()
        cfg = cfg.replace(**settings)
        if settings["ray_address"] is not None and cfg.backend != "ray":
            raise ValueError("--address is for the ray backend (add --backend ray)")
        run = SelfPlayRun(cfg, out, init)
    except (ValueError, ShardError, SelfPlayError, CheckpointError) as e:
        raise click.ClickException(str(e)) from e

    bar = None

    def fmt(x, spec):
        return "-" if x is None else format(x, spec)

    def progress(event: str, d: dict) -> None:
        nonlocal bar
        if event in ("actors", "learn", "gate") and bar is not None:
            bar.close()
        if event == "actors":
            bar = tqdm(total=d["total"], initial=d["done"], unit="game", file=sys.stderr,
                       desc=f"it {d['iteration']} self-play", dynamic_ncols=True)
        elif event == "game":
            bar.update(d.get("new", 1))
            bar.set_postfix({"games/h": f"{d['games_per_hour']:.0f}",
                             "pos/s": f"{d['positions_per_s']:.1f}",
                             "fill": f"{d['batch_fill']:.2f}",
                             "net": f"{100 * d['network_share']:.0f}%",
                             "best": f"{d['best']} {fmt(d['best_elo'], '+.0f')}"}, refresh=False)
        elif event == "learn":
            bar = tqdm(total=d["steps"], unit="step", file=sys.stderr, dynamic_ncols=True,
                       desc=f"it {d['iteration']} learn ({d['window']} pos)")
        elif event == "step":
            bar.update(1)
            bar.set_postfix({"policy": f"{d['policy_loss']:.3f}", "value": f"{d['value_loss']:.3f}"},
                            refresh=False)
        elif event == "gate":
            bar = tqdm(total=d["games"], unit="game", file=sys.stderr, dynamic_ncols=True,
                       desc=f"it {d['iteration']} {d['candidate']} vs {d['best']}")
        elif event == "gate_game":
            bar.update(1)
        elif event == "iteration":
            if bar is not None:
                bar.close()
                bar = None
            click.echo(json.dumps(d, sort_keys=True), err=True)

    try:
        summary = run.run(progress)
    except (MatchError, MatchConfigError, FileNotFoundError) as e:
        raise click.ClickException(str(e)) from e
    finally:
        if bar is not None:
            bar.close()
    from zerochess.train.selfplay.elo_report import summarize_elo

    click.echo(json.dumps(summary, sort_keys=True))
    line = summarize_elo(out)
    if line:
        click.echo(line)
