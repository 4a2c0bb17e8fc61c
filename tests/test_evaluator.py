"""Evaluator backends against the ABI and against an unbatched fp32 reference."""

import math

import chess
import numpy as np
import pytest
import torch

from zerochess.neural.api import Network, fresh_network, load_network, shipped_network_path
from zerochess.chess.board import Board
from zerochess.neural.checkpoint import CheckpointError
from zerochess.chess.encoding import encode_board, legal_move_indices
from zerochess.neural.backends import make_evaluator
from zerochess.neural.evaluator import Evaluator, UniformEvaluator
from zerochess.chess.layout import SEQ_LEN
from zerochess.neural.torch_evaluator import TorchEvaluator, default_precision, resolve_device
from zerochess.neural.network import POLICY_HEADS


def random_fens(n, seed=0):
    """Positions from seeded random games: openings, middlegames, odd castling/ep states."""
    rng = np.random.default_rng(seed)
    fens, board = [], chess.Board()
    while len(fens) < n:
        if board.is_game_over() or board.ply() >= 80:
            board = chess.Board()
        fens.append(board.fen())
        board.push(rng.choice(list(board.legal_moves)))
    return fens + ["n1n5/1P4k1/8/8/8/8/6Kp/7N b - - 0 1"]  # under-promotions, mirrored


def batch_of(fens):
    boards = [Board(f) for f in fens]
    tokens = np.stack([encode_board(b) for b in boards])
    legal = [legal_move_indices(b) for b in boards]
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in legal])]).astype(np.int32)
    return tokens, np.concatenate(legal).astype(np.int32), offsets


def assert_same_plies(ref_left, left):
    """The moves-left outputs of two evaluators (empty lists without the head) agree."""
    assert len(left) == len(ref_left)
    for ref_plies, plies in zip(ref_left, left):
        assert np.abs(plies - ref_plies).max() < 1e-3 * max(1.0, np.abs(ref_plies).max())


