"""`python -m zerochess` is the `zerochess` command (and the PyInstaller entry point)."""

from zerochess.cli import main

if __name__ == "__main__":
    main()
