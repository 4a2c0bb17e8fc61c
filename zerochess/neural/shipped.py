"""The networks shipped in the package, by name, in both of their forms.

``default`` is the engine's network, ``zero`` the best network trained from nothing but the
rules (random play, then self-play). Each ships twice: ``<stem>.onnx``, which the engine
plays from with ONNX Runtime alone, and ``<stem>.pt``, the torch checkpoint it was exported
from (``zerochess export``), which training and the ``torch-*`` backends load. No torch here.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SHIPPED_NETWORKS", "shipped_network_path"]

#: Shipped network name -> file stem in zerochess/data/.
SHIPPED_NETWORKS = {"default": "network", "zero": "zero"}

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def shipped_network_path(name: str = "default", suffix: str = ".pt") -> Path:
    """Where the shipped network ``name`` lives in form ``suffix`` (``.pt`` or ``.onnx``)."""
    if suffix not in (".pt", ".onnx"):
        raise ValueError(f"a shipped network is a .pt or an .onnx file, not {suffix!r}")
    return DATA_DIR / f"{SHIPPED_NETWORKS[name]}{suffix}"
