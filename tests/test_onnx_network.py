"""The ``.onnx`` network files the engine plays from: each shipped one is the export of the
shipped ``.pt`` beside it (same priors and WDL on 500 positions, its metadata naming that
file's SHA-256), ``zerochess export`` writes them, and a file that is not one is refused
with a clear reason."""

import hashlib
import json

import numpy as np
import pytest

pytest.importorskip("onnx")

from click.testing import CliRunner  # noqa: E402
from test_evaluator import assert_same_plies, batch_of, random_fens  # noqa: E402
from zerochess._version import __version__  # noqa: E402
from zerochess.cli import main  # noqa: E402
from zerochess.neural.api import load_network  # noqa: E402
from zerochess.neural.backends import make_evaluator  # noqa: E402
from zerochess.neural.errors import CheckpointError  # noqa: E402
from zerochess.neural.onnx_evaluator import OnnxEvaluator  # noqa: E402
from zerochess.neural.onnx_network import FORMAT, read_onnx_network  # noqa: E402
from zerochess.neural.shipped import shipped_network_path  # noqa: E402
from zerochess.neural.torch_evaluator import TorchEvaluator  # noqa: E402

NAMES = ["default", "zero"]


@pytest.mark.parametrize("name", NAMES)
def test_the_shipped_graphs_run_each_linear_as_one_gemm(name):
    """The export's speed-ups stay in the shipped files (docs/network.md, "Gemm rows"): every
    Linear over the tokens is one Gemm with its bias inside (a batched MatMul and a bias Add
    took 1.13x the time at the engine's batch of 8), and no op computes the attention scale
    from a shape at run time (Shape, Gather, Cast, Pow and a Mul ONNX Runtime cannot fold)."""
    import onnx

    graph = onnx.load(str(shipped_network_path(name, ".onnx"))).graph
    ops = [n.op_type for n in graph.node]
    config = read_onnx_network(shipped_network_path(name, ".onnx")).config
    linears = 4 * config["n_layers"] + 2  # qkv, proj, fc1, fc2 per layer; the policy's two
    assert ops.count("Gemm") >= linears
    assert "Pow" not in ops and "Shape" not in ops
    weights = {i.name for i in graph.initializer}
    matmuls = [n for n in graph.node if n.op_type == "MatMul" and n.input[1] in weights]
    assert not any(n.input[0] in {m.output[0] for m in matmuls} for n in graph.node
                   if n.op_type == "Add"), "a weight MatMul followed by a bias Add"


@pytest.fixture(scope="module")
def positions():
    return batch_of(random_fens(499, seed=29))  # 500 with the under-promotion position


def _same_outputs(torch_ev, onnx_ev, batch):
    tokens, legal, offsets = batch
    ref_p, ref_w, *ref_left = torch_ev.evaluate(tokens, legal, offsets)
    priors, wdl, *left = onnx_ev.evaluate(tokens, legal, offsets)
    assert_same_plies(ref_left, left)  # the moves-left output, where the network has one
    assert priors.shape == ref_p.shape and wdl.shape == ref_w.shape == (len(offsets) - 1, 3)
    assert np.abs(priors - ref_p).max() < 1e-4
    assert np.abs(wdl - ref_w).max() < 1e-4
    counts = np.diff(offsets)  # not vacuous: the priors are far from uniform
    assert np.abs(ref_p - np.repeat(1.0 / counts, counts)).max() > 1e-2


@pytest.mark.parametrize("name", NAMES)
def test_the_shipped_onnx_is_the_export_of_the_shipped_pt(name, positions):
    pt, onnx_path = shipped_network_path(name, ".pt"), shipped_network_path(name, ".onnx")
    network = read_onnx_network(onnx_path, threads=1)
    assert network.metadata["source_sha256"] == hashlib.sha256(pt.read_bytes()).hexdigest()
    torch_network = load_network(pt, "cpu")
    assert network.config == torch_network.config.to_dict()
    assert network.metadata["training"] == torch_network.metadata
    _same_outputs(TorchEvaluator(torch_network, "cpu", precision="fp32"),
                  OnnxEvaluator(network), positions)


