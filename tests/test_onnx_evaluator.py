"""The ONNX Runtime backend: faithful to torch fp32 on the shipped networks, the ABI, the
cache of exported models (corrupt files rebuilt), and the runtime choice (UCI ``Backend``)."""

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

from test_evaluator import assert_same_plies, batch_of, random_fens  # noqa: E402
from uci_process import UciProcess  # noqa: E402
from zerochess.neural.api import load_network, shipped_network_path  # noqa: E402
from zerochess.neural.backends import make_evaluator, resolve_runtime  # noqa: E402
from zerochess.neural.onnx_evaluator import OnnxEvaluator, network_key  # noqa: E402
from zerochess.neural import torch_evaluator  # noqa: E402
from zerochess.chess.layout import SEQ_LEN  # noqa: E402
from zerochess.neural.torch_evaluator import TorchEvaluator  # noqa: E402
from zerochess.uci.options import OptionValues  # noqa: E402
from zerochess.uci.player import Player  # noqa: E402


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="module", params=["default", "zero"])
def pair(request, cache):
    """(torch fp32 evaluator, onnx evaluator) of one shipped network."""
    network = load_network(shipped_network_path(request.param), "cpu")
    return (TorchEvaluator(network, "cpu", precision="fp32"),
            OnnxEvaluator(network, threads=1, cache=cache))


def kl(ref, p, offsets):
    terms = ref * (np.log(np.maximum(ref, 1e-30)) - np.log(np.maximum(p, 1e-30)))
    return np.add.reduceat(terms.astype(np.float64), offsets[:-1])


@pytest.mark.parametrize("size", [1, 7, 64, 130])
def test_outputs_match_torch_fp32_on_real_positions(pair, size):
    reference, onnx = pair
    tokens, legal, offsets = batch_of(random_fens(size - 1, seed=size))
    ref_p, ref_w, *ref_left = reference.evaluate(tokens, legal, offsets)
    priors, wdl, *left = onnx.evaluate(tokens, legal, offsets)
    # a moves-left network answers a third output in both runtimes, a plain one does not
    assert len(left) == len(ref_left) == int(reference.moves_left) == int(onnx.moves_left)
    assert all(x.dtype == np.float32 and x.shape == (size,) for x in left)
    assert_same_plies(ref_left, left)
    assert priors.dtype == np.float32 and priors.shape == ref_p.shape
    assert wdl.dtype == np.float32 and wdl.shape == (size, 3)
    assert np.abs(priors - ref_p).max() < 1e-4
    assert kl(ref_p, priors, offsets).max() < 1e-5
    assert np.abs(wdl - ref_w).max() < 1e-4
    # the priors are not uniform (a network that ignored its input would pass vacuously)
    counts = np.diff(offsets)
    assert np.abs(ref_p - np.repeat(1.0 / counts, counts)).max() > 1e-2


def test_attention_biases_and_spatial_value_export_faithfully(tmp_path):
    """A network with learnt attention biases and a spatial value path (non-zero, as after
    training) runs the same in ONNX Runtime as in torch fp32."""
    import torch

    from zerochess.neural.api import Network
    from zerochess.neural.models.transformer import grow

    plain = load_network(shipped_network_path("zero"), "cpu")  # neither option: grow both
    model = grow(plain.model, attention_bias=True, value_squares=8)
    with torch.no_grad():
        for layer in model.layers:
            layer.attn_bias.normal_(0, 1.0)
        model.value_squares[-1].weight.normal_(0, 0.1)
    network = Network(model)
    batch = batch_of(random_fens(20, seed=9))
    ref_p, ref_w = TorchEvaluator(network, "cpu", precision="fp32").evaluate(*batch)
    plain_p, plain_w = TorchEvaluator(plain, "cpu", precision="fp32").evaluate(*batch)
    priors, wdl = OnnxEvaluator(network, threads=1, cache=tmp_path).evaluate(*batch)
    assert np.abs(priors - ref_p).max() < 1e-4 and np.abs(wdl - ref_w).max() < 1e-4
    # the new parts are in the exported graph
    assert np.abs(plain_p - ref_p).max() > 1e-2 and np.abs(plain_w - ref_w).max() > 1e-2


def test_priors_are_distributions_over_the_legal_moves(pair):
    _, onnx = pair
    tokens, legal, offsets = batch_of(random_fens(99, seed=3))
    priors, wdl, *_ = onnx.evaluate(tokens, legal, offsets)
    assert len(priors) == len(legal) and (priors >= 0).all()
    np.testing.assert_allclose(np.add.reduceat(priors, offsets[:-1]), 1.0, atol=1e-5)
    np.testing.assert_allclose(wdl.sum(axis=1), 1.0, atol=1e-5)


