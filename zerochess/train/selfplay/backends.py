"""Actor backends: where self-play actors run, behind one narrow interface.

The driver (``fleet.Fleet``) sees only ``ActorBackend``: ``submit`` a ``ChunkTask`` with the
networks' checkpoint bytes to an idle actor, ``poll`` for ``ChunkResult``/``ActorLost``,
``restart`` a dead actor, ``close``. Three implementations host the same ``ActorHost``:

    in-process  a thread of the driver per actor (tests, debugging, one worker)
    processes   a spawned process per actor on this machine
    ray         a Ray actor per actor on a Ray cluster (``pip install zerochess[ray]``);
                networks travel through Ray's object store, shards come back as bytes

Each actor has at most one chunk in flight. A network's bytes are sent to an actor once
(processes, threads) or put in the object store once (Ray). An actor that dies (its
process killed, its node lost) yields ``ActorLost`` for its chunk in flight: those games
are lost and nothing else. An exception inside an actor is a bug or a bad network, not a
death: ``poll`` raises ``ActorFailed`` and the run stops with the actor's traceback.
"""

from __future__ import annotations

import logging
import os
import queue as queue_mod
import threading
import traceback
from abc import ABC, abstractmethod
from typing import Callable, Union

from zerochess.train.selfplay.config import SelfPlayConfig, resolved_backend
from zerochess.train.selfplay.reports import ActorFailed, ActorLost, ChunkResult, ChunkTask

log = logging.getLogger("zerochess.selfplay")

Outcome = Union[ChunkResult, ActorLost]


class ActorBackend(ABC):
    """Hosts ``cfg.workers`` actors (ids 0..workers-1)."""

    name = "?"

    def __init__(self, cfg: SelfPlayConfig) -> None:
        self.cfg = cfg
        self.incarnations = [0] * cfg.workers
        self.inflight: dict[int, ChunkTask] = {}
        self.dead: set[int] = set()   # actors that died with no restarts left

    def actor_cfg(self, actor: int) -> dict:
        """The config an actor runs with (the Ray backend sets each actor's device)."""
        return self.cfg.to_dict()

    @abstractmethod
    def start(self) -> None:
        """Start every actor."""

    @abstractmethod
    def submit(self, task: ChunkTask, blobs: list[bytes]) -> None:
        """Hand ``task`` (with its networks' bytes, in ``task.networks`` order) to the idle
        actor ``task.actor``."""

    @abstractmethod
    def poll(self, timeout: float) -> list[Outcome]:
        """Outcomes that arrived within ``timeout`` seconds (possibly none)."""

    @abstractmethod
    def _replace(self, actor: int) -> None:
        """Start a new incarnation of a dead actor."""

    def restart(self, actor: int) -> bool:
        """Replace a dead actor unless it used up ``cfg.actor_restarts``; False if not."""
        if self.incarnations[actor] >= self.cfg.actor_restarts:
            self.dead.add(actor)
            return False
        self.incarnations[actor] += 1
        self._replace(actor)
        return True

    def idle(self) -> list[int]:
        return [a for a in range(self.cfg.workers) if a not in self.inflight and a not in self.dead]

    @abstractmethod
    def close(self) -> None:
        """Stop every actor; chunks in flight are lost."""


def make_backend(cfg: SelfPlayConfig) -> ActorBackend:
    kind = resolved_backend(cfg)
    if kind == "ray":
        return RayBackend(cfg)
    return LocalBackend(cfg, processes=kind == "processes")


# -- threads and processes ----------------------------------------------------------------

def serve(actor: int, cfg: dict, incarnation: int, chdir: bool,
          get: Callable[[], object], put: Callable[[object], None]) -> None:
    """An actor's loop in a thread or process: tasks in, results out, until ``None``."""
    from zerochess.train.selfplay.worker import ActorHost

    host = None
    try:
        host = ActorHost(actor, cfg, incarnation, chdir)
        networks: dict[str, bytes] = {}
        while (msg := get()) is not None:
            task, new = msg
            networks.update(new)
            for name in [n for n in networks if n not in {r.name for r in task.networks}]:
                del networks[name]
            put(host.play(task, *(networks[r.name] for r in task.networks)))
    except BaseException as e:  # hand the error to the driver, which stops the run
        put(("error", actor, f"{type(e).__name__}: {e}", traceback.format_exc()))
    finally:
        if host is not None:
            host.close()


