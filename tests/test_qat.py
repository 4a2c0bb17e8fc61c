"""Quantization-aware training: the torch simulation of int8 is what ONNX Runtime's int8 graph
computes, QAT off changes nothing, QAT trains and resumes exactly, and its int8 file plays."""

import io
import json
import sys
from dataclasses import replace
from pathlib import Path

import chess
import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_network import divergence, sample_batch  # noqa: E402
from test_train_supervise import TINY, data  # noqa: E402,F401 (a fixture: a tiny data set)
from uci_process import UciProcess  # noqa: E402
from zerochess.neural.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from zerochess.neural.errors import CheckpointError  # noqa: E402
from zerochess.neural.evaluator import gather_index, legal_softmax  # noqa: E402
from zerochess.neural.export import export_network_file  # noqa: E402
from zerochess.neural.fake_quant import (Int8Linear, int8_linears, set_fake_quant,  # noqa: E402
                                         uint8_activation)
from zerochess.neural.int8_export import quantize_matmuls  # noqa: E402
from zerochess.neural.network import NetworkConfig, build_model  # noqa: E402
from zerochess.neural.onnx_evaluator import _exportable, export_onnx  # noqa: E402
from zerochess.neural.onnx_network import read_onnx_network, session_options  # noqa: E402
from zerochess.neural.shipped import shipped_network_path  # noqa: E402
from zerochess.train.supervised.trainer import Trainer  # noqa: E402

SHIPPED = shipped_network_path("default", ".pt")


def _session(onnx_bytes: bytes):
    return ort.InferenceSession(onnx_bytes, session_options(1), providers=["CPUExecutionProvider"])


def _qat(model):
    """``model``'s weights in a network of its config with ``qat`` on."""
    q = build_model(replace(model.config, qat=True))
    q.load_state_dict(model.state_dict())
    return q.eval()


