"""Self-play actor backends: threads, processes and a real local Ray instance.

The Ray tests share one local Ray instance per test session (``ray.init(num_cpus=2)``
through ``backends.start_local_ray``: loopback only, dashboard off); they are skipped where
the optional extra is not installed (``pip install -e ".[ray]"``; CI installs it)."""

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

from zerochess.neural.api import fresh_network
from zerochess.neural.checkpoint import save_checkpoint
from zerochess.train.data.format import ShardError, load_shard, pack_shard, unpack_shard
from zerochess.train.data.replay import list_shards
from zerochess.train.selfplay.config import SelfPlayConfig
from zerochess.train.selfplay.loop import SelfPlayRun
from zerochess.train.selfplay.worker import WorkerJob, run_worker

# Actors only: one iteration, no training, so no gate (a run of a few seconds).
ACTORS_ONLY = SelfPlayConfig(iterations=1, games_per_iteration=8, games_per_worker=4,
                             games_per_shard=2, full_search_nodes=8, fast_search_nodes=4,
                             max_game_plies=30, min_replay=10**6, steps_per_iteration=0,
                             device="cpu", actor_restarts=1)


@pytest.fixture(scope="module")
def init_ckpt(tmp_path_factory):
    path = tmp_path_factory.mktemp("init") / "init.pt"
    save_checkpoint(path, fresh_network("tiny", seed=3), {"preset": "tiny"})
    return path


@pytest.fixture(scope="session")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")
    from zerochess.train.selfplay.backends import start_local_ray

    if not ray.is_initialized():
        start_local_ray(num_cpus=2)
    yield ray
    ray.shutdown()


def test_local_ray_listens_on_the_loopback_only(ray_cluster):
    """Every listening socket of the local cluster's processes is on 127.0.0.1, and the
    dashboard's web UI is off."""
    import psutil  # Ray's own copy (ray/thirdparty_files), on the path once ray is imported

    me = psutil.Process()
    family = {p.pid for p in me.children(recursive=True)}
    listening = [c for c in psutil.net_connections(kind="inet")
                 if c.status == psutil.CONN_LISTEN and c.pid in family]
    assert listening  # the GCS, raylet and workers listen somewhere
    outside = [(c.laddr.ip, c.laddr.port) for c in listening
               if c.laddr.ip not in ("127.0.0.1", "::ffff:127.0.0.1", "::1")]
    assert outside == []
    # Ray keeps a minimal head process for its own APIs; the dashboard's web UI is off
    heads = [p.cmdline() for p in me.children(recursive=True)
             if any(a.endswith("dashboard.py") for a in p.cmdline())]
    assert all("--disable-frontend" in c and "--minimal" in c for c in heads)


def shards_of(run_dir):
    return [load_shard(p, verify=True) for p in list_shards(Path(run_dir) / "games")]


def test_packed_shard_round_trip_and_damage(init_ckpt, tmp_path):
    run_worker(WorkerJob(str(tmp_path / "a"), 1, 0, 2, str(init_ckpt), "x", [],
                         ACTORS_ONLY.to_dict()))
    [src] = list_shards(tmp_path / "a" / "games")
    blob = pack_shard(src)
    copy = unpack_shard(blob, tmp_path / "copy")
    before = load_shard(src)
    assert copy.header == before.header
    assert all(np.array_equal(copy[k], before[k]) for k in before.arrays)
    damaged = bytearray(blob)
    damaged[len(blob) // 2] ^= 0xFF  # inside an array: the checksum catches it
    with pytest.raises(ShardError):
        unpack_shard(bytes(damaged), tmp_path / "bad")
    with pytest.raises(ShardError):
        unpack_shard(b"not a tar", tmp_path / "bad")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "copy"]  # nothing half-written


def test_asynchronous_search_fills_batches_better_than_rounds(init_ckpt, tmp_path):
    """Batch fill is a count (leaves per evaluator call / capacity), not a timing: the
    asynchronous schedule keeps every game's search in the batch, the round schedule waits
    for the slowest search of each round with the others idle."""
    cfg = ACTORS_ONLY.replace(games_per_worker=8, games_per_shard=8, full_search_nodes=32,
                              fast_search_nodes=8, full_search_probability=0.25)
    fill = {}
    for schedule in ("rounds", "async"):
        c = run_worker(WorkerJob(str(tmp_path / schedule), 1, 0, 8, str(init_ckpt), "x", [],
                                 cfg.replace(search_schedule=schedule).to_dict()))
        assert c["games"] == 8
        fill[schedule] = c["eval_positions"] / c["eval_calls"] / c["batch_capacity"]
    assert fill["async"] > fill["rounds"] + 0.1, fill