def test_policy_temperature_matches_torch_and_keeps_the_session(pair):
    reference, onnx = pair
    tokens, legal, offsets = batch_of(random_fens(20, seed=4))
    session = onnx.session
    cold = onnx.evaluate(tokens, legal, offsets)[0]
    reference.policy_temperature = onnx.policy_temperature = 2.5
    try:
        ref_p = reference.evaluate(tokens, legal, offsets)[0]
        hot = onnx.evaluate(tokens, legal, offsets)[0]
    finally:
        reference.policy_temperature = onnx.policy_temperature = 1.0
    assert onnx.session is session
    assert np.abs(hot - ref_p).max() < 1e-4
    assert np.abs(hot - cold).max() > 1e-2  # the temperature did change the priors


def test_abi_edge_cases(pair):
    _, onnx = pair
    priors, wdl, *left = onnx.evaluate(np.zeros((0, SEQ_LEN), np.uint8),
                                       np.zeros(0, np.int32), np.zeros(1, np.int32))
    assert priors.shape == (0,) and wdl.shape == (0, 3)
    assert [x.shape for x in left] == [(0,)] * int(onnx.moves_left)
    tokens, legal, offsets = batch_of(random_fens(2, seed=5))
    with pytest.raises(ValueError, match="at least one legal move"):
        onnx.evaluate(tokens, legal[:0], np.zeros(4, np.int32))
    with pytest.raises(ValueError):
        onnx.evaluate(tokens.astype(np.int64), legal, offsets)


# -- the cache of exported models -------------------------------------------------------------
@pytest.fixture(scope="module")
def network():
    return load_network(None, "cpu")


def test_the_second_load_comes_from_the_cache(network, tmp_path):
    first = OnnxEvaluator(network, cache=tmp_path)
    second = OnnxEvaluator(network, cache=tmp_path)
    assert (first.cache_hit, second.cache_hit) == (False, True)
    assert [p.name for p in tmp_path.iterdir()] == [first.cache_path.name]
    batch = batch_of(random_fens(30, seed=6))
    np.testing.assert_array_equal(first.evaluate(*batch)[0], second.evaluate(*batch)[0])


def test_the_key_is_the_networks_content(network):
    zero = load_network(str(shipped_network_path("zero")), "cpu")
    assert network_key(network.model) != network_key(zero.model)
    assert network_key(network.model) == network_key(load_network(None, "cpu").model)


def _corrupt(path, how, other_bytes):
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "flipped":
        i = len(data) - 1000  # inside the ONNX weights: only the checksum sees it
        path.write_bytes(data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:])
    elif how == "garbage":
        path.write_bytes(b"\x00" * 5000)
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "another network":  # a valid file, checksum and all, of the zero network
        path.write_bytes(other_bytes)


@pytest.mark.parametrize("how", ["truncated", "flipped", "garbage", "empty", "another network"])
def test_a_corrupt_cache_file_is_detected_and_rebuilt(network, tmp_path, how):
    zero = load_network(str(shipped_network_path("zero")), "cpu")
    other = OnnxEvaluator(zero, cache=tmp_path / "zero").cache_path.read_bytes()
    path = OnnxEvaluator(network, cache=tmp_path).cache_path
    good = path.read_bytes()
    _corrupt(path, how, other)
    assert path.read_bytes() != good
    batch = batch_of(random_fens(40, seed=7))
    rebuilt = OnnxEvaluator(network, cache=tmp_path)
    assert not rebuilt.cache_hit
    ref_p, ref_w, *ref_left = TorchEvaluator(network, "cpu", precision="fp32").evaluate(*batch)
    priors, wdl, *left = rebuilt.evaluate(*batch)
    assert np.abs(priors - ref_p).max() < 1e-4 and np.abs(wdl - ref_w).max() < 1e-4
    assert_same_plies(ref_left, left)
    assert path.read_bytes() == good  # rewritten: the next load is a hit again
    assert OnnxEvaluator(network, cache=tmp_path).cache_hit


def test_an_unwritable_cache_only_costs_the_export(network, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    ev = OnnxEvaluator(network, cache=blocker / "cache")
    assert not ev.cache_hit
    tokens, legal, offsets = batch_of(random_fens(5, seed=8))
    assert np.isfinite(ev.evaluate(tokens, legal, offsets)[0]).all()


def test_old_cache_entries_are_pruned(network, tmp_path, monkeypatch):
    import zerochess.neural.onnx_evaluator as module

    monkeypatch.setattr(module, "CACHE_ENTRIES", 2)
    for i in range(3):
        (tmp_path / f"old{i}.onnxc").write_bytes(b"x")
        module.os.utime(tmp_path / f"old{i}.onnxc", (i, i))  # the 1970s: oldest first
    path = OnnxEvaluator(network, cache=tmp_path).cache_path
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, "old2.onnxc"])


