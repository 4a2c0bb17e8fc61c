"""The transformer, its presets and cost model, checkpoints, and ``load_network``/``predict``."""

import logging

import chess
import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from zerochess.chess import encoding
from zerochess.neural.api import Network, fresh_network, load_network, shipped_network_path
from zerochess.chess.board import Board
from zerochess.neural.checkpoint import (
    FORMAT_VERSION,
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
)
from zerochess.chess.layout import POLICY_SIZE, SEQ_LEN, VOCAB_SIZE
from zerochess.neural.models.transformer import (
    ChessTransformer,
    underpromotion_tables,
    deepen,
    grow,
)
from zerochess.neural.network import (
    POLICY_HEADS,
    PRESETS,
    NetworkConfig,
    flops_per_position,
    param_count,
)

FENS = [
    chess.STARTING_FEN,
    "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",  # en passant
    "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 12 40",  # castling, black to move
    "n1n5/1P4k1/8/8/8/8/6Kp/7N b - - 0 1",  # black under-promotion (mirrored frame)
    "n1n5/1P4k1/8/8/8/8/6K1/8 w - - 0 1",  # white promotion with captures
]


def test_contract_constants_match_the_native_encoding():
    cfg = NetworkConfig()
    assert (cfg.seq_len, cfg.vocab_size, cfg.policy_size) == (
        encoding.SEQ_LEN, encoding.VOCAB_SIZE, encoding.POLICY_SIZE)


@pytest.mark.parametrize("head", POLICY_HEADS)
@pytest.mark.parametrize("batch", [1, 5])
def test_forward_shapes(head, batch):
    model = fresh_network("tiny", policy_head=head)
    tokens = torch.randint(0, VOCAB_SIZE, (batch, SEQ_LEN), dtype=torch.uint8)
    policy, wdl = model(tokens)
    assert policy.shape == (batch, POLICY_SIZE) and wdl.shape == (batch, 3)
    assert torch.isfinite(policy).all() and torch.isfinite(wdl).all()


@pytest.mark.parametrize("head", POLICY_HEADS)
def test_batch_rows_are_independent(head):
    model = fresh_network("tiny", policy_head=head, seed=3)
    tokens = torch.randint(0, VOCAB_SIZE, (6, SEQ_LEN), dtype=torch.uint8)
    with torch.inference_mode():
        batched = model(tokens)
        single = [model(tokens[i : i + 1]) for i in range(6)]
    for k in range(2):
        torch.testing.assert_close(batched[k], torch.cat([s[k] for s in single]), atol=1e-5, rtol=1e-5)


def test_training_and_inference_attention_agree():
    """Training runs SDPA, CPU inference the explicit-matmul attention: same function."""
    model = fresh_network("small", dropout=0.0, seed=6)
    tokens = torch.randint(0, VOCAB_SIZE, (3, SEQ_LEN), dtype=torch.uint8)
    with torch.no_grad():
        train_out = model.train()(tokens)
        eval_out = model.eval()(tokens)
    for a, b in zip(train_out, eval_out):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("head", POLICY_HEADS)
def test_every_parameter_learns(head):
    """Both heads and every layer get gradients (no dead branch in the model)."""
    model = fresh_network("tiny", policy_head=head).train()
    tokens = torch.randint(0, VOCAB_SIZE, (4, SEQ_LEN), dtype=torch.uint8)
    policy, wdl = model(tokens)
    loss = torch.nn.functional.cross_entropy(policy, torch.tensor([1, 2, 4100, 4167]))
    (loss + torch.nn.functional.cross_entropy(wdl, torch.tensor([0, 1, 2, 1]))).backward()
    dead = [n for n, p in model.named_parameters() if p.grad is None or not p.grad.any()]
    assert dead == []


def assert_same_function(model, grown):
    """The grown network answers exactly as the original on random tokens (returned)."""
    tokens = torch.randint(0, VOCAB_SIZE, (5, SEQ_LEN), dtype=torch.uint8)
    with torch.no_grad():
        for a, b in zip(model(tokens), grown(tokens)):
            torch.testing.assert_close(a, b, atol=0, rtol=0)
    return tokens


def one_training_step(model, tokens, lr):
    """One SGD step on a WDL and policy cross-entropy, in training mode."""
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    policy, wdl = model(tokens)
    (torch.nn.functional.cross_entropy(wdl, torch.tensor([0, 1, 2, 1, 0]))
     + torch.nn.functional.cross_entropy(policy, torch.tensor([12, 800, 3000, 4100, 77]))).backward()
    opt.step()


