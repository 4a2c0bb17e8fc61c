"""`zerochess export`: a torch checkpoint to the ``.onnx`` network file the engine plays from
(zerochess/neural/onnx_network.py describes the file). Needs the ``train`` extra."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("checkpoint")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
def export(checkpoint, out):
    """Write CHECKPOINT (a .pt file, or 'default' / 'zero': the shipped ones) as OUT.onnx,
    which WeightsFile and --backend take and ONNX Runtime runs without torch."""
    from zerochess.neural.errors import CheckpointError
    from zerochess.neural.export import export_network_file
    from zerochess.neural.shipped import SHIPPED_NETWORKS, shipped_network_path

    if checkpoint in SHIPPED_NETWORKS:
        checkpoint = shipped_network_path(checkpoint, ".pt")
    try:
        network = export_network_file(checkpoint, out)
    except (CheckpointError, ImportError) as exc:
        raise click.ClickException(str(exc)) from exc
    size = out.stat().st_size
    click.echo(f"wrote {out} ({size / 1024:.0f} KiB) from {checkpoint}, "
               f"sha256 {network.metadata['source_sha256'][:16]}...")
