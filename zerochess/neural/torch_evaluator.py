"""The torch backend: a ``PolicyValueModel`` behind the evaluator ABI (``zerochess.neural.evaluator``).

Precision, device and thread choices live here; torch itself is imported inside the
functions, so that importing this module (for its defaults) stays cheap.
"""

from __future__ import annotations

import logging
import threading

import numpy as np

from zerochess.neural.defaults import DEFAULT_POLICY_TEMPERATURE
from zerochess.neural.evaluator import empty_outputs, gather_index, legal_softmax
from zerochess.chess.threats import network_tokens

logger = logging.getLogger(__name__)

__all__ = ["TorchEvaluator", "PRECISIONS", "DEFAULT_POLICY_TEMPERATURE", "default_precision",
           "resolve_device", "tune_malloc", "native_bf16"]

PRECISIONS = ("auto", "fp32", "bf16", "fp16", "int8")


def tune_malloc() -> bool:
    """Keep freed activation buffers in glibc's heap instead of returning them to the OS.

    torch's CPU allocator hands every large tensor straight to malloc. With glibc's default
    (dynamic) thresholds, multi-megabyte activations are mmap'ed and unmapped on every
    forward, so each batch page-faults all its activations back in: measured here, that
    costs 25-30% of the small network's throughput at batch 16-256. Raising the mmap and
    trim thresholds once per process removes it (the same effect Intel's PyTorch CPU guide
    gets from jemalloc/tcmalloc). The price: the heap keeps the largest batch's activations
    (a few hundred MB for ``small`` at batch 256). Process-wide and idempotent; returns False where glibc
    is absent (macOS, Windows, musl), which only costs speed.
    """
    global _MALLOC_TUNED
    if _MALLOC_TUNED is not None:
        return _MALLOC_TUNED
    _MALLOC_TUNED = False
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3  # from glibc's malloc.h
        ok = libc.mallopt(m_mmap_threshold, 1 << 30) and libc.mallopt(m_trim_threshold, 1 << 30)
        _MALLOC_TUNED = bool(ok)
    except (OSError, AttributeError):
        pass
    logger.debug("glibc malloc thresholds raised: %s", _MALLOC_TUNED)
    return _MALLOC_TUNED


_MALLOC_TUNED: bool | None = None


def resolve_device(device: str | None) -> "torch.device":
    """``"auto"``/None -> CUDA when available, else CPU; anything else as torch reads it.

    The package's one device chooser (engine, trainers, self-play's learner), so that every
    ``--device``/``Device`` value means the same thing everywhere. Torch is imported here,
    not with the module, so choosing a runtime costs no torch until one is needed.
    """
    import torch

    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def default_precision(device: "torch.device") -> str:
    """The fastest precision that stays faithful (docs/network.md, "bf16 on the attention-bias
    network").

    CUDA: fp16 (tensor cores, Lc0's choice). CPU: fp32 on every CPU. bf16 was the default
    where oneDNN has native bf16 matmuls (AVX512-BF16/AMX) until the attention-bias network
    shipped: on its weights bf16 moves the WDL by up to 1.1e-2 on the test positions and
    3.4e-2 on random-game positions, past the 1e-2 bar, and the error comes from rounding
    the trunk's matmul inputs (each part alone 0.5-2.1e-2), so no mixed-precision split
    recovers it. For networks of the shipped size bf16 was also no clear win (1.2x torch
    fp32 at batch 16, 0.64x at batch 1, where ONNX Runtime fp32 is 2x). bf16 stays an
    opt-in (``precision="bf16"``, ``Backend torch-bf16``).
    """
    return "fp16" if device.type == "cuda" else "fp32"


def native_bf16() -> bool:
    """Whether this CPU runs bf16 matmuls natively (oneDNN with AVX512-BF16 or AMX): the only
    CPUs where ``precision="bf16"`` can be fast (benchmarks report it and try torch-bf16 only
    there). No default depends on it (``default_precision``)."""
    import torch

    try:  # a private probe; treat its absence in some torch build as "no native bf16"
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


