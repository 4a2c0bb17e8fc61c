"""`zerochess train ...`: the command group (it only parses and prints).

The commands of each part live with it: data (generate, convert, and label, the teacher
engine's), supervised training (supervise, evaluate), self-play (selfplay, in
``selfplay/cli.py``) and plots of any run (report)."""

from __future__ import annotations

import dataclasses
import json
import sys

import click


@click.group()
def train():
    """Train networks: random-play data and supervised phase 1 (generate, supervise, evaluate),
    self-play reinforcement (selfplay), and plots of any run (report)."""


# -- data --------------------------------------------------------------------------------


@train.command()
@click.option("--games", type=click.IntRange(min=1), required=True, help="Random games to play.")
@click.option("--out", "out", type=click.Path(file_okay=False), required=True, help="Data set directory.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes (the output does not depend on it).")
@click.option("--seed", type=int, default=0, show_default=True, help="Master seed.")
@click.option("--games-per-shard", type=click.IntRange(min=1), default=250, show_default=True)
@click.option("--val-fraction", type=click.FloatRange(0, 1, max_open=True), default=0.1, show_default=True)
@click.option("--max-plies", type=click.IntRange(min=1), default=200, show_default=True,
              help="Stop a game after this many positions (scored as a draw).")
@click.option("--min-plies", type=click.IntRange(min=1), default=10, show_default=True,
              help="Drop games that end sooner.")
@click.option("--capture-weight", type=click.FloatRange(min=0, min_open=True), default=3.0, show_default=True)
@click.option("--check-weight", type=click.FloatRange(min=0, min_open=True), default=2.0, show_default=True)
@click.option("--mvv-lva/--no-mvv-lva", default=False, show_default=True,
              help="Scale capture weights by MVV-LVA.")
@click.option("--mate-in-one/--no-mate-in-one", default=True, show_default=True,
              help="Add mate-in-1 samples labelled with their mating moves.")
def generate(games, out, workers, seed, games_per_shard, val_fraction, max_plies, min_plies,
             capture_weight, check_weight, mvv_lva, mate_in_one):
    """Play random games and write them as shards to OUT (rerun the same command to finish
    an interrupted run)."""
    from tqdm import tqdm

    from zerochess.train.data.format import ShardError
    from zerochess.train.data.generate import GenerateConfig, generate as run_generate
    from zerochess.train.data.randomplay import PlayConfig

    try:
        play = PlayConfig(max_plies=max_plies, min_plies=min_plies, capture_weight=capture_weight,
                          check_weight=check_weight, mvv_lva=mvv_lva, mate_in_one=mate_in_one)
        cfg = GenerateConfig(games=games, seed=seed, games_per_shard=games_per_shard,
                             val_fraction=val_fraction, play=play)
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
@train.command()
@click.option("--data", "data", multiple=True,
              help="Data set directory (`train generate`, `train label`, any format version), "
                   "DIR:WEIGHT to weigh it; repeat to train on several sets in proportion to "
                   "their weights (replaces a --config's data).")
@click.option("--snapshot", is_flag=True, default=None,
              help="Train on a data set still being written: the shards finished now (recorded "
                   "for --resume).")
@click.option("--out", "out", type=click.Path(file_okay=False), required=True, help="Run directory.")
@click.option("--preset", default=None, help="Network preset (tiny, small, base); overrides --config.")
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="JSON or TOML file of SuperviseConfig fields.")
@click.option("--device", default=None, help="auto, cpu, cuda, cuda:N (overrides --config).")
@click.option("--policy-head", type=click.Choice(["pooled", "attention"]), default=None)
@click.option("--policy-target", type=click.Choice(["sampler", "played"]), default=None,
              help="Policy target: the sampler's distribution or the played move (overrides --config).")
@click.option("--epochs", type=click.IntRange(min=1), default=None)
@click.option("--steps", type=click.IntRange(min=1), default=None,
              help="Total steps (replaces --epochs and a --config's minutes; with --minutes, a cap).")
@click.option("--minutes", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Wall-clock budget: the schedule's total steps are fixed from a short probe "
                   "so that it ends with the budget (replaces --epochs and a --config's steps).")
@click.option("--batch-size", type=click.IntRange(min=1), default=None)
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Peak learning rate (overrides --config).")
@click.option("--threads", type=click.IntRange(min=0), default=None, help="torch CPU threads.")
@click.option("--init-from", default=None,
              help="Start from this network's weights and architecture: a checkpoint path, or "
                   "'default' / 'zero' (the shipped networks); fresh optimizer and schedule; "
                   "overrides --config.")
