"""`zerochess uci` (also what plain `zerochess` runs), with UCI options as flags."""

import click

from zerochess.uci.options import OPTIONS, flag_name


def _flags_help() -> str:
    """The flags, one per option, for ``--help``."""
    shown = [flag_name(o.name) for o in OPTIONS if o.kind != "button"]
    rows = [" ".join(shown[i:i + 4]) for i in range(0, len(shown), 4)]
    return ("Every UCI option is a flag too (Leela Chess Zero's convention): --name=value or "
            "--name value; a check option alone is true.\n\n\b\n" + "\n".join(rows))


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
               epilog=_flags_help())
@click.argument("flags", nargs=-1, type=click.UNPROCESSED)
def uci(flags):
    """Speak UCI on stdin/stdout (what chess GUIs and match runners start).

    FLAGS set UCI options before the first command, e.g. `zerochess uci --threads=2
    --weights-file=net.onnx`; `zerochess --threads=2` is the same."""
    from zerochess.uci.loop import main
    main(list(flags))
