"""What threat inputs cost: ``add_threats`` against one network evaluation.

    python benchmarks/bench_threats.py                # the shipped network, one thread
    python benchmarks/bench_threats.py --repeats 15 --threads 2

A network with threat inputs (``NetworkConfig.threat_inputs``) gets its evaluator's batch
as version-2 tokens: ``zerochess.chess.threats.add_threats`` decodes each position's
square tokens and computes both sides' attack maps, on the search's thread, before every
``session.run``. This measures that cost instead of asserting it is small.

Printed, on random-game positions, median of interleaved repeats:

* ``add_threats`` positions/s at batch 32 (the search's ``MinibatchSize``), 256 and 4096;
* ``OnnxEvaluator.evaluate`` of the shipped network at batch 32, and what ``add_threats``
  of that batch costs as a share of it;
* with torch and ``onnx`` installed (the ``train`` extra), the same evaluation through the
  shipped network grown with threat inputs (its threat embedding at zero: the same graph
  plus the embedding's gather and add, and ``add_threats`` inside ``evaluate``): the whole
  overhead a threat network adds per batch.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_network import sample_batch  # noqa: E402  (positions from seeded random games)


def seconds_per_call(fn, min_seconds: float = 0.2) -> float:
    """Mean seconds of one call of ``fn``, called until ``min_seconds`` have passed (one
    repeat; the caller takes the median over repeats)."""
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return elapsed / calls


def grown_threat_evaluator(threads: int):
    """The shipped network grown with threat inputs, on ONNX Runtime (None without torch)."""
    try:
        from zerochess.neural.api import load_network, shipped_network_path
        from zerochess.neural.models.transformer import grow
        from zerochess.neural.onnx_evaluator import OnnxEvaluator, onnx_available
    except ImportError:
        return None
    if not onnx_available():
        return None
    model = load_network(shipped_network_path("default", ".pt"), "cpu").model
    return OnnxEvaluator(grow(model, threat_inputs=True), threads=threads, cache=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime intra-op threads")
    parser.add_argument("--seed", type=int, default=20261123)
    args = parser.parse_args()

    from zerochess.neural.onnx_evaluator import OnnxEvaluator
    from zerochess.neural.onnx_network import read_onnx_network
    from zerochess.neural.shipped import shipped_network_path
    from zerochess.chess.threats import add_threats

    tokens, legal, offsets, _ = sample_batch(4096, args.seed)
    batch = 32
    b_tokens = np.ascontiguousarray(tokens[:batch])
    b_legal, b_offsets = legal[:offsets[batch]], offsets[:batch + 1]
    plain = OnnxEvaluator(read_onnx_network(shipped_network_path("default", ".onnx"),
                                            threads=args.threads))
    threat = grown_threat_evaluator(args.threads)

    sizes = (32, 256, 4096)
    timings: dict[str, list[float]] = {f"add {n}": [] for n in sizes}
    timings.update({"eval plain": [], "eval threat": []})
    for _ in range(args.repeats):  # interleaved: load on the machine hits every figure
        for n in sizes:
            rows = np.ascontiguousarray(tokens[:n])
            timings[f"add {n}"].append(seconds_per_call(lambda: add_threats(rows)) / n)
        timings["eval plain"].append(seconds_per_call(
            lambda: plain.evaluate(b_tokens, b_legal, b_offsets)))
        if threat is not None:
            timings["eval threat"].append(seconds_per_call(
                lambda: threat.evaluate(b_tokens, b_legal, b_offsets)))
    med = {k: statistics.median(v) for k, v in timings.items() if v}

    print(f"add_threats on random-game positions, median of {args.repeats} interleaved repeats")
    for n in sizes:
        per = med[f"add {n}"]
        print(f"  batch {n:>5}: {1 / per:>12,.0f} positions/s  ({per * n * 1e6:,.1f} us a batch)")
    evaluation = med["eval plain"]
    print(f"OnnxEvaluator.evaluate, network default, {args.threads} thread(s), batch {batch}: "
          f"{batch / evaluation:,.0f} positions/s ({evaluation * 1e3:.2f} ms a batch)")
    share = med[f"add {batch}"] * batch / evaluation
    print(f"add_threats of a batch of {batch} costs {share:.2%} of one evaluation of it")
    if "eval threat" in med:
        ratio = med["eval threat"] / evaluation
        print(f"the default network grown with threat inputs, batch {batch}: "
              f"{batch / med['eval threat']:,.0f} positions/s, {ratio:.3f}x the plain "
              "network's time a batch (flags, embedding and all)")
    else:
        print("(the grown threat network needs torch and onnx: the train extra)")


if __name__ == "__main__":
    main()
