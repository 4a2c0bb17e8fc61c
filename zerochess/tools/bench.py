"""`zerochess bench`: a fixed set of positions searched to a fixed node count.

Like Stockfish's ``bench``: one thread, a fixed seed, a fresh tree and cache per position,
so the total node count and the signature (a hash of every position's best move and root
visit counts) are the same on every run and every machine with the same code. A change of
signature means the search changed; CI checks it against the value stored in the tests.

Output: our two lines, then Stockfish's closing block, which testing frameworks such as
OpenBench parse (they read the output from the end, take the node count from ``Nodes
searched`` as the bench signature and require it to be the same on every run and machine,
and the speed from ``Nodes/second``):

    nodes 160000 evals 95502 time 0.48 nps 333333
    signature 5e1f0c2ab7d4
    ===========================
    Total time (ms) : 480
    Nodes searched  : 160000
    Nodes/second    : 333333
"""

from __future__ import annotations

import hashlib
import time

import click

from zerochess.neural.backends import RUNTIME_HELP, RUNTIMES
from zerochess.chess.board import Board
from zerochess.search.params import ENGINE_PARAMS, SearchParams
from zerochess.search.search import Search

#: The positions: openings, middlegames with many moves, endgames, forced mates.
BENCH_FENS = (
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
    "r2q1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 9",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "8/8/8/8/5K2/1Q6/5k2/8 w - - 0 1",
    "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1",
    "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1",
)


#: The bench positions without a forced mate (the solver makes mate positions cheap).
OPEN_FENS = BENCH_FENS[:5]


def run_bench(evaluator, nodes: int, params: SearchParams | None = None, fens=BENCH_FENS):
    """Search every bench position; return (total nodes, NN evals, seconds, signature)."""
    params = params if params is not None else ENGINE_PARAMS.replace(seed=0)
    search = Search(evaluator, params)
    digest = hashlib.sha256()
    total_nodes = total_evals = 0
    elapsed = 0.0
    for fen in fens:
        search.new_game()
        start = time.perf_counter()
        result = search.search(Board(fen), nodes=nodes)
        elapsed += time.perf_counter() - start
        total_nodes += result.nodes
        total_evals += result.nn_evals
        visits = ",".join(f"{m}:{v}" for m, v in sorted(result.root_visits.items()))
        digest.update(f"{fen}|{result.best_move}|{visits}\n".encode())
    return total_nodes, total_evals, elapsed, digest.hexdigest()[:12]


@click.command()
@click.option("--backend", default="uniform", show_default=True,
              help='"uniform" (no network), "default" (the shipped network), "zero" (the shipped '
                   'network that learnt from the rules alone), a .onnx network file, or (with '
                   'the train extra) a .pt checkpoint.')
@click.option("--nodes", default=20000, show_default=True, type=click.IntRange(1, None),
              help="Playouts per position.")
@click.option("--minibatch", default=None, type=click.IntRange(1, None),
              help="Leaves per evaluator call (default: the engine's, MinibatchSize).")
@click.option("--runtime", default=RUNTIMES[0], show_default=True, type=click.Choice(RUNTIMES),
              help=RUNTIME_HELP + " The UCI option Backend.")
def bench(backend, nodes, minibatch, runtime):
    """Search a fixed list of positions and print nodes, time, nodes/s and a signature."""
    if backend == "uniform":
        from zerochess.neural.evaluator import UniformEvaluator
        evaluator = UniformEvaluator()
    else:
        from zerochess.neural.backends import make_evaluator
        evaluator = make_evaluator(backend, device="cpu", threads=1, runtime=runtime)
    params = ENGINE_PARAMS.replace(seed=0)
    if minibatch is not None:
        params = params.replace(minibatch=minibatch)
    total, evals, seconds, signature = run_bench(evaluator, nodes, params)
    for line in report_lines(total, evals, seconds, signature):
        click.echo(line)


def report_lines(total: int, evals: int, seconds: float, signature: str) -> list[str]:
    """What ``bench`` prints (the module docstring shows it). The node total is the sum of
    fixed-node searches, hence deterministic; only the time and speed vary."""
    nps = int(total / seconds) if seconds > 0 else 0
    return [f"nodes {total} evals {evals} time {seconds:.3f} nps {nps}",
            f"signature {signature}",
            "===========================",
            f"Total time (ms) : {int(round(seconds * 1000))}",
            f"Nodes searched  : {total}",
            f"Nodes/second    : {nps}"]