def test_deepen_keeps_the_function_and_the_new_layers_learn():
    """Net2Net growth: the deepened network answers exactly as the original, and one
    optimiser step moves the appended layers off the identity."""
    model = fresh_network("tiny", seed=4).eval()
    deeper = deepen(model, 4).eval()
    assert deeper.config.n_layers == 4 and model.config.n_layers == 2
    tokens = assert_same_function(model, deeper)
    one_training_step(deeper, tokens, lr=0.1)
    assert deeper.layers[3].fc2.weight.abs().sum() > 0 and deeper.layers[3].proj.weight.abs().sum() > 0
    with pytest.raises(ValueError, match="already has 2"):
        deepen(model, 2)


def test_grow_keeps_the_function_then_learns_and_both_attention_paths_agree():
    """Growing attention biases and a spatial value path answers exactly as before; a step
    moves them off zero; with non-zero biases SDPA (training) and the explicit matmuls (CPU
    inference) still agree."""
    model = fresh_network("tiny", seed=5, dropout=0.0).eval()
    grown = grow(model, attention_bias=True, value_squares=4).eval()
    assert grown.config.attention_bias and not model.config.attention_bias
    assert grown.config.value_squares == 4 and model.config.value_squares == 0
    tokens = assert_same_function(model, grown)
    one_training_step(grown, tokens, lr=1.0)
    for layer in grown.layers:
        assert layer.attn_bias.shape == (4, SEQ_LEN, SEQ_LEN) and layer.attn_bias.abs().sum() > 0
    assert grown.value_squares[-1].weight.abs().sum() > 0
    with torch.no_grad():
        for layer in grown.layers:
            layer.attn_bias.normal_(0, 2.0)  # large enough to change every attention map
        train_out = grown.train()(tokens)
        eval_out = grown.eval()(tokens)
        unbiased = model(tokens)
    for a, b, c in zip(train_out, eval_out, unbiased):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)
        assert (b - c).abs().max() > 1e-3
    assert set(grown.head_modules()) == {"policy", "value"}
    value_params = {id(p) for p in grown.head_modules()["value"].parameters()}
    assert {id(p) for p in grown.value_squares.parameters()} <= value_params
    with pytest.raises(ValueError, match="switches on what is off"):
        grow(grown, attention_bias=True)
    with pytest.raises(ValueError, match="cannot grow 'n_layers'"):
        grow(model, n_layers=3)


def test_presets():
    small = NetworkConfig.preset("small")
    assert (small.d_model, small.n_layers, small.n_heads, small.d_ff) == (256, 6, 8, 1024)
    assert {"tiny", "small", "base"} <= set(PRESETS)
    sizes = [param_count(NetworkConfig.preset(n)) for n in ("tiny", "small", "base")]
    assert sizes == sorted(sizes) and len(set(sizes)) == 3
    assert NetworkConfig.preset("tiny", policy_head="attention").policy_head == "attention"
    with pytest.raises(ValueError, match="unknown preset"):
        NetworkConfig.preset("huge")


@pytest.mark.parametrize("bad", [dict(policy_head="conv"), dict(n_heads=7), dict(n_layers=0),
                                 dict(policy_size=4096), dict(value_squares=-1),
                                 dict(smolgen=-1)])
def test_invalid_config_is_refused(bad):
    with pytest.raises(ValueError):
        NetworkConfig(**bad)


def test_config_dict_round_trip_rejects_unknown_fields():
    cfg = NetworkConfig.preset("tiny", policy_head="attention")
    assert NetworkConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown config fields"):
        NetworkConfig.from_dict({**cfg.to_dict(), "d_modle": 3})


@pytest.mark.parametrize("head", POLICY_HEADS)
@pytest.mark.parametrize("preset,extra", [("tiny", {}), ("small", {}),
                                          ("tiny", {"attention_bias": True, "value_squares": 8}),
                                          ("tiny", {"smolgen": 16, "attention_bias": True})])
