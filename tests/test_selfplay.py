"""Self-play (`zerochess train selfplay`): actors, shards, replay window, learner, gating,
ratings and resume, with tiny budgets (the `tiny` preset, a few games at a few nodes)."""

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from zerochess.chess import Board, encode_board, legal_move_indices, move_to_index
from zerochess.neural.api import fresh_network
from zerochess.neural.checkpoint import load_checkpoint, save_checkpoint
from zerochess.chess.layout import POLICY_SIZE
from zerochess.train.data.format import load_shard
from zerochess.train.data.replay import ReplayWindow, list_shards
from zerochess.train.losses import LossWeights
from zerochess.train.selfplay import actor as actor_module
from zerochess.train.selfplay.config import SelfPlayConfig
from zerochess.train.selfplay.learner import selfplay_loss
from zerochess.train.selfplay.loop import SelfPlayError, SelfPlayRun
from zerochess.train.selfplay.ratings import fit_ratings
from zerochess.train.selfplay.stagnation import intervention, is_stagnating
from zerochess.train.selfplay.worker import WorkerJob, run_worker

REPO = Path(__file__).resolve().parent.parent


def load_selfplay_shard(path, verify=False):
    """A self-play shard: the training-data format, source kind "selfplay"."""
    sh = load_shard(path, verify=verify)
    assert sh.source["kind"] == "selfplay" and "legal_offsets" not in sh
    return sh


def visits(sh, row):
    """(policy indices, root visit counts) of sample ``row``."""
    a, b = sh["policy_offsets"][row], sh["policy_offsets"][row + 1]
    return sh["policy_indices"][a:b], sh["visits"][a:b]

# A few games at a few nodes, one training step, a 2-game evaluation at 8 nodes.
TINY = SelfPlayConfig(iterations=2, games_per_iteration=4, games_per_worker=4, games_per_shard=2,
                      full_search_nodes=8, fast_search_nodes=4, max_game_plies=40, min_replay=1,
                      steps_per_iteration=1, batch_size=16, eval_games=2, eval_nodes=8,
                      pool_eval_games=2, eval_max_moves=30, device="cpu")


@pytest.fixture(scope="module")
def init_ckpt(tmp_path_factory):
    path = tmp_path_factory.mktemp("init") / "init.pt"
    save_checkpoint(path, fresh_network("tiny", seed=3), {"preset": "tiny"})
    return path


# -- pieces ------------------------------------------------------------------------------

def test_temperature_schedule_is_the_seeds_and_never_zero():
    cfg = SelfPlayConfig()
    assert [cfg.temperature(p) for p in (0, 9, 10, 14, 15, 199)] == [1.5, 1.5, 1.0, 1.0, 0.3, 0.3]
    assert cfg.replace(temperature_multiplier=1.5).temperature(20) == pytest.approx(0.45)
    with pytest.raises(ValueError, match="never play the argmax"):
        SelfPlayConfig(temp_late=0.0)
    with pytest.raises(ValueError, match="even"):
        SelfPlayConfig(eval_games=3)


def test_config_file_and_unknown_fields(tmp_path):
    (tmp_path / "c.toml").write_text("games_per_iteration = 12\ncpuct = 2.0\n")
    cfg = SelfPlayConfig.from_file(tmp_path / "c.toml")
    assert (cfg.games_per_iteration, cfg.cpuct, cfg.full_search_nodes) == (12, 2.0, 800)
    (tmp_path / "bad.json").write_text('{"simulations": 800}')
    with pytest.raises(ValueError, match="unknown SelfPlayConfig fields"):
        SelfPlayConfig.from_file(tmp_path / "bad.json")


