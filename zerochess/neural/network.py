"""What a network is: the encoding contract, ``NetworkConfig``, presets, and ``build_model``.

``build_model(config)`` is the only constructor of a network: the trainer, checkpoints
and the stand-in network all call it, and the config it reads travels in every checkpoint.
Every architecture is a ``PolicyValueModel``: tokens (B, 72) uint8 in, policy logits
(B, POLICY_SIZE) and WDL logits (B, 3) in (loss, draw, win) order out. Its users ask it
which of its parts must stay fp32 when inference runs in bf16/fp16 (``fp32_modules``) and
which parts are its output heads (``head_modules``, for the trainer's gradient norms), so
that no caller depends on one architecture's attribute names.

Adding an architecture is one module and a preset:

1. ``zerochess/neural/models/<name>.py`` defines a ``PolicyValueModel`` subclass whose
   ``__init__`` takes a ``NetworkConfig``, and names it ``Model = <the class>``;
   ``build_model`` imports ``zerochess.neural.models.<name>`` when a config says
   ``architecture="<name>"`` (nothing else to register; the PyInstaller spec collects
   every zerochess submodule).
2. ``PRESETS`` gets an entry ``NetworkConfig(architecture="<name>", ...)`` so that
   ``zerochess train supervise --preset`` can train it.

``zerochess/neural/models/transformer.py`` is the worked example (and the engine's network).
This module does not import the architectures, so they may import the contract from here
without an import cycle.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import asdict, dataclass, fields, replace
from functools import lru_cache

import torch
from torch import nn

# The encoding contract's sizes (zerochess.chess.encoding implements it natively); from the
# pure-Python layout module, so the network builds without the compiled extension.
from zerochess.chess.layout import POLICY_SIZE, SEQ_LEN, VOCAB_SIZE

POLICY_HEADS = ("pooled", "attention")

#: Package whose modules are the architectures, one module per ``NetworkConfig.architecture``.
MODELS_PACKAGE = "zerochess.neural.models"


@lru_cache(maxsize=None)
def architectures() -> tuple[str, ...]:
    """Names a ``NetworkConfig.architecture`` may take: the modules of ``zerochess.neural.models``."""
    package = importlib.import_module(MODELS_PACKAGE)
    return tuple(sorted(m.name for m in pkgutil.iter_modules(package.__path__)
                        if not m.name.startswith("_")))


class PolicyValueModel(nn.Module):
    """The interface every architecture implements (see the module docstring).

    ``forward(tokens (B, T) uint8, legal_only=False) -> (policy logits (B, P), WDL logits
    (B, 3))``, WDL in (loss, draw, win) order from the side to move. Subclasses set
    ``self.config``. ``legal_only=True`` says the caller reads only the logits of legal
    moves (the search's evaluators do): the model may then skip work that changes nothing
    but the other logits, and those are unspecified.
    """

    config: "NetworkConfig"

    def head_modules(self) -> dict[str, nn.Module]:
        """The output heads by name ("policy", "value", and "moves_left" when the config has
        it); every other parameter is the trunk."""
        raise NotImplementedError

    def forward_all(self, tokens: torch.Tensor, legal_only: bool = False
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """(policy logits (B, P), WDL logits (B, 3), plies left (B,) or None) from one trunk
        pass: the trainer and the export call it; the plies are None without
        ``config.moves_left``. ``forward`` stays (policy, value) for its many callers."""
        policy, value = self(tokens, legal_only)
        return policy, value, None

    def fp32_modules(self) -> list[nn.Module]:
        """The parts reduced-precision inference keeps in fp32 (default: the heads), because
        rounding their outputs to bf16 moves the policy more than the trunk's cast does."""
        return list(self.head_modules().values())

    @classmethod
    def flops_per_position(cls, cfg: "NetworkConfig") -> int:
        """Analytic forward matmul FLOPs for one position (2mkn per (m x k)(k x n) matmul)."""
        raise NotImplementedError


@dataclass(frozen=True)
class NetworkConfig:
    """Everything needed to rebuild a network; checkpoints store it as a plain dict.

    The fields are shared by every architecture; an architecture reads those it needs. A
    new knob is a new field whose default reproduces the networks built before it, so that
    older checkpoints (whose dicts lack it) keep loading unchanged.
    """

    architecture: str = "transformer"
    """Which module of ``zerochess.neural.models`` builds the network (``build_model``).
    Checkpoints saved before the field existed are transformers."""
    d_model: int = 256
    """Width C of every token vector."""
    n_layers: int = 6
    """Number of pre-norm encoder layers."""
    n_heads: int = 8
    """Attention heads per layer; d_model must be divisible by it."""
    d_ff: int = 1024
    """Hidden width of each layer's GELU MLP (the seed uses 4 x d_model)."""
    dropout: float = 0.1
    """Dropout in training only; inference ignores it."""
    policy_head: str = "attention"
    """"attention" (Lc0: from-query x to-key) or "pooled" (seed: MLP on mean-pooled tokens).
    The default was chosen by phase-1 metrics at equal compute (docs/training.md): attention
    reached 31.8% legal top-1 against pooled's 18.0% after 400 steps, with fewer parameters."""
    policy_d: int = 256
    """Width of the attention policy's query/key vectors (ignored by the pooled head)."""
    seq_len: int = SEQ_LEN
    """Tokens per position (encoding contract)."""
    vocab_size: int = VOCAB_SIZE
    """Distinct token values (encoding contract)."""
    policy_size: int = POLICY_SIZE
    """Policy logits per position (encoding contract)."""
    reach_mask: bool = False
    """Set the logits of moves that the piece on the from-square could never make, even on an
    empty board (and of moves from a square without an own piece or onto one), to -1e4.
    Lc0's and AlphaZero's policy maps leave out moves no piece can make; this also reads
    which piece stands there. No parameters; legal moves are never masked (tested). False
    for checkpoints saved before the field existed."""
    attention_bias: bool = False
    """Each encoder layer adds a learnt (n_heads, seq_len, seq_len) bias to its attention
    logits before the softmax: square-to-square terms that do not depend on what stands on
    the squares, so a head can look along a diagonal or a knight's jump without spending
    its query/key width on geometry (the position-to-position attention biases that
    "Mastering Chess with a Transformer Model", 2024, found to buy strength per FLOP).
    n_heads x 72 x 72 parameters per layer and one add per attention map. False for
    checkpoints saved before the field existed."""
    value_squares: int = 0
    """Channels per square of the value head's spatial path; 0: none. The value head reads
    the mean of the 64 square vectors, which forgets where things stand; with K > 0 each
    square's vector is also projected to K numbers and the 64 x K of them, in board order,
    are mapped back to the pooled width and added (Lc0's value head flattens per-square
    channels the same way). The last map starts at zero, so a trained network grown with
    it keeps its function. 0 for checkpoints saved before the field existed."""
    threat_inputs: bool = False
    """The network reads version-2 tokens (``zerochess/chess/threats.pyx``): each square
    token also says whether the opponent attacks the square and whether the side to move
    defends it, which Monty measured at +51 Elo. The network splits a token t into the
    square token t % 44 and the flags t // 44 and adds a learnt threat embedding (4 x
    d_model, zero at the start, so growing it into a trained network keeps its function)
    to the square's embedding. Its evaluators turn the search's version-1 tokens into
    version-2 ones (``threats.add_threats``); so does training. False for checkpoints
    saved before the field existed, and left out of ``to_dict`` while False."""
    moves_left: bool = False
    """A moves-left head (Lc0's MLH): a small MLP on the mean-pooled vector predicting how
    many plies the game has left from the position (non-negative), trained from game
    lengths and the teacher's mate distances (``zerochess.train.data.moves_left``). The
    search uses it to prefer the faster win and the slower loss among moves of about equal
    value. The head reads the trunk and writes nothing back, so adding it to a trained
    network leaves its policy and value exactly as they were. ``forward`` keeps returning
    (policy, value); ``forward_all`` adds the plies left. False for checkpoints saved
    before the field existed, and left out of ``to_dict`` while False."""
    qat: bool = False
    """Quantization-aware: the encoder layers' and the attention policy head's matmuls are
    simulated int8 in torch (``zerochess.neural.fake_quant``: per-channel int8 weights,
    per-call uint8 activations, exactly as ONNX Runtime's dynamic quantization runs them),
    and ``zerochess export`` writes them int8 (faster under ONNX Runtime; the figures are in
    docs/network.md). Training with it on teaches the network to be what its int8 file
    computes, where the int8 file of an fp32-trained network moves its WDL by up to 0.13.
    No parameters: switching it on or off loads the same weights. False for checkpoints
    saved before the field existed, and left out of ``to_dict`` while False."""
    smolgen: int = 0
    """Smolgen (Leela Chess Zero's attention biases generated from the position, BT2
    onwards): the width G of each head's "gen" vector; 0: none. ``attention_bias`` is one
    table for every position; smolgen computes the bias from the board the layer sees, so a
    head can follow this position's open lines. Each layer compresses its normalised tokens
    to 8 channels each (``SMOLGEN_COMPRESS``, transformer.py), maps the flattened 72 x 8 to
    a d_model-wide hidden vector and that to one G-wide vector per head; one G x (72 x 72)
    matrix shared by every layer and head turns each head's vector into the bias on its
    attention logits. Lc0 counted it worth a network 50% larger for about 10% of its
    speed; G = 16 costs the tiny network 8.7% more matmul FLOPs. The shared matrix starts
    at zero, so a network grown with it computes exactly what it did. 0 for checkpoints
    saved before the field existed, and left out of ``to_dict`` while 0."""

    #: Fields ``to_dict`` leaves out at their default: a network without them writes the
    #: config (checkpoints, ONNX metadata, the ONNX cache's key) it wrote before they
    #: existed, so its files stay byte for byte what they were and older zerochess reads them.
    OMITTED_AT_DEFAULT = ("threat_inputs", "moves_left", "qat", "smolgen")

    def __post_init__(self) -> None:
        if self.architecture not in architectures():
            raise ValueError(f"unknown architecture {self.architecture!r}; "
                             f"choose one of {architectures()}")
        if self.policy_head not in POLICY_HEADS:
            raise ValueError(f"policy_head must be one of {POLICY_HEADS}, got {self.policy_head!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if (self.seq_len, self.vocab_size, self.policy_size) != (SEQ_LEN, VOCAB_SIZE, POLICY_SIZE):
            raise ValueError(
                "seq_len/vocab_size/policy_size must match the encoding contract "
                f"({SEQ_LEN}, {VOCAB_SIZE}, {POLICY_SIZE})"
            )
        for name in ("d_model", "n_layers", "n_heads", "d_ff", "policy_d"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.value_squares < 0:
            raise ValueError(f"value_squares must be 0 or positive, got {self.value_squares}")
        if self.smolgen < 0:
            raise ValueError(f"smolgen must be 0 or positive, got {self.smolgen}")

    @classmethod
    def preset(cls, name: str, **overrides) -> "NetworkConfig":
        """A named preset, optionally with fields replaced: ``preset("small", policy_head="attention")``."""
        try:
            base = PRESETS[name]
        except KeyError:
            raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}") from None
        return replace(base, **overrides)

    def to_dict(self) -> dict:
        d = asdict(self)
        for name in self.OMITTED_AT_DEFAULT:
            if d[name] == _DEFAULTS[name]:
                del d[name]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "NetworkConfig":
        """Rebuild from a checkpoint's dict; unknown keys are an error, not silently dropped."""
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown config fields {sorted(unknown)}")
        return cls(**d)


_DEFAULTS = {f.name: f.default for f in fields(NetworkConfig)}

PRESETS: dict[str, NetworkConfig] = {
    # Seconds per training epoch on a laptop CPU; the stand-in shipped network and the tests.
    "tiny": NetworkConfig(d_model=64, n_layers=2, n_heads=4, d_ff=256, policy_d=64),
    # The seed's phase-1 model (§1.4.2): ~4.7M parameters with the pooled head.
    "small": NetworkConfig(d_model=256, n_layers=6, n_heads=8, d_ff=1024, policy_d=256),
    # For a GPU: ~4x the width-squared and twice the depth of small.
    "base": NetworkConfig(d_model=512, n_layers=12, n_heads=16, d_ff=2048, policy_d=512),
}


def model_class(architecture: str) -> type[PolicyValueModel]:
    """The ``PolicyValueModel`` subclass that ``architecture``'s module names ``Model``."""
    if architecture not in architectures():
        raise ValueError(f"unknown architecture {architecture!r}; choose one of {architectures()}")
    cls = importlib.import_module(f"{MODELS_PACKAGE}.{architecture}").Model
    if not (isinstance(cls, type) and issubclass(cls, PolicyValueModel)):
        raise TypeError(f"{MODELS_PACKAGE}.{architecture}.Model is not a PolicyValueModel")
    return cls


def build_model(config: NetworkConfig) -> PolicyValueModel:
    """A freshly initialised network for ``config`` (in training mode, as ``nn.Module``s start).

    The only constructor: checkpoints, the trainer and ``fresh_network`` all come here, so
    an architecture named in a checkpoint's config is what gets built when it loads.
    """
    return model_class(config.architecture)(config)


def param_count(model_or_config: nn.Module | NetworkConfig) -> int:
    """Number of parameters (builds the model on the meta device if given a config)."""
    if isinstance(model_or_config, NetworkConfig):
        with torch.device("meta"):
            model_or_config = build_model(model_or_config)
    return sum(p.numel() for p in model_or_config.parameters())


def flops_per_position(cfg: NetworkConfig) -> int:
    """Analytic forward FLOPs for one position, whole network with heads (its architecture's
    count: matmuls only, the figure an efficiency-versus-matmul-peak comparison needs)."""
    return model_class(cfg.architecture).flops_per_position(cfg)