# -- choosing the runtime -----------------------------------------------------------------
def test_make_evaluator_builds_the_runtime_asked_for(cache, monkeypatch):
    monkeypatch.setenv("ZEROCHESS_CACHE_DIR", str(cache))
    assert isinstance(make_evaluator(None, device="cpu", runtime="onnx-fp32"), OnnxEvaluator)
    torch32 = make_evaluator(None, device="cpu", runtime="torch-fp32")
    assert isinstance(torch32, TorchEvaluator) and torch32.precision == "fp32"
    bf16 = make_evaluator(None, device="cpu", runtime="torch-bf16")
    assert isinstance(bf16, TorchEvaluator) and bf16.precision == "bf16"
    with pytest.raises(ValueError, match="runtime must be one of"):
        make_evaluator(None, runtime="tensorrt")
    with pytest.raises(ValueError, match="CPU only"):
        make_evaluator(None, device="cuda", runtime="onnx-fp32")
    with pytest.raises(ValueError, match="CUDA only"):
        make_evaluator(None, device="cpu", runtime="torch-fp16")
    with pytest.raises(ValueError, match="either"):
        make_evaluator(None, device="cpu", runtime="onnx-fp32", precision="fp32")


@pytest.mark.parametrize("native_bf16", [False, True])
def test_auto_is_onnx_on_every_cpu_for_engine_sized_batches(native_bf16, monkeypatch):
    # bf16 is not the default even where the CPU runs it natively (default_precision)
    monkeypatch.setattr(torch_evaluator, "native_bf16", lambda: native_bf16)
    assert resolve_runtime("auto", "cpu") == ("onnx-fp32", "cpu")
    assert resolve_runtime("auto", "cpu", max_batch=128) == ("onnx-fp32", "cpu")
    # self-play's batches of hundreds: torch (ONNX Runtime measured 0.90-0.96x there)
    assert resolve_runtime("auto", "cpu", max_batch=512) == ("torch-fp32", "cpu")


def test_the_backend_option_switches_the_runtime_in_place(cache, monkeypatch):
    monkeypatch.setenv("ZEROCHESS_CACHE_DIR", str(cache))
    player, values = Player(), OptionValues()
    values.set("Backend", "torch-fp32")
    assert player.configure(values) == []
    assert isinstance(player.evaluator, TorchEvaluator)
    values.set("Backend", "onnx-fp32")
    assert player.configure(values) == []
    assert isinstance(player.evaluator, OnnxEvaluator) and player.search.evaluator is player.evaluator
    values.set("Backend", "torch-fp16")  # a valid value this machine cannot run
    if resolve_runtime("auto")[1].startswith("cuda"):
        pytest.skip("torch-fp16 runs here")
    [problem] = player.configure(values)
    assert "with Backend torch-fp16: torch-fp16 runs on CUDA only" in problem
    assert problem.endswith("keeping the shipped network")
    assert values["Backend"] == "onnx-fp32" and isinstance(player.evaluator, OnnxEvaluator)


def test_uci_backend_option_through_pipes(tmp_path, cache, monkeypatch):
    monkeypatch.setenv("ZEROCHESS_CACHE_DIR", str(cache))
    log = tmp_path / "engine.log"
    e = UciProcess()
    try:
        e.send("uci")
        declared = [l for l in e.expect("uciok", timeout=15) if "name Backend " in l]
        assert declared == ["option name Backend type combo default auto var auto var onnx-fp32 "
                            "var torch-fp32 var torch-bf16 var torch-fp16"]
        e.send(f"setoption name LogFile value {log}")
        assert e.sync(timeout=60) == []

        def loaded():
            return [l.split(" evaluator ", 1)[1] for l in log.read_text().splitlines()
                    if " evaluator " in l and l.rstrip().endswith(" s")]

        assert len(loaded()) == 1 and loaded()[0].startswith("OnnxEvaluator(")
        e.send("setoption name Backend value torch-fp32")
        assert e.sync(timeout=60) == []
        assert len(loaded()) == 2 and loaded()[1].startswith("TorchEvaluator(device=cpu, precision=fp32")
        e.send("setoption name Backend value tensorrt")
        lines = e.sync(timeout=60)
        assert lines == ["info string error: option Backend takes one of auto, onnx-fp32, "
                         "torch-fp32, torch-bf16, torch-fp16, not 'tensorrt'"]
        assert len(loaded()) == 2  # nothing reloaded: torch-fp32 is still in use
        e.send("position startpos")
        e.send("go nodes 64")
        assert e.expect("bestmove", timeout=60)[-1].split()[1] != "(none)"
        e.send("setoption name Backend value onnx-fp32")
        assert e.sync(timeout=60) == []
        assert len(loaded()) == 3 and loaded()[2].startswith("OnnxEvaluator(")
    finally:
        e.close()
