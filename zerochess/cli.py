"""The `zerochess` command.

With no subcommand it speaks UCI on stdin/stdout, because GUIs start an engine without
arguments. Each subcommand lives in the module of its concept and is registered here by
name, imported only when used so that `zerochess` (the UCI path) starts fast.
"""

import importlib

import click

from zerochess._version import __version__
from zerochess.neural.extras import TRAIN_EXTRA

# name -> "module:attribute" of a click command. One line per subcommand.
SUBCOMMANDS = {
    "bench": "zerochess.tools.bench:bench",
    "book": "zerochess.book.cli:book",
    "endgames": "zerochess.tools.endgames:endgames",
    "export": "zerochess.tools.export:export",
    "match": "zerochess.match.cli:match",
    "perft": "zerochess.tools.perft:perft",
    "rate": "zerochess.match.rate:rate",
    "train": "zerochess.train.cli:train",
    "tune": "zerochess.tune.cli:tune",
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
        try:
            command = getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            raise _missing_extra(name, exc) from exc
        run = command.invoke

        def invoke(ctx):
            try:
                return run(ctx)
            except ModuleNotFoundError as exc:  # imported when the work starts
                raise _missing_extra(name, exc) from exc

        command.invoke = invoke
        return command


def _missing_extra(name: str, exc: ModuleNotFoundError) -> Exception:
    """One line naming the extra for a command that needs torch (training, self-play,
    export) where it is not installed; any other missing module is a bug, raised as it is."""
    if exc.name not in ("torch", "onnx"):
        return exc
    return click.ClickException(f"zerochess {name} needs {exc.name}, which is not installed: "
                                f"{TRAIN_EXTRA}")


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
