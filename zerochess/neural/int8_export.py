"""The int8 graph of a quantization-aware network (``NetworkConfig.qat``): its fp32 export
with exactly the matmuls that training simulated in int8 (``zerochess.neural.fake_quant``)
quantized by ONNX Runtime's ``quantize_dynamic``, with the scheme the simulation copies.

Needs torch, ``onnx`` and ``onnxruntime.quantization`` (the ``train`` extra); the file it
makes plays with onnxruntime alone.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile

#: How a QAT network's file computes its int8 matmuls (its ``int8`` metadata says it).
SCHEME = ("onnxruntime quantize_dynamic: per-output-channel symmetric int8 weights "
          "(reduce_range, [-64, 64]), per-call uint8 activations (DynamicQuantizeLinear)")


def matmul_node_names(onnx_bytes: bytes, modules: list[str]) -> list[str]:
    """The ``MatMul`` node of each Linear named in ``modules`` (module names of the model the
    exporter traced as ``_exportable``'s ``model``: "layers.0.qkv" is node
    "/model/layers.0/qkv/MatMul", or "/layers.0/qkv/MatMul" for a moves-left network). Raises ValueError when one is missing or is not a
    weight MatMul: quantizing another node than the one trained would be silently wrong."""
    import onnx

    graph = onnx.load_from_string(onnx_bytes).graph
    weights = {i.name for i in graph.initializer}
    nodes = {n.name: n for n in graph.node}
    names = []
    for module in modules:
        # the exporter's scopes: one per module, a ModuleList item keeping "layers.<i>"; the
        # wrapper's "/model" scope only when it called the model itself (a moves-left
        # network is traced through ``forward_all``, a method: no scope of its own)
        path = module.replace(".", "/").replace("layers/", "layers.") + "/MatMul"
        name = next((n for n in ("/model/" + path, "/" + path) if n in nodes), "/model/" + path)
        node = nodes.get(name)
        if node is None or node.op_type != "MatMul" or node.input[1] not in weights:
            raise ValueError(f"the export has no weight MatMul {name!r} for the int8 "
                             f"Linear {module!r}")
        names.append(name)
    return names


def quantize_matmuls(onnx_bytes: bytes, nodes: list[str]) -> bytes:
    """``onnx_bytes`` with the MatMul ``nodes`` made int8 (``SCHEME``), every other node as
    it was."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quiet = logging.getLogger().level
    logging.getLogger().setLevel(logging.ERROR)  # the quantizer's advice on pre-processing
    try:
        with tempfile.TemporaryDirectory() as tmp:
            src, dst = os.path.join(tmp, "fp32.onnx"), os.path.join(tmp, "int8.onnx")
            with open(src, "wb") as f:
                f.write(onnx_bytes)
            quantize_dynamic(src, dst, op_types_to_quantize=["MatMul"], nodes_to_quantize=nodes,
                             per_channel=True, reduce_range=True, weight_type=QuantType.QInt8)
            proto = onnx.load(dst)
    finally:
        logging.getLogger().setLevel(quiet)
    quantized = {n.name for n in proto.graph.node if n.op_type == "MatMulInteger"}
    if len(quantized) != len(nodes):
        raise ValueError(f"the quantizer made {len(quantized)} MatMulInteger nodes of the "
                         f"{len(nodes)} int8 matmuls")
    return proto.SerializeToString()


def int8_metadata(linears: list[str]) -> str:
    """The ``int8`` metadata value of a QAT network's file: JSON {"scheme": SCHEME,
    "linears": the module names of its int8 matmuls}."""
    return json.dumps({"scheme": SCHEME, "linears": linears})
