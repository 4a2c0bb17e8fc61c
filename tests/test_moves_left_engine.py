"""A network with a moves-left head in the engine: its ``.onnx`` file has a third output
``moves_left`` that the metadata and the load-time probe cover, and both evaluators return
the plies left as a third array (the evaluator ABI); networks without the head answer as
before, with two."""

import json

import numpy as np
import pytest
import torch

pytest.importorskip("onnx")

from test_evaluator import batch_of, random_fens  # noqa: E402
from zerochess.neural.checkpoint import save_checkpoint  # noqa: E402
from zerochess.neural.errors import CheckpointError  # noqa: E402
from zerochess.neural.export import export_network_file  # noqa: E402
from zerochess.neural.network import NetworkConfig, build_model  # noqa: E402
from zerochess.neural.onnx_evaluator import OnnxEvaluator  # noqa: E402
from zerochess.neural.onnx_network import read_onnx_network  # noqa: E402
from zerochess.neural.torch_evaluator import TorchEvaluator  # noqa: E402


def headed_model(seed=5):
    """A tiny network with the head whose plies vary by position (random last layer)."""
    torch.manual_seed(seed)
    model = build_model(NetworkConfig.preset("tiny", moves_left=True, dropout=0.0)).eval()
    with torch.no_grad():
        model.moves_left_head.fc2.weight.normal_(0, 1.0)
        model.moves_left_head.fc2.bias.fill_(1.0)
    return model


@pytest.fixture(scope="module")
def batch():
    return batch_of(random_fens(40, seed=3))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ml")
    model = headed_model()
    save_checkpoint(folder / "ml.pt", model, {"note": "test"})
    export_network_file(folder / "ml.pt", folder / "ml.onnx")
    return model, folder / "ml.onnx"


def test_torch_evaluator_returns_the_heads_plies(batch):
    model = headed_model()
    tokens, legal, offsets = batch
    priors, wdl, plies = TorchEvaluator(model, "cpu", precision="fp32").evaluate(*batch)
    with torch.no_grad():
        _, _, want = model.forward_all(torch.from_numpy(tokens))
    assert plies.dtype == np.float32 and plies.shape == (len(offsets) - 1,)
    assert np.allclose(plies, want.numpy(), atol=1e-5) and plies.std() > 0.1
    assert (plies >= 0).all()
    # The same network without the head: two outputs, the same priors and WDL.
    plain = build_model(NetworkConfig.preset("tiny", dropout=0.0)).eval()
    plain.load_state_dict({k: v for k, v in model.state_dict().items()
                           if not k.startswith("moves_left_head.")})
    out = TorchEvaluator(plain, "cpu", precision="fp32").evaluate(*batch)
    assert len(out) == 2
    assert np.array_equal(out[0], priors) and np.array_equal(out[1], wdl)
    empty = TorchEvaluator(model, "cpu").evaluate(np.zeros((0, 72), np.uint8),
                                                  np.zeros(0, np.int32), np.zeros(1, np.int32))
    assert [a.shape for a in empty] == [(0,), (0, 3), (0,)]


def test_the_onnx_file_has_a_moves_left_output_checked_at_load(exported, batch):
    model, path = exported
    network = read_onnx_network(path, threads=1)
    assert network.moves_left and network.config["moves_left"] is True
    assert [o.name for o in network.session.get_outputs()] == ["policy", "wdl", "moves_left"]
    ref = TorchEvaluator(model, "cpu", precision="fp32").evaluate(*batch)
    got = OnnxEvaluator(network).evaluate(*batch)
    assert len(got) == 3
    for a, b in zip(got, ref):
        assert a.shape == b.shape and np.abs(a - b).max() < 1e-3
    # An evaluator exporting the torch model on the fly gives the same three.
    fly = OnnxEvaluator(model, threads=1, cache=False).evaluate(*batch)
    assert len(fly) == 3 and np.abs(fly[2] - ref[2]).max() < 1e-3


def test_a_file_whose_plies_differ_from_its_probe_is_refused(exported, tmp_path):
    import onnx

    _, path = exported
    proto = onnx.load(str(path))
    for entry in proto.metadata_props:
        if entry.key == "probe":
            probe = json.loads(entry.value)
            assert len(probe["moves_left"]) == 5
            probe["moves_left"] = [p + 3.0 for p in probe["moves_left"]]
            entry.value = json.dumps(probe)
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(proto.SerializeToString())
    with pytest.raises(CheckpointError, match="differ from those recorded"):
        read_onnx_network(bad)
    # A config that claims a head the graph lacks is named too.
    proto = onnx.load(str(path))
    for entry in proto.metadata_props:
        if entry.key == "config":
            config = json.loads(entry.value)
            del config["moves_left"]
            entry.value = json.dumps(config)
    lying = tmp_path / "lying.onnx"
    lying.write_bytes(proto.SerializeToString())
    with pytest.raises(CheckpointError, match="outputs"):
        read_onnx_network(lying)


def test_the_engine_plays_a_network_with_the_head_and_shows_m(exported):
    """Through the UCI pipes: WeightsFile is the exported file, the search runs with the
    plies left, and VerboseMoveStats shows Lc0's (M: ) on every line, numbers where visited."""
    from test_uci_verbose_stats import nibbler_table
    from uci_process import UciProcess

    _, path = exported
    engine = UciProcess()
    try:
        engine.send("uci")
        engine.expect("uciok", timeout=15)
        for name, value in (("WeightsFile", str(path)), ("VerboseMoveStats", "true"),
                            ("Threads", "1")):
            engine.send(f"setoption name {name} value {value}")
        engine.sync(timeout=60)
        engine.send("position startpos moves e2e4")
        engine.send("go nodes 200")
        lines = engine.expect("bestmove", timeout=60)
    finally:
        engine.close()
    stats = [line for line in lines if line.startswith("info string ")]
    assert stats and all("(M: " in line for line in stats)
    table, _ = nibbler_table(stats)
    visited = [row for row in table.values() if row["n"]]
    assert visited and all(row["m"] is not None and row["m"] >= 0 for row in visited)
    assert not any("error" in line for line in lines)
