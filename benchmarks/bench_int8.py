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
engine's; the quantizer gets it with its ``Gemm`` Linears written as ``MatMul`` and ``Add``
(``gemm_as_matmul``), the form ONNX Runtime's dynamic quantization makes int8.

    python benchmarks/bench_int8.py --checkpoint runs/qat/final.pt   # a QAT network

A quantization-aware checkpoint (``NetworkConfig.qat``, ``zerochess train supervise --qat``)
is held to the bars against what it was trained to compute, its own simulated-int8 torch
forward (``zerochess.neural.fake_quant``), on the same batches: all 512 positions in one
call, and in calls of 8 (the engine's MinibatchSize; the activations' int8 scales are per
call). Also printed, for scale: the int8 file against the fp32 function of the same weights,
and how much the per-call scales move the outputs (fake quant in calls of 8 against one call).
Speed: its int8 file (what ``zerochess export`` writes) against the fp32 export of the same
weights, interleaved as above. And why the file and the simulation differ at all: how many
uint8 codes the fp32 parts' rounding differences (torch against ONNX Runtime) move.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from bench_network import divergence, sample_batch  # noqa: E402

FAITH_POSITIONS, FAITH_SEED = 512, 20261123  # bench_inference.py's


def gemm_as_matmul(onnx_bytes: bytes) -> bytes:
    """The graph with each ``Gemm`` whose weight is a constant written as ``MatMul`` and
    ``Add``, the same maths: the engine's export fuses every Linear of the token rows into
    one ``Gemm`` (``linear_rows``, faster in fp32), and ONNX Runtime's dynamic quantizer
    makes ``MatMul`` int8, not ``Gemm``. The MatMul keeps the Gemm's node name."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load_from_string(onnx_bytes)
    graph = model.graph
    weights = {i.name: i for i in graph.initializer}
    nodes = []
    for node in graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if (node.op_type != "Gemm" or node.input[1] not in weights or attrs.get("transA", 0)
                or attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0):
            nodes.append(node)
            continue
        w = numpy_helper.to_array(weights[node.input[1]])
        if attrs.get("transB", 0):
            w = np.ascontiguousarray(w.T)
        name = node.input[1] + "_kn"
        graph.initializer.append(numpy_helper.from_array(w, name))
        out = node.output[0] if len(node.input) < 3 else node.output[0] + "_mm"
        nodes.append(helper.make_node("MatMul", [node.input[0], name], [out], name=node.name))
        if len(node.input) >= 3:
            nodes.append(helper.make_node("Add", [out, node.input[2]], [node.output[0]],
                                          name=node.name + "_bias"))
    del graph.node[:]
    graph.node.extend(nodes)
    return model.SerializeToString()


def weight_matmuls(onnx_path: str) -> tuple[list[str], list[str]]:
    """Names of the encoder layers' weight MatMuls and of the policy head's."""
    import onnx

    graph = onnx.load(onnx_path).graph
    weights = {i.name for i in graph.initializer}
    names = [n.name for n in graph.node
             if n.op_type == "MatMul" and any(x in weights for x in n.input)]
    trunk = [n for n in names if "/layers." in n]
    return trunk, [n for n in names if "/policy_head/" in n]   # the value heads stay fp32


def session(path, threads: int):
    """An onnxruntime session with the engine's own settings (``session_options``) for a
    file path or the model's bytes."""
    import onnxruntime as ort

    from zerochess.neural.onnx_evaluator import session_options

    return ort.InferenceSession(path, session_options(threads),
                                providers=["CPUExecutionProvider"])


def speed_table(sessions: dict, batches: list[int], repeats: int, slice_s: float) -> None:
    """Print positions/s of ``session.run`` per session and batch: medians of ``repeats``
    interleaved repeats (the order rotates), with the median ratio to the first session."""
    rates: dict[tuple, list[float]] = {}
    names = list(sessions)
    for rep in range(repeats):
        for b in batches:
            batch = sample_batch(b, seed=b)[0]
            for name in names[rep % len(names):] + names[:rep % len(names)]:  # rotate
                s, calls = sessions[name], 0
                s.run(None, {"tokens": batch})  # warm-up
                start = time.perf_counter()
                while calls < 2 or time.perf_counter() - start < slice_s:
                    s.run(None, {"tokens": batch})
                    calls += 1
                rates.setdefault((name, b), []).append(b * calls / (time.perf_counter() - start))
    print(f"positions/s of session.run, median of {repeats} interleaved repeats "
          f"[median ratio to {names[0]}]")
    print(f"{'':12s}" + "".join(f"{'B=' + str(b):>17s}" for b in batches))
    for name in names:
        cells = ""
        for b in batches:
            r, base = rates[(name, b)], rates[(names[0], b)]
            ratio = statistics.median(x / y for x, y in zip(r, base))
            cells += f"{statistics.median(r):9,.0f} [{ratio:4.2f}x]"
        print(f"  {name:10s}{cells}")


