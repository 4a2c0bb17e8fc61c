"""`zerochess uci` (also what plain `zerochess` runs)."""

import click


@click.command()
def uci():
    """Speak UCI on stdin/stdout (what chess GUIs and match runners start)."""
    from zerochess.uci.loop import main
    main()
