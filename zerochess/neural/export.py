"""Writing the network file the engine plays from (``zerochess.neural.onnx_network``) out of
a torch checkpoint: ``zerochess export CHECKPOINT OUT.onnx``.

Needs the ``train`` extra (torch and the ``onnx`` package); reading the result does not.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from zerochess.neural.onnx_network import (FORMAT, FORMAT_VERSION, POLICY_LAYOUT, OnnxNetwork,
                                           encoding_name, probe_legal, probe_tokens,
                                           read_onnx_network)

__all__ = ["export_network_file"]


def export_network_file(checkpoint: str | os.PathLike, out: str | os.PathLike) -> OnnxNetwork:
    """Export the ``.pt`` checkpoint to the ``.onnx`` network file ``out`` (written
    atomically, after the new file has passed ``read_onnx_network``'s checks); return it.

    Needs the ``train`` extra (torch and ``onnx``): ``MissingExtraError`` otherwise."""
    from zerochess.neural.extras import TRAIN_EXTRA, MissingExtraError, require_torch

    torch = require_torch("zerochess export")
    try:
        import onnx
    except ImportError as exc:
        raise MissingExtraError(f"zerochess export needs the onnx package: {TRAIN_EXTRA}") from exc
    from zerochess._version import __version__
    from zerochess.neural.api import load_network
    from zerochess.atomic import write_atomic
    from zerochess.neural.fake_quant import int8_linears
    from zerochess.neural.int8_export import int8_metadata
    from zerochess.neural.onnx_evaluator import _exportable, export_onnx

    checkpoint = Path(checkpoint)
    network = load_network(checkpoint, device="cpu")
    model = network.model.float().eval()
    threat_inputs = model.config.threat_inputs  # the graph then reads version-2 tokens
    with torch.inference_mode():
        logits, wdl, *plies = _exportable(model)(torch.from_numpy(probe_tokens(threat_inputs)))
    probe = {"wdl": wdl.numpy().tolist(),
             "legal_logits": [logits[k, i].numpy().tolist() for k, i in enumerate(probe_legal())]}
    if plies:  # a moves-left head: the graph's third output, checked at every load too
        probe["moves_left"] = plies[0].numpy().tolist()
    props = {
        "format": FORMAT, "format_version": str(FORMAT_VERSION), "encoding": encoding_name(threat_inputs),
        "policy_layout": POLICY_LAYOUT, "policy_size": str(model.config.policy_size),
        "seq_len": str(model.config.seq_len),
        "config": json.dumps(model.config.to_dict(), sort_keys=True),
        "training": json.dumps(network.metadata, sort_keys=True),
        "source_sha256": hashlib.sha256(checkpoint.read_bytes()).hexdigest(),
        "zerochess_version": __version__,
        "probe": json.dumps(probe),
    }
    int8 = int8_linears(model)
    if int8:  # a QAT network: its file's matmuls are int8 (export_onnx), and it says so
        props["int8"] = int8_metadata(int8)
    proto = onnx.load_from_string(export_onnx(model))
    del proto.metadata_props[:]
    for key, value in props.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    data = proto.SerializeToString()
    checked = read_onnx_network(out, data=data)  # refuse to write a file that will not load
    write_atomic(out, lambda f: f.write(data))
    return checked
