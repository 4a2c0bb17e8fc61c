"""`python -m zerochess` is the `zerochess` command (and the PyInstaller entry point).

A bare ``zerochess``, what a GUI starts, goes straight to the UCI loop, as ``zerochess.cli``'s
group would send it: click and the subcommand table are imported only when there are
arguments (click was 10-20 ms of the 60 ms of CPU time before ``uciok``, issue 29). So do UCI
options given as flags (``zerochess --threads=2 --weights-file=x.onnx``, as lichess-bot
passes ``engine_options`` and Leela Chess Zero reads them): every word a ``--`` flag other
than ``--help`` and ``--version``.
"""

import sys


def _option_flags(args: list[str]) -> bool:
    """``args`` set UCI options (zerochess.uci.options.parse_flags) rather than name a
    subcommand: they start with a flag that is not one of click's own."""
    return bool(args) and args[0].startswith("--") and args[0] not in ("--help", "--version")


def run():
    args = sys.argv[1:]
    if not args or _option_flags(args):
        from zerochess.uci.loop import main
        return main(args)
    from zerochess.cli import main
    return main()


if __name__ == "__main__":
    run()