def test_processes_backend_survives_a_killed_actor(init_ckpt, tmp_path, monkeypatch):
    """The first actor handed a second chunk dies with it in flight. Deterministic: the process is killed
    and reaped before the chunk is handed to it, so the driver has a chunk out that no
    one will answer, whatever the machine's speed or the actors' scheduling."""
    from zerochess.train.selfplay.backends import LocalBackend

    cfg = ACTORS_ONLY.replace(workers=2, backend="processes", games_per_iteration=12)
    run = SelfPlayRun(cfg, tmp_path / "run", init_ckpt)
    killed, submit = [], LocalBackend.submit

    def submit_to_a_dead_actor(self, task, blobs):
        if task.chunk == 1 and not killed:
            self.kill(task.actor)
            self.workers[task.actor].join(timeout=30)
            assert not self.workers[task.actor].is_alive()
            killed.append(task)
        submit(self, task, blobs)

    monkeypatch.setattr(LocalBackend, "submit", submit_to_a_dead_actor)
    summary = run.run()
    assert killed and summary["games_total"] == 12
    shards = shards_of(tmp_path / "run")
    assert sum(s.games for s in shards) == 12
    indices = np.concatenate([s["game_index"] for s in shards])
    assert len(set(indices.tolist())) == 12
    rec = [json.loads(l) for l in (tmp_path / "run" / "selfplay_metrics.jsonl").read_text()
           .splitlines() if '"actors"' in l]
    assert rec[-1]["actors_lost"] == 1
    assert "lost its chunk in flight" in (tmp_path / "run" / "selfplay.log").read_text()


def test_ray_iteration_equals_the_process_backends(ray_cluster, init_ckpt, tmp_path):
    """Same seed, one actor: the Ray backend writes the same shards (names, arrays,
    positions) as the processes backend."""
    runs = {}
    for backend in ("processes", "ray"):
        cfg = ACTORS_ONLY.replace(backend=backend)
        SelfPlayRun(cfg, tmp_path / backend, init_ckpt).run()
        runs[backend] = shards_of(tmp_path / backend)
    a, b = runs["processes"], runs["ray"]
    assert [s.path.name for s in a] == [s.path.name for s in b] and len(a) == 4
    for x, y in zip(a, b):
        assert x.header["source"] == y.header["source"]
        assert {k: (v["dtype"], v["shape"]) for k, v in x.header["arrays"].items()} == \
            {k: (v["dtype"], v["shape"]) for k, v in y.header["arrays"].items()}
        for name in ("tokens", "policy_indices", "visits", "move", "game_result"):
            assert np.array_equal(x[name], y[name]), name
    assert sum(len(s) for s in a) == sum(len(s) for s in b) > 0


def test_ray_killed_actor_loses_only_its_games(ray_cluster, init_ckpt, tmp_path, monkeypatch):
    """The first actor handed a second chunk dies with it in flight (8 chunks for 2 actors:
    one of them gets a second). Deterministic (it once failed by chance on a slower machine,
    when it waited for a game to end while a chunk was still out): the chunk is handed to the
    actor with its network given as an object that is not ready yet, so Ray holds the call
    unstarted; the actor is killed, its death confirmed, and only then is the network's
    object released."""
    from zerochess.train.selfplay.backends import RayBackend

    cfg = ACTORS_ONLY.replace(workers=2, backend="ray", games_per_iteration=16, threads=1)
    run = SelfPlayRun(cfg, tmp_path / "run", init_ckpt)
    seen, killed, submit = {}, [], RayBackend.submit
    release = tmp_path / "release"

    @ray_cluster.remote(num_cpus=0)
    def held(blob: bytes, path: str) -> bytes:
        while not os.path.exists(path):
            time.sleep(0.02)
        return blob

    def submit_to_a_dying_actor(self, task, blobs):
        if task.chunk != 1 or killed:
            return submit(self, task, blobs)
        # no shared directory: each actor works in a temporary directory of its own
        # (asked here, while both are alive; an actor answers between chunks)
        for a, h in self.handles.items():
            node, cwd, private = ray_cluster.get(h.where.remote(), timeout=120)
            seen[a] = (cwd, private)
        refs = dict(self.refs)
        for r, b in zip(task.networks, blobs):
            self.refs[r.name] = held.remote(b, str(release))
        submit(self, task, blobs)          # in flight, and it cannot start
        handle = self.handles[task.actor]
        self.kill(task.actor)
        # a Ray actor runs its calls in order: this one waits behind the held chunk, so it
        # can only end in the actor's death
        with pytest.raises(ray_cluster.exceptions.RayActorError):
            ray_cluster.get(handle.where.remote(), timeout=120)
        killed.append(task)
        release.touch()
        self.refs.clear()
        self.refs.update(refs)             # later chunks get the network itself

    monkeypatch.setattr(RayBackend, "submit", submit_to_a_dying_actor)
    summary = run.run()
    assert killed
    assert summary["games_total"] == 16
    shards = shards_of(tmp_path / "run")
    assert sum(s.games for s in shards) == 16
    assert len({int(i) for s in shards for i in s["game_index"]}) == 16
    run_dir = str((tmp_path / "run").resolve())
    assert len(seen) == 2 and len({cwd for cwd, _ in seen.values()}) == 2
    for cwd, private in seen.values():
        assert cwd == private and not cwd.startswith(run_dir) and cwd != os.getcwd()
    log = (tmp_path / "run" / "selfplay.log").read_text()
    assert "lost its chunk in flight" in log and "replaced it" in log
    rec = [json.loads(l) for l in (tmp_path / "run" / "selfplay_metrics.jsonl").read_text()
           .splitlines() if '"actors"' in l]
    assert rec[-1]["actors_lost"] == 1 and rec[-1]["backend"] == "ray"
