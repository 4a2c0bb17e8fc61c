"""The moves-left head (Lc0's MLH): its targets from game lengths and the teacher's mate
distances, the head in the network, its growth into a trained network, and its training."""

import json

import numpy as np
import pytest
import torch

from zerochess.chess import Board, encode_board, legal_move_indices
from zerochess.neural.api import shipped_network_path
from zerochess.neural.checkpoint import load_checkpoint
from zerochess.neural.network import NetworkConfig, build_model
from zerochess.train.data.batches import PositionSet
from zerochess.train.data.format import load_shard, write_shard
from zerochess.train.data.generate import GenerateConfig, generate
from zerochess.train.data.moves_left import NO_TARGET, mate_plies, plies_left
from zerochess.train.data.randomplay import PlayConfig
from zerochess.train.losses import moves_left_loss
from zerochess.train.supervised.config import SuperviseConfig
from zerochess.train.supervised.trainer import Trainer

TINY = SuperviseConfig(preset="tiny", batch_size=32, steps=6, warmup_steps=1, threads=1,
                       val_max_samples=64, legal_gen_games=0, log_every_steps=1,
                       save_every_steps=100, dropout=0.1, moves_left=True)

#: (data-set-wide game index, plies played, game_end) of the synthetic shard's games:
#: a mate, a fifty-move draw, a truncated game and a resignation.
GAMES = ((10, 7, 1), (11, 5, 4), (12, 6, 6), (13, 4, 7))
#: (game, ply, teacher_cp) of each sample: mate scores on some rows (mate in 2 for the side
#: to move: 3 plies; mated in 3: 6 plies), ordinary scores on the others.
SAMPLES = ((10, 0, 120), (10, 5, 31998), (10, 6, -31997), (11, 2, 0), (12, 1, 40),
           (12, 3, 31999), (13, 0, -50), (13, 2, -31999), (99, 0, 0))
#: What the targets must be, by the module docstring's rules (game 99 is not in the shard).
EXPECTED = (7, 3, 6, 3, NO_TARGET, 1, NO_TARGET, 2, NO_TARGET)


def synthetic_shard(path, with_games=True):
    """A shard whose samples exercise every rule of the targets (GAMES, SAMPLES); without
    its per-game arrays when not ``with_games``."""
    board = Board()
    legal = legal_move_indices(board).astype(np.int16)
    n = len(SAMPLES)
    arrays = {
        "tokens": np.stack([encode_board(board)] * n),
        "wdl": np.tile(np.array([[0.2, 0.5, 0.3]], np.float32), (n, 1)),
        "game": np.array([s[0] for s in SAMPLES], np.int32),
        "ply": np.array([s[1] for s in SAMPLES], np.int16),
        "teacher_cp": np.array([s[2] for s in SAMPLES], np.int32),
        "policy_offsets": np.arange(n + 1, dtype=np.int64),
        "policy_indices": np.full(n, legal[0], np.int16),
        "policy_weights": np.ones(n, np.float32),
        "legal_offsets": np.arange(n + 1, dtype=np.int64) * len(legal),
        "legal_indices": np.tile(legal, n),
        "game_index": np.array([g[0] for g in GAMES], np.int32),
        "game_plies": np.array([g[1] for g in GAMES], np.int16),
        "game_result": np.zeros(len(GAMES), np.int8),
        "game_end": np.array([g[2] for g in GAMES], np.uint8),
    }
    if not with_games:
        arrays = {k: v for k, v in arrays.items() if not k.startswith("game_")}
    write_shard(path, arrays, {"kind": "teacher"}, split="train")
    return load_shard(path)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("data") / "d"
    generate(GenerateConfig(games=8, seed=11, games_per_shard=2, val_fraction=0.25,
                            play=PlayConfig(max_plies=40, min_plies=4)), out)
    return out


def test_mate_scores_give_mate_distances_in_plies():
    cp = np.array([31999, 31998, -31999, -31997, -32000, 500, -20000, 0], np.int32)
    assert mate_plies(cp).tolist() == [1, 3, 2, 6, 0, NO_TARGET, NO_TARGET, NO_TARGET]


