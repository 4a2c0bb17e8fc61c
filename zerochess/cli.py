"""The `zerochess` command.

With no subcommand it speaks UCI on stdin/stdout, because GUIs start an engine without
arguments. Each subcommand lives in the module of its concept and is registered here by
name, imported only when used so that `zerochess` (the UCI path) starts fast.
"""

import importlib

import click

from zerochess._version import __version__

# name -> "module:attribute" of a click command. One line per subcommand.
SUBCOMMANDS = {
    "bench": "zerochess.tools.bench:bench",
    "book": "zerochess.book.cli:book",
    "endgames": "zerochess.tools.endgames:endgames",
    "match": "zerochess.match.cli:match",
    "perft": "zerochess.tools.perft:perft",
    "rate": "zerochess.match.rate:rate",
    "train": "zerochess.train.cli:train",
    "uci": "zerochess.uci.cli:uci",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx, name):
        target = SUBCOMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)


@click.group(cls=LazyGroup, invoke_without_command=True)
@click.version_option(__version__, prog_name="zerochess")
@click.pass_context
def main(ctx):
    """zerochess: a UCI chess engine that learns the AlphaZero way.

    Run without a subcommand to speak UCI on stdin/stdout (what chess GUIs do)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(main.get_command(ctx, "uci"))


if __name__ == "__main__":
    main()
