"""What the optional ``train`` extra brings (torch and the ONNX exporter) and one clear
error where it is missing.

Playing needs numpy, ONNX Runtime and python-chess alone; training, self-play, the
``torch-*`` backends, ``Device cuda``, ``.pt`` checkpoints as ``WeightsFile`` and
``zerochess export`` need torch. Asking for one of those without it raises
``MissingExtraError`` naming the extra, so the UCI layer can say so in one line and
play on with the network it has. No torch here.
"""

from __future__ import annotations

from importlib.util import find_spec

__all__ = ["TRAIN_EXTRA", "MissingExtraError", "require_torch", "torch_installed", "cuda_possible",
           "onnxruntime_installed", "exporter_installed"]

#: The command that installs what training needs (the CPU build of torch: docs/network.md).
TRAIN_EXTRA = "pip install 'zerochess[train]'"


class MissingExtraError(ImportError):
    """A feature of the ``train`` extra was asked for where torch is not installed."""


def _importable(name: str) -> bool:
    """Whether ``import name`` works (``find_spec`` alone would accept a package whose
    import fails, such as a broken install or the tests' blocking stand-in)."""
    if find_spec(name) is None:
        return False
    try:
        __import__(name)
    except ImportError:
        return False
    return True


def torch_installed() -> bool:
    """Whether torch imports (imports it: about a second the first time)."""
    return _importable("torch")


def cuda_possible() -> bool:
    """Whether torch with CUDA might run here: False without torch or with its CPU build
    (told by its version, ``2.13.0+cpu``, without importing it: a second at ``isready``),
    else torch's own answer. Without torch not even its version is looked up (reading the
    installed packages' metadata cost 15 ms of ``isready``'s CPU time)."""
    if find_spec("torch") is None:
        return False
    from importlib import metadata

    try:
        if metadata.version("torch").endswith("+cpu"):
            return False
    except metadata.PackageNotFoundError:
        pass
    if not torch_installed():
        return False
    import torch

    return torch.cuda.is_available()


def onnxruntime_installed() -> bool:
    """Whether ONNX Runtime, which plays ``.onnx`` networks, is installed (not imported)."""
    return find_spec("onnxruntime") is not None


def exporter_installed() -> bool:
    """Whether a ``.pt`` network can be exported to ONNX here: torch and ``onnx`` import."""
    return find_spec("onnx") is not None and torch_installed()


def require_torch(what: str):
    """``torch``, or ``MissingExtraError`` saying that ``what`` needs the train extra."""
    try:
        import torch
    except ImportError as exc:
        raise MissingExtraError(f"{what} needs torch, which is not installed: "
                                f"{TRAIN_EXTRA}") from exc
    return torch