def test_uint8_activation_is_dynamic_quantize_linear():
    """The simulated activation is ONNX Runtime's DynamicQuantizeLinear, dequantized, to the
    bit: on a mixed-sign tensor, an all-positive one (zero point 0) and a constant one."""
    from onnx import TensorProto, helper

    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    graph = helper.make_graph(
        [node], "dql", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, None),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("z", TensorProto.UINT8, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = _session(model.SerializeToString())
    g = torch.Generator().manual_seed(1)
    for x in (torch.randn(4, 72, 64, generator=g) * 3 + 0.7, torch.rand(3, 10, generator=g) + 1,
              torch.full((2, 5), -0.25)):
        y, scale, zero = session.run(None, {"x": x.numpy()})
        expect = (y.astype(np.float32) - np.float32(zero)) * scale
        assert np.array_equal(uint8_activation(x).numpy(), expect)


def test_an_int8_linear_is_its_quantized_matmul():
    """One Int8Linear against the int8 MatMul the quantizer makes of its fp32 export:
    equal to float rounding (integer sums, one scale product), far below one quantum."""

    torch.manual_seed(0)
    m = Int8Linear(64, 96)
    torch.nn.init.normal_(m.weight, std=0.3)
    torch.nn.init.normal_(m.bias, std=0.3)
    x = torch.randn(8, 72, 64) * 2 + 0.3
    with torch.no_grad():
        simulated = m(x).numpy()
    set_fake_quant(m, False)
    with torch.no_grad():
        fp32 = m(x).numpy()
        buffer = io.BytesIO()
        torch.onnx.export(m, (x,), buffer, dynamo=False, opset_version=17, input_names=["x"],
                          dynamic_axes={"x": {0: "batch"}})
    matmuls = [n.name for n in onnx.load_from_string(buffer.getvalue()).graph.node
               if n.op_type == "MatMul"]
    int8 = quantize_matmuls(buffer.getvalue(), matmuls)
    assert "MatMulInteger" in {n.op_type for n in onnx.load_from_string(int8).graph.node}
    out = _session(int8).run(None, {"x": x.numpy()})[0]
    assert np.abs(out - simulated).max() < 1e-5 * np.abs(simulated).max()
    assert np.abs(out - fp32).max() > 1e-3 * np.abs(fp32).max()  # int8 is not fp32


def test_a_qat_networks_int8_graph_meets_the_faithfulness_bars():
    """A tiny network with sharp random weights, QAT on: its int8 ONNX graph against its
    torch fake-quant forward, on the same calls of 8 positions (the activation scales are
    per call), within the bars (mean legal-prior KL < 1e-3, max |dWDL| < 1e-2), and far
    closer than int8 is to the fp32 network of the same weights."""
    torch.manual_seed(3)
    model = build_model(NetworkConfig.preset("tiny", dropout=0.0, qat=True)).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(4)  # away from near-uniform outputs, where every runtime agrees
    session = _session(export_onnx(model))
    fp32 = build_model(replace(model.config, qat=False)).eval()
    fp32.load_state_dict(model.state_dict())
    tokens, legal, offsets, _ = sample_batch(128, seed=5)
    flat = gather_index(tokens, legal, offsets, model.config.policy_size)
    outs = {"onnx": [], "fq": [], "fp32": []}
    for i in range(0, len(tokens), 8):
        t = tokens[i:i + 8]
        outs["onnx"].append(session.run(None, {"tokens": t}))
        with torch.inference_mode():
            outs["fq"].append([o.numpy() for o in _exportable(model)(torch.from_numpy(t))])
            outs["fp32"].append([o.numpy() for o in _exportable(fp32)(torch.from_numpy(t))])
    priors = {}
    for name, parts in outs.items():
        logits, wdl = (np.concatenate(p) for p in zip(*parts))
        priors[name] = legal_softmax(logits.reshape(-1)[flat], offsets, 1.0), wdl
    d = divergence(*priors["fq"], *priors["onnx"], offsets)
    assert d["kl_mean"] < 1e-3 and d["wdl_max"] < 1e-2, d
    ptq = divergence(*priors["fp32"], *priors["onnx"], offsets)
    assert d["kl_mean"] < ptq["kl_mean"] / 10 and d["wdl_max"] < ptq["wdl_max"], (d, ptq)


def test_qat_off_changes_nothing():
    """Without qat the config, the modules and the export are the ones before QAT existed
    (plain Linears, no "qat" key, no int8 node); the same seed draws the same weights with
    it on, and with its simulation off a QAT network computes exactly the fp32 one."""
    cfg = NetworkConfig.preset("tiny", dropout=0.0)
    assert "qat" not in cfg.to_dict() and replace(cfg, qat=True).to_dict()["qat"] is True
    torch.manual_seed(7)
    plain = build_model(cfg).eval()
    torch.manual_seed(7)
    q = build_model(replace(cfg, qat=True)).eval()
    assert not int8_linears(plain) and len(int8_linears(q)) == 4 * cfg.n_layers + 3
    assert all(torch.equal(v, q.state_dict()[k]) for k, v in plain.state_dict().items())
    tokens = torch.from_numpy(sample_batch(16, seed=2)[0])
    with torch.no_grad():
        ref = plain(tokens)
        simulated = q(tokens)
        set_fake_quant(q, False)
        off = q(tokens)
    assert all(torch.equal(a, b) for a, b in zip(ref, off))
    assert not torch.equal(ref[0], simulated[0])
    ops = {n.op_type for n in onnx.load_from_string(export_onnx(plain)).graph.node}
    assert not ops & {"MatMulInteger", "DynamicQuantizeLinear"}


def test_the_shipped_network_still_exports_byte_for_byte(tmp_path):
    """With QAT in the code, ``zerochess export`` of the shipped .pt writes the shipped .onnx
    byte for byte (the version that exported it aside): qat off adds nothing to a file.

    The probe (torch's own outputs on five positions, stored in the metadata) is compared as
    numbers: torch's CPU kernels round differently on another processor (seen on a new
    machine: logits 6e-6 apart, WDL 6e-10), which says nothing about the export. The bar,
    1e-4, is a tenth of what the loader allows ONNX Runtime against the probe's logits."""
    out = tmp_path / "again.onnx"
    export_network_file(SHIPPED, out)
    protos = [onnx.load(str(p)) for p in (out, shipped_network_path("default", ".onnx"))]
    probes = []
    for proto in protos:
        for entry in proto.metadata_props:
            if entry.key == "zerochess_version":
                entry.value = "any"
            if entry.key == "probe":
                probes.append(json.loads(entry.value))
                entry.value = "compared below"
    assert protos[0].SerializeToString() == protos[1].SerializeToString()
    assert len(probes) == 2 and probes[0].keys() == probes[1].keys()
    for key in probes[0]:
        assert len(probes[0][key]) == len(probes[1][key]), key
        for row, (a, b) in enumerate(zip(probes[0][key], probes[1][key])):  # rows may be ragged
            np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                                       rtol=0, atol=1e-4, err_msg=f"{key}[{row}]")