def _process_main(actor: int, cfg: dict, incarnation: int, tasks, results) -> None:
    """A spawned actor process: stops on its own when the driver is gone (killed)."""
    parent = os.getppid()

    def get():
        while True:
            try:
                return tasks.get(timeout=1.0)
            except queue_mod.Empty:
                if os.getppid() != parent:
                    raise SystemExit(1)

    serve(actor, cfg, incarnation, True, get, results.put)


class LocalBackend(ActorBackend):
    """Actors as threads of the driver (``processes=False``) or spawned processes."""

    def __init__(self, cfg: SelfPlayConfig, processes: bool) -> None:
        super().__init__(cfg)
        self.processes = processes
        self.name = "processes" if processes else "in-process"
        if processes:
            import multiprocessing as mp

            self.ctx = mp.get_context("spawn")
            self.results = self.ctx.Queue()
        else:
            self.results = queue_mod.Queue()
        self.tasks: dict[int, object] = {}
        self.workers: dict[int, object] = {}
        self.sent: dict[int, set] = {}

    def start(self) -> None:
        for a in range(self.cfg.workers):
            self._replace(a)

    def _replace(self, actor: int) -> None:
        args = (actor, self.actor_cfg(actor), self.incarnations[actor])
        if self.processes:
            q = self.ctx.Queue()
            w = self.ctx.Process(target=_process_main, args=(*args, q, self.results), daemon=True,
                                 name=f"zerochess-actor{actor}")
        else:
            q = queue_mod.Queue()
            w = threading.Thread(target=serve, args=(*args, False, q.get, self.results.put),
                                 daemon=True, name=f"zerochess-actor{actor}")
        self.tasks[actor], self.workers[actor], self.sent[actor] = q, w, set()
        w.start()

    def submit(self, task: ChunkTask, blobs: list[bytes]) -> None:
        a = task.actor
        new = {r.name: b for r, b in zip(task.networks, blobs) if r.name not in self.sent[a]}
        self.sent[a] = {r.name for r in task.networks}
        self.inflight[a] = task
        self.tasks[a].put((task, new))

    def poll(self, timeout: float) -> list[Outcome]:
        out: list[Outcome] = []
        try:
            msg = self.results.get(timeout=timeout)
            while True:
                out.append(self._outcome(msg))
                msg = self.results.get_nowait()
        except queue_mod.Empty:
            pass
        if self.processes:
            for a, w in self.workers.items():
                if a in self.inflight and not w.is_alive():
                    out.append(ActorLost(self.inflight.pop(a),
                                         f"actor process exited with code {w.exitcode}"))
        return out

    def _outcome(self, msg) -> Outcome:
        if isinstance(msg, tuple) and msg and msg[0] == "error":
            _, actor, error, trace = msg
            raise ActorFailed(f"actor {actor} failed: {error}\n{trace}")
        self.inflight.pop(msg.task.actor, None)
        return msg

    def kill(self, actor: int) -> None:
        """Kill an actor's process at once (tests: an actor dying mid-chunk)."""
        if not self.processes:
            raise ValueError("threads cannot be killed; use the processes backend")
        self.workers[actor].kill()

    def close(self) -> None:
        for a, q in self.tasks.items():
            if self.workers[a].is_alive():
                q.put(None)
        for w in self.workers.values():
            if self.processes:
                w.join(timeout=5)
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=5)
            else:
                w.join(timeout=5)  # a daemon thread in mid-chunk cannot be stopped: it ends with the process


# -- Ray ----------------------------------------------------------------------------------