class TorchEvaluator:
    """A network model (or ``Network``) behind the evaluator ABI, on CPU or CUDA.

    One ``evaluate`` call runs one forward pass for the whole batch, gathers each position's
    legal-move logits with one flat index (``row * POLICY_SIZE + move``) and normalises them
    per position with segment reductions over the CSR offsets: no per-position Python loop.

    Args:
        network: a ``PolicyValueModel`` (``build_model``) or anything with a ``.model``
            attribute holding one.
            The evaluator works on its own copy, so the caller's fp32 model is untouched.
        device: "auto" (CUDA if available), "cpu", "cuda", "cuda:1", ...
        threads: intra-op threads for CPU inference (``torch.set_num_threads``, which is
            process-wide); None leaves torch's setting alone.
        precision: "fp32", "bf16", "fp16" (CUDA), "int8" (CPU dynamic quantisation of the
            Linear layers) or "auto" (``default_precision``).
        compile: wrap the forward in ``torch.compile`` (first call of each batch size
            compiles; on CUDA "reduce-overhead" mode, which uses CUDA graphs).
        policy_temperature: priors are softmax(logits / T) over the legal moves; the
            attribute of the same name may be changed between batches (UCI
            ``PolicyTemperature``), which touches nothing of the model.
        max_batch: the batch size the search should aim for (a hint; larger batches work).
    """

    def __init__(
        self,
        network,
        device: str | None = "auto",
        threads: int | None = None,
        precision: str = "auto",
        compile: bool = False,
        policy_temperature: float = DEFAULT_POLICY_TEMPERATURE,
        max_batch: int = 256,
        malloc_tuning: bool = True,
    ) -> None:
        import copy

        import torch

        model = getattr(network, "model", network)
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        if policy_temperature <= 0:
            raise ValueError(f"policy_temperature must be positive, got {policy_temperature}")
        self.device = resolve_device(device)
        self.precision = default_precision(self.device) if precision == "auto" else precision
        if self.precision == "int8" and self.device.type != "cpu":
            raise ValueError("int8 dynamic quantisation runs on CPU only")
        if self.precision == "fp16" and self.device.type == "cpu":
            raise ValueError("fp16 on CPU is emulated and slow; use bf16 or fp32")
        if threads is not None:
            torch.set_num_threads(int(threads))
        if malloc_tuning and self.device.type == "cpu":
            tune_malloc()
        self.config = model.config
        #: The network reads version-2 tokens: every batch gets the threat flags first.
        self.threat_inputs = bool(model.config.threat_inputs)
        #: The network has a moves-left head: ``evaluate`` returns its plies too (through
        #: ``forward_all``, which ``compile`` leaves uncompiled).
        self.moves_left = bool(model.config.moves_left)
        self.policy_size = model.config.policy_size
        self.policy_temperature = float(policy_temperature)
        self.max_batch = int(max_batch)
        self.model = self._prepare(copy.deepcopy(model).eval().float(), compile)
        # Reusable page-locked token buffers for CUDA uploads, one per calling thread:
        # with UCI Threads > 1 several search threads call evaluate at once.
        self._staging = threading.local()

    def _prepare(self, model, compile: bool):
        import torch

        if self.precision == "int8":
            import warnings

            with warnings.catch_warnings():  # torch.ao's deprecation notice; it still works
                warnings.simplefilter("ignore")
                model = torch.ao.quantization.quantize_dynamic(
                    model, {torch.nn.Linear}, dtype=torch.qint8
                )
        elif self.precision in ("bf16", "fp16"):
            # The trunk (all but ~1-3% of the FLOPs) is cast whole rather than autocast:
            # measured faster on CPU (no per-op casts). The final norm and both heads stay
            # fp32: a trained network's policy logits span many units, and rounding them to
            # bf16's 8-bit mantissa alone pushed the policy KL past 1e-3 (docs/network.md).
            model = model.to(torch.bfloat16 if self.precision == "bf16" else torch.float16)
            for part in model.fp32_modules():  # the model names them: any architecture
                part.float()
        model = model.to(self.device)
        if compile:
            mode = "reduce-overhead" if self.device.type == "cuda" else None
            model = torch.compile(model, mode=mode, dynamic=False)
        return model

    def _upload(self, tokens: np.ndarray):
        """The search's version-1 ``tokens`` as the network reads them, on its device."""
        import torch

        tokens = network_tokens(tokens, self.threat_inputs)  # version 2 for threat inputs
        t = torch.from_numpy(tokens)  # zero-copy view of the core's buffer (version 1)
        if self.device.type != "cuda":
            return t
        pinned = getattr(self._staging, "pinned", None)
        if pinned is None or pinned.shape[0] < t.shape[0]:
            pinned = self._staging.pinned = torch.empty(
                (max(t.shape[0], self.max_batch), t.shape[1]), dtype=torch.uint8
            ).pin_memory()
        staged = pinned[: t.shape[0]]
        staged.copy_(t)
        # The next batch may overwrite the pinned buffer only after this copy is done; the
        # .cpu() calls in evaluate() synchronise the stream before we return.
        return staged.to(self.device, non_blocking=True)

    def forward(self, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Raw network outputs for a token batch: (policy logits [B, P], WDL probs [B, 3]);
        only legal moves' logits are meaningful (``legal_only``)."""
        import torch

        with torch.inference_mode():
            logits, wdl_logits = self.model(self._upload(tokens), legal_only=True)
            wdl = torch.softmax(wdl_logits.float(), dim=-1)
            return logits.float().cpu().numpy(), wdl.cpu().numpy()

    def evaluate(
        self, tokens: np.ndarray, legal_idx: np.ndarray, offsets: np.ndarray
    ) -> tuple[np.ndarray, ...]:
        """(priors [N], WDL [B, 3]), and the plies left [B] for a network with a
        moves-left head (the ABI, zerochess.neural.evaluator)."""
        import torch

        index = gather_index(tokens, legal_idx, offsets, self.policy_size)  # (N,)
        if index is None:
            return empty_outputs(self.moves_left)
        flat = torch.from_numpy(index)
        plies = None
        with torch.inference_mode():
            uploaded = self._upload(np.ascontiguousarray(tokens))
            if self.moves_left:
                logits, wdl_logits, plies = self.model.forward_all(uploaded, legal_only=True)
                plies = plies.float().cpu().numpy()  # (B,)
            else:
                logits, wdl_logits = self.model(uploaded, legal_only=True)
            picked = logits.reshape(-1)[flat.to(logits.device, non_blocking=True)]  # (N,)
            picked = picked.float().cpu().numpy()
            wdl = torch.softmax(wdl_logits.float(), dim=-1).cpu().numpy()  # (B, 3)
        priors = legal_softmax(picked, offsets, self.policy_temperature)
        if plies is not None:
            return priors, wdl.astype(np.float32, copy=False), plies
        return priors, wdl.astype(np.float32, copy=False)

    def __repr__(self) -> str:
        return (f"TorchEvaluator(device={self.device}, precision={self.precision}, "
                f"max_batch={self.max_batch}, policy_temperature={self.policy_temperature})")
