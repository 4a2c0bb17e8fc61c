"""`SuperviseConfig`: every setting of a phase-1 training run, with its reason.

Defaults follow the seed (§1.5.2) except where a laptop CPU needs otherwise; a run's
config is written to RUN_DIR/config.json and into every checkpoint. A file given with
``--config`` (JSON or TOML, flat keys named as the fields) overrides the defaults; command
line options override the file.

Each field is declared once, with ``setting()`` (``zerochess.train.configfile``): its
default, its ``--help`` text, its flag (the field's name with dashes, ``--layers`` for
``n_layers``), its choices and its range. ``train supervise`` makes one option of each; the
range and choices are checked however the value was given. The docstring under a field
says why the default is what it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from zerochess.train.configfile import ConfigFile, setting


@dataclass(frozen=True)
class SuperviseConfig(ConfigFile):
    preset: str = setting(
        "tiny", "Network preset (tiny, small, base); overrides --config.")
    """Network preset (zerochess.neural.network.PRESETS): tiny, small or base."""
    policy_head: str | None = setting(
        "attention", "Policy head: attention (per square) or pooled (an MLP over the board).",
        choices=("pooled", "attention"))
    """Policy head: "attention" (per-square; chosen on equal compute, docs/training.md),
    "pooled" (the seed's MLP), or None for the preset's own."""
    reach_mask: bool | None = setting(
        True, "Mask the moves the piece on the from-square could never make.")
    """Mask moves the piece on the from-square could never make (NetworkConfig.reach_mask);
    None keeps the preset's or the `init_from` checkpoint's setting. On by default: at equal
    compute it beat the unmasked network on every phase-1 metric (docs/training.md)."""
    attention_bias: bool | None = setting(
        None, "Learnt attention biases; with --init-from, added at zero.")
    """Learnt square-to-square attention biases (NetworkConfig.attention_bias); None keeps
    the preset's (off) or the `init_from` checkpoint's setting. True with `init_from` adds
    them, at zero, to a checkpoint without them: training starts from its exact function."""
    value_squares: int | None = setting(
        None, "Channels of the value head's spatial path; with --init-from, added at zero.",
        min=0)
    """Channels per square of the value head's spatial path (NetworkConfig.value_squares);
    None keeps the preset's (0, none) or the `init_from` checkpoint's. A positive value with
    `init_from` adds the path to a checkpoint without one, at zero (its exact function)."""
    threat_inputs: bool | None = setting(
        None, "Threat inputs (each square: attacked by the opponent, defended by the side "
        "to move); with --init-from, their embedding added at zero.")
    """Threat inputs (NetworkConfig.threat_inputs: per square, attacked by the opponent and
    defended by the side to move, zerochess/chess/threats.pyx); None keeps the preset's
    (off) or the `init_from` checkpoint's setting. True with `init_from` adds the threat
    embedding, at zero, to a checkpoint without it: training starts from its exact function.
    Batches then carry version-2 tokens, computed from the shards' version-1 ones."""
    moves_left: bool | None = setting(
        None, "A moves-left head (plies the game has left); with --init-from, added with the "
        "policy and value unchanged.")
    """A moves-left head (NetworkConfig.moves_left: the plies the game has left, for the
    search's preference of the faster win); None keeps the preset's (off) or the
    `init_from` checkpoint's setting. True with `init_from` adds the head to a checkpoint
    without it: the policy and value stay exactly the checkpoint's, the head learns."""
    smolgen: int | None = setting(
        None, "Smolgen: attention biases generated from the position, this gen width a head "
        "(16 for tiny); with --init-from, added computing nothing until they learn.", min=0)
    """Smolgen's gen width a head (NetworkConfig.smolgen: Lc0's attention biases generated
    from the position); None keeps the preset's (0, none) or the `init_from` checkpoint's.
    A positive value with `init_from` adds it to a checkpoint without it, its shared matrix
    at zero: training starts from the checkpoint's exact function."""
    qat: bool | None = setting(
        None, "Quantization-aware training: the matmuls that `zerochess export` makes int8 run "
        "simulated int8; with --init-from, fine-tunes a trained network.")
    """Quantization-aware training (NetworkConfig.qat): the encoder layers' and the attention
    policy head's matmuls run simulated int8, exactly as ONNX Runtime's int8 graph of the
    network computes them (zerochess/neural/fake_quant.py), so the network learns to be
    what ``zerochess export`` writes as int8. None keeps the preset's (off) or the
    `init_from` checkpoint's setting; true with `init_from` fine-tunes a trained fp32
    network for int8 (no parameters change, only how they are rounded); false turns a
    QAT checkpoint back into fp32."""
    n_layers: int | None = setting(
        None, "Encoder layers; with --init-from, layers appended as the identity.",
        flag="--layers", min=1)
    """Encoder layers; None keeps the preset's or the `init_from` checkpoint's. More than
    the checkpoint has appends layers that start as the identity (transformer.deepen), so
    the deeper network starts from the checkpoint's exact function; fewer is refused."""
    dropout: float | None = setting(
        0.0, "Dropout.", min=0, max=1, max_open=True)
    """Dropout; None keeps the preset's. 0 because phase 1 sees each sample about once (no
    overfitting to fight) and dropout doubles the CPU cost of a step."""
    batch_size: int = setting(
        512, "Samples per optimizer step.", min=1)
    """Samples per optimizer step (seed: 512)."""
    lr: float = setting(
        1e-3, "Peak learning rate (overrides --config).", min=0, min_open=True)
    """Peak AdamW learning rate (seed: 1e-3)."""
    min_lr_ratio: float = setting(
        0.1, "The cosine schedule ends at lr * this.", min=0, max=1)
    """The cosine schedule ends at lr * min_lr_ratio instead of 0, so late steps still learn."""
    weight_decay: float = setting(
        0.01, "AdamW weight decay (matrices and embeddings).", min=0)
    """AdamW decoupled weight decay, applied to matrices and embeddings, not to biases/norms."""
    warmup_steps: int = setting(
        1000, "Linear warm-up steps (at most a fifth of the run).", min=0)
    """Linear warm-up steps (seed: 1000); capped at a fifth of the run so short runs decay."""
    epochs: int = setting(
        50, "Passes over the training split (unless --steps or --minutes).", min=1)
    """Passes over the training split (seed: 50), unless `steps` is set."""
    steps: int | None = setting(
        None, "Total steps (replaces --epochs and a --config's minutes; with --minutes, a cap).",
        min=1)
    """Total optimizer steps; when set it replaces `epochs` (for equal-compute comparisons)."""
    minutes: float | None = setting(
        None, "Wall-clock budget: the schedule's total steps are fixed from a short probe "
        "so that it ends with the budget (replaces --epochs and a --config's steps).",
        min=0, min_open=True)
    """Wall-clock budget: when set it replaces `epochs` (and `steps`, when also set, caps
    the total). A fresh run times a few throwaway steps and one validation, fixes the total
    steps so the schedule ends with the budget, and stores that total, so a resumed run
    keeps the same schedule (exactly)."""
    grad_clip: float = setting(
        1.0, "Clip the global gradient norm to this; 0 disables.", min=0)
    """Clip the global gradient norm to this (seed: 1.0); 0 disables."""
    policy_weight: float = setting(
        1.0, "Weight of the policy loss.", min=0)
    """Weight of the legal-masked policy cross-entropy."""
    value_weight: float = setting(
        1.0, "Weight of the WDL value loss.", min=0)
    """Weight of the WDL cross-entropy; raise it if value-head gradients are 10x smaller (§1.4.5)."""
    moves_left_weight: float = setting(
        1.0, "Weight of the moves-left loss (overrides --config).", min=0)
    """Weight of the moves-left loss (Huber on plies / 20, over the samples whose game
    length or mate distance is known: zerochess.train.data.moves_left); only networks with
    the head (`moves_left`) have it."""
    illegal_weight: float = setting(
        1.0, "Weight of the illegal-move penalty.", min=0)
    """Weight of the illegal-move penalty (seed: 0.1 with the "mass" form)."""
    illegal_penalty: str = setting(
        "log", "The illegal-move penalty: log, -log(1 - M), or mass, M (M: the illegal "
        "moves' share of the raw policy).", choices=("mass", "log"))
    """"mass": the raw policy's probability mass M on illegal moves (seed); "log": -log(1 - M),
    which keeps a strong gradient while M is near 1 (see zerochess.train.losses)."""
    policy_target: str = setting(
        "sampler", "Policy target: the sampler's distribution or the played move (overrides "
        "--config).", choices=("sampler", "played"))
    """"sampler": cross-entropy to the data's policy target (the shards' sparse policy CSR:
    for random play the sampler's whole distribution over the legal moves, mate-in-1 samples
    keeping their mating move; a search's visits; a teacher's multipv scores), chosen on
    equal compute (docs/training.md); "played": one-hot on the played move (the seed's, and
    the only choice for phase-1 data of format version 1)."""
    init_from: str | None = setting(
        None, "Start from this network's weights and architecture: a checkpoint path, or "
        "'default' / 'zero' (the shipped networks); fresh optimizer and schedule; "
        "overrides --config.")
    """Warm start: begin from this network checkpoint's weights (a path, or "default" / "zero"
    for the shipped networks, as the `WeightsFile` option names them), with a fresh optimizer
    and schedule (nanoGPT's ``init_from``), to fine-tune a finished run on new settings. The
    checkpoint's architecture replaces `preset` and `policy_head`; `dropout`, `reach_mask` and
    `qat` (none has parameters) still apply; `attention_bias`, `value_squares`, `threat_inputs`,
    `moves_left`, `smolgen` and `n_layers` grow it, each starting from the checkpoint's exact
    function (docs/training.md)."""
    data: str | list[str] | None = setting(
        None, "Data set directory (`train generate`, `train label`, any format version), "
        "DIR:WEIGHT to weigh it; repeat to train on several sets in proportion to their "
        "weights (replaces a --config's data).", multiple=True)
    """The data set(s): a directory, or a list of specs ``DIR`` or ``DIR:WEIGHT`` (relative
    sampling weights, 1 when omitted), read from the directory the command runs in;
    ``--data`` (repeatable) replaces it. Batches draw from the sets in proportion to their
    weights (``zerochess.train.data.mixture``), and validation scores each set and their
    weighted mean."""
    snapshot: bool = setting(
        False, "Train on a data set still being written: the shards finished now (recorded "
        "for --resume).")
    """Train on a data set still being written (status "in-progress", e.g. a running
    ``train label``): the shards finished when the run starts, whose names the run records
    so that ``--resume`` reads the same ones. Without it such a set is refused."""
    seed: int = setting(
        0, "Seed of weights, dropout and data order.")
    """Seeds the weights, dropout and the data order."""
    device: str = setting(
        "auto", "auto, cpu, cuda, cuda:N (overrides --config).")
    """"auto" (CUDA if present, else CPU), "cpu", "cuda", "cuda:1", ..."""
    amp: bool = setting(
        True, "bf16 autocast on a GPU that supports it.")
    """bf16 autocast on a GPU that supports it; ignored on the CPU (see ``cpu_bf16``)."""
    cpu_bf16: bool = setting(
        False, "bf16 autocast on the CPU: faster only on CPUs with native bf16 (AVX512-BF16, "
        "AMX), several times slower on AVX2-only ones.")
    """bf16 autocast on the CPU too (weights, optimizer and losses stay fp32). Off by default:
    it can pay only on CPUs with native bf16 (AVX512-BF16, AMX): on this project's 2-core
    EPYC the tiny network's trainer made 1.14x-1.34x the samples/s of fp32
    (benchmarks/bench_train.py --teacher DIR --cpu-bf16; docs/benchmarks.md); on
    AVX2-only CPUs torch emulates bf16 and a step is several times slower. Measure first."""
    threads: int = setting(
        0, "torch CPU threads.", min=0)
    """torch CPU threads; 0 keeps torch's default (all cores)."""
    val_every_steps: int = setting(
        0, "Validate every this many steps too; 0: at epoch ends only.", min=0)
    """Validate every this many steps as well as at each epoch's end; 0 = epoch ends only."""
    val_max_samples: int = setting(
        20000, "Validation samples used (the first of the val split).", min=1)
    """Validation samples used (the first ones of the val split, a fixed set)."""
    legal_gen_games: int = setting(
        100, "Games of the legal-generation test at each validation; 0 disables it.", min=0)
    """Games of the §1.6.1 legal-generation test at each validation (0 disables it)."""
    legal_gen_moves: int = setting(
        50, "Plies per game of the legal-generation test.", min=1)
    """Plies per game of the legal-generation test."""
    checkpoint_every_epochs: int = setting(
        5, "Keep an epoch-NNNN.pt network every this many epochs.", min=1)
    """Keep an epoch-NNNN.pt network every this many epochs (seed: 5); best.pt on best val loss."""
    save_every_steps: int = setting(
        200, "Write the resume state every this many steps.", min=1)
    """Write the resume state (resume.pt) every this many steps, and at every epoch end."""
    log_every_steps: int = setting(
        20, "Log train metrics every this many steps.", min=1)
    """Train metrics (losses, lr, per-head gradient norms, speed) every this many steps."""
    in_memory: bool | None = setting(
        None, "Hold the data in memory (packed arrays) or read the shards memory-mapped; "
        "default: in memory when it takes at most half the memory available.")
    """Hold the data in memory, one packed array per field (fast batches), or read the
    shards memory-mapped (sets larger than memory); None: in memory when the arrays take
    at most half the memory available. Batches are the same either way."""
    prefetch: int = setting(
        3, "Batches the loader thread prepares ahead.", min=1)
    """Batches the loader thread prepares ahead of the trainer."""
    stop_after_steps: int | None = setting(
        None, "Stop after this step as if killed (tests, split runs).", min=1)
    """Stop after this step as if killed (schedule unchanged); for tests and split runs."""

    def __post_init__(self) -> None:
        self.check_settings()
