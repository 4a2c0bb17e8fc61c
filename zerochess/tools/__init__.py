"""Command-line tools that are not part of play or training: perft, bench."""