def test_param_count_and_flops_match_the_model(preset, extra, head):
    cfg = NetworkConfig.preset(preset, policy_head=head, **extra)
    model = ChessTransformer(cfg).eval()
    assert param_count(cfg) == param_count(model) == sum(p.numel() for p in model.parameters())
    with FlopCounterMode(display=False) as counter, torch.inference_mode():
        model(torch.zeros(2, SEQ_LEN, dtype=torch.uint8))
    # CPU inference computes attention with plain matmuls, so torch's counter sees every
    # matmul of the network, heads included.
    assert counter.get_total_flops() // 2 == flops_per_position(cfg)


def test_underpromotion_tables_match_the_encoding():
    """The attention head's (from, to) for each under-promotion index is the move's squares."""
    frm, to, piece = underpromotion_tables()
    seen = 0
    for fen in FENS[4:]:
        board = Board(fen)
        for uci in board.legal_moves():
            idx = encoding.move_to_index(board, uci)
            if idx < 4096:
                continue
            flip = 56 if board.turn == chess.BLACK else 0
            i = idx - 4096
            assert frm[i] == chess.parse_square(uci[:2]) ^ flip
            assert to[i] == chess.parse_square(uci[2:4]) ^ flip
            assert piece[i] == "nbr".index(uci[4])
            seen += 1
    assert seen == 6 + 3  # white: b7a8, b7b8, b7c8 x 3 pieces / black: h2h1 x 3 pieces


