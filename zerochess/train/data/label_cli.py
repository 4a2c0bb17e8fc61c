"""`zerochess train label`: the command-line face of ``label.py`` (it only parses and prints)."""

from __future__ import annotations

import json
import logging
import shlex
import sys
from pathlib import Path

import click


@click.command("label")
@click.option("--out", "out", type=click.Path(file_okay=False), required=True, help="Data set directory.")
@click.option("--teacher", "teacher_cmd", default=None,
              help="Teacher engine command (any UCI engine) [default: stockfish].")
@click.option("--depth", type=click.IntRange(min=1), default=None, help="Teacher search depth [default: 8].")
@click.option("--nodes", type=click.IntRange(min=1), default=None, help="Teacher nodes per position (instead of --depth).")
@click.option("--multipv", type=click.IntRange(min=1), default=4, show_default=True,
              help="Teacher lines per position (the policy target's moves).")
@click.option("--threads", type=click.IntRange(min=1), default=1, show_default=True, help="Threads per teacher process.")
@click.option("--hash", "hash_mb", type=click.IntRange(min=1), default=16, show_default=True,
              help="Hash (MB) per teacher process.")
@click.option("--teacher-option", multiple=True, metavar="NAME=VALUE",
              help="A further UCI option for the teacher (repeatable).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True,
              help="Seconds an analysis may take before the teacher counts as hung and is restarted.")
@click.option("--source", default="games", show_default=True,
              help="'games' (the teacher plays itself at mixed strength) or a .pgn/.epd file to label.")
@click.option("--games", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Teacher games to play (source 'games'); rerun with more to grow the data set.")
@click.option("--openings", type=click.Path(dir_okay=False, exists=True), default=None,
              help="EPD/PGN book the teacher games start from [default: the start position].")
@click.option("--random-plies", type=click.IntRange(min=0), default=4, show_default=True)
@click.option("--explore", type=click.FloatRange(0, 1), default=0.15, show_default=True,
              help="Largest per-game share of random moves in teacher games.")
@click.option("--policy-temperature", type=click.FloatRange(min=0), default=0.04, show_default=True,
              help="Temperature of the policy target on the expected-score scale (0 = best move only).")
@click.option("--games-per-chunk", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--val-every", type=click.IntRange(min=2), default=20, show_default=True,
              help="Every n-th game goes to the validation split (games 1, 1 + n, 1 + 2n, ...).")
@click.option("--max-plies", type=click.IntRange(min=1), default=250, show_default=True)
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes, one teacher each (the output does not depend on it).")
@click.option("--seed", type=int, default=0, show_default=True)
def label(out, teacher_cmd, depth, nodes, multipv, threads, hash_mb, teacher_option, timeout,
          source, games, openings, random_plies, explore, policy_temperature, games_per_chunk,
          val_every, max_plies, workers, seed):
    """Label positions with a teacher engine into the data set OUT (rerun the same command
    to finish an interrupted run; a larger --games grows a finished one)."""
    from tqdm import tqdm

    from zerochess.train.data.format import ShardError
    from zerochess.train.data.label import LabelConfig, label as run_label
    from zerochess.client.uci import EngineStartError
    from zerochess.train.data.teacher import TeacherConfig, default_teacher_command

    options = {}
    for item in teacher_option:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise click.UsageError(f"--teacher-option must be NAME=VALUE, got {item!r}")
        options[name.strip()] = value.strip()
    if depth is None and nodes is None:
        depth = 8
    try:
        tcfg = TeacherConfig(command=shlex.split(teacher_cmd) if teacher_cmd else default_teacher_command(),
                             depth=depth, nodes=nodes, multipv=multipv, threads=threads,
                             hash_mb=hash_mb, timeout=timeout, options=options)
        cfg = LabelConfig(teacher=tcfg, source=source, games=games, games_per_chunk=games_per_chunk,
                          openings=openings, random_plies=random_plies, explore=explore,
                          max_plies=max_plies, policy_temperature=policy_temperature,
                          val_every=val_every, seed=seed)
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
