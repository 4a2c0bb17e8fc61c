"""`zerochess perft`: count leaf positions, the standard check of a move generator."""

import time

import click

from zerochess.chess import STARTING_FEN, Board, InvalidFenError


@click.command()
@click.argument("fen")
@click.argument("depth", type=click.IntRange(1, 12))
@click.option("--divide", is_flag=True, help="Also print the count below each first move.")
def perft(fen, depth, divide):
    """Count the leaf nodes DEPTH plies below FEN ('startpos' for the initial position).

    Prints the node count, the time and nodes/s. The last ply is counted in bulk from the
    legal-move count, as most engines' perft does."""
    try:
        board = Board(STARTING_FEN if fen == "startpos" else fen)
    except InvalidFenError as exc:
        raise click.BadParameter(str(exc), param_hint="FEN") from None
    start = time.perf_counter()
    if divide:
        counts = board.divide(depth)
        for move in sorted(counts):
            click.echo(f"{move}: {counts[move]}")
        nodes = sum(counts.values())
    else:
        nodes = board.perft(depth)
    elapsed = time.perf_counter() - start
    click.echo(f"nodes {nodes} time {elapsed:.3f} nps {nodes / max(elapsed, 1e-9):.0f}")