def sharpen(model, seed=0):
    """Variance-preserving weights and x4 output layers: peaked priors, so numeric errors
    show up in KL (the default init's near-uniform outputs would hide them)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2:
                # unit variance for the embedding tables, 1/sqrt(fan_in) for linear layers
                # (the attention head's Linear is also called "embed")
                is_table = "embed" in name and not name.startswith("policy_head.")
                std = 1.0 if is_table else 1 / math.sqrt(p.shape[1])
                p.copy_(torch.randn(p.shape, generator=g) * std)
        head = model.policy_head
        if hasattr(head, "fc2"):     # pooled: the output layer
            head.fc2.weight.mul_(4)
        # attention: query x key of unit-variance vectors is already peaked; scaling it
        # further drives priors below float32's range, which tests nothing
        model.value_head[-1].weight.mul_(4)
    return model


FENS = random_fens(24)
BATCH = batch_of(FENS)


def reference(network, fens, temperature=1.0):
    """Unbatched reference: predict one board at a time, softmax over its legal moves."""
    priors, wdls = [], []
    for fen in fens:
        logits, wdl = network.predict([fen])
        legal = legal_move_indices(Board(fen))
        z = logits[0, legal].astype(np.float64) / temperature
        e = np.exp(z - z.max())
        priors.append(e / e.sum())
        wdls.append(wdl[0])
    return np.concatenate(priors), np.stack(wdls)


def check_distributions(priors, wdl, offsets):
    b = len(offsets) - 1
    assert priors.dtype == np.float32 and priors.shape == (offsets[-1],)
    assert wdl.dtype == np.float32 and wdl.shape == (b, 3)
    assert (priors > 0).all() and (wdl >= 0).all()
    np.testing.assert_allclose(np.add.reduceat(priors, offsets[:-1]), 1.0, atol=1e-5)
    np.testing.assert_allclose(wdl.sum(axis=1), 1.0, atol=1e-5)


def test_uniform_evaluator():
    tokens, legal, offsets = BATCH
    ev = UniformEvaluator()
    assert isinstance(ev, Evaluator)
    priors, wdl = ev.evaluate(tokens, legal, offsets)
    check_distributions(priors, wdl, offsets)
    counts = np.diff(offsets)
    np.testing.assert_allclose(priors, np.repeat(1.0 / counts, counts), rtol=1e-6)
    np.testing.assert_array_equal(wdl, np.tile([0.0, 1.0, 0.0], (len(counts), 1)))


@pytest.mark.parametrize("head", POLICY_HEADS)
@pytest.mark.parametrize("temperature", [1.0, 1.7])
def test_torch_evaluator_equals_unbatched_reference(head, temperature):
    net = Network(fresh_network("tiny", policy_head=head, seed=1))
    if head == "pooled":
        sharpen(net.model)
    ev = TorchEvaluator(net, "cpu", precision="fp32", policy_temperature=temperature)
    assert isinstance(ev, Evaluator)
    tokens, legal, offsets = BATCH
    priors, wdl = ev.evaluate(tokens, legal, offsets)
    check_distributions(priors, wdl, offsets)
    ref_priors, ref_wdl = reference(net, FENS, temperature)
    np.testing.assert_allclose(priors, ref_priors, atol=2e-5)
    np.testing.assert_allclose(wdl, ref_wdl, atol=2e-5)


def test_priors_follow_the_order_of_the_legal_moves():
    """Priors are aligned with legal_idx, whatever order the core lists the moves in."""
    net = Network(sharpen(fresh_network("tiny", seed=2)))
    ev = TorchEvaluator(net, "cpu", precision="fp32")
    tokens, legal, offsets = BATCH
    rng = np.random.default_rng(0)
    perm = np.concatenate([rng.permutation(np.arange(s, e))
                           for s, e in zip(offsets[:-1], offsets[1:])])
    p1, w1 = ev.evaluate(tokens, legal, offsets)
    p2, w2 = ev.evaluate(tokens, legal[perm], offsets)
    np.testing.assert_allclose(p2, p1[perm], atol=1e-6)
    np.testing.assert_allclose(w2, w1, atol=1e-6)
    assert p1.std() > 0.01  # peaked: the permutation check is not comparing uniform priors


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_reach_mask_leaves_the_searchs_priors_unchanged(precision):
    """The mask only touches moves that are never legal, so the priors over the legal moves
    (all the search sees) are those of the same weights without it."""
    plain = sharpen(fresh_network("tiny", seed=5))
    masked = fresh_network("tiny", seed=5, reach_mask=True)
    masked.load_state_dict(plain.state_dict())
    tokens, legal, offsets = BATCH
    p1, w1 = TorchEvaluator(Network(plain), "cpu", precision=precision).evaluate(tokens, legal, offsets)
    p2, w2 = TorchEvaluator(Network(masked), "cpu", precision=precision).evaluate(tokens, legal, offsets)
    check_distributions(p2, w2, offsets)
    np.testing.assert_allclose(p2, p1, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(w2, w1)


# bf16 must meet the faithfulness bar (policy KL < 1e-3, WDL within 1e-2) on this sharpened net;
# int8 dynamic quantisation misses it on peaked policies (measured KL ~1.3e-3 here, 4.5e-3 on
# the benchmark's stress net), so it is only an opt-in and is held to a looser bound.
@pytest.mark.parametrize("precision,max_kl,max_wdl", [("bf16", 1e-3, 1e-2), ("int8", 1e-2, 3e-2)])
def test_reduced_precisions_stay_close_to_fp32(precision, max_kl, max_wdl):
    net = Network(sharpen(fresh_network("tiny", seed=4)))
    tokens, legal, offsets = BATCH
    ref_p, ref_w = TorchEvaluator(net, "cpu", precision="fp32").evaluate(tokens, legal, offsets)
    priors, wdl = TorchEvaluator(net, "cpu", precision=precision).evaluate(tokens, legal, offsets)
    check_distributions(priors, wdl, offsets)
    kl = np.add.reduceat(ref_p * (np.log(ref_p) - np.log(priors)), offsets[:-1])
    assert kl.max() < max_kl
    assert np.abs(wdl - ref_w).max() < max_wdl


@pytest.mark.skipif(not shipped_network_path().is_file(), reason="no shipped network yet")
def test_bf16_on_the_shipped_network_is_an_opt_in_with_the_looser_bound():
    """bf16 keeps the policy (mean KL to fp32 < 1e-3) but not the WDL within the 1e-2 bar
    on the shipped networks' trained weights (r4-bias 1.1e-2, r5 4.0e-2, r6 1.8e-2, r7 2.6e-2 here), which is why
    no CPU defaults to it (``default_precision``); the opt-in's WDL is held to 5e-2."""
    net = load_network(None, device="cpu")
    tokens, legal, offsets = BATCH
    ref_p, ref_w = TorchEvaluator(net, "cpu", precision="fp32").evaluate(tokens, legal, offsets)[:2]
    ev = TorchEvaluator(net, "cpu", precision="bf16")
    priors, wdl = ev.evaluate(tokens, legal, offsets)[:2]
    kl = np.add.reduceat(ref_p * (np.log(ref_p) - np.log(priors)), offsets[:-1])
    assert kl.mean() < 1e-3 and np.abs(wdl - ref_w).max() < 5e-2
    # the final norm and the heads stay fp32 (see TorchEvaluator._prepare)
    assert next(ev.model.policy_head.parameters()).dtype == torch.float32
    assert ev.model.norm.weight.dtype == torch.float32
    assert ev.model.layers[0].qkv.weight.dtype == torch.bfloat16