def test_targets_of_rule_endings_truncation_resignation_and_mates(tmp_path):
    shard = synthetic_shard(tmp_path / "s")
    assert plies_left(shard, np.arange(len(SAMPLES))).tolist() == list(EXPECTED)
    rows = np.array([7, 1, 4])
    assert plies_left(shard, rows).tolist() == [EXPECTED[i] for i in rows]
    # The reader delivers them, memory-mapped and packed alike, in the batch's order.
    idx = np.array([8, 3, 0, 5, 1])
    mapped = PositionSet([shard]).gather(idx).moves_left
    packed = PositionSet([shard]).in_memory().gather(idx).moves_left
    assert mapped.tolist() == packed.tolist() == [EXPECTED[i] for i in idx]
    # The loss reads only the samples with a target.
    pred = torch.tensor([10.0, 3.0, 1.0, 2.0, 5.0])
    loss, abs_sum = moves_left_loss(pred, torch.from_numpy(mapped))  # targets -1, 3, 7, 1, 3
    assert float(abs_sum) == pytest.approx(0 + 6 + 1 + 2)
    expected = torch.nn.functional.huber_loss(torch.tensor([3.0, 1, 2, 5]) / 20,
                                              torch.tensor([3.0, 7, 1, 3]) / 20)
    assert float(loss) == pytest.approx(float(expected))
    # Without the per-game arrays only the teacher's mates give a target.
    bare = synthetic_shard(tmp_path / "bare", with_games=False)
    assert plies_left(bare, np.arange(len(SAMPLES))).tolist() == [
        NO_TARGET, 3, 6, NO_TARGET, NO_TARGET, 1, NO_TARGET, 2, NO_TARGET]


def test_random_play_batches_carry_game_length_targets(data):
    """On random-play data every game that ended by a rule gives plies_played - ply; the
    truncated ones (max_plies) give none, and both kinds occur."""
    from zerochess.train.data.dataset import load_split

    seen = set()
    for sh in load_split(data, "train").shards + load_split(data, "val").shards:
        ends = dict(zip(np.asarray(sh["game_index"]).tolist(), np.asarray(sh["game_end"]).tolist()))
        plies = dict(zip(np.asarray(sh["game_index"]).tolist(), np.asarray(sh["game_plies"]).tolist()))
        got = plies_left(sh, np.arange(len(sh)))
        for g, p, t in zip(np.asarray(sh["game"]), np.asarray(sh["ply"]), got):
            truncated = ends[int(g)] in (6, 7)
            seen.add(truncated)
            assert t == (NO_TARGET if truncated else plies[int(g)] - p)
    assert seen == {True, False}


def test_config_without_the_head_writes_what_it_wrote_before():
    cfg = NetworkConfig.preset("tiny")
    assert "moves_left" not in cfg.to_dict()
    assert NetworkConfig.from_dict(cfg.to_dict()) == cfg
    with_head = NetworkConfig.preset("tiny", moves_left=True)
    assert with_head.to_dict()["moves_left"] is True
    assert NetworkConfig.from_dict(with_head.to_dict()) == with_head
    model, _ = load_checkpoint(shipped_network_path("zero", ".pt"))  # a network without the head
    assert not model.config.moves_left and "moves_left" not in model.head_modules()
    tokens = torch.from_numpy(encode_board(Board())[None])
    with torch.no_grad():
        p, v, m = model.eval().forward_all(tokens)
        p0, v0 = model(tokens)
    assert m is None and torch.equal(p, p0) and torch.equal(v, v0)


def test_same_seed_gives_the_same_policy_and_value_weights_with_the_head():
    torch.manual_seed(3)
    plain = build_model(NetworkConfig.preset("tiny"))
    torch.manual_seed(3)
    headed = build_model(NetworkConfig.preset("tiny", moves_left=True))
    state = headed.state_dict()
    assert {k for k in state if k not in plain.state_dict()} == {
        "moves_left_head.fc1.weight", "moves_left_head.fc1.bias",
        "moves_left_head.fc2.weight", "moves_left_head.fc2.bias"}
    assert all(torch.equal(v, state[k]) for k, v in plain.state_dict().items())
    assert "moves_left" in headed.head_modules()
    assert any(m is headed.moves_left_head for m in headed.fp32_modules())


def test_moves_left_grows_a_shipped_network_with_policy_and_value_unchanged(data, tmp_path):
    # `zero`: a trained shipped network that never has the head, whatever the default has
    warm = Trainer(TINY.replace(init_from="zero", steps=1, reach_mask=None, dropout=0.0),
                   data, tmp_path / "warm")
    start, _ = load_checkpoint(shipped_network_path("zero", ".pt"))
    state, before = warm.model.state_dict(), start.state_dict()
    assert warm.net_cfg.moves_left and all(k.startswith("moves_left_head.")
                                           for k in set(state) - set(before))
    assert all(torch.equal(v, state[k]) for k, v in before.items())
    tokens = torch.from_numpy(warm.val_set.gather(np.arange(64)).tokens)
    with torch.no_grad():
        ref = start.eval()(tokens)
        policy, value, plies = warm.model.eval().forward_all(tokens)
        again = warm.model(tokens)
    assert torch.equal(ref[0], policy) and torch.equal(ref[1], value)
    assert all(torch.equal(a, b) for a, b in zip(ref, again))
    assert plies.shape == (64,) and bool((plies >= 0).all())
    warm.run()
    grown = tmp_path / "warm" / "final.pt"
    assert load_checkpoint(grown)[0].config.moves_left
    with pytest.raises(ValueError, match="would drop it"):
        Trainer(TINY.replace(init_from=str(grown), moves_left=False, reach_mask=None), data,
                tmp_path / "dropped")


