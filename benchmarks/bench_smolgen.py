"""What smolgen costs: the shipped network against itself grown with smolgen, in ONNX Runtime.

    python benchmarks/bench_smolgen.py                   # G = 16, batch 8, one thread
    python benchmarks/bench_smolgen.py --gen 8 --batch 32 --repeats 31

``grow(model, smolgen=G)`` (docs/network.md#the-model) adds the position-generated
attention biases to the shipped network; its shared matrix is filled at random here, as a
trained one would be (at zero ONNX Runtime would still run every op, but the figure should
not depend on that). Both networks are exported and run through ``OnnxEvaluator``'s
session at the engine's batch, interleaved repeat by repeat so that a load on the machine
hits both alike; printed: the median milliseconds a batch of each, the median ratio, and
the matmul FLOPs a position of each (``flops_per_position``), so the time ratio can be read
against the FLOP ratio. Needs torch and onnx (the ``train`` extra).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ms_per_call(run, feed, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        run(None, feed)
    return (time.perf_counter() - start) / calls * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gen", type=int, default=16, help="smolgen's G (default 16)")
    parser.add_argument("--batch", type=int, default=8, help="positions a call (the engine's 8)")
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--calls", type=int, default=40, help="calls a repeat")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import torch

    from zerochess.neural.api import Network, load_network, shipped_network_path
    from zerochess.neural.models.transformer import grow
    from zerochess.neural.network import flops_per_position
    from zerochess.neural.onnx_evaluator import OnnxEvaluator
    from zerochess.neural.onnx_network import probe_tokens

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    plain = load_network(shipped_network_path("default"), "cpu")
    grown = grow(plain.model, smolgen=args.gen)
    torch.nn.init.normal_(grown.smolgen.shared.weight, std=0.1)  # as if trained: no zeros
    nets = {"shipped": plain, f"smolgen {args.gen}": Network(grown)}
    runs = [OnnxEvaluator(net, threads=args.threads, cache=False).session.run
            for net in nets.values()]
    feed = {"tokens": np.resize(probe_tokens(True), (args.batch, 72))}
    for run in runs:
        ms_per_call(run, feed, 5)  # warm-up
    times = [[ms_per_call(run, feed, args.calls) for run in runs] for _ in range(args.repeats)]
    flops = [flops_per_position(net.model.config) for net in nets.values()]
    print(f"ONNX Runtime, {args.threads} thread(s), batch {args.batch}, median of "
          f"{args.repeats} interleaved repeats of {args.calls} calls:")
    for i, name in enumerate(nets):
        print(f"  {name:12s} {statistics.median(t[i] for t in times):6.2f} ms a batch, "
              f"{flops[i] / 1e6:5.2f} MFLOP a position")
    print(f"  time ratio {statistics.median(t[1] / t[0] for t in times):.3f}x, "
          f"FLOP ratio {flops[1] / flops[0]:.3f}x")


if __name__ == "__main__":
    main()
