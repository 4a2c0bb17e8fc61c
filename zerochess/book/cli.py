"""`zerochess book ...`: build Polyglot books and look positions up in them."""


import chess
import click
from tqdm import tqdm

from zerochess.book.build import build_book, source_size
from zerochess.book.polyglot import BookError, BookProber


@click.group()
def book():
    """Polyglot opening books (the engine's OwnBook)."""


@book.command()
@click.argument("source", type=click.Path(exists=True, dir_okay=False))
@click.argument("out", type=click.Path(dir_okay=False, writable=True))
@click.option("--plies", type=click.IntRange(1), default=16, show_default=True,
              help="PGN: use each game's first N plies.")
@click.option("--weights", "weighting", type=click.Choice(["count", "result"]), default="count",
              show_default=True,
              help="PGN: weight a move by how often it was played, or by the mover's result "
                   "(win 2, draw 1, loss 0; as Polyglot's make).")
@click.option("--progress/--no-progress", default=True, help="Show a progress bar.")
def build(source, out, plies, weighting, progress):
    """Build the Polyglot book OUT (.bin) from SOURCE (.pgn games or .epd with bm/pv moves)."""
    total = source_size(source)
    with tqdm(total=total, unit="B" if source.lower().endswith(".pgn") else " lines",
              unit_scale=True, disable=not progress, desc="book") as bar:
        try:
            n = build_book(source, out, plies=plies, weighting=weighting, progress=bar.update)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
    click.echo(f"{out}: {n} entries")


@book.command()
@click.argument("path", type=click.Path(dir_okay=False))
@click.argument("fen", default="startpos")
def probe(path, fen):
    """List the book moves of FEN ('startpos' by default) with their weights."""
    try:
        prober = BookProber(path)
        board = chess.Board() if fen == "startpos" else chess.Board(fen)
    except (BookError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    entries = prober.entries(board)
    total = sum(e.weight for e in entries) or 1
    for e in sorted(entries, key=lambda e: -e.weight):
        click.echo(f"{board.san(chess.Move.from_uci(e.move)):8} {e.move:6} {e.weight:6} "
                   f"{100 * e.weight / total:5.1f}%")
    if not entries:
        click.echo("no book moves")
