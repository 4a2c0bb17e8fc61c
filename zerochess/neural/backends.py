"""Choosing an evaluator: the network (a short spec: CLI ``--backend``, UCI ``WeightsFile``)
and the runtime that runs it (UCI ``Backend``, CLI ``--runtime``). The shipped networks
play from their ``.onnx`` files on ONNX Runtime, without torch; torch (the ``train`` extra)
serves the ``torch-*`` runtimes, CUDA and ``.pt`` checkpoints.

Its own module so that the ABI module (``zerochess.neural.evaluator``) never imports the
network loader: ``api`` imports the torch backend, which imports the ABI, and only this
module, at the top of that chain, knows all of them. Importing it costs no torch and no
numpy: the UCI options (``uci/options.py``) read the runtimes from here while the engine
answers ``uci``, before anything heavy is imported (issue 29's start-up targets).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from zerochess.neural.extras import (TRAIN_EXTRA, MissingExtraError, cuda_possible,
                                     exporter_installed, onnxruntime_installed, require_torch)
from zerochess.neural.shipped import SHIPPED_NETWORKS, shipped_network_path

if TYPE_CHECKING:
    from zerochess.neural.evaluator import Evaluator

__all__ = ["make_evaluator", "load_network_spec", "network_path", "resolve_runtime", "is_onnx_file",
           "RUNTIMES", "RUNTIME_HELP", "ONNX_AUTO_MAX_BATCH"]

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
    """``(runtime, device)`` with ``auto`` resolved, or ValueError for an impossible pair
    (``MissingExtraError``, an ImportError, for a torch runtime or a GPU without torch).

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
    ``onnx-fp32`` runs on the CPU only: with Device ``auto`` it takes the CPU. Without
    torch (a plain ``pip install .``) or with its CPU build, ``auto`` on Device
    ``auto``/``cpu`` is ONNX Runtime and imports no torch (``cuda_possible``).
    """
    if runtime not in RUNTIMES:
        raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}, not {runtime!r}")
    on_cpu = device in (None, "auto") or str(device).startswith("cpu")
    if runtime == "onnx-fp32":
        if not on_cpu:
            raise ValueError(f"onnx-fp32 runs on the CPU only, not on Device {device}")
        if not onnxruntime_installed():
            raise ValueError("onnx-fp32 needs the onnxruntime package")
        return runtime, "cpu"
    engine_sized = max_batch is None or max_batch <= ONNX_AUTO_MAX_BATCH
    if (runtime == "auto" and on_cpu and engine_sized and onnxruntime_installed()
            and (device not in (None, "auto") or not cuda_possible())):
        return "onnx-fp32", "cpu"  # every CPU's choice (default_precision is fp32 there)
    require_torch(f"Backend {runtime}" if runtime != "auto" else f"Device {device}"
                  if not on_cpu else "the torch runtime (no onnxruntime, or batches over "
                  f"{ONNX_AUTO_MAX_BATCH})")
    from zerochess.neural.torch_evaluator import default_precision, resolve_device

    resolved = resolve_device(device)
    if runtime == "auto":
        precision = default_precision(resolved)
        if precision == "fp32" and resolved.type == "cpu" and engine_sized and onnxruntime_installed():
            return "onnx-fp32", "cpu"
        return f"torch-{precision}", str(resolved)
    if runtime == "torch-fp16" and resolved.type != "cuda":
        raise ValueError("torch-fp16 runs on CUDA only (fp16 on the CPU is emulated and slow)")
    return runtime, str(resolved)


#: The first byte of an ONNX model: a protobuf ``ModelProto`` opens with its field 1,
#: ``ir_version``, a varint (tag ``0x08``), as every exporter writes it. A torch checkpoint
#: opens with ``PK`` (a zip) or, in the legacy format, ``0x80`` (a pickle).
ONNX_FIRST_BYTE = b"\x08"


def is_onnx_file(spec: str | None) -> bool:
    """Whether a network spec names an ONNX network file: by its ``.onnx`` suffix or, for any
    other file, by its first byte (``ONNX_FIRST_BYTE``), so that a network file renamed
    without the suffix still plays on ONNX Runtime instead of being read as a torch
    checkpoint (which needs torch and would be refused as corrupt). A spec that is no file
    (a shipped network's name, a missing path) is not one."""
    if spec is None:
        return False
    if str(spec).lower().endswith(".onnx"):
        return True
    try:
        with open(spec, "rb") as file:
            return file.read(1) == ONNX_FIRST_BYTE
    except OSError:  # missing, a directory, unreadable: the checkpoint loader says which
        return False


def network_path(spec: str | os.PathLike | None = None) -> Path:
    """The checkpoint file a network spec names, for commands that need the torch file
    itself (``train selfplay --init``, benchmarks): ``None``/``"default"`` and ``"zero"`` the
    package's shipped ``.pt`` networks, anything else the path as given. Whether the file
    exists is the caller's question. Imports no torch."""
    if spec is None or spec in SHIPPED_NETWORKS:
        return shipped_network_path(spec or "default", ".pt")
    return Path(spec)


def load_network_spec(spec: str | None = None):
    """The torch ``Network`` a short spec names: ``None``/``"default"`` the network shipped
    in the package, ``"zero"`` the shipped network that learnt from nothing but the rules,
    anything else a ``.pt`` checkpoint path; loaded on the CPU. Needs torch (the ``train``
    extra: ``MissingExtraError`` without it); torch is imported only here."""
    require_torch(f"the .pt checkpoint {spec}" if spec not in (None, "default", "zero")
                  else "a torch backend")
    from zerochess.neural.api import load_network

    return load_network(str(network_path(spec)), device="cpu")


def make_evaluator(
    spec: str | None = None, device: str | None = "auto", threads: int | None = None,
    runtime: str = "auto", **kwargs
) -> Evaluator:
    """Build an evaluator from a short spec, as the CLI and UCI options give it.

    ``"uniform"`` -> ``UniformEvaluator`` (no network, no runtime); ``None``/``"default"`` ->
    the network shipped in the package; ``"zero"`` -> the shipped network that learnt from
    nothing but the rules; a path ending in ``.onnx``, or a file whose content is an ONNX
    model (``is_onnx_file``) -> that network file (``zerochess export``'s); anything else is
    a ``.pt`` checkpoint path. ONNX Runtime plays the shipped
    networks from their ``.onnx`` files (no torch); the torch runtimes load the ``.pt``
    ones. ``runtime`` is one of ``RUNTIMES`` (``resolve_runtime``; ``auto`` heeds
    ``max_batch``). Extra keyword arguments go to the evaluator (policy_temperature,
    max_batch; for torch also precision and compile: given with ``runtime="auto"``, they
    choose torch).
    """
    if spec == "uniform":
        from zerochess.neural.evaluator import UniformEvaluator

        return UniformEvaluator(**{k: v for k, v in kwargs.items() if k == "max_batch"})
    spec = None if spec in (None, "default") else spec
    torch_only = {"precision", "compile"} & kwargs.keys()
    if torch_only and runtime != "auto":
        raise ValueError(f"give either runtime={runtime!r} or {', '.join(sorted(torch_only))}")
    asked = runtime
    runtime, device = (("torch", device) if torch_only
                       else resolve_runtime(runtime, device, kwargs.get("max_batch")))
    shipped = spec is None or spec in SHIPPED_NETWORKS
    onnx_file = not shipped and is_onnx_file(spec)
    if runtime == "onnx-fp32" and (shipped or onnx_file):
        from zerochess.neural.onnx_evaluator import OnnxEvaluator
        from zerochess.neural.onnx_network import read_onnx_network

        path = shipped_network_path(spec or "default", ".onnx") if shipped else spec
        return OnnxEvaluator(read_onnx_network(path, threads), threads=threads, **kwargs)
    if onnx_file:
        raise ValueError(f"an ONNX network file runs on ONNX Runtime only, not with Backend {runtime}")
    if runtime == "onnx-fp32" and asked == "auto" and not exporter_installed():
        runtime = "torch-fp32"  # a .pt without the exporter: torch runs it as it is
    network = load_network_spec(spec)
    if runtime == "onnx-fp32":
        if not exporter_installed():
            raise MissingExtraError(f"running a .pt checkpoint on ONNX Runtime needs torch and "
                                    f"the onnx package: {TRAIN_EXTRA}")
        from zerochess.neural.onnx_evaluator import OnnxEvaluator

        return OnnxEvaluator(network, threads=threads, **kwargs)
    from zerochess.neural.torch_evaluator import TorchEvaluator

    if runtime.startswith("torch-"):
        kwargs["precision"] = runtime.partition("-")[2]
    return TorchEvaluator(network, device=device, threads=threads, **kwargs)