def test_qat_fine_tune_records_it_and_resumes_exactly(data, tmp_path):  # noqa: F811
    """``--init-from default --qat``: the shipped weights in Int8Linears, training runs, the
    checkpoint's config says qat, and a killed run resumes bit-identically."""
    cfg = TINY.replace(init_from="default", qat=True, steps=4, reach_mask=None, dropout=0.0)
    full, split = tmp_path / "full", tmp_path / "split"
    trainer = Trainer(cfg, data, full)
    start, _ = load_checkpoint(SHIPPED)
    assert trainer.model.config.qat and int8_linears(trainer.model)
    assert all(torch.equal(v, trainer.model.state_dict()[k]) for k, v in start.state_dict().items())
    trainer.run()
    Trainer(cfg.replace(stop_after_steps=2), data, split).run()
    Trainer(cfg, data, split, resume=True).run()
    sa = torch.load(full / "resume.pt", weights_only=True)["model"]
    sb = torch.load(split / "resume.pt", weights_only=True)["model"]
    assert all(torch.equal(v, sb[k]) for k, v in sa.items())
    assert not torch.equal(sa["layers.0.qkv.weight"], start.state_dict()["layers.0.qkv.weight"])
    assert json.loads((full / "config.json").read_text())["network"]["qat"] is True
    model, _ = load_checkpoint(full / "final.pt")
    assert model.config.qat and int8_linears(model)
    # qat false with a QAT checkpoint: the same weights, fp32 again
    assert not Trainer(TINY.replace(init_from=str(full / "final.pt"), qat=False, steps=1,
                                    reach_mask=None), data, tmp_path / "fp32").net_cfg.qat


def test_a_qat_onnx_file_loads_and_plays(tmp_path):
    """``zerochess export`` of a QAT checkpoint writes int8 matmuls and says so; the reader's
    probe passes (and, with its int8 bounds, still refuses an altered file), and the engine
    plays ``go nodes`` from it through UCI."""
    start, _ = load_checkpoint(SHIPPED)
    checkpoint = save_checkpoint(tmp_path / "qat.pt", _qat(start), {"note": "test"})
    out = tmp_path / "qat.onnx"
    network = export_network_file(checkpoint, out)
    assert read_onnx_network(out).metadata["int8"]["linears"] == int8_linears(_qat(start))
    assert network.config["qat"] is True
    proto = onnx.load(str(out))
    ops = [n.op_type for n in proto.graph.node]
    assert ops.count("MatMulInteger") == len(int8_linears(_qat(start)))
    # the int8 probe bounds still refuse an altered file: one matmul's weight scales x1.5
    scale = next(i for i in proto.graph.initializer if i.name.endswith("_scale")
                 and len(i.dims) == 1)
    scale.CopyFrom(onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(scale) * 1.5,
                                                scale.name))
    with pytest.raises(CheckpointError, match="differ from those recorded"):
        read_onnx_network(tmp_path / "altered.onnx", data=proto.SerializeToString())
    e = UciProcess()
    try:
        e.send("uci")
        e.expect("uciok", timeout=15)
        e.send(f"setoption name WeightsFile value {out}")
        lines = e.sync(timeout=60)
        e.send("position startpos moves e2e4")
        e.send("go nodes 50")
        lines += e.expect("bestmove", timeout=60)
    finally:
        e.close()
    assert not [x for x in lines if x.startswith("info string error")], lines
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(lines[-1].split()[1]) in board.legal_moves, lines[-1]