def run_chunks(run, tokens, chunk: int):
    """``run(tokens)`` -> (logits, wdl) called on ``chunk`` positions at a time, joined."""
    parts = [run(tokens[i:i + chunk]) for i in range(0, len(tokens), chunk)]
    return tuple(np.concatenate(p) for p in zip(*parts))


def codes(x: np.ndarray) -> np.ndarray:
    """DynamicQuantizeLinear's uint8 codes of ``x`` (zerochess.neural.fake_quant's rule)."""
    lo, hi = min(x.min(), 0), max(x.max(), 0)
    scale = np.float32((hi - lo) / np.float32(255)) if hi > lo else np.float32(1)
    zero = np.round(np.clip(0 - lo / scale, 0, 255))
    return np.clip(np.round(x / scale) + zero, 0, 255)


def code_flips(fp32, tokens: np.ndarray, threads: int) -> None:
    """Why the int8 file and its simulation differ: the int8 MatMuls' inputs as ONNX
    Runtime's fp32 graph and torch compute them, their largest difference and how many of
    their uint8 codes it moves (per layer, the fp32 network, so no earlier rounding
    differs)."""
    import onnx
    import torch

    from zerochess.neural.fake_quant import int8_linears
    from zerochess.neural.int8_export import matmul_node_names
    from zerochess.neural.network import build_model
    from zerochess.neural.onnx_evaluator import export_onnx

    names = int8_linears(build_model(dataclasses.replace(fp32.config, qat=True)))
    graph = export_onnx(fp32)
    proto = onnx.load_from_string(graph)
    nodes = {n.name: n for n in proto.graph.node}
    inputs = [nodes[n].input[0] for n in matmul_node_names(graph, names)]
    for name in inputs:
        proto.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    ort_inputs = session(proto.SerializeToString(), threads).run(inputs, {"tokens": tokens})
    seen = {}
    modules = dict(fp32.named_modules())
    hooks = [modules[n].register_forward_hook(
        lambda m, inp, out, n=n: seen.__setitem__(n, inp[0].detach().numpy())) for n in names]
    with torch.inference_mode():
        fp32(torch.from_numpy(tokens), legal_only=True)
    for h in hooks:
        h.remove()
    print(f"the int8 matmuls' inputs, fp32 graph vs torch ({len(tokens)} positions in one call):"
          f" max |difference|, uint8 codes moved")
    for name, x in zip(names, ort_inputs):
        moved = int((codes(seen[name]) != codes(x)).sum())
        print(f"  {name:18s} {np.abs(seen[name] - x).max():.1e}  {moved:4d} of {x.size:,}")


