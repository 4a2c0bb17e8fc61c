"""One-file network checkpoints: config + weights + metadata, loadable with weights_only=True.

Layout of the file (a ``torch.save`` of a plain dict, so ``torch.load(weights_only=True)``
reads it without unpickling arbitrary objects)::

    {
      "format": "zerochess-network",   # tells our files from any other .pt file
      "format_version": 1,             # bumped on any incompatible layout change
      "zerochess_version": "0.1.0",    # the package that wrote it (informational)
      "config": {...},                 # NetworkConfig.to_dict(), architecture included (a
                                       # config without one is a "transformer")
      "state_dict": {name: tensor},    # the model's weights
      "metadata": {...},               # step, data, metrics, anything plain (str/int/float/
                                       # bool/None and lists/dicts of them)
    }

Every failure to load raises ``CheckpointError`` naming the file and what is wrong, because
a UCI engine that dies with a raw unpickling traceback tells a GUI user nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from zerochess._version import __version__
from zerochess.atomic import write_atomic
from zerochess.neural.errors import CheckpointError
from zerochess.neural.network import NetworkConfig, PolicyValueModel, build_model

FORMAT = "zerochess-network"
FORMAT_VERSION = 1

__all__ = ["CheckpointError", "save_checkpoint", "load_checkpoint", "FORMAT_VERSION"]


def _check_plain(value: Any, where: str) -> None:
    """Refuse metadata that weights_only loading could not read back (fail at save, not load)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_plain(v, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"metadata key {where}[{k!r}] must be a str")
            _check_plain(v, f"{where}[{k!r}]")
        return
    raise TypeError(f"metadata {where} has unsupported type {type(value).__name__}")


def save_checkpoint(
    path: str | os.PathLike, model: PolicyValueModel, metadata: dict | None = None
) -> Path:
    """Write ``model`` (its config and fp32 CPU weights) and ``metadata`` to ``path`` atomically.

    The file is written to a temporary name in the same directory and moved into place with
    ``os.replace``, so a crash mid-write never leaves a truncated checkpoint under the real
    name (training loops overwrite ``latest.pt`` while an engine may be reading it).
    """
    path = Path(path)
    metadata = dict(metadata or {})
    _check_plain(metadata, "metadata")
    payload = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "zerochess_version": __version__,
        "config": model.config.to_dict(),
        "state_dict": {k: v.detach().to("cpu", torch.float32).contiguous()
                       for k, v in model.state_dict().items()},
        "metadata": metadata,
    }
    return write_atomic(path, lambda f: torch.save(payload, f))


def load_checkpoint(path: str | os.PathLike) -> tuple[PolicyValueModel, dict]:
    """Read a checkpoint into a CPU fp32 model in eval mode; return ``(model, info)``.

    ``info`` holds ``metadata``, ``format_version`` and ``zerochess_version`` from the file.
    Raises ``CheckpointError`` for a missing, truncated/corrupt, foreign, newer-format or
    shape-mismatched file.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(path, "no such file")
    if path.suffix.lower() == ".onnx":
        raise CheckpointError(path, "an ONNX network file, which the engine plays from; this "
                              "needs the .pt checkpoint it was exported from")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types here: zip, pickle, EOF, Runtime errors
        raise CheckpointError(path, f"truncated or corrupt file ({type(e).__name__}: {e})") from e
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(path, "not a zerochess network checkpoint")
    version = payload.get("format_version")
    if version != FORMAT_VERSION:
        raise CheckpointError(
            path, f"format version {version!r} does not match this zerochess "
            f"({__version__}) which reads format version {FORMAT_VERSION}"
        )
    for key in ("config", "state_dict", "metadata"):
        if not isinstance(payload.get(key), dict):
            raise CheckpointError(path, f"missing or malformed {key!r} section")
    try:
        config = NetworkConfig.from_dict(payload["config"])
    except (TypeError, ValueError) as e:
        raise CheckpointError(path, f"invalid network config: {e}") from e
    model = build_model(config)
    try:
        model.load_state_dict(payload["state_dict"], strict=True)
    except (RuntimeError, TypeError, AttributeError) as e:
        raise CheckpointError(path, f"weights do not match the config: {e}") from e
    info = {
        "metadata": payload["metadata"],
        "format_version": version,
        "zerochess_version": payload.get("zerochess_version"),
    }
    return model.eval(), info