def start_local_ray(num_cpus: int | None = None) -> None:
    """A local one-node Ray cluster for this process, closed to the network: its servers
    listen on 127.0.0.1 only and the dashboard is off; Ray's token authentication stays
    on (its default).

    Ray 2.60 replaces a node address of 127.0.0.1 by the machine's own address and then
    listens on every interface, unless it runs in its single-node mode
    (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``), which it reads when ``ray`` is imported:
    so the variable is set for the processes Ray starts, and Ray's copy of it is set
    too where ``ray`` was imported already. ``tests/test_selfplay_backends.py`` checks
    every listening socket of the cluster's processes."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray = _import_ray()
    from ray._private import ray_constants  # read at import time; see above

    ray_constants.ENABLE_RAY_CLUSTER = False
    ray.init(num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False, configure_logging=False)


def _import_ray():
    try:
        import ray
    except ImportError as e:
        raise RuntimeError("the ray backend needs Ray: pip install 'zerochess[ray]'") from e
    return ray


_REMOTE_HOST = None


def _remote_host(ray):
    """``ActorHost`` as a Ray actor class (made once, when first needed)."""
    global _REMOTE_HOST
    if _REMOTE_HOST is None:
        from zerochess.train.selfplay.worker import ActorHost

        _REMOTE_HOST = ray.remote(ActorHost)
    return _REMOTE_HOST


class RayBackend(ActorBackend):
    """One Ray actor per actor slot. Without ``cfg.ray_address`` (and no Ray running in this
    process) a local cluster is started (``start_local_ray``); "auto" or HOST:PORT joins an
    existing one. Actors are spread over the nodes; the first ``cfg.gpu_workers`` ask for a
    GPU each (and run their network on it), the others for ``cfg.threads`` CPUs."""

    name = "ray"

    def __init__(self, cfg: SelfPlayConfig) -> None:
        super().__init__(cfg)
        self.ray = _import_ray()
        self.owns_ray = False
        self.handles: dict[int, object] = {}
        self.futures: dict[object, ChunkTask] = {}
        self.refs: dict[str, object] = {}

    def actor_cfg(self, actor: int) -> dict:
        d = self.cfg.to_dict()
        if actor < self.cfg.gpu_workers:
            d["device"] = "cuda"
        elif d["device"] == "auto":
            d["device"] = "cpu"  # it asked Ray for no GPU, so it must not take one
        return d

    def start(self) -> None:
        ray = self.ray
        if not ray.is_initialized():
            if self.cfg.ray_address:
                ray.init(address=self.cfg.ray_address, log_to_driver=False,
                         configure_logging=False)
            else:
                start_local_ray()
            self.owns_ray = True
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        log.info("ray backend: %d node(s) %s, resources %s", len(nodes),
                 [n.get("NodeManagerAddress") for n in nodes], ray.cluster_resources())
        for a in range(self.cfg.workers):
            self._replace(a)

    def _replace(self, actor: int) -> None:
        gpu = actor < self.cfg.gpu_workers
        options = {"num_gpus": 1, "num_cpus": 1} if gpu else {"num_cpus": self.cfg.threads}
        cls = _remote_host(self.ray).options(scheduling_strategy="SPREAD", max_restarts=0,
                                             name=None, **options)
        self.handles[actor] = cls.remote(actor, self.actor_cfg(actor), self.incarnations[actor],
                                         True)

    def submit(self, task: ChunkTask, blobs: list[bytes]) -> None:
        for r, b in zip(task.networks, blobs):
            if r.name not in self.refs:
                self.refs[r.name] = self.ray.put(b)
        wanted = {r.name for r in task.networks}
        for name in [n for n in self.refs if n not in wanted]:
            del self.refs[name]  # the object store frees it once no actor needs it
        fut = self.handles[task.actor].play.remote(task, *(self.refs[r.name] for r in task.networks))
        self.futures[fut] = task
        self.inflight[task.actor] = task

    def poll(self, timeout: float) -> list[Outcome]:
        ray = self.ray
        if not self.futures:
            return []
        first, _ = ray.wait(list(self.futures), num_returns=1, timeout=timeout)
        if not first:
            return []
        ready, _ = ray.wait(list(self.futures), num_returns=len(self.futures), timeout=0)
        out: list[Outcome] = []
        for fut in ready:
            task = self.futures.pop(fut)
            self.inflight.pop(task.actor, None)
            try:
                out.append(ray.get(fut))
            except ray.exceptions.RayActorError as e:  # the actor or its node died
                out.append(ActorLost(task, f"ray actor died: {type(e).__name__}: {e}"))
            except ray.exceptions.RayTaskError as e:
                raise ActorFailed(f"actor {task.actor} failed: {e}") from e
        return out

    def kill(self, actor: int) -> None:
        """Kill an actor at once (tests: an actor dying mid-chunk)."""
        self.ray.kill(self.handles[actor], no_restart=True)

    def close(self) -> None:
        for h in self.handles.values():
            try:
                self.ray.kill(h, no_restart=True)
            except Exception:  # already dead
                pass
        self.handles.clear()
        self.futures.clear()
        self.refs.clear()
        if self.owns_ray:
            self.ray.shutdown()
