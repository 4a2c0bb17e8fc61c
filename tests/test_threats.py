"""Threat inputs (encoding version 2, zerochess/chess/threats.pyx): the flags against
python-chess's attack maps, the token arithmetic, and the networks that read them."""

import random

import chess
import numpy as np
import pytest

from zerochess.chess import Board, encode_board
from zerochess.chess.layout import SEQ_LEN, VOCAB_SIZE
from zerochess.chess.threats import (N_THREAT_FLAGS, THREAT_VOCAB_SIZE, add_threats,
                                      add_threats_inplace, network_tokens)

#: Positions whose attacks are easy to get wrong: pins (a pinned piece still attacks),
#: en passant (the capturable pawn is not "attacked" by it), promotions one step away,
#: batteries and x-rays (a slider stops at the first piece), kings next to each other,
#: checks, Chess960 castling rights, pawns on the edge files.
HANDPICKED = (
    "4k3/8/8/8/4r3/8/4B3/4K3 w - - 0 1",
    "4k3/8/8/b7/8/8/3N4/4K3 w - - 0 1",
    "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3",
    "rnbqkbnr/ppppp1pp/8/4Pp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "8/1P4k1/8/8/8/8/6p1/K6R w - - 0 1",
    "3r3k/1P6/8/8/8/8/6p1/K4B1R b - - 0 1",
    "4k3/8/8/8/3Q4/3R4/3R4/3K4 w - - 0 1",
    "q3k3/1b6/8/8/8/8/8/4K2B b - - 0 1",
    "8/8/8/2k1K3/8/8/8/8 w - - 0 1",
    "4k3/4q3/8/8/8/8/8/4K3 w - - 0 1",
    "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1",
    "7k/P6P/8/8/8/8/p6p/K7 b - - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1",
)


def random_game_fens(count: int, seed: int) -> list[str]:
    """FENs of positions from random games (python-chess plays them)."""
    rng = random.Random(seed)
    fens: list[str] = []
    while len(fens) < count:
        board = chess.Board()
        while not board.is_game_over() and len(fens) < count and board.ply() < 200:
            fens.append(board.fen())
            board.push(rng.choice(list(board.legal_moves)))
    return fens


def expected_flags(fen: str) -> np.ndarray:
    """The 64 flags python-chess gives, in the mover's frame: square s of the frame is s on
    the real board for White to move and s ^ 56 for Black."""
    board = chess.Board(fen, chess960=True)  # reads X-FEN castling too; attacks are the same
    us = board.turn
    flip = 0 if us == chess.WHITE else 56
    return np.array([int(board.is_attacked_by(not us, s ^ flip))
                     | int(board.is_attacked_by(us, s ^ flip)) << 1 for s in range(64)], np.uint8)


def v1_tokens(fens) -> np.ndarray:
    return np.stack([encode_board(Board(f)) for f in fens]).astype(np.uint8)