def test_ratings_fit_known_values():
    # 60% for a over 100 games: the logistic Elo difference is 70.4; the weak prior
    # pulls it in by well under an Elo.
    games = [("a", "b", 1.0)] * 30 + [("b", "a", 0.0)] * 30 + [("a", "b", 0.0)] * 40
    r = fit_ratings(["a", "b"], games)
    assert r["a"].elo == 0 and r["a"].error == 0
    assert r["b"].elo == pytest.approx(-70.44, abs=0.5)
    # Fisher error: 1.96 * sqrt(1 / (N p (1-p))) in natural units -> Elo.
    expected = 1.96 * math.sqrt(1 / (100 * 0.6 * 0.4)) * 400 / math.log(10)
    assert r["b"].error == pytest.approx(expected, rel=0.02)
    # transitivity through a chain: c never met a
    chain = [("a", "b", 1.0)] * 60 + [("a", "b", 0.0)] * 40 + [("b", "c", 1.0)] * 60 + \
        [("b", "c", 0.0)] * 40
    r = fit_ratings(["a", "b", "c"], chain)
    assert r["c"].elo == pytest.approx(2 * r["b"].elo, rel=0.02)
    assert r["c"].error > r["b"].error
    # a perfect score stays finite thanks to the prior
    r = fit_ratings(["a", "b"], [("a", "b", 0.0)] * 2)
    assert 0 < r["b"].elo < math.inf


def test_stagnation_detection_and_intervention():
    cfg = SelfPlayConfig(stagnation_iters=3, stagnation_elo=50)
    assert not is_stagnating([0, 10], cfg)
    assert is_stagnating([0, 100, 120, 130, 110], cfg)
    assert not is_stagnating([0, 40, 100], cfg)
    assert not is_stagnating([0, 10, 20, 30], cfg, since=2)  # needs a fresh window
    assert intervention(cfg) == {"random_opening_plies": 10, "temperature_multiplier": 1.5,
                                 "dirichlet_fraction": 0.4}
    assert intervention(cfg.replace(**intervention(cfg))) == {}


def test_loss_is_the_visit_cross_entropy():
    torch.manual_seed(0)
    logits = torch.randn(2, POLICY_SIZE)
    wdl_logits = torch.randn(2, 3)
    legal = torch.zeros(2, POLICY_SIZE, dtype=torch.bool)
    legal[0, [5, 9, 77]] = True
    legal[1, [1, 2]] = True
    target = torch.zeros(2, POLICY_SIZE)
    target[0, [5, 9, 77]] = torch.tensor([0.5, 0.25, 0.25])
    target[1, [1, 2]] = torch.tensor([1.0, 0.0])
    wdl = torch.tensor([2, 0])
    _, parts = selfplay_loss(logits, wdl_logits, target, wdl, legal, LossWeights(1, 1, 0.1))
    want = 0.0
    for i, idx in ((0, [5, 9, 77]), (1, [1, 2])):
        logq = torch.log_softmax(logits[i, idx], 0)
        want += -(target[i, idx] * logq).sum() / 2
    assert float(parts["policy_loss"]) == pytest.approx(float(want), rel=1e-5)
    entropy = -(0.5 * math.log(0.5) + 0.5 * math.log(0.25)) / 2
    assert float(parts["policy_kl"]) == pytest.approx(float(want) - entropy, rel=1e-5)



def test_log_penalty_makes_the_loss_alphazeros_unmasked_cross_entropy():
    """With the "log" penalty at weight 1, policy loss + penalty equals the plain
    cross-entropy of the visit targets against the softmax over all 4168 indices."""
    cfg = SelfPlayConfig(illegal_penalty="log", illegal_weight=1.0)
    w = LossWeights(1.0, 0.0, cfg.illegal_weight, cfg.illegal_penalty)
    torch.manual_seed(1)
    logits, legal = torch.randn(3, POLICY_SIZE), torch.rand(3, POLICY_SIZE) < 0.01
    target = torch.rand(3, POLICY_SIZE) * legal
    target = target / target.sum(-1, keepdim=True)
    total, _ = selfplay_loss(logits, torch.randn(3, 3), target, torch.tensor([0, 1, 2]), legal, w)
    unmasked = -(target * torch.log_softmax(logits, -1)).sum(-1).mean()
    assert float(total) == pytest.approx(float(unmasked), rel=1e-5)
    with pytest.raises(ValueError, match="illegal_penalty"):
        SelfPlayConfig(illegal_penalty="square")

# -- actors and shards -------------------------------------------------------------------

