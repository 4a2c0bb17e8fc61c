"""Choosing an evaluator: the network (a short spec: CLI ``--backend``, UCI ``WeightsFile``)
and the runtime that runs it (UCI ``Backend``, CLI ``--runtime``).

Its own module so that the ABI module (``zerochess.engine.evaluator``) never imports the
network loader: ``api`` imports the torch backend, which imports the ABI, and only this
module, at the top of that chain, knows all of them. Importing it costs no torch.
"""

from __future__ import annotations

import os
from pathlib import Path

from zerochess.engine.evaluator import Evaluator, UniformEvaluator

__all__ = ["make_evaluator", "load_network_spec", "network_path", "resolve_runtime", "RUNTIMES", "RUNTIME_HELP", "ONNX_AUTO_MAX_BATCH"]

#: How the loaded network runs, declared once for the UCI option ``Backend`` and the CLI's
#: ``--runtime``. One runtime per process: the evaluator that replaces another drops it.
RUNTIMES = ("auto", "onnx-fp32", "torch-fp32", "torch-bf16", "torch-fp16")
RUNTIME_HELP = ("How the network runs: onnx-fp32 (ONNX Runtime, CPU), torch-fp32, torch-bf16 "
                "(fast only on CPUs with native bf16), torch-fp16 (CUDA); auto picks the "
                "fastest faithful one for this CPU or GPU.")


#: ``auto`` picks ONNX Runtime only for batches up to this size (see ``resolve_runtime``).
ONNX_AUTO_MAX_BATCH = 128


def resolve_runtime(runtime: str, device: str | None = "auto",
                    max_batch: int | None = None) -> tuple[str, str]:
    """``(runtime, device)`` with ``auto`` resolved, or ValueError for an impossible pair.

    ``auto``, from benchmarks/bench_inference.py (figures in docs/network.md): on CUDA,
    torch at ``default_precision`` (fp16). On every CPU (bf16, even where it is native, is
    not faithful on the shipped network: ``default_precision``) ONNX Runtime fp32: as
    faithful as torch fp32 (KL ~1e-7), 1.1-2.3x torch fp32 at batches of 1-8, 0.74-0.95x at
    32-128 on an idle CPU; in the engine's search (MinibatchSize 32, its batches often
    smaller) 1.0-1.06x the evaluations/s on an idle CPU and 1.2-1.35x with another job on
    the CPU, where torch's 2-thread pool collapsed (a GUI match runs two engines at once).
    But torch fp32 when the caller announces larger batches (``max_batch`` over
    ``ONNX_AUTO_MAX_BATCH``: self-play's hundreds of leaves, where ONNX Runtime measured
    0.90-0.96x), and where onnxruntime is not installed.
    ``onnx-fp32`` runs on the CPU only: with Device ``auto`` it takes the CPU.
    """
    if runtime not in RUNTIMES:
        raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, not {runtime!r}")
    from zerochess.engine.onnx_evaluator import onnx_available
    from zerochess.engine.torch_evaluator import default_precision, resolve_device

    if runtime == "onnx-fp32":
        if device not in (None, "auto") and resolve_device(device).type != "cpu":
            raise ValueError(f"onnx-fp32 runs on the CPU only, not on Device {device}")
        if not onnx_available():
            raise ValueError("onnx-fp32 needs the onnxruntime and onnx packages")
        return runtime, "cpu"
    resolved = resolve_device(device)
    if runtime == "auto":
        precision = default_precision(resolved)
        engine_sized = max_batch is None or max_batch <= ONNX_AUTO_MAX_BATCH
        if precision == "fp32" and resolved.type == "cpu" and engine_sized and onnx_available():
            return "onnx-fp32", "cpu"
        return f"torch-{precision}", str(resolved)
    if runtime == "torch-fp16" and resolved.type != "cuda":
        raise ValueError("torch-fp16 runs on CUDA only (fp16 on the CPU is emulated and slow)")
    return runtime, str(resolved)


def network_path(spec: str | os.PathLike | None = None) -> Path:
    """The checkpoint file a network spec names, for commands that need the file itself
    (``train selfplay --init``, benchmarks): ``None``/``"default"`` and ``"zero"`` the
    package's shipped networks (as ``WeightsFile`` reads them), anything else the path as
    given. Whether the file exists is the caller's question. Imports torch (``api``)."""
    from zerochess.engine.api import SHIPPED_NETWORKS, shipped_network_path

    if spec is None or spec in SHIPPED_NETWORKS:
        return shipped_network_path(spec or "default")
    return Path(spec)


def load_network_spec(spec: str | None = None):
    """The ``Network`` a short spec names: ``None``/``"default"`` the network shipped in the
    package, ``"zero"`` the shipped network that learnt from nothing but the rules, anything
    else a checkpoint path; loaded on the CPU (torch: imported only here)."""
    from zerochess.engine.api import load_network, shipped_network_path

    if spec == "zero":
        spec = str(shipped_network_path("zero"))
    return load_network(None if spec in (None, "default") else spec, device="cpu")


def make_evaluator(
    spec: str | None = None, device: str | None = "auto", threads: int | None = None,
    runtime: str = "auto", **kwargs
) -> Evaluator:
    """Build an evaluator from a short spec, as the CLI and UCI options give it.

    ``"uniform"`` -> ``UniformEvaluator`` (no network, no runtime); ``None``/``"default"`` ->
    the network shipped in the package; ``"zero"`` -> the shipped network that learnt from
    nothing but the rules; anything else is a checkpoint path. ``runtime`` is one of
    ``RUNTIMES`` (``resolve_runtime``; ``auto`` heeds ``max_batch``). Extra keyword
    arguments go to the evaluator (policy_temperature, max_batch; for torch also precision
    and compile: given with ``runtime="auto"``, they choose torch).
    """
    if spec == "uniform":
        return UniformEvaluator(**{k: v for k, v in kwargs.items() if k == "max_batch"})
    torch_only = {"precision", "compile"} & kwargs.keys()
    if torch_only and runtime != "auto":
        raise ValueError(f"give either runtime={runtime!r} or {', '.join(sorted(torch_only))}")
    runtime, device = (("torch", device) if torch_only
                       else resolve_runtime(runtime, device, kwargs.get("max_batch")))
    network = load_network_spec(spec)
    if runtime == "onnx-fp32":
        from zerochess.engine.onnx_evaluator import OnnxEvaluator

        return OnnxEvaluator(network, threads=threads, **kwargs)
    from zerochess.engine.torch_evaluator import TorchEvaluator

    if runtime.startswith("torch-"):
        kwargs["precision"] = runtime.partition("-")[2]
    return TorchEvaluator(network, device=device, threads=threads, **kwargs)