@click.option("--attention-bias", is_flag=True, default=None,
              help="Learnt attention biases; with --init-from, added at zero.")
@click.option("--value-squares", type=click.IntRange(min=1), default=None,
              help="Channels of the value head's spatial path; with --init-from, added at zero.")
@click.option("--threat-inputs", is_flag=True, default=None,
              help="Threat inputs (each square: attacked by the opponent, defended by the side "
                   "to move); with --init-from, their embedding added at zero.")
@click.option("--moves-left", is_flag=True, default=None,
              help="A moves-left head (plies the game has left); with --init-from, added "
                   "with the policy and value unchanged.")
@click.option("--moves-left-weight", type=click.FloatRange(min=0), default=None,
              help="Weight of the moves-left loss (overrides --config).")
@click.option("--qat", is_flag=True, default=None,
              help="Quantization-aware training: the matmuls that `zerochess export` makes "
                   "int8 run simulated int8; with --init-from, fine-tunes a trained network.")
@click.option("--layers", "n_layers", type=click.IntRange(min=1), default=None,
              help="Encoder layers; with --init-from, layers appended as the identity.")
@click.option("--cpu-bf16", is_flag=True, default=None,
              help="bf16 autocast on the CPU: faster only on CPUs with native bf16 "
                   "(AVX512-BF16, AMX), several times slower on AVX2-only ones.")
@click.option("--seed", type=int, default=None, help="Seed of weights, dropout and data order.")
@click.option("--resume", is_flag=True, help="Continue the run in OUT exactly where it stopped.")
def supervise(data, snapshot, out, preset, config_file, device, policy_head, policy_target,
              epochs, steps, minutes, batch_size, lr, threads, init_from, attention_bias,
              value_squares, threat_inputs, moves_left, moves_left_weight, qat, n_layers,
              cpu_bf16, seed, resume):
    """Train a network on DATA (one or several sets), writing checkpoints, train.log and
    metrics.jsonl to OUT.

    A warm start with growth keeps the checkpoint's exact function (docs/training.md);
    every run resumes exactly after a kill with the same command and --resume."""
    from tqdm import tqdm

    from zerochess.neural.checkpoint import CheckpointError
    from zerochess.train.data.format import ShardError
    from zerochess.train.supervised.config import SuperviseConfig
    from zerochess.train.supervised.trainer import ResumeError, Trainer

    try:
        cfg = SuperviseConfig.from_file(config_file) if config_file else SuperviseConfig()
        if steps or minutes:  # the command line's length of run replaces the file's
            cfg = dataclasses.replace(cfg, steps=steps, minutes=minutes)  # (both: a capped budget)
        cfg = cfg.replace(preset=preset, device=device, policy_head=policy_head,
                          policy_target=policy_target, epochs=epochs, batch_size=batch_size,
                          lr=lr, threads=threads, init_from=init_from,
                          attention_bias=attention_bias, value_squares=value_squares,
                          threat_inputs=threat_inputs, moves_left=moves_left,
                          moves_left_weight=moves_left_weight, qat=qat, n_layers=n_layers,
                          cpu_bf16=cpu_bf16, seed=seed,
                          data=list(data) or None, snapshot=snapshot)
        if cfg.init_from and (preset or policy_head):
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
@click.option("--data", "data", multiple=True,
              help="Data set directory (its val split is used), DIR:WEIGHT to weigh it in the "
                   "combined figures; repeat for several sets (replaces a --config's data).")
@click.option("--snapshot", is_flag=True, default=None,
              help="Read a data set still being written as its shards finished now.")
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="SuperviseConfig file: val_max_samples, legal_gen_*, loss weights, policy_target.")
@click.option("--threads", type=click.IntRange(min=0), default=None, help="torch CPU threads.")
def evaluate(checkpoint, data, snapshot, config_file, threads):
    """Validate the network CHECKPOINT (a path, or 'default' / 'zero') on DATA's held-out
    split; prints the metrics as JSON: on teacher-labelled data also teacher_top1 (the
    network's move is the teacher's best) and expected_score_error (|E_net - E_teacher|);
    on several sets, each set's as NAME/metric and their weighted mean."""
    from zerochess.neural.checkpoint import CheckpointError
    from zerochess.train.data.format import ShardError
    from zerochess.train.supervised.config import SuperviseConfig
    from zerochess.train.supervised.trainer import evaluate_checkpoint

    try:
        cfg = SuperviseConfig.from_file(config_file) if config_file else SuperviseConfig()
        cfg = cfg.replace(threads=threads, data=list(data) or None, snapshot=snapshot)
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
