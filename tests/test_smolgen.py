"""Smolgen (``NetworkConfig.smolgen``): attention biases generated from the position.

Growing it keeps a network's function (torch and ONNX), it learns from the first step, it
draws no random numbers from the rest of the network, both attention paths and the ONNX
export compute it alike, and networks without it keep their config dicts and files."""

import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from test_evaluator import assert_same_plies, batch_of, random_fens
from zerochess.chess.layout import SEQ_LEN, VOCAB_SIZE
from zerochess.chess.threats import network_tokens
from zerochess.neural.api import Network, fresh_network, load_network, shipped_network_path
from zerochess.neural.checkpoint import load_checkpoint, save_checkpoint
from zerochess.neural.models.transformer import GROWABLE, SMOLGEN_COMPRESS, deepen, grow
from zerochess.neural.network import NetworkConfig, flops_per_position, param_count

G = 16  # the gen width benchmarks/bench_smolgen.py measures: 8.7% more FLOPs for tiny


@pytest.fixture(autouse=True)
def one_thread():
    """The tests' networks are tiny: one thread, and the machine's other cores stay free."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def tokens_of(n: int, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, VOCAB_SIZE, (n, SEQ_LEN), dtype=torch.uint8,
                         generator=torch.Generator().manual_seed(seed))


def outputs(model, tokens, train: bool = False):
    """policy, WDL (and plies left with the head) without gradients."""
    with torch.no_grad():
        return model.train(train).forward_all(tokens)[:2 + model.config.moves_left]


def assert_equal_outputs(a, b, atol: float = 0.0, rtol: float = 0.0):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        torch.testing.assert_close(x, y, atol=atol, rtol=rtol)


def grown_zero(**changes):
    """The shipped ``zero`` network (trained weights: attention that matters, outputs far
    from uniform, unlike a fresh network's) grown with ``changes``; and the original."""
    plain = load_network(shipped_network_path("zero"), "cpu").model
    return grow(plain, **changes), plain


def randomise_smolgen(model, std: float = 0.5, seed: int = 1) -> None:
    """The shared matrix off zero, as after training: every bias then moves the logits."""
    with torch.no_grad():
        model.smolgen.shared.weight.normal_(0, std, generator=torch.Generator().manual_seed(seed))


def step(model, tokens, opt) -> None:
    """One optimiser step on a WDL and policy cross-entropy towards fixed random targets."""
    g = torch.Generator().manual_seed(7)
    n = tokens.shape[0]
    policy, wdl = model.train()(tokens)
    loss = (torch.nn.functional.cross_entropy(wdl, torch.randint(0, 3, (n,), generator=g))
            + torch.nn.functional.cross_entropy(policy, torch.randint(0, 4096, (n,), generator=g)))
    opt.zero_grad()
    loss.backward()
    opt.step()


@pytest.mark.parametrize("name", ["default", "zero"])
def test_growing_smolgen_keeps_the_shipped_networks_function(name):
    """Both shipped networks (default: attention biases, threat inputs and a moves-left head;
    zero: none of them) grown with smolgen answer bit for bit as before."""
    model = load_network(shipped_network_path(name), "cpu").model
    grown = grow(model, smolgen=G)
    assert grown.config.smolgen == G and model.config.smolgen == 0
    assert not grown.smolgen.shared.weight.any()
    board_tokens = batch_of(random_fens(8, seed=3))[0]  # real positions, version 1
    tokens = torch.from_numpy(network_tokens(board_tokens, model.config.threat_inputs))
    assert_equal_outputs(outputs(model, tokens), outputs(grown, tokens))
    # the training path (SDPA) too, within its rounding: with a (B, H, T, T) mask it may
    # pick another kernel than without one (or with an (H, T, T) one)
    assert_equal_outputs(outputs(model, tokens, train=True), outputs(grown, tokens, train=True),
                         atol=1e-5, rtol=1e-4)
    with pytest.raises(ValueError, match="switches on what is off"):
        grow(grown, smolgen=8)
    assert "smolgen" in GROWABLE


def test_the_shared_matrix_learns_from_the_first_step_and_then_every_part_does():
    model = grow(fresh_network("tiny", seed=2, dropout=0.0), smolgen=G)
    tokens = tokens_of(6, seed=4)
    policy, wdl = model.train()(tokens)
    (policy.logsumexp(1).sum() - policy[:, 100].sum() + wdl[:, 0].sum()).backward()
    assert model.smolgen.shared.weight.grad.abs().sum() > 0
    # the layers' parts feed only the (zero) shared matrix: no gradient yet; one step on,
    # every part has one
    assert not model.smolgen.layers[0].compress.weight.grad.any()
    model.zero_grad()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    step(model, tokens, opt)
    assert model.smolgen.shared.weight.abs().sum() > 0
    opt.zero_grad()
    policy, wdl = model.train()(tokens)
    (policy.logsumexp(1).sum() - policy[:, 100].sum() + wdl[:, 0].sum()).backward()
    dead = [n for n, p in model.smolgen.named_parameters() if p.grad is None or not p.grad.any()]
    assert dead == []


def test_training_the_smolgen_parameters_alone_changes_the_outputs():
    """The biases learn: with every other parameter frozen, a few steps move the network's
    outputs, and the biases they generate differ from position to position."""
    torch.manual_seed(5)
    model, _ = grown_zero(smolgen=G)
    tokens = tokens_of(8, seed=6)
    before = outputs(model, tokens)
    for name, p in model.named_parameters():
        p.requires_grad_(name.startswith("smolgen."))
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    for _ in range(5):
        step(model, tokens, opt)
    after = outputs(model, tokens)
    assert all((a - b).abs().max() > 1e-2 for a, b in zip(before, after))
    with torch.no_grad():
        h = model.layers[0].ln1(model.embed(tokens)[0].reshape(-1, model.config.d_model))
        bias = model.smolgen(h, 0)  # (B, H, T, T)
    assert bias.shape == (8, 4, SEQ_LEN, SEQ_LEN)
    assert (bias[0] - bias[1]).abs().max() > 1e-3


@pytest.mark.parametrize("extra", [{}, {"attention_bias": True, "threat_inputs": True,
                                        "moves_left": True, "value_squares": 4}])
def test_smolgen_draws_no_random_numbers_from_the_rest_of_the_network(extra):
    """From one seed, a network with smolgen gets every weight the network without it gets
    (smolgen is built last), and so, its shared matrix being zero, the same function."""
    plain = fresh_network("tiny", seed=11, **extra)
    with_smolgen = fresh_network("tiny", seed=11, smolgen=G, **extra)
    a, b = plain.state_dict(), with_smolgen.state_dict()
    assert set(b) - set(a) == {k for k in b if k.startswith("smolgen.")} != set()
    assert set(a) <= set(b)
    for k, v in a.items():
        assert torch.equal(v, b[k]), k
    tokens = tokens_of(4, seed=12)
    if extra:
        flags = torch.randint(0, 4, tokens.shape, dtype=torch.uint8,
                              generator=torch.Generator().manual_seed(13))
        tokens = tokens + 44 * flags  # version-2 tokens: threat flags on the squares
        tokens[:, 64:] %= 44
    assert_equal_outputs(outputs(plain.eval(), tokens), outputs(with_smolgen.eval(), tokens))


def test_both_attention_paths_agree_with_smolgen_and_it_changes_the_outputs():
    """SDPA (training, a (B, H, T, T) float mask) and the explicit matmuls of CPU inference
    (the bias broadcast) compute the same with smolgen and a static bias both on."""
    torch.manual_seed(8)
    model, plain = grown_zero(smolgen=G, attention_bias=True)
    randomise_smolgen(model, std=0.2)
    with torch.no_grad():
        for layer in model.layers:
            layer.attn_bias.normal_(0, 1.0)
    tokens = tokens_of(5, seed=9)
    train_out, eval_out = outputs(model, tokens, train=True), outputs(model, tokens)
    assert_equal_outputs(train_out, eval_out, atol=1e-5, rtol=1e-4)
    plain = grow(plain, attention_bias=True)  # the same static biases, no smolgen
    plain.load_state_dict({k: v for k, v in model.state_dict().items()
                           if not k.startswith("smolgen.")})
    for a, b in zip(eval_out, outputs(plain, tokens)):
        assert (a - b).abs().max() > 1e-2


def test_deepening_a_smolgen_network_keeps_its_function():
    model = grow(fresh_network("tiny", seed=10, dropout=0.0), smolgen=G)
    randomise_smolgen(model)
    deeper = deepen(model, 3)
    assert len(deeper.smolgen.layers) == 3 and deeper.config.smolgen == G
    tokens = tokens_of(5, seed=1)
    assert_equal_outputs(outputs(model, tokens), outputs(deeper, tokens))


def test_config_round_trip_validation_and_unchanged_dicts(tmp_path):
    cfg = NetworkConfig.preset("tiny", smolgen=G)
    assert cfg.to_dict()["smolgen"] == G and NetworkConfig.from_dict(cfg.to_dict()) == cfg
    assert "smolgen" in NetworkConfig.OMITTED_AT_DEFAULT
    plain = NetworkConfig.preset("tiny")
    assert "smolgen" not in plain.to_dict()  # written as before the field existed
    assert NetworkConfig.from_dict(plain.to_dict()).smolgen == 0
    with pytest.raises(ValueError, match="smolgen must be 0 or positive"):
        NetworkConfig.preset("tiny", smolgen=-1)
    # a checkpoint round trip keeps the option and the weights
    model = fresh_network("tiny", seed=3, smolgen=G)
    randomise_smolgen(model)
    save_checkpoint(tmp_path / "s.pt", model, {})
    loaded, _ = load_checkpoint(tmp_path / "s.pt")
    assert loaded.config == model.config
    tokens = tokens_of(3)
    assert_equal_outputs(outputs(model.eval(), tokens), outputs(loaded, tokens))


@pytest.mark.parametrize("name", ["default", "zero"])
def test_the_shipped_networks_config_dicts_are_unchanged(name):
    """The shipped networks' configs write no smolgen key: the default checkpoint's stored
    dict and both .onnx files' metadata are what ``to_dict`` writes now (``zero``'s .pt
    predates the architecture field and others, which any re-save adds anyway)."""
    path = shipped_network_path(name)
    stored = torch.load(path, map_location="cpu", weights_only=True)["config"]
    model, _ = load_checkpoint(path)
    written = model.config.to_dict()
    assert "smolgen" not in written and "smolgen" not in stored
    if name == "default":
        assert written == stored
    onnx = pytest.importorskip("onnx")
    props = {p.key: p.value for p in onnx.load(str(path.with_suffix(".onnx"))).metadata_props}
    assert json.loads(props["config"]) == written


def test_flops_and_parameters():
    """Smolgen's matmuls for tiny at G = 16: 8.7% of the network's FLOPs (about Lc0's 10%),
    most of them the shared matrix's; its parameters (the shared matrix alone is 16 x 72 x 72)
    more than double tiny's."""
    tiny, with_smolgen = NetworkConfig.preset("tiny"), NetworkConfig.preset("tiny", smolgen=G)
    T, C, H, K, L = SEQ_LEN, 64, 4, SMOLGEN_COMPRESS, 2
    extra = L * (2 * T * C * K + 2 * T * K * C + 2 * C * H * G + 2 * H * G * T * T)
    assert flops_per_position(with_smolgen) - flops_per_position(tiny) == extra == 1_638_400
    assert 0.08 < extra / flops_per_position(tiny) < 0.10
    per_layer = C * K + (T * K * C + C) + 2 * C + (C * H * G + H * G) + 2 * G
    assert param_count(with_smolgen) - param_count(tiny) == L * per_layer + G * T * T
    model = fresh_network("tiny", smolgen=G, attention_bias=True).eval()
    with FlopCounterMode(display=False) as counter, torch.inference_mode():
        model(tokens_of(2))
    assert counter.get_total_flops() // 2 == flops_per_position(model.config)


def test_a_warm_start_grows_smolgen_into_a_checkpoint_with_its_function(tmp_path):
    from zerochess.train.supervised.config import SuperviseConfig
    from zerochess.train.supervised.warmstart import initial_model

    start = grow(fresh_network("tiny", seed=4, dropout=0.0), attention_bias=True)
    save_checkpoint(tmp_path / "start.pt", start, {})
    cfg = SuperviseConfig(init_from=str(tmp_path / "start.pt"), smolgen=G, reach_mask=None)
    model = initial_model(cfg)
    assert model.config.smolgen == G and model.config.attention_bias
    tokens = tokens_of(5, seed=2)
    assert_equal_outputs(outputs(start.eval(), tokens), outputs(model, tokens))
    # a run from scratch builds it too; a checkpoint with smolgen is not regrown or dropped
    assert initial_model(SuperviseConfig(smolgen=G)).config.smolgen == G
    save_checkpoint(tmp_path / "grown.pt", model, {})
    again = initial_model(replace(cfg, init_from=str(tmp_path / "grown.pt")))
    assert again.config.smolgen == G
    for other in (0, 8):
        with pytest.raises(ValueError, match="smolgen of gen width 16"):
            initial_model(replace(cfg, init_from=str(tmp_path / "grown.pt"), smolgen=other))


def test_grown_shipped_network_exports_to_onnx_faithfully(tmp_path):
    """The shipped network grown with smolgen: its ONNX export (dynamic batch) answers as
    torch does, at zero (the shipped network's outputs) and with a trained-like matrix."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from zerochess.neural.onnx_evaluator import OnnxEvaluator
    from zerochess.neural.torch_evaluator import TorchEvaluator

    plain = load_network(shipped_network_path("default"), "cpu")
    model = grow(plain.model, smolgen=G)
    grown = Network(model)
    for size in (1, 13):
        batch = batch_of(random_fens(size - 1, seed=size))
        ref = TorchEvaluator(plain, "cpu", precision="fp32").evaluate(*batch)
        got = OnnxEvaluator(grown, threads=1, cache=tmp_path).evaluate(*batch)
        assert len(got) == len(ref) == 3  # priors, WDL, plies left
        assert_close_outputs(ref, got)
    randomise_smolgen(model, std=0.1)
    batch = batch_of(random_fens(20, seed=9))
    ref = TorchEvaluator(grown, "cpu", precision="fp32").evaluate(*batch)
    got = OnnxEvaluator(grown, threads=1, cache=tmp_path).evaluate(*batch)
    assert_close_outputs(ref, got)
    before = TorchEvaluator(plain, "cpu", precision="fp32").evaluate(*batch)
    assert np.abs(before[0] - got[0]).max() > 1e-2  # smolgen is in the exported graph


def assert_close_outputs(ref, got):
    """Priors and WDL within the ONNX parity tests' 1e-4; plies as test_evaluator's."""
    for a, b in zip(ref[:2], got[:2]):
        assert a.shape == b.shape and np.abs(a - b).max() < 1e-4
    assert_same_plies(ref[2:], got[2:])
