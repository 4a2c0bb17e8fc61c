"""`python -m zerochess` is the `zerochess` command (and the PyInstaller entry point).

A bare ``zerochess``, what a GUI starts, goes straight to the UCI loop, as ``zerochess.cli``'s
group would send it: click and the subcommand table are imported only when there are
arguments (click was 10-20 ms of the 60 ms of CPU time before ``uciok``, issue 29).
"""

import sys


def run():
    if len(sys.argv) > 1:
        from zerochess.cli import main
    else:
        from zerochess.uci.loop import main
    return main()


if __name__ == "__main__":
    run()