def check_flags(fens) -> int:
    """Assert the flags of every FEN; return how many positions had flagged squares."""
    v1 = v1_tokens(fens)
    v2 = add_threats(v1)
    for fen, row in zip(fens, v2):
        assert np.array_equal(row[:64] // VOCAB_SIZE, expected_flags(fen)), fen
    return int((v2[:, :64] >= VOCAB_SIZE).any(axis=1).sum())


def test_flags_are_python_chess_attack_maps_over_random_games():
    fens = random_game_fens(400, seed=3)
    assert sum(" b " in f for f in fens) > 150  # both frames
    assert check_flags(fens) == len(fens)  # every position has attacked squares


def test_flags_of_handpicked_positions():
    check_flags(HANDPICKED)


def test_flags_by_hand_at_the_start():
    """The start position, read by hand: White's rank 3 is defended and not attacked,
    rank 6 attacked and not defended (a1 and h1 are defended by nothing, b1 by the rook, ...);
    with Black to move the frame is mirrored, so the same squares carry the same flags."""
    for fen in ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1"):
        flags = add_threats(v1_tokens([fen]))[0, :64] // VOCAB_SIZE
        assert (flags[16:24] == 2).all() and (flags[40:48] == 1).all()
        assert (flags[24:40] == 0).all()
        assert flags[0] == 0 and flags[7] == 0 and flags[1] == 2 and flags[4] == 2  # a1 h1 b1 e1


def test_version_2_tokens_are_version_1_plus_44_times_the_flags():
    v1 = v1_tokens(random_game_fens(200, seed=5) + list(HANDPICKED))
    kept = v1.copy()
    v2 = add_threats(v1)
    assert np.array_equal(v1, kept)  # the input is not touched
    assert v2.dtype == np.uint8 and v2.shape == v1.shape
    assert np.array_equal(v2[:, 64:], v1[:, 64:])  # side, castling, ep, fifty, repetition
    assert np.array_equal(v2 % VOCAB_SIZE, v1)
    assert v2.max() < THREAT_VOCAB_SIZE == VOCAB_SIZE * N_THREAT_FLAGS == 176
    assert set(np.unique(v2[:, :64] // VOCAB_SIZE)) == {0, 1, 2, 3}
    inplace = v1.copy()
    assert add_threats_inplace(inplace) is None and np.array_equal(inplace, v2)
    assert np.array_equal(add_threats(v1[0]), v2[0])  # one position: shape [72]
    assert add_threats(np.zeros((0, SEQ_LEN), np.uint8)).shape == (0, SEQ_LEN)
    assert network_tokens(v1, False) is v1
    assert np.array_equal(network_tokens(v1, True), v2)


def test_add_threats_refuses_what_is_not_version_1_tokens():
    v2 = add_threats(v1_tokens(HANDPICKED))
    with pytest.raises(ValueError, match="not version-1 tokens"):
        add_threats(v2)  # twice: the flags would be counted again
    with pytest.raises(ValueError, match="shape"):
        add_threats_inplace(np.zeros((2, 71), np.uint8))
    with pytest.raises(ValueError, match="uint8"):
        add_threats_inplace(np.zeros((2, SEQ_LEN), np.int64))
    with pytest.raises(ValueError, match="contiguous"):
        add_threats_inplace(np.zeros((SEQ_LEN, 2), np.uint8).T)


# -- the networks that read them --------------------------------------------------------

torch = pytest.importorskip("torch")

from zerochess.neural.api import Network, load_network  # noqa: E402
from zerochess.neural.network import NetworkConfig, build_model  # noqa: E402
from zerochess.neural.models.transformer import grow  # noqa: E402
from zerochess.neural.shipped import shipped_network_path  # noqa: E402

FENS = random_game_fens(60, seed=9) + list(HANDPICKED)


def tiny(seed=0, **overrides):
    torch.manual_seed(seed)
    return build_model(NetworkConfig.preset("tiny", reach_mask=True, **overrides)).eval()


def outputs(model, tokens, legal_only=False):
    with torch.no_grad():
        return model(torch.from_numpy(tokens), legal_only=legal_only)


def test_a_network_without_threat_inputs_is_what_it_was():
    """Same weights from the same seed (the threat embedding is made last), no new entry in
    its state dict or its config dict; the threat network starts at zero, so on version-2
    tokens it answers exactly what the plain one answers on version 1."""
    plain, threat = tiny(), tiny(threat_inputs=True)
    ps, ts = plain.state_dict(), threat.state_dict()
    assert set(ts) - set(ps) == {"threat_embed.weight"} and set(ps) <= set(ts)
    assert all(torch.equal(ps[k], ts[k]) for k in ps)
    assert ts["threat_embed.weight"].shape == (4, 64) and not ts["threat_embed.weight"].any()
    assert "threat_inputs" not in plain.config.to_dict()  # its checkpoints: as before
    assert threat.config.to_dict()["threat_inputs"] is True
    for cfg in (plain.config, threat.config):
        assert NetworkConfig.from_dict(cfg.to_dict()) == cfg
    v1 = v1_tokens(FENS)
    for legal_only in (False, True):  # the reach mask reads the version-1 part of the tokens
        ref, out = outputs(plain, v1, legal_only), outputs(threat, add_threats(v1), legal_only)
        assert all(torch.equal(a, b) for a, b in zip(ref, out))


def test_the_flags_add_their_embedding_to_the_squares_only():
    from test_evaluator import sharpen

    model = sharpen(tiny(threat_inputs=True), seed=1)
    table = model.threat_embed.weight
    assert table.abs().min() > 0
    v1 = v1_tokens(FENS)
    v2 = add_threats(v1)
    with torch.no_grad():
        x, base = model.embed(torch.from_numpy(v2))
        plain = model.tok_embed(torch.from_numpy(v1).long()) + model.position_embedding()
        flags = torch.from_numpy(v2[:, :64] // VOCAB_SIZE).long()
        assert torch.equal(base, torch.from_numpy(v1).long())
        assert torch.allclose(x[:, :64] - plain[:, :64], table[flags], atol=1e-6)
        assert torch.equal(x[:, 64:], plain[:, 64:])
    # and the network's answers depend on them
    policy_v2, wdl_v2 = outputs(model, v2)
    policy_v1, wdl_v1 = outputs(model, v1)
    assert (wdl_v2 - wdl_v1).abs().max() > 1e-3


def test_growing_threat_inputs_keeps_a_shipped_networks_function():
    """``grow`` (``train supervise --init-from zero --threat-inputs``) adds the embedding
    at zero: on version-2 tokens the grown network gives bit-identical outputs."""
    model = load_network(shipped_network_path("zero", ".pt"), "cpu").model
    grown = grow(model, threat_inputs=True).eval()
    assert grown.config.threat_inputs and not model.config.threat_inputs
    v1 = v1_tokens(FENS)
    for legal_only in (False, True):
        ref, out = outputs(model, v1, legal_only), outputs(grown, add_threats(v1), legal_only)
        assert all(torch.equal(a, b) for a, b in zip(ref, out))
    with pytest.raises(ValueError, match="switches on what is off"):
        grow(grown, threat_inputs=True)


def test_predict_gives_a_threat_network_version_2_tokens():
    from test_evaluator import sharpen

    model = sharpen(tiny(threat_inputs=True), seed=2)
    logits, wdl = Network(model).predict(FENS[:8])
    ref_logits, ref_wdl = outputs(model, add_threats(v1_tokens(FENS[:8])))
    assert np.array_equal(logits, ref_logits.numpy())
    assert np.allclose(wdl, torch.softmax(ref_wdl, -1).numpy(), atol=1e-6)


@pytest.fixture(scope="module")
def threat_files(tmp_path_factory):
    """A tiny threat network with a non-zero threat embedding: checkpoint, model, .onnx."""
    pytest.importorskip("onnx")
    from test_evaluator import sharpen
    from zerochess.neural.checkpoint import save_checkpoint
    from zerochess.neural.export import export_network_file

    folder = tmp_path_factory.mktemp("threat-net")
    model = sharpen(tiny(threat_inputs=True), seed=3)
    save_checkpoint(folder / "t.pt", model, {"note": "test"})
    export_network_file(folder / "t.pt", folder / "t.onnx")
    return folder / "t.pt", model, folder / "t.onnx"


def test_the_onnx_file_of_a_threat_network_says_so_and_its_evaluator_adds_the_flags(threat_files):
    from test_evaluator import batch_of
    from zerochess.neural.backends import make_evaluator
    from zerochess.neural.onnx_evaluator import OnnxEvaluator
    from zerochess.neural.onnx_network import ENCODING_THREATS, read_onnx_network
    from zerochess.neural.torch_evaluator import TorchEvaluator

    pt, model, onnx_path = threat_files
    network = read_onnx_network(onnx_path, threads=1)
    assert network.threat_inputs and network.config["threat_inputs"] is True
    props = dict(network.session.get_modelmeta().custom_metadata_map)
    assert props["encoding"] == ENCODING_THREATS
    tokens, legal, offsets = batch_of(FENS)  # the search's version-1 tokens
    ref_p, ref_w = TorchEvaluator(model, "cpu", precision="fp32").evaluate(tokens, legal, offsets)
    with torch.no_grad():  # the torch evaluator itself against the model on version 2
        want = torch.softmax(model(torch.from_numpy(add_threats(tokens)))[1], -1).numpy()
    assert np.abs(ref_w - want).max() < 1e-5
    counts = np.diff(offsets)
    assert np.abs(ref_p - np.repeat(1.0 / counts, counts)).max() > 1e-2  # not vacuous
    for onnx_ev in (OnnxEvaluator(network), make_evaluator(str(onnx_path), device="cpu"),
                    OnnxEvaluator(model, cache=False)):  # the file, by path, exported on the fly
        assert onnx_ev.threat_inputs
        priors, wdl = onnx_ev.evaluate(tokens, legal, offsets)
        assert np.abs(priors - ref_p).max() < 1e-4 and np.abs(wdl - ref_w).max() < 1e-4
    # the graph alone, fed the version-1 tokens, answers something else: the flags matter
    _, raw_wdl = network.session.run(None, {"tokens": tokens})
    assert np.abs(raw_wdl - ref_w).max() > 1e-3
    # a .pt of it plays through torch too
    torch_ev = make_evaluator(str(pt), device="cpu", runtime="torch-fp32")
    assert isinstance(torch_ev, TorchEvaluator) and torch_ev.threat_inputs


def test_the_engine_plays_a_threat_network(threat_files):
    from uci_process import UciProcess

    _, _, onnx_path = threat_files
    e = UciProcess()
    try:
        e.send("uci")
        e.expect("uciok", timeout=15)
        e.send(f"setoption name WeightsFile value {onnx_path}")
        assert not [l for l in e.sync(timeout=60) if l.startswith("info string")]
        e.send("position startpos moves e2e4 d7d5")
        e.send("go nodes 60")
        move = e.expect("bestmove", timeout=60)[-1].split()[1]
        board = chess.Board()
        board.push_uci("e2e4")
        board.push_uci("d7d5")
        assert chess.Move.from_uci(move) in board.legal_moves
    finally:
        e.close()


@pytest.mark.parametrize("name, threats", [("default", True), ("zero", False)])
def test_the_shipped_networks_read_their_encoding_and_export_as_committed(name, threats, tmp_path):
    """The default network (r13) reads version-2 tokens, the zero network version 1: both
    evaluators of each say so, the committed file names that encoding, and exporting the
    checkpoint again gives the committed file's config and, under the torch that exported
    it, its every byte."""
    onnx = pytest.importorskip("onnx")
    from zerochess.neural.backends import make_evaluator
    from zerochess.neural.export import export_network_file
    from zerochess.neural.onnx_network import ENCODING_THREATS

    assert make_evaluator(name, device="cpu", threads=1).threat_inputs == threats
    assert make_evaluator(name, device="cpu", runtime="torch-fp32").threat_inputs == threats
    export_network_file(shipped_network_path(name, ".pt"), tmp_path / "again.onnx")
    committed = onnx.load(str(shipped_network_path(name, ".onnx")))
    again = onnx.load(str(tmp_path / "again.onnx"))
    props = [{p.key: p.value for p in m.metadata_props} for m in (committed, again)]
    assert props[0]["config"] == props[1]["config"]
    if threats:
        assert '"threat_inputs": true' in props[1]["config"]
    else:
        assert "threat_inputs" not in props[1]["config"]
    encoding = ENCODING_THREATS if threats else "zerochess-tokens-72-v1"
    assert props[0]["encoding"] == props[1]["encoding"] == encoding
    if committed.producer_version == torch.__version__.split("+")[0]:
        assert committed.graph.SerializeToString() == again.graph.SerializeToString()