def test_shard_targets_equal_the_searches_root_visits(init_ckpt, tmp_path, monkeypatch):
    """Every recorded position's visit target is exactly what the search's root held, and
    tokens / legal moves / move played agree with a replay of the game's PGN moves."""
    seen = []
    original = actor_module.Actor._after_search

    def spy(self, game, full):
        if full and game.side_to_move() is self.main:
            idx, vis = game.forest().root_visits(game.slot)
            seen.append((game.board.fen(), idx.copy(), vis.copy()))
        return original(self, game, full)

    monkeypatch.setattr(actor_module.Actor, "_after_search", spy)
    cfg = TINY.replace(games_per_iteration=3, games_per_worker=3, games_per_shard=10,
                       full_search_probability=0.5, full_search_nodes=12, max_game_plies=30,
                       resign_threshold=-1.0, self_play_ratio=1.0, random_opening_prob=1.0)
    job = WorkerJob(str(tmp_path), 1, 0, 3, str(init_ckpt), "it0000", [], cfg.to_dict())
    counters = run_worker(job, lambda msg: None)
    assert counters["games"] == 3
    [path] = list_shards(tmp_path / "games")
    sh = load_selfplay_shard(path, verify=True)
    assert len(sh) == len(seen) > 0
    by_fen = {fen: (i, v) for fen, i, v in seen}
    # six random opening plies make the positions distinct, so the lookup is exact
    assert len(by_fen) == len(seen)
    pgn_games = (path / "games.pgn").read_text().count("[Event ")
    assert pgn_games == sh.games == 3
    moves = _pgn_moves(path / "games.pgn")
    for row in range(len(sh)):
        game = int(np.nonzero(sh["game_index"] == sh["game"][row])[0][0])
        board = Board()
        for m in moves[game][:sh["ply"][row]]:
            board.push_uci(m)
        idx, vis = visits(sh, row)
        want_idx, want_vis = by_fen[board.fen()]
        assert np.array_equal(idx, want_idx) and np.array_equal(vis, want_vis)
        assert vis.sum() >= 12 - 1  # a full search's visits (tree reuse may add more)
        assert np.array_equal(np.sort(idx), np.sort(legal_move_indices(board)))
        assert np.array_equal(sh["tokens"][row], encode_board(board))
        assert sh["move"][row] == move_to_index(board, moves[game][sh["ply"][row]])
        result = int(sh["game_result"][game])
        assert sh["outcome"][row] == (result if board.turn else -result)


def _pgn_moves(path):
    import chess.pgn

    out = []
    with open(path) as f:
        while (g := chess.pgn.read_game(f)) is not None:
            out.append([m.uci() for m in g.mainline_moves()])
    return out


def test_actors_search_through_forests_with_the_configs_hash(init_ckpt):
    """The actor and its host reach the search only through zerochess.search.forest (no
    trees, tables or rounds of the core), and every network's forest has the config's
    hash_mb (the trained network's and a pool opponent's alike)."""
    import ast

    from zerochess.train.selfplay.reports import NetworkRef
    from zerochess.train.selfplay.worker import ActorHost

    for module in ("actor.py", "worker.py"):
        tree = ast.parse((REPO / "zerochess" / "train" / "selfplay" / module).read_text())
        searched = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                    and n.module.startswith("zerochess.search")}
        assert searched <= {"zerochess.search.forest"}, module
    host = ActorHost(0, TINY.replace(hash_mb=8).to_dict())
    try:
        blob = Path(init_ckpt).read_bytes()
        for ref in (NetworkRef("best"), NetworkRef("pool", 3)):
            forest = host._side(ref, blob).forest
            assert forest.tt.megabytes == 8 and forest.params.hash_mb == 8
            assert forest.rng is host.rng and forest.n_trees == TINY.games_per_worker
    finally:
        host.close()


