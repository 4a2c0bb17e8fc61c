"""`zerochess bench`: output format and its deterministic signature (as Stockfish's CI
checks its bench node count). If a deliberate search change moves the signature, update
BENCH_SIGNATURE with the new value from `zerochess bench --nodes 5000` and say why in the
commit message."""

import re

from click.testing import CliRunner

from zerochess.cli import main

BENCH_SIGNATURE = "aaf6197dd8f3"        # zerochess bench --nodes 5000 (uniform backend, the engine's preset)
LINE = re.compile(r"^nodes (\d+) evals (\d+) time ([\d.]+) nps (\d+)$")


def bench_output(*args) -> list[str]:
    result = CliRunner().invoke(main, ["bench", *args])
    assert result.exit_code == 0, result.output
    return result.output.strip().splitlines()


def run(*args):
    stats, signature = bench_output(*args)[:2]
    match = LINE.match(stats)
    assert match, stats
    return int(match.group(1)), int(match.group(2)), signature.split()[1]


def openbench_parse(lines: list[str]) -> tuple[int | None, int | None]:
    """(bench, nps) read as OpenBench's client reads a bench (Client/bench.py,
    parse_stream_output): lines from the last up, punctuation turned into spaces, the first
    match of each pattern kept."""
    nps = bench = None
    for line in reversed(lines):
        line = re.sub(r"[^a-zA-Z0-9 ]+", " ", line)
        found_nps = re.search(r"(\d+\s+nps)|(nps\s+\d+)|(nodes second\s+\d+)", line, re.I)
        found_bench = re.search(r"(\d+\s+nodes)|(nodes\s+\d+)|(nodes searched\s+\d+)", line, re.I)
        nps = nps or (found_nps and found_nps.group())
        bench = bench or (found_bench and found_bench.group())
    as_int = lambda text: int(re.search(r"\d+", text).group()) if text else None
    return as_int(bench), as_int(nps)


def test_bench_signature_is_deterministic_and_unchanged():
    first, second = run("--nodes", "5000"), run("--nodes", "5000")
    assert first == second
    nodes, evals, signature = first
    assert nodes == 8 * 5000 and 0 < evals < nodes
    assert signature == BENCH_SIGNATURE


def test_bench_signature_depends_on_the_search():
    assert run("--nodes", "5000", "--minibatch", "32")[2] != BENCH_SIGNATURE


def test_bench_searches_with_the_engines_preset():
    """One preset: what bench searches with is what the UCI engine plays with."""
    from zerochess.search.params import ENGINE_PARAMS
    from zerochess.tools.bench import run_bench
    from zerochess.neural.evaluator import UniformEvaluator
    from zerochess.uci.options import OPTIONS, OptionValues, search_params

    engine = search_params(OptionValues())
    assert engine.replace(seed=0) == ENGINE_PARAMS.replace(seed=0)
    ev = UniformEvaluator()
    assert run_bench(ev, 300)[3] == run_bench(ev, 300, engine.replace(seed=0))[3]


def test_bench_ends_with_stockfishs_lines_and_openbench_reads_the_node_total():
    first, second = bench_output("--nodes", "300"), bench_output("--nodes", "300")
    total = run("--nodes", "300")[0]
    assert first[-4] == "=" * 27
    assert first[-2] == second[-2] == f"Nodes searched  : {total}"
    assert re.fullmatch(r"Nodes/second    : \d+", first[-1])
    assert re.fullmatch(r"Total time \(ms\) : \d+", first[-3])
    bench, nps = openbench_parse(first)
    assert bench == total == openbench_parse(second)[0]
    assert nps == int(first[-1].split(":")[1])