def qat_checkpoint(args) -> None:
    """A QAT checkpoint: its int8 file against its own fake-quant forward, then speed."""
    import torch

    from zerochess.neural.checkpoint import load_checkpoint
    from zerochess.neural.evaluator import gather_index, legal_softmax
    from zerochess.neural.network import build_model
    from zerochess.neural.onnx_evaluator import _exportable, export_onnx

    torch.set_num_threads(args.threads)
    model, _ = load_checkpoint(args.checkpoint)
    model = model.eval().float()
    if not model.config.qat:
        raise SystemExit(f"{args.checkpoint} is not a QAT network (its config has no qat)")
    fp32 = build_model(dataclasses.replace(model.config, qat=False)).eval()
    fp32.load_state_dict(model.state_dict())
    sessions = {"fp32": session(export_onnx(fp32), args.threads),
                "int8": session(export_onnx(model), args.threads)}

    def torch_run(net):
        def run(t):
            with torch.inference_mode():
                logits, wdl = _exportable(net)(torch.from_numpy(t))[:2]
            return logits.numpy(), wdl.numpy()
        return run

    def onnx_run(name):
        return lambda t: tuple(sessions[name].run(None, {"tokens": t})[:2])

    tokens, legal, offsets, _ = sample_batch(FAITH_POSITIONS, seed=FAITH_SEED)
    flat = gather_index(tokens, legal, offsets, model.config.policy_size)

    def priors(out):
        return legal_softmax(out[0].reshape(-1)[flat], offsets, 1.0), out[1]

    print(f"checkpoint {args.checkpoint}, {args.threads} thread(s); {FAITH_POSITIONS} "
          f"random-game positions: KL mean / max, max |dWDL| (bars: 1e-3, 1e-2)")
    for label, ref, other, chunk in (
            ("int8 vs fake quant, 1 call of 512", torch_run(model), onnx_run("int8"), 512),
            ("int8 vs fake quant, calls of 8", torch_run(model), onnx_run("int8"), 8),
            ("int8 vs fp32 weights, calls of 8", onnx_run("fp32"), onnx_run("int8"), 8),
            ("fake quant vs fp32 weights, of 8", torch_run(fp32), torch_run(model), 8),
            ("fake quant, calls of 8 vs of 512", torch_run(model), torch_run(model), (512, 8))):
        ref_chunk, chunk = chunk if isinstance(chunk, tuple) else (chunk, chunk)
        d = divergence(*priors(run_chunks(ref, tokens, ref_chunk)),
                       *priors(run_chunks(other, tokens, chunk)), offsets)
        ok = d["kl_mean"] < 1e-3 and d["wdl_max"] < 1e-2
        print(f"  {label:34s} {d['kl_mean']:.1e} / {d['kl_max']:.1e}, {d['wdl_max']:.1e}  "
              f"{'faithful' if ok else 'NOT faithful'}")
    code_flips(fp32, tokens, args.threads)
    speed_table(sessions, [int(b) for b in args.batches.split(",")], args.repeats, args.slice)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--network", default="default", help="default, zero or a checkpoint path")
    ap.add_argument("--checkpoint", default=None,
                    help="a QAT checkpoint (.pt): its int8 file against its fake-quant forward")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batches", default="1,8,32")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--slice", type=float, default=0.5, help="seconds per timed figure")
    args = ap.parse_args()
    if args.checkpoint:
        return qat_checkpoint(args)

    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    from zerochess.neural.backends import load_network_spec
    from zerochess.neural.evaluator import gather_index, legal_softmax
    from zerochess.neural.onnx_evaluator import export_onnx

    logging.getLogger().setLevel(logging.ERROR)  # the quantizer's advice on pre-processing
    model = load_network_spec(args.network).model.eval().float()
    with tempfile.TemporaryDirectory() as tmp:
        paths = {"fp32": os.path.join(tmp, "fp32.onnx")}
        matmuls = os.path.join(tmp, "fp32-matmul.onnx")   # the quantizer's input
        engine_graph = export_onnx(model)
        with open(paths["fp32"], "wb") as f:
            f.write(engine_graph)
        with open(matmuls, "wb") as f:
            f.write(gemm_as_matmul(engine_graph))
        trunk, policy = weight_matmuls(matmuls)
        for name, nodes in (("int8 all", trunk + policy), ("int8 layers", trunk),
                            ("int8 ffn", [n for n in trunk if "/fc" in n]),
                            ("int8 policy", policy)):
            paths[name] = os.path.join(tmp, name.replace(" ", "-") + ".onnx")
            quantize_dynamic(matmuls, paths[name], op_types_to_quantize=["MatMul"],
                             nodes_to_quantize=nodes, per_channel=True,
                             weight_type=QuantType.QInt8)
        sessions = {name: session(p, args.threads) for name, p in paths.items()}

    tokens, legal, offsets, _ = sample_batch(FAITH_POSITIONS, seed=FAITH_SEED)
    flat = gather_index(tokens, legal, offsets, model.config.policy_size)
    outputs = {}
    for name, s in sessions.items():
        logits, wdl = s.run(None, {"tokens": tokens})[:2]   # a moves-left output may follow
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

    speed_table(sessions, [int(b) for b in args.batches.split(",")], args.repeats, args.slice)


if __name__ == "__main__":
    main()
