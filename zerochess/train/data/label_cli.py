"""`zerochess train label`: the command-line face of ``label.py`` (it only parses and prints).

Its flags are LabelConfig's settings, TeacherConfig's among them (``configfile.cli_options``):
each one's default, range and help are declared once, on the field."""

from __future__ import annotations

import dataclasses
import json
import logging
import sys
from pathlib import Path

import click

from zerochess.train.configfile import cli_options
from zerochess.train.data.label import LabelConfig


#: `train label` options that are not LabelConfig (or TeacherConfig) settings
#: (tests/test_train_data_cli.py checks that every other option is one, and every setting an
#: option).
LABEL_CLI_ONLY = ("out", "workers")


@click.command("label")
@click.option("--out", "out", type=click.Path(file_okay=False), required=True, help="Data set directory.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes, one teacher each (the output does not depend on it).")
@cli_options(LabelConfig)
def label(out, workers, depth, nodes, **settings):
    """Label positions with a teacher engine into the data set OUT (rerun the same command
    to finish an interrupted run; a larger --games grows a finished one)."""
    from tqdm import tqdm

    from zerochess.client.uci import EngineStartError
    from zerochess.train.data.format import ShardError
    from zerochess.train.data.label import label as run_label

    try:  # the flags not given are None: the config's defaults stay
        cfg = LabelConfig().replace(**settings)
        if depth is not None or nodes is not None:  # a limit given replaces depth 8 (one only)
            cfg = dataclasses.replace(cfg, teacher=dataclasses.replace(cfg.teacher, depth=depth,
                                                                       nodes=nodes))
    except ValueError as e:
        raise click.UsageError(str(e)) from e
    Path(out).mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(Path(out) / "label.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log = logging.getLogger("zerochess.label")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.info("label %s", json.dumps(cfg.settings(), default=str))
    with tqdm(unit="pos", desc="label", file=sys.stderr, dynamic_ncols=True) as bar:
        def progress(st):
            bar.update(st.positions)
            bar.set_postfix(chunk=st.chunk, failures=st.failures, skipped=st.skipped)
            log.info("chunk %d: %d positions, %d games, %.1f s (teacher %.1f s), %d failures, "
                     "%d skipped", st.chunk, st.positions, st.games, st.wall_seconds,
                     st.teacher_seconds, st.failures, st.skipped)
        try:
            meta = run_label(cfg, out, workers=workers, progress=progress)
        except (ShardError, EngineStartError, FileNotFoundError, ValueError) as e:
            raise click.ClickException(str(e)) from e
    log.info("complete: %s", json.dumps({k: meta.get(k) for k in ("samples", "dedup", "timing")}))
    log.removeHandler(handler)
    click.echo(f"{out}: {meta['samples']['train']} train / {meta['samples']['val']} val positions "
               f"in {len(meta['shards'])} shards")
    click.echo(json.dumps({k: meta.get(k) for k in ("dedup", "timing")}, sort_keys=True))