def test_reach_mask_never_masks_a_legal_move_and_masks_the_rest_of_the_geometry(tmp_path):
    """Over random-game positions (castling, en passant, promotions of every kind), every legal
    move's logit survives the reach mask; what it removes is exactly the moves python-chess's
    empty-board geometry rules out (checked on one position by hand below)."""
    torch.manual_seed(0)
    model = ChessTransformer(NetworkConfig.preset("tiny", reach_mask=True)).eval()
    rng = np.random.default_rng(3)
    boards = [Board(f) for f in FENS]
    for _ in range(60):
        b = chess.Board()
        for _ in range(int(rng.integers(0, 120))):
            moves = list(b.legal_moves)
            if not moves:
                break
            b.push(moves[int(rng.integers(len(moves)))])
        if not b.is_game_over():
            boards.append(Board(b.fen()))
    tokens = torch.from_numpy(np.stack([encoding.encode_board(x) for x in boards]))
    allowed = model.allowed_moves(tokens)
    with torch.no_grad():
        logits, _ = model(tokens)
    for i, board in enumerate(boards):
        legal = encoding.legal_move_indices(board)
        assert allowed[i, legal].all(), board.fen()
        assert (logits[i, legal] > -100).all() and (logits[i, ~allowed[i]] == -1e4).all()
    # What it keeps, position by position: python-chess's empty-board moves of each own piece
    # (pawn pushes and captures, castling as e1-g1/e1-c1), minus squares holding own pieces.
    for i, board in enumerate(boards[:40]):
        pos = chess.Board(board.fen())
        flip = 0 if pos.turn == chess.WHITE else 56
        want = set()
        for sq, piece in pos.piece_map().items():
            if piece.color != pos.turn:
                continue
            f = sq ^ flip  # mover's frame
            alone = chess.Board(None)
            alone.set_piece_at(f, chess.Piece(piece.piece_type, chess.WHITE))
            targets = set(alone.attacks(f))
            if piece.piece_type == chess.PAWN:
                targets = {t for t in targets} | {f + 8} | ({f + 16} if f // 8 == 1 else set())
            if piece.piece_type == chess.KING and f == 4:
                targets |= {2, 6}
            own = {s ^ flip for s, p in pos.piece_map().items() if p.color == pos.turn}
            want |= {f * 64 + t for t in targets if t not in own and t < 64}
        got = set(allowed[i, :4096].nonzero().flatten().tolist())
        assert got == want, board.fen()
    # It survives a checkpoint round trip (no tensors of its own: the buffers are rebuilt).
    save_checkpoint(tmp_path / "m.pt", model, {})
    loaded, _ = load_checkpoint(tmp_path / "m.pt")
    assert loaded.config.reach_mask and torch.equal(loaded(tokens)[0], logits)
    # Checkpoints from before the field load without it (the default is off).
    assert NetworkConfig.from_dict({k: v for k, v in PRESETS["tiny"].to_dict().items()
                                    if k != "reach_mask"}).reach_mask is False


# ---------------------------------------------------------------- predict / load_network

@pytest.mark.parametrize("head", POLICY_HEADS)
def test_predict_boards_and_fens(head):
    net = Network(fresh_network("tiny", policy_head=head, seed=5))
    logits, wdl = net.predict(FENS)
    assert logits.shape == (len(FENS), POLICY_SIZE) and logits.dtype == np.float32
    assert wdl.shape == (len(FENS), 3) and wdl.dtype == np.float32
    np.testing.assert_allclose(wdl.sum(axis=1), 1.0, atol=1e-6)
    assert (wdl > 0).all()
    logits2, wdl2 = net.predict([Board(FENS[0]), chess.Board(FENS[1])])
    np.testing.assert_allclose(logits2, logits[:2], atol=1e-5)
    np.testing.assert_allclose(wdl2, wdl[:2], atol=1e-6)
    # Raw logits: the same network gives different positions different outputs.
    assert not np.allclose(logits[0], logits[3])
    empty_logits, empty_wdl = net.predict([])
    assert empty_logits.shape == (0, POLICY_SIZE) and empty_wdl.shape == (0, 3)
    with pytest.raises(TypeError):
        net.predict([42])


def test_load_network_default(caplog):
    if shipped_network_path().is_file():
        net = load_network(None, device="cpu")
        assert net.source == str(shipped_network_path())
        return
    with caplog.at_level(logging.WARNING, logger="zerochess.neural.api"):
        net = load_network(None, device="cpu")
    assert net.metadata["untrained"] is True and net.config == NetworkConfig.preset("tiny")
    assert "untrained" in caplog.text
    # Reproducible: the stand-in is the same network every time.
    a, b = net.predict(FENS[:2])[0], load_network(None, device="cpu").predict(FENS[:2])[0]
    np.testing.assert_array_equal(a, b)


# -------------------------------------------------------------------------- checkpoints

@pytest.mark.parametrize("head", POLICY_HEADS)
def test_checkpoint_round_trip_is_exact(tmp_path, head):
    net = Network(fresh_network("tiny", policy_head=head, seed=11), {"step": 7})
    path = net.save(tmp_path / "net.pt", data="unit-test", metrics={"policy_acc": 0.25})
    loaded = load_network(path, device="cpu")
    assert loaded.config == net.config
    assert loaded.metadata == {"step": 7, "data": "unit-test", "metrics": {"policy_acc": 0.25}}
    for a, b in zip(net.predict(FENS), loaded.predict(FENS)):
        np.testing.assert_array_equal(a, b)
    _, info = load_checkpoint(path)
    assert info["format_version"] == FORMAT_VERSION and info["zerochess_version"]
    assert [p.name for p in tmp_path.iterdir()] == ["net.pt"]  # no temp file left behind


def test_save_refuses_metadata_it_could_not_load(tmp_path):
    with pytest.raises(TypeError, match="unsupported type"):
        save_checkpoint(tmp_path / "x.pt", fresh_network(), {"when": object()})
    assert not (tmp_path / "x.pt").exists()


def _payload(tmp_path):
    path = save_checkpoint(tmp_path / "good.pt", fresh_network())
    return torch.load(path, weights_only=True)


def _write(tmp_path, name, obj):
    path = tmp_path / name
    torch.save(obj, path)
    return path


def test_corrupt_checkpoints_raise_clear_errors(tmp_path):
    good = save_checkpoint(tmp_path / "good.pt", fresh_network())
    raw = good.read_bytes()
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(raw[: len(raw) // 2])
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint at all" * 10)
    payload = _payload(tmp_path)
    other = _write(tmp_path, "other.pt", {"model": payload["state_dict"]})
    newer = _write(tmp_path, "newer.pt", {**payload, "format_version": FORMAT_VERSION + 1})
    wide = {**payload, "config": {**payload["config"], "d_model": 128, "policy_d": 128}}
    shape = _write(tmp_path, "shape.pt", wide)
    unknown = _write(tmp_path, "unknown.pt",
                     {**payload, "config": {**payload["config"], "width": 3}})
    cases = [
        (tmp_path / "missing.pt", "no such file"),
        (truncated, "truncated or corrupt"),
        (garbage, "truncated or corrupt"),
        (other, "not a zerochess network checkpoint"),
        (newer, "format version"),
        (shape, "weights do not match the config"),
        (unknown, "invalid network config"),
    ]
    for path, problem in cases:
        with pytest.raises(CheckpointError, match=problem) as err:
            load_network(path, device="cpu")
        assert str(path) in str(err.value) and err.value.path == str(path)
        assert isinstance(err.value, ValueError)