@pytest.mark.parametrize("native_bf16", [False, True])
def test_default_precision_is_fp32_on_every_cpu(native_bf16, monkeypatch):
    from zerochess.neural import torch_evaluator

    monkeypatch.setattr(torch_evaluator, "native_bf16", lambda: native_bf16)
    assert default_precision(torch.device("cpu")) == "fp32"
    assert default_precision(torch.device("cuda")) == "fp16"
    assert TorchEvaluator(fresh_network(), "cpu").precision == "fp32"


def test_evaluator_leaves_the_callers_model_alone():
    model = fresh_network("tiny")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    TorchEvaluator(model, "cpu", precision="bf16")
    assert all(v.dtype == torch.float32 and torch.equal(v, before[k])
               for k, v in model.state_dict().items())


def test_empty_batch_and_bad_input():
    ev = TorchEvaluator(fresh_network(), "cpu", precision="fp32")
    priors, wdl = ev.evaluate(np.zeros((0, SEQ_LEN), np.uint8), np.zeros(0, np.int32),
                              np.zeros(1, np.int32))
    assert priors.shape == (0,) and wdl.shape == (0, 3)
    tokens, legal, offsets = BATCH
    for bad in (
        (tokens.astype(np.int64), legal, offsets),
        (tokens, legal.astype(np.int64), offsets),
        (tokens, legal, offsets[:-1]),
        (tokens, legal[:-1], offsets),
        (tokens[:2], legal[:3], np.array([0, 3, 3], np.int32)),  # zero legal moves
    ):
        for evaluator in (ev, UniformEvaluator()):
            with pytest.raises(ValueError):
                evaluator.evaluate(*bad)
    with pytest.raises(ValueError):
        TorchEvaluator(fresh_network(), "cpu", precision="fp8")
    with pytest.raises(ValueError):
        TorchEvaluator(fresh_network(), "cpu", policy_temperature=0)


def test_make_evaluator(tmp_path):
    assert isinstance(make_evaluator("uniform"), UniformEvaluator)
    net = Network(fresh_network("tiny", policy_head="attention", seed=9))
    path = net.save(tmp_path / "n.pt")
    ev = make_evaluator(str(path), device="cpu", precision="fp32")
    tokens, legal, offsets = BATCH
    ref = TorchEvaluator(net, "cpu", precision="fp32").evaluate(tokens, legal, offsets)
    for a, b in zip(ev.evaluate(tokens, legal, offsets), ref):
        np.testing.assert_array_equal(a, b)
    check_distributions(*make_evaluator(None, device="cpu").evaluate(*BATCH)[:2], offsets)
    with pytest.raises(CheckpointError, match="no such file"):
        make_evaluator(str(tmp_path / "absent.pt"))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
def test_cuda_evaluator_matches_cpu(precision):
    net = Network(sharpen(fresh_network("tiny", seed=4)))
    tokens, legal, offsets = BATCH
    ref_p, ref_w = TorchEvaluator(net, "cpu", precision="fp32").evaluate(tokens, legal, offsets)
    ev = TorchEvaluator(net, "cuda", precision=precision)
    for _ in range(2):  # the second call reuses the pinned upload buffer
        priors, wdl = ev.evaluate(tokens, legal, offsets)
        check_distributions(priors, wdl, offsets)
        kl = np.add.reduceat(ref_p * (np.log(ref_p) - np.log(priors)), offsets[:-1])
        assert kl.max() < 1e-3 and np.abs(wdl - ref_w).max() < 1e-2


def test_one_device_chooser_serves_the_engine_and_the_trainers():
    from zerochess.train.supervised import trainer

    assert trainer.resolve_device is resolve_device
    auto = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == resolve_device(None).type == auto
    assert resolve_device("cpu") == torch.device("cpu")
    with pytest.raises(RuntimeError, match="bogus"):
        resolve_device("bogus")
