"""`zerochess bench`: output format and its deterministic signature (as Stockfish's CI
checks its bench node count). If a deliberate search change moves the signature, update
BENCH_SIGNATURE with the new value from `zerochess bench --nodes 5000` and say why in the
commit message."""

import re

from click.testing import CliRunner

from zerochess.cli import main

BENCH_SIGNATURE = "c04f494d9b30"        # zerochess bench --nodes 5000 (uniform backend)
LINE = re.compile(r"^nodes (\d+) evals (\d+) time ([\d.]+) nps (\d+)$")


def run(*args):
    result = CliRunner().invoke(main, ["bench", *args])
    assert result.exit_code == 0, result.output
    stats, signature = result.output.strip().splitlines()
    match = LINE.match(stats)
    assert match, stats
    return int(match.group(1)), int(match.group(2)), signature.split()[1]


def test_bench_signature_is_deterministic_and_unchanged():
    first, second = run("--nodes", "5000"), run("--nodes", "5000")
    assert first == second
    nodes, evals, signature = first
    assert nodes == 8 * 5000 and 0 < evals < nodes
    assert signature == BENCH_SIGNATURE


def test_bench_signature_depends_on_the_search():
    assert run("--nodes", "5000", "--minibatch", "8")[2] != BENCH_SIGNATURE
