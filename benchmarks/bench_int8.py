"""int8 inference: ONNX Runtime's dynamic quantization of the network, speed and faithfulness.

    python benchmarks/bench_int8.py                 # the shipped network, one thread
    python benchmarks/bench_int8.py --network zero --threads 2

Why it is a benchmark and not a backend: int8 weights (``quantize_dynamic``: per-channel
int8 weights, activations quantized per call) would buy the search more nodes per second,
but only if the priors and the WDL stay what the fp32 network says. The faithfulness bars
are the ones every runtime is held to (benchmarks/bench_inference.py): mean KL(fp32 ||
int8) of the legal priors < 1e-3 and max |WDL difference| < 1e-2 on 512 random-game
positions. Variants: every weight matmul quantized, the encoder layers only, their
feed-forward matmuls only, and the policy head only (where the error comes from). The value
head's two small Gemm stay fp32 in every variant (the quantizer rewrites a Gemm it is asked
to quantize, and that path changed no output here), so a WDL error comes from the layers.

Printed: faithfulness per variant, then positions/s of the bare ``session.run`` at a few
batch sizes (median of interleaved repeats) with the median ratio to fp32 in brackets.
The exported fp32 graph is the engine's own (``export_onnx``), so the figures are the
engine's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from bench_network import divergence, sample_batch  # noqa: E402

FAITH_POSITIONS, FAITH_SEED = 512, 20261123  # bench_inference.py's


def weight_matmuls(onnx_path: str) -> tuple[list[str], list[str]]:
    """Names of the encoder layers' weight MatMuls and of the policy head's."""
    import onnx

    graph = onnx.load(onnx_path).graph
    weights = {i.name for i in graph.initializer}
    names = [n.name for n in graph.node
             if n.op_type == "MatMul" and any(x in weights for x in n.input)]
    trunk = [n for n in names if "/layers." in n]
    return trunk, [n for n in names if n not in trunk]


def session(path: str, threads: int):
    """An onnxruntime session with the engine's own settings (``session_options``)."""
    import onnxruntime as ort

    from zerochess.engine.onnx_evaluator import session_options

    return ort.InferenceSession(path, session_options(threads),
                                providers=["CPUExecutionProvider"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--network", default="default", help="default, zero or a checkpoint path")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batches", default="1,8,32")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--slice", type=float, default=0.5, help="seconds per timed figure")
    args = ap.parse_args()

    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    from zerochess.engine.backends import load_network_spec
    from zerochess.engine.evaluator import gather_index, legal_softmax
    from zerochess.engine.onnx_evaluator import export_onnx

    logging.getLogger().setLevel(logging.ERROR)  # the quantizer's advice on pre-processing
    model = load_network_spec(args.network).model.eval().float()
    with tempfile.TemporaryDirectory() as tmp:
        paths = {"fp32": os.path.join(tmp, "fp32.onnx")}
        with open(paths["fp32"], "wb") as f:
            f.write(export_onnx(model))
        trunk, policy = weight_matmuls(paths["fp32"])
        for name, nodes in (("int8 all", trunk + policy), ("int8 layers", trunk),
                            ("int8 ffn", [n for n in trunk if "/fc" in n]),
                            ("int8 policy", policy)):
            paths[name] = os.path.join(tmp, name.replace(" ", "-") + ".onnx")
            quantize_dynamic(paths["fp32"], paths[name], op_types_to_quantize=["MatMul"],
                             nodes_to_quantize=nodes, per_channel=True,
                             weight_type=QuantType.QInt8)
        sessions = {name: session(p, args.threads) for name, p in paths.items()}

    tokens, legal, offsets, _ = sample_batch(FAITH_POSITIONS, seed=FAITH_SEED)
    flat = gather_index(tokens, legal, offsets, model.config.policy_size)
    outputs = {}
    for name, s in sessions.items():
        logits, wdl = s.run(None, {"tokens": tokens})
        outputs[name] = (legal_softmax(logits.reshape(-1)[flat], offsets, 1.0), wdl)
    print(f"network {args.network}, {args.threads} thread(s); faithfulness vs fp32 "
          f"({FAITH_POSITIONS} random-game positions): KL mean / max, max |dWDL| "
          f"(bars: 1e-3, 1e-2)")
    ref_p, ref_w = outputs["fp32"]
    for name in list(sessions)[1:]:
        d = divergence(ref_p, ref_w, *outputs[name], offsets)
        ok = d["kl_mean"] < 1e-3 and d["wdl_max"] < 1e-2
        print(f"  {name:12s} {d['kl_mean']:.1e} / {d['kl_max']:.1e}, {d['wdl_max']:.1e}  "
              f"{'faithful' if ok else 'NOT faithful'}")

    batches = [int(b) for b in args.batches.split(",")]
    rates: dict[tuple, list[float]] = {}
    for rep in range(args.repeats):
        for b in batches:
            batch = sample_batch(b, seed=b)[0]
            names = list(sessions)
            for name in names[rep % len(names):] + names[:rep % len(names)]:  # rotate
                s, calls = sessions[name], 0
                s.run(None, {"tokens": batch})  # warm-up
                start = time.perf_counter()
                while calls < 2 or time.perf_counter() - start < args.slice:
                    s.run(None, {"tokens": batch})
                    calls += 1
                rates.setdefault((name, b), []).append(b * calls / (time.perf_counter() - start))
    print(f"positions/s of session.run, median of {args.repeats} interleaved repeats "
          f"[median ratio to fp32]")
    print(f"{'':12s}" + "".join(f"{'B=' + str(b):>17s}" for b in batches))
    for name in sessions:
        cells = ""
        for b in batches:
            r, base = rates[(name, b)], rates[("fp32", b)]
            ratio = statistics.median(x / y for x, y in zip(r, base))
            cells += f"{statistics.median(r):9,.0f} [{ratio:4.2f}x]"
        print(f"  {name:10s}{cells}")


if __name__ == "__main__":
    main()
