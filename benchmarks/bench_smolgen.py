"""What smolgen costs: the shipped network against itself grown with smolgen, in ONNX Runtime.

    python benchmarks/bench_smolgen.py                   # G = 16, batch 8, one thread
    python benchmarks/bench_smolgen.py --gen 8 --batches 8,32 --repeats 11

``grow(model, smolgen=G)`` (docs/network.md#the-model) adds the position-generated
attention biases to the shipped network; its shared matrix is filled at random here, as a
trained one would be (at zero ONNX Runtime would still run every op, but the figure should
not depend on that). Both networks are exported and timed by ``bench_int8.speed_table``
(positions/s of the bare ``session.run`` with the engine's session options, interleaved
repeats so that a load on the machine hits both alike, the median ratio to the shipped
network), beside the matmul FLOPs a position of each (``flops_per_position``), so the time
ratio can be read against the FLOP ratio. Needs torch and onnx (the ``train`` extra).
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from bench_int8 import session, speed_table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gen", type=int, default=16, help="smolgen's G (default 16)")
    parser.add_argument("--batches", default="8", help="positions a call (the engine's 8)")
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--slice", type=float, default=0.3, help="seconds per timed figure")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import torch

    from zerochess.neural.api import load_network, shipped_network_path
    from zerochess.neural.models.transformer import grow
    from zerochess.neural.network import flops_per_position
    from zerochess.neural.onnx_evaluator import export_onnx

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    plain = load_network(shipped_network_path("default"), "cpu").model.eval()
    grown = grow(plain, smolgen=args.gen).eval()
    torch.nn.init.normal_(grown.smolgen.shared.weight, std=0.1)  # as if trained: no zeros
    models = {"shipped": plain, f"smolgen {args.gen}": grown}
    for name, model in models.items():
        print(f"{name:12s} {flops_per_position(model.config) / 1e6:5.2f} MFLOP a position")
    flops = [flops_per_position(m.config) for m in models.values()]
    print(f"FLOP ratio {flops[1] / flops[0]:.3f}x; ONNX Runtime, {args.threads} thread(s):")
    sessions = {name: session(export_onnx(model), args.threads) for name, model in models.items()}
    speed_table(sessions, [int(b) for b in args.batches.split(",")], args.repeats, args.slice)


if __name__ == "__main__":
    main()