@pytest.fixture(scope="module")
def long_games(tmp_path_factory):
    """Random games played to their end by a rule (no truncation at 400 plies here): every
    sample has a target, far from the untrained head's ~14 plies."""
    out = tmp_path_factory.mktemp("long") / "d"
    generate(GenerateConfig(games=6, seed=11, games_per_shard=2, val_fraction=0.34,
                            play=PlayConfig(max_plies=400, min_plies=4)), out)
    return out


def test_a_few_steps_lower_the_moves_left_loss_and_validation_reports_it(long_games, tmp_path):
    cfg = TINY.replace(steps=30, lr=3e-3, dropout=0.0)
    trainer = Trainer(cfg, long_games, tmp_path / "run")
    b = trainer.train_set.gather(np.arange(len(trainer.train_set)))
    assert (b.moves_left >= 0).all()

    def loss() -> float:
        with torch.no_grad():
            _, _, plies = trainer.model.eval().forward_all(torch.from_numpy(b.tokens))
        return float(moves_left_loss(plies, torch.from_numpy(b.moves_left))[0])

    before = loss()
    trainer.run()
    assert loss() < 0.8 * before
    records = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert all(r["moves_left_loss"] > 0 for r in records if r["type"] == "train")
    val = [r for r in records if r["type"] == "val"][-1]
    assert val["moves_left_loss"] > 0 and 0 < val["moves_left_mae"] < 400
    assert val["loss"] > val["policy_loss"] + val["value_loss"] + val["moves_left_loss"] - 1e-6


def test_a_run_with_the_head_resumes_exactly(data, tmp_path):
    cfg = TINY.replace(steps=5, stop_after_steps=5)
    full, split = tmp_path / "full", tmp_path / "split"
    Trainer(cfg, data, full).run()
    Trainer(cfg.replace(stop_after_steps=2), data, split).run()
    Trainer(cfg, data, split, resume=True).run()
    sa = torch.load(full / "resume.pt", weights_only=True)["model"]
    sb = torch.load(split / "resume.pt", weights_only=True)["model"]
    assert sa.keys() == sb.keys() and "moves_left_head.fc2.weight" in sa
    assert all(torch.equal(v, sb[k]) for k, v in sa.items())


def test_the_self_play_learner_trains_the_head_on_games_that_ended_by_a_rule(tmp_path):
    from zerochess.neural.checkpoint import save_checkpoint
    from zerochess.train.data.replay import ReplayWindow, list_shards
    from zerochess.train.selfplay.config import SelfPlayConfig
    from zerochess.train.selfplay.learner import Learner
    from zerochess.train.selfplay.worker import WorkerJob, run_worker

    torch.manual_seed(3)
    save_checkpoint(tmp_path / "init.pt",
                    build_model(NetworkConfig.preset("tiny", moves_left=True)), {})
    # games long enough to end by a rule (the untrained network plays them out)
    cfg = SelfPlayConfig(games_per_iteration=4, games_per_worker=4, games_per_shard=2,
                         full_search_nodes=8, fast_search_nodes=4, max_game_plies=300,
                         min_replay=1, steps_per_iteration=3, batch_size=32, device="cpu",
                         self_play_ratio=1.0, full_search_probability=1.0)
    run_worker(WorkerJob(str(tmp_path), 1, 0, 4, str(tmp_path / "init.pt"), "x", [],
                         cfg.to_dict()), lambda m: None)
    shards = [load_shard(p) for p in list_shards(tmp_path / "games")]
    window = ReplayWindow(shards, sum(len(s) for s in shards))
    assert (window.gather(np.arange(len(window))).moves_left >= 0).any()
    learner = Learner(cfg, tmp_path, tmp_path / "init.pt", torch.device("cpu"))
    before = learner.model.moves_left_head.fc2.weight.detach().clone()
    means = learner.train(window, 1)
    assert means["moves_left_loss"] > 0
    assert not torch.equal(before, learner.model.moves_left_head.fc2.weight)
