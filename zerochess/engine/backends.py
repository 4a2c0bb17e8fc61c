"""Choosing an evaluator backend from a short spec (CLI ``--backend``, UCI ``WeightsFile``).

Its own module so that the ABI module (``zerochess.engine.evaluator``) never imports the
network loader: ``api`` imports the torch backend, which imports the ABI, and only this
module, at the top of that chain, knows all three.
"""

from __future__ import annotations

from zerochess.engine.evaluator import Evaluator, UniformEvaluator

__all__ = ["make_evaluator"]


def make_evaluator(
    spec: str | None = None, device: str | None = "auto", threads: int | None = None, **kwargs
) -> Evaluator:
    """Build an evaluator from a short spec, as the CLI and UCI options give it.

    ``"uniform"`` -> ``UniformEvaluator``; ``None``/``"default"`` -> the network shipped in
    the package; ``"zero"`` -> the shipped network that learnt from nothing but the rules;
    anything else is a checkpoint path. Extra keyword arguments go to
    ``TorchEvaluator`` (precision, compile, policy_temperature, max_batch).
    """
    if spec == "uniform":
        return UniformEvaluator(**{k: v for k, v in kwargs.items() if k == "max_batch"})
    from zerochess.engine.api import load_network, shipped_network_path  # torch: only here
    from zerochess.engine.torch_evaluator import TorchEvaluator

    if spec == "zero":
        spec = str(shipped_network_path("zero"))
    network = load_network(None if spec in (None, "default") else spec, device="cpu")
    return TorchEvaluator(network, device=device, threads=threads, **kwargs)
