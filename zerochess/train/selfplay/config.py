"""`SelfPlayConfig`: every setting of a self-play run (phase 2), with its reason.

Defaults are the seed's phase-2 settings (§2.2.3, §2.4.3, §2.5, risk 6 and
``config/phase2.yaml``) unless a field says otherwise; a laptop CPU needs much smaller
budgets, which a ``--config`` file (JSON or TOML, flat keys named as the fields) sets. The
run's config is written to RUN_DIR/config.json; a restart with the same command resumes.
The fields declared with ``setting()`` (zerochess.train.configfile) are also options of
``train selfplay`` (resources and the run's length, which a restart may change), made from
that one declaration; the others are config-file keys only.
"""

from __future__ import annotations

from dataclasses import dataclass

from zerochess.train.configfile import ConfigFile, setting


@dataclass(frozen=True)
class SelfPlayConfig(ConfigFile):
    # -- the loop ----------------------------------------------------------------------
    iterations: int = setting(
        100, "Stop after this iteration (overrides --config; raise it to continue a run).",
        min=1)
    """Iterations of actors -> learner -> gating; a restart continues up to this number."""
    seed: int = 0
    """Master seed: games of iteration i, worker w, chunk k draw from default_rng([seed, i, w, k])."""
    device: str = setting("auto", "auto, cpu, cuda, cuda:N (overrides --config).")
    """Where actors and learner run the network: "auto" (CUDA if present), "cpu", "cuda"."""
    threads: int = 1
    """torch CPU threads per process (actors, learner); 1 per worker keeps cores apart."""

    # -- actors (§2.3, risk 6) ---------------------------------------------------------
    games_per_iteration: int = 500
    """Self-play games per iteration, split over the workers (seed: 500)."""
    workers: int = setting(
        1, "Actor processes (overrides --config; 1 = in this process).", min=1)
    """Actors (each keeps games_per_worker games going with one evaluator)."""
    backend: str = setting(
        "auto", "Where the actors run (overrides --config; docs/selfplay.md).",
        choices=("auto", "in-process", "processes", "ray"))
    """Where the actors run (zerochess.train.selfplay.backends): "in-process" (threads of
    the driver: tests, debugging), "processes" (one process each on this machine), "ray"
    (Ray actors on a cluster, docs/selfplay.md), or "auto": in-process for one worker,
    else processes."""
    ray_address: str = setting(
        "", "Ray backend: join this cluster (auto or HOST:PORT) instead of starting a local "
        "one on 127.0.0.1.", flag="--address")
    """Ray backend: the cluster to join ("auto", "HOST:PORT"); empty starts a local one on
    127.0.0.1 with the dashboard off."""
    gpu_workers: int = 0
    """Ray backend: this many of the actors ask Ray for a GPU each (num_gpus=1) and run
    their network on it; the others ask for `threads` CPUs, so one run uses a mixed cluster."""
    actor_restarts: int = 3
    """An actor that dies (killed, crashed, its node lost) is replaced this many times per
    actor slot; its chunk in flight is lost and replayed by the others."""
    actor_lookahead: int = 1
    """Iterations the actors may play ahead of the learner (AlphaZero's continuous
    training): with 1, iteration i+1's games are played with the current best network
    while the learner trains iteration i and the gate runs; 0 takes turns (actors wait for
    learner and gate). Either way every iteration trains steps_per_iteration steps on the
    window after its own games_per_iteration games, which holds the ratio of training
    samples to new positions (KataGo, muzero-general)."""
    search_schedule: str = "async"
    """"async": each game's next search starts as soon as its last one ends, and a round's
    room in the batch is refilled from the other searches, so evaluator batches stay full;
    "rounds": all games search once per round and wait for the slowest
    (the older schedule; benchmarks/bench_actors.py compares them)."""
    games_per_worker: int = 256
    """Concurrent games in one worker: one evaluator call holds leaves of all of them."""
    hash_mb: int = 64
    """Transposition table (MB) of each network an actor plays with: the trained one's and
    each pool opponent's (a table caches one network's answers): 64 MB hold about 233,000
    positions (entries of 288 bytes)."""
    leaves_per_tree: int = 8
    """Leaves each game's tree adds to one evaluator call (virtual-loss minibatch per tree);
    small, because with hundreds of games the batch is large anyway and a small per-tree
    minibatch keeps the search close to sequential PUCT."""
    games_per_shard: int = 64
    """A worker writes its finished games as a shard every this many games (and at the end),
    so a kill loses at most the games in flight plus this many."""
    full_search_nodes: int = 800
    """Simulations of a full search (seed: 800); its visits become a training target."""
    fast_search_nodes: int = 160
    """Simulations of a fast search (playout cap randomisation, KataGo): played, not recorded."""
    full_search_probability: float = 0.25
    """Share of moves searched fully (KataGo's 25%); 1.0 disables playout cap randomisation."""
    cpuct: float = 1.5
    """The seed's constant c_puct (§2.2.3); self-play uses it without Leela's log growth."""
    dirichlet_alpha: float = 0.3
    """Root noise concentration (seed and AlphaZero: 0.3 for chess)."""
    dirichlet_fraction: float = 0.25
    """Share of the root prior replaced by noise in full searches (seed: 0.25)."""
    random_opening_plies: int = 6
    """Risk 6, mitigation A: during the first N plies a move is uniformly random with
    probability random_opening_prob; such positions are not recorded."""
    random_opening_prob: float = 0.5
    """Chance of a uniformly random move during the random-opening plies (seed: 0.5)."""
    temp_early: float = 1.5
    """Move-selection temperature for plies < temp_early_plies (risk 6, mitigation B)."""
    temp_mid: float = 1.0
    """Temperature for temp_early_plies <= ply < temp_mid_plies."""
    temp_late: float = 0.3
    """Temperature after that; never 0: training games never play the argmax."""
    temp_early_plies: int = 10
    """End of the early-temperature phase, in plies (the seed's move counter counts positions)."""
    temp_mid_plies: int = 15
    """End of the mid-temperature phase, in plies."""
    temperature_multiplier: float = 1.0
    """Multiplies the whole schedule (a stagnation intervention raises it to 1.5)."""
    max_game_plies: int = 200
    """Stop a game after this many plies and score it a draw (seed: max_game_length 200)."""
    resign_threshold: float = -0.9
    """Resign when the root value (P(win) - P(loss), mover's view) stays below this (seed)."""
    resign_consecutive: int = 3
    """... for this many consecutive own moves (seed: 3)."""
    no_resign_fraction: float = 0.1
    """Share of games that never resign; in them a would-be resignation is checked against
    the result to measure false resignations (AlphaGo Zero: 10%, keep false ones under 5%)."""
    self_play_ratio: float = 0.5
    """Share of games the best network plays against itself; the others against a random
    checkpoint of the pool (risk 6, mitigation C; seed: 0.5). Only the best network's
    full searches are recorded."""
    pool_opponents_per_worker: int = 2
    """Pool networks one worker loads per iteration (drawn from the pool): each is a separate
    evaluator call per round, so a few keep the batches large; 0 disables pool games."""

    # -- replay window and learner (§2.4) ----------------------------------------------
    replay_window: int = 500_000
    """Positions in the replay window: the newest shards on disk holding that many (seed)."""
    min_replay: int = 10_000
    """No training until the window holds this many positions (seed: 10,000)."""
    steps_per_iteration: int = 1000
    """Optimizer steps per iteration (seed: 1000)."""
    batch_size: int = 256
    """Positions per step, drawn uniformly from the window (seed: 256)."""
    lr: float = 1e-4
    """AdamW learning rate (seed: 1e-4), cosine-decayed within each iteration's steps down
    to lr * min_lr_ratio (the seed's "cosine decay" without a known run length)."""
    min_lr_ratio: float = 0.1
    """Where each iteration's cosine ends, relative to lr."""
    weight_decay: float = 1e-4
    """AdamW decoupled weight decay on matrices and embeddings (seed: 1e-4)."""
    grad_clip: float = 1.0
    """Global gradient-norm clip (seed: 1.0)."""
    value_weight: float = 1.0
    """Weight of the WDL value cross-entropy (seed: 1.0)."""
    illegal_weight: float = 0.1
    """Weight of the raw policy's illegal-move penalty (phase 1's), so that training on
    legal-only targets does not let the network forget the rules entirely."""
    illegal_penalty: str = "mass"
    """"mass": M, the raw policy's illegal mass (the seed's form, with weight 0.1). "log":
    -log(1 - M); at weight 1 the masked policy CE plus this is exactly AlphaZero's unmasked
    cross-entropy. "log" keeps M low (18% against 46% after 600 steps) but fits the visit
    targets worse at equal steps (legal-masked CE 2.876 against 2.741), and the search only
    uses the legal-masked priors, so the seed's form stays the default (docs/selfplay.md)."""

    # -- evaluation (§2.5) -------------------------------------------------------------
    eval_games: int = 100
    """Games of each new checkpoint against the current best (seed: 100); even."""
    eval_nodes: int = 400
    """Fixed nodes per move in evaluation games (seed: 400)."""
    promote_score: float = 0.55
    """A checkpoint becomes the best at this score or more against it (seed §2.5.3)."""
    pool_size: int = 20
    """Sliding window of recent checkpoints (seed: 20): opponents in self-play and rating games."""
    pool_eval_games: int = 20
    """Extra rating games per iteration against random pool members (pairs); 0 disables."""
    eval_concurrency: int = 1
    """Evaluation games played at once (each runs two engine processes)."""
    eval_max_moves: int = 150
    """Evaluation games are drawn after this many moves (full moves)."""
    eval_openings: str = "books/balanced_2moves.epd"
    """Opening suite of evaluation games (relative to the repository root, or absolute);
    empty: the start position (then colour-swapped pairs repeat the same game)."""

    # -- stagnation (risk 6, mitigation D) ---------------------------------------------
    stagnation_iters: int = 10
    """Look at the best network's rating over this many iterations (seed: 10) ..."""
    stagnation_elo: float = 50.0
    """... and intervene when it moved by less than this many Elo (seed: 50)."""
    stagnation_random_opening_plies: int = 10
    """Intervention: random-opening plies (seed: 6 -> 10)."""
    stagnation_temperature_multiplier: float = 1.5
    """Intervention: temperature multiplier (seed: 1.5)."""
    stagnation_dirichlet_fraction: float = 0.4
    """Intervention: root noise fraction (seed: 0.25 -> 0.4)."""

    def __post_init__(self) -> None:
        self.check_settings()
        positive = ("games_per_iteration", "games_per_worker",
                    "leaves_per_tree", "games_per_shard", "full_search_nodes",
                    "fast_search_nodes", "max_game_plies", "resign_consecutive",
                    "replay_window", "batch_size", "eval_nodes", "pool_size",
                    "eval_concurrency", "eval_max_moves", "stagnation_iters", "threads", "hash_mb")
        for name in positive:
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")
        self.check_choice("illegal_penalty", ("mass", "log"))
        self.check_choice("search_schedule", ("async", "rounds"))
        for name in ("gpu_workers", "actor_restarts", "actor_lookahead"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        for name in ("full_search_probability", "dirichlet_fraction", "random_opening_prob",
                     "no_resign_fraction", "self_play_ratio", "promote_score", "min_lr_ratio"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)!r}")
        for name in ("temp_early", "temp_mid", "temp_late", "temperature_multiplier"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0 (training games never play the argmax)")
        if self.eval_games < 2 or self.eval_games % 2:
            raise ValueError(f"eval_games must be even and >= 2 (colour-swapped pairs), "
                             f"got {self.eval_games}")
        if self.pool_eval_games < 0 or self.pool_eval_games % 2:
            raise ValueError(f"pool_eval_games must be even and >= 0, got {self.pool_eval_games}")
        for name in ("steps_per_iteration", "min_replay", "random_opening_plies",
                     "pool_opponents_per_worker"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        if self.lr <= 0 or self.cpuct < 0 or self.dirichlet_alpha <= 0:
            raise ValueError("need lr > 0, cpuct >= 0 and dirichlet_alpha > 0")
        if not -1.0 <= self.resign_threshold <= 1.0:
            raise ValueError(f"resign_threshold must be in [-1, 1], got {self.resign_threshold}")

    def temperature(self, ply: int) -> float:
        """The move-selection temperature at ``ply`` (risk 6's 1.5 / 1.0 / 0.3 schedule)."""
        if ply < self.temp_early_plies:
            t = self.temp_early
        elif ply < self.temp_mid_plies:
            t = self.temp_mid
        else:
            t = self.temp_late
        return t * self.temperature_multiplier

    def search_params(self):
        """The SearchParams of self-play searches (noise on; constant c_puct; no root FPU
        reduction, so that moves the noise lifts get their first visit)."""
        from zerochess.search.params import SearchParams

        return SearchParams(cpuct_init=self.cpuct, cpuct_factor=0.0,
                            dirichlet_alpha=self.dirichlet_alpha,
                            dirichlet_fraction=self.dirichlet_fraction, fpu_reduction_root=0.0,
                            minibatch=self.leaves_per_tree, max_collisions=self.leaves_per_tree,
                            full_search_nodes=self.full_search_nodes,
                            fast_search_nodes=self.fast_search_nodes,
                            full_search_probability=self.full_search_probability,
                            hash_mb=self.hash_mb, seed=self.seed)


#: Fields a restart may change without changing what the run is (resources, budgets).
RESUMABLE_CHANGES = frozenset({"iterations", "device", "threads", "workers", "games_per_worker",
                               "hash_mb",
                               "eval_concurrency", "backend", "ray_address", "gpu_workers",
                               "actor_restarts", "actor_lookahead", "search_schedule"})

BACKENDS = ("in-process", "processes", "ray")


def resolved_backend(cfg: SelfPlayConfig) -> str:
    """The backend "auto" stands for: in-process for one worker, else processes."""
    if cfg.backend != "auto":
        return cfg.backend
    return "in-process" if cfg.workers == 1 else "processes"