def test_resignation_and_false_resignation_accounting(init_ckpt, tmp_path):
    """With the threshold at +1 every side 'resigns' at once; with no_resign_fraction 1
    nobody may, and each game then reports whether the would-be resigner lost."""
    cfg = TINY.replace(resign_threshold=1.0, resign_consecutive=1, no_resign_fraction=0.0,
                       random_opening_plies=0, self_play_ratio=1.0, games_per_shard=10)
    run_worker(WorkerJob(str(tmp_path / "a"), 1, 0, 4, str(init_ckpt), "x", [], cfg.to_dict()),
               lambda m: None)
    sh = load_selfplay_shard(list_shards(tmp_path / "a" / "games")[0])
    assert list(sh["game_end"]) == [7] * 4 and list(sh["game_plies"]) == [0] * 4
    assert list(sh["game_result"]) == [-1] * 4  # White resigned before its first move
    cfg = cfg.replace(no_resign_fraction=1.0)
    run_worker(WorkerJob(str(tmp_path / "b"), 1, 0, 4, str(init_ckpt), "x", [], cfg.to_dict()),
               lambda m: None)
    sh = load_selfplay_shard(list_shards(tmp_path / "b" / "games")[0])
    assert 7 not in set(sh["game_end"])
    # White would have resigned first; a false resignation iff White did not lose
    assert list(sh["game_false_resign"]) == [int(r != -1) for r in sh["game_result"]]


def test_replay_window_keeps_the_newest_positions(init_ckpt, tmp_path):
    # every move fully searched, so that no shard is empty
    cfg = TINY.replace(games_per_shard=1, self_play_ratio=1.0, full_search_probability=1.0)
    run_worker(WorkerJob(str(tmp_path), 1, 0, 4, str(init_ckpt), "x", [], cfg.to_dict()),
               lambda m: None)
    shards = [load_selfplay_shard(p) for p in list_shards(tmp_path / "games")]
    sizes = [len(s) for s in shards]
    total = sum(sizes)
    cap = total - sizes[0] - 1  # cuts one position into the second-oldest shard
    w = ReplayWindow(shards, cap)
    assert len(w) == cap and w.names == [s.path.name for s in shards[1:]]
    b = w.gather(np.arange(cap))
    newest = np.concatenate([s["tokens"] for s in shards[1:]])[-cap:]
    assert np.array_equal(b.tokens, newest)
    assert np.allclose(b.target.sum(1), 1.0) and not (b.target[~b.legal] != 0).any()


# -- the whole loop ----------------------------------------------------------------------

class Stop(Exception):
    pass


