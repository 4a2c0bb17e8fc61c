"""The network: the torch model and its checkpoints, the ``.onnx`` files the engine plays
from, quantization, and the evaluators (ONNX Runtime, torch, uniform) behind one ABI.

Every name is imported on first use (``from zerochess.neural import make_evaluator``), so
that importing a light submodule (``extras``, ``backends``, ``shipped``, ``defaults``) costs
nothing else: the UCI handshake imports those but no network runtime. ``make_evaluator``
plays the shipped ``.onnx`` networks on ONNX Runtime without torch; ``load_network``,
``Network`` and ``NetworkConfig`` are the torch model (the ``train`` extra). This package
reads positions through ``zerochess.chess``; the chess never imports it.
"""

from zerochess.lazy import lazy_exports

__all__ = ["load_network", "Network", "NetworkConfig", "make_evaluator", "UniformEvaluator"]

# name -> the module that defines it
_LAZY = {
    "load_network": "zerochess.neural.api",
    "Network": "zerochess.neural.api",
    "NetworkConfig": "zerochess.neural.network",
    "make_evaluator": "zerochess.neural.backends",
    "UniformEvaluator": "zerochess.neural.evaluator",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