@pytest.mark.parametrize("name", NAMES)
def test_the_engine_plays_the_shipped_onnx_files(name):
    evaluator = make_evaluator(name, device="cpu", threads=1)
    assert isinstance(evaluator, OnnxEvaluator)
    assert evaluator.source == str(shipped_network_path(name, ".onnx"))
    assert evaluator.cache_path is None  # nothing exported, nothing cached


def test_export_writes_a_file_with_the_checkpoints_outputs_and_facts(tmp_path, positions):
    out = tmp_path / "r.onnx"
    result = CliRunner().invoke(main, ["export", "zero", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"wrote {out} (")
    import onnx

    props = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    assert props["format"] == FORMAT and props["format_version"] == "1"
    assert (props["policy_size"], props["seq_len"]) == ("4168", "72")
    assert props["zerochess_version"] == __version__
    assert json.loads(props["config"])["d_model"] == 64
    # the fresh export gives the committed file's outputs
    committed = OnnxEvaluator(read_onnx_network(shipped_network_path("zero", ".onnx")))
    fresh = OnnxEvaluator(read_onnx_network(out))
    tokens, legal, offsets = positions
    for a, b in zip(committed.evaluate(tokens, legal, offsets), fresh.evaluate(tokens, legal, offsets)):
        assert np.abs(a - b).max() < 1e-5
    # and WeightsFile takes it by path
    assert make_evaluator(str(out), device="cpu").source == str(out)


def test_export_refuses_what_is_not_a_checkpoint(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    result = CliRunner().invoke(main, ["export", str(bad), str(tmp_path / "out.onnx")])
    assert result.exit_code == 1
    assert "truncated or corrupt file" in result.output
    assert not (tmp_path / "out.onnx").exists()


def _foreign_onnx(path):
    """A valid ONNX model that is not a zerochess network: one Identity node."""
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "foreign", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def _altered(path, change):
    """The shipped network with its metadata changed by ``change(props)``."""
    import onnx

    model = onnx.load(str(shipped_network_path("zero", ".onnx")))
    props = {p.key: p.value for p in model.metadata_props}
    change(props)
    del model.metadata_props[:]
    for k, v in props.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = k, v
    onnx.save(model, str(path))


def bad_onnx_file(tmp_path, kind):
    """A file that WeightsFile must refuse, and the reason the engine should give."""
    path = tmp_path / f"{kind}.onnx"
    shipped = shipped_network_path("default", ".onnx").read_bytes()
    if kind == "missing":
        return tmp_path / "no" / "such.onnx", "no such file"
    if kind == "empty":
        path.write_bytes(b"")
        return path, "empty file"
    if kind == "truncated":
        path.write_bytes(shipped[: len(shipped) // 2])
        return path, "not an ONNX model onnxruntime can load"
    if kind == "random":
        path.write_bytes(bytes(range(256)) * 40)
        return path, "not an ONNX model onnxruntime can load"
    if kind == "foreign":
        _foreign_onnx(path)
        return path, "an ONNX model, but not a zerochess network"
    if kind == "newer":
        _altered(path, lambda p: p.update(format_version="2"))
        return path, "format version '2'; this zerochess reads version 1"
    if kind == "other-encoding":
        _altered(path, lambda p: p.update(encoding="zerochess-tokens-72-v9"))
        return path, "encoding 'zerochess-tokens-72-v9' is not one this zerochess reads"
    if kind == "threats-mislabelled":  # says version 2 where its network reads version 1
        _altered(path, lambda p: p.update(encoding="zerochess-tokens-72-v2-threats"))
        return path, "its config's threat_inputs does not match its encoding"
    if kind == "altered":
        def scale(p):
            probe = json.loads(p["probe"])
            probe["wdl"] = [[w[2], w[1], w[0]] for w in probe["wdl"]]
            p["probe"] = json.dumps(probe)
        _altered(path, scale)
        return path, "its outputs differ from those recorded at export"
    raise ValueError(kind)


BAD_KINDS = ["missing", "empty", "truncated", "random", "foreign", "newer", "other-encoding",
             "threats-mislabelled", "altered"]


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_a_file_that_is_not_a_zerochess_onnx_network_is_refused_with_the_reason(tmp_path, kind):
    path, reason = bad_onnx_file(tmp_path, kind)
    with pytest.raises(CheckpointError) as raised:
        read_onnx_network(path)
    assert raised.value.path == str(path)
    assert raised.value.problem.startswith(reason), raised.value.problem