def test_end_to_end_with_resume_between_learner_and_gate(init_ckpt, tmp_path):
    run_dir = tmp_path / "run"

    def stop_at_first_gate(event, data):
        if event == "gate":
            raise Stop  # a kill after the checkpoint was written, before any evaluation

    with pytest.raises(Stop):
        SelfPlayRun(TINY, run_dir, init_ckpt).run(stop_at_first_gate)
    state = json.loads((run_dir / "state.json").read_text())
    assert (state["iteration"], state["phase"]) == (1, "gate")
    assert not (run_dir / "elo.jsonl").exists()
    with pytest.raises(SelfPlayError, match="config differs"):
        SelfPlayRun(TINY.replace(cpuct=2.0), run_dir)
    summary = SelfPlayRun(TINY, run_dir).run()
    assert summary["iteration"] == 2 and summary["games_total"] == 8

    # shards and PGN of both iterations
    shards = list_shards(run_dir / "games")
    assert {p.name[:6] for p in shards} == {"it0001", "it0002"}
    assert sum(load_selfplay_shard(p, verify=True).games for p in shards) == 8
    # one checkpoint per iteration, loadable; the learner trained once per iteration
    for i in range(3):
        load_checkpoint(run_dir / "checkpoints" / f"it{i:04d}.pt")
    assert torch.load(run_dir / "learner.pt", weights_only=True)["step"] == 2
    train = [json.loads(l) for l in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in train] == [1, 2]
    # ratings: one line per evaluation, every player rated, the anchor at 0
    elo = [json.loads(l) for l in (run_dir / "elo.jsonl").read_text().splitlines()]
    assert [e["iteration"] for e in elo] == [1, 2]
    assert [r["name"] for r in elo[-1]["ratings"]] == ["it0000", "it0001", "it0002"]
    assert elo[-1]["ratings"][0]["elo"] == 0
    games = [json.loads(l) for l in (run_dir / "eval_games.jsonl").read_text().splitlines()]
    assert [g["iteration"] for g in games if g["kind"] == "gate"] == [1, 1, 2, 2]
    best = elo[0]["candidate"] if elo[0]["gate_score"] >= 0.55 else "it0000"
    assert elo[0]["best"] == best
    assert (run_dir / "elo.png").stat().st_size > 1000
    speed = [json.loads(l) for l in (run_dir / "selfplay_metrics.jsonl").read_text().splitlines()
             if '"actors"' in l]
    # speed figures come from the actors' reports to this driver; iteration 2's games were
    # played ahead, during iteration 1's learner, by the driver that was stopped
    measured = [s for s in speed if s["actors"]]
    assert measured and all(0 < s["batch_fill"] <= 1 and s["positions_per_s"] > 0
                            for s in measured)
    assert {s["backend"] for s in speed} == {"in-process"}

    # `zerochess train report` plots the learner and the ratings
    out = subprocess.run([sys.executable, "-m", "zerochess", "train", "report", str(run_dir)],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "elo.png" in out.stdout and "losses.png" in out.stdout


def test_init_takes_the_network_names_weightsfile_takes(tmp_path, monkeypatch):
    """``--init zero``/``default`` start from the shipped networks (WeightsFile's names); a
    missing file is named before any run directory is made. The games themselves are the
    other tests' business: here ``run`` only records where the run starts from."""
    from click.testing import CliRunner

    from zerochess.cli import main
    from zerochess.neural.api import shipped_network_path

    started = []

    def record_start(self, progress=None):
        started.append(self.init)
        self.close()
        return {}

    monkeypatch.setattr(SelfPlayRun, "run", record_start)
    for name in ("zero", "default"):
        out = tmp_path / name
        res = CliRunner().invoke(main, ["train", "selfplay", "--init", name, "--out", str(out)])
        assert res.exit_code == 0, res.output
        want = str(shipped_network_path(name).resolve())
        assert json.loads((out / "config.json").read_text())["init"] == want
        first, _ = load_checkpoint(out / "checkpoints" / "it0000.pt")
        shipped, _ = load_checkpoint(want)
        assert all(torch.equal(a, b) for a, b in
                   zip(first.state_dict().values(), shipped.state_dict().values(), strict=True))
    assert started == [str(shipped_network_path(n).resolve()) for n in ("zero", "default")]
    res = CliRunner().invoke(main, ["train", "selfplay", "--init", str(tmp_path / "no.pt"),
                                    "--out", str(tmp_path / "x")])
    assert res.exit_code != 0 and f"--init {tmp_path / 'no.pt'}: no checkpoint file" in res.output
    assert not (tmp_path / "x").exists()


def test_killed_actor_phase_resumes_with_the_same_command(init_ckpt, tmp_path):
    """SIGKILL the CLI while actors write shards; the same command finishes the iteration
    with exactly games_per_iteration games, one checkpoint and one rating."""
    cfg = TINY.replace(iterations=1, games_per_iteration=24, games_per_worker=2,
                       games_per_shard=1, max_game_plies=60, pool_eval_games=0)
    (tmp_path / "c.json").write_text(json.dumps(cfg.to_dict()))
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "zerochess", "train", "selfplay", "--init", str(init_ckpt),
           "--out", str(run_dir), "--config", str(tmp_path / "c.json")]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and len(list_shards(run_dir / "games")) < 2:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    written = len(list_shards(run_dir / "games"))
    state = json.loads((run_dir / "state.json").read_text())
    assert state["phase"] == "actors" and 2 <= written < 24
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    shards = list_shards(run_dir / "games")
    assert sum(load_selfplay_shard(p, verify=True).games for p in shards) == 24
    indices = np.concatenate([load_selfplay_shard(p)["game_index"] for p in shards])
    assert len(set(indices.tolist())) == 24
    assert not [p for p in (run_dir / "games").iterdir() if ".tmp-" in p.name]
    log = (run_dir / "selfplay.log").read_text()
    assert f"({written} already in shards)" in log
    state = json.loads((run_dir / "state.json").read_text())
    assert (state["iteration"], state["phase"], state["games_total"]) == (2, "actors", 24)
    assert len((run_dir / "elo.jsonl").read_text().splitlines()) == 1
    assert (run_dir / "checkpoints" / "it0001.pt").is_file()
