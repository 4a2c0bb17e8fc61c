"""`zerochess train ...`: the command group (it only parses and prints).

The commands of each part live with it: data (generate, convert, and label, the teacher
engine's), supervised training (supervise, evaluate), self-play (selfplay, in
``selfplay/cli.py``) and plots of any run (report)."""

from __future__ import annotations

import dataclasses
import json
import sys

import click

from zerochess.train.configfile import cli_options
from zerochess.train.data.generate import GenerateConfig
from zerochess.train.supervised.config import SuperviseConfig

generate_options = cli_options(GenerateConfig)
supervise_options = cli_options(SuperviseConfig)
evaluate_options = cli_options(SuperviseConfig, ("data", "snapshot", "threads"), help={
    "data": "Data set directory (its val split is used), DIR:WEIGHT to weigh it in the combined "
            "figures; repeat for several sets (replaces a --config's data).",
    "snapshot": "Read a data set still being written as its shards finished now."})


@click.group()
def train():
    """Train networks: random-play data and supervised phase 1 (generate, supervise, evaluate),
    self-play reinforcement (selfplay), and plots of any run (report)."""


# -- data --------------------------------------------------------------------------------


#: `train generate` options that are not GenerateConfig (or PlayConfig) settings
#: (tests/test_train_data_cli.py checks that every other option is one, and every setting an
#: option).
GENERATE_CLI_ONLY = ("out", "workers")


@train.command()
@click.option("--out", "out", type=click.Path(file_okay=False), required=True, help="Data set directory.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes (the output does not depend on it).")
@generate_options
def generate(out, workers, games, **settings):
    """Play random games and write them as shards to OUT (rerun the same command to finish
    an interrupted run)."""
    from tqdm import tqdm

    from zerochess.train.data.format import ShardError
    from zerochess.train.data.generate import generate as run_generate

    try:  # the flags not given are None: the config's defaults stay
        cfg = GenerateConfig(games=games).replace(**settings)
    except ValueError as e:
        raise click.UsageError(str(e)) from e
    with tqdm(total=games, unit="game", desc="generate", file=sys.stderr) as bar:
        try:
            meta = run_generate(cfg, out, workers=workers, progress=bar.update)
        except ShardError as e:
            raise click.ClickException(str(e)) from e
    click.echo(f"{out}: {meta['samples']['train']} train / {meta['samples']['val']} val samples "
               f"in {len(meta['shards'])} shards")
    click.echo(json.dumps(meta["stats"], sort_keys=True))
    if "timing" in meta:
        click.echo(json.dumps(meta["timing"], sort_keys=True))


@train.command()
@click.argument("src", type=click.Path(exists=True, file_okay=False))
@click.argument("dst", type=click.Path(file_okay=False))
def convert(src, dst):
    """Rewrite the data set (or directory of shards) SRC of an older format as format
    version 3 in DST. Training reads the old formats as they are; this makes them current."""
    from zerochess.train.data.convert import convert as run_convert
    from zerochess.train.data.format import ShardError

    try:
        names = run_convert(src, dst)
    except ShardError as e:
        raise click.ClickException(str(e)) from e
    click.echo(f"{dst}: {len(names)} shards in format version 3")


# `zerochess train label` (positions labelled by a teacher engine) is registered at the end
# of this file, with `selfplay`: both commands live with their code.


# -- supervised training -----------------------------------------------------------------
#: `train supervise` options that are not SuperviseConfig fields (tests/test_train_cli.py
#: checks that every other option is one, and every field an option).
SUPERVISE_CLI_ONLY = ("out", "config_file", "resume")


@train.command()
@click.option("--out", "out", type=click.Path(file_okay=False), required=True, help="Run directory.")
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="JSON or TOML file of SuperviseConfig fields.")
@click.option("--resume", is_flag=True, help="Continue the run in OUT exactly where it stopped.")
@supervise_options
def supervise(out, config_file, resume, **settings):
    """Train a network on DATA (one or several sets), writing checkpoints, train.log and
    metrics.jsonl to OUT.

    A warm start with growth keeps the checkpoint's exact function (docs/training.md);
    every run resumes exactly after a kill with the same command and --resume."""
    from tqdm import tqdm

    from zerochess.neural.checkpoint import CheckpointError
    from zerochess.train.data.format import ShardError
    from zerochess.train.supervised.trainer import ResumeError, Trainer

    try:
        cfg = SuperviseConfig.from_file(config_file) if config_file else SuperviseConfig()
        steps, minutes = settings.pop("steps"), settings.pop("minutes")
        if steps or minutes:  # the command line's length of run replaces the file's
            cfg = dataclasses.replace(cfg, steps=steps, minutes=minutes)  # (both: a capped budget)
        cfg = cfg.replace(**settings)
        if cfg.init_from and (settings["preset"] or settings["policy_head"]):
            raise ValueError("--init-from takes the checkpoint's architecture; drop --preset "
                             "and --policy-head")
        trainer = Trainer(cfg, None, out, resume=resume)
    except (ValueError, ShardError, ResumeError, CheckpointError) as e:
        raise click.ClickException(str(e)) from e
    with tqdm(total=trainer.total_steps, initial=trainer.step, unit="step", desc="supervise",
              file=sys.stderr, dynamic_ncols=True) as bar:
        def progress(step, postfix):
            bar.update(step - bar.n)
            bar.set_postfix({k: f"{v:.4g}" for k, v in postfix.items()}, refresh=False)
        summary = trainer.run(progress)
    click.echo(json.dumps(summary, sort_keys=True))


@train.command()
@click.argument("checkpoint")
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="SuperviseConfig file: val_max_samples, legal_gen_*, loss weights, policy_target.")
@evaluate_options
def evaluate(checkpoint, config_file, **settings):
    """Validate the network CHECKPOINT (a path, or 'default' / 'zero') on DATA's held-out
    split; prints the metrics as JSON: on teacher-labelled data also teacher_top1 (the
    network's move is the teacher's best) and expected_score_error (|E_net - E_teacher|);
    on several sets, each set's as NAME/metric and their weighted mean."""
    from zerochess.neural.checkpoint import CheckpointError
    from zerochess.train.data.format import ShardError
    from zerochess.train.supervised.trainer import evaluate_checkpoint

    try:
        cfg = SuperviseConfig.from_file(config_file) if config_file else SuperviseConfig()
        cfg = cfg.replace(**settings)
        metrics = evaluate_checkpoint(checkpoint, cfg.data, cfg)
    except (ValueError, ShardError, CheckpointError) as e:
        raise click.ClickException(str(e)) from e
    click.echo(json.dumps(metrics, sort_keys=True))


# -- any run -----------------------------------------------------------------------------
@train.command()
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
def report(run_dir):
    """Plot RUN_DIR's losses and validation metrics (PNG) and print a short summary."""
    from zerochess.train.report import ReportError, make_report

    try:
        summary, pngs = make_report(run_dir)
    except ReportError as e:
        raise click.ClickException(str(e)) from e
    click.echo(summary)
    for p in pngs:
        click.echo(f"wrote {p}")


# -- commands that live with their code ---------------------------------------------------
from zerochess.train.selfplay.cli import selfplay  # noqa: E402

from zerochess.train.data.label_cli import label  # noqa: E402

train.add_command(selfplay)
train.add_command(label)
