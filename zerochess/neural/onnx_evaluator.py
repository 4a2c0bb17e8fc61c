"""The ONNX Runtime backend: a network run by onnxruntime on the CPU.

It runs either an ``.onnx`` network file (``zerochess.neural.onnx_network``: the shipped
networks, ``zerochess export``'s output; no torch needed) or a torch model exported on the
fly (a ``.pt`` checkpoint as ``WeightsFile``; needs the ``train`` extra), cached as below.

Same ABI as the torch backend (``zerochess.neural.evaluator``): one ``session.run`` per
batch gives the policy logits and WDL probabilities, and the legal-move gather and softmax
are the ones every backend shares (``gather_index``, ``legal_softmax``). A network with
threat inputs gets the batch's tokens as version 2 (``threats.add_threats``); the search
hands version 1 to every evaluator.

Exporting (torch's TorchScript exporter, dynamic batch dimension) costs about 0.8 s for the
shipped network (0.2 s importing ``onnx``, 0.6 s tracing and serialising), more for larger
ones, so the exported model is cached in the user's cache directory (``cache_dir()``) under
a hash of the network's content: its config and every weight, plus the exporter's version.
A name is never reused for another network, whichever checkpoint file (or none) it came
from, and a checkpoint whose metadata alone changed shares the entry. A cache file holds
the SHA-256 of its body, the network's key, torch's fp32 outputs on a few probe positions
and the ONNX model; a file that fails the checksum, names another key, that onnxruntime
rejects or whose outputs differ from the stored ones is rebuilt, never trusted. Files are written atomically (temporary
file + rename) and only the ``CACHE_ENTRIES`` most recently used are kept.

onnxruntime, onnx and torch are imported inside the functions, so importing this module is
cheap and needs none of them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

import numpy as np

from zerochess.atomic import write_atomic
from zerochess.neural.evaluator import empty_outputs, gather_index, legal_softmax
from zerochess.chess.threats import network_tokens
from zerochess.neural.onnx_network import (PROBE_FENS, OnnxNetwork, probe_tokens,  # noqa: F401
                                            probe_tolerances, session_options)

logger = logging.getLogger(__name__)

__all__ = ["OnnxEvaluator", "cache_dir", "export_onnx", "network_key", "onnx_available",
           "session_options"]

#: Bumped when the exported graph changes meaning (inputs, outputs, ``_exportable``).
EXPORT_FORMAT = "zerochess-onnx-2"
OPSET = 17
#: Cache files kept (the most recently used); self-play loads a new checkpoint often.
CACHE_ENTRIES = 16
_MAGIC = b"ZCONNX1\n"
def onnx_available() -> bool:
    """Whether a torch model can run here through ONNX Runtime: onnxruntime, the exporter's
    ``onnx`` and torch are installed (``.onnx`` files need only onnxruntime)."""
    from zerochess.neural.extras import exporter_installed, onnxruntime_installed

    return onnxruntime_installed() and exporter_installed()


def cache_dir() -> Path:
    """``$ZEROCHESS_CACHE_DIR``, else ``$XDG_CACHE_HOME/zerochess``, else ``~/.cache/zerochess``
    (``%LOCALAPPDATA%\\zerochess\\cache`` on Windows)."""
    if os.environ.get("ZEROCHESS_CACHE_DIR"):
        return Path(os.environ["ZEROCHESS_CACHE_DIR"])
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "zerochess" / "cache"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "zerochess"


def output_names(moves_left: bool) -> list[str]:
    """The graph's outputs: "policy", "wdl", and "moves_left" for a network with the head."""
    return ["policy", "wdl", "moves_left"] if moves_left else ["policy", "wdl"]


def _exportable(model):
    """The module exported: tokens (B, 72) uint8 -> policy logits (B, P), WDL probabilities
    (B, 3), and with a moves-left head the plies left (B,).

    Only legal moves' logits are read (``legal_only``), so the graph leaves out what changes
    nothing else, such as the reach mask. A network without the head exports the graph it
    exported before the head existed."""
    import torch

    class Exportable(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, tokens):
            logits, wdl_logits = self.model(tokens, legal_only=True)
            return logits.float(), torch.softmax(wdl_logits.float(), dim=-1)

    class ExportableMovesLeft(Exportable):
        def forward(self, tokens):
            logits, wdl_logits, plies = self.model.forward_all(tokens, legal_only=True)
            return logits.float(), torch.softmax(wdl_logits.float(), dim=-1), plies.float()

    return (ExportableMovesLeft() if model.config.moves_left else Exportable()).eval()


def network_key(model) -> str:
    """Hex SHA-256 of what the exported graph depends on: config, weights, exporter."""
    import torch

    h = hashlib.sha256(f"{EXPORT_FORMAT}|opset {OPSET}|torch {torch.__version__}|".encode())
    # to_dict, not asdict: a network without the newer options keeps the key it had
    h.update(json.dumps(model.config.to_dict(), sort_keys=True, default=str).encode())
    for name, tensor in sorted(model.state_dict().items()):
        t = tensor.detach().to("cpu", torch.float32).contiguous()
        h.update(f"|{name}{tuple(t.shape)}|".encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()


def export_onnx(model) -> bytes:
    """``model`` (fp32, CPU) as an ONNX model with a dynamic batch dimension; for a
    quantization-aware network (``config.qat``) the int8 graph of it (``int8_export``)."""
    import io
    import warnings

    import torch

    from zerochess.neural.fake_quant import Int8Linear, int8_linears

    buffer = io.BytesIO()
    example = torch.zeros((2, model.config.seq_len), dtype=torch.uint8)  # 2: B stays symbolic
    outputs = output_names(model.config.moves_left)
    int8 = int8_linears(model)
    simulating = [m for m in model.modules() if isinstance(m, Int8Linear) and m.fake_quant]
    for m in simulating:  # trace the fp32 matmuls; the quantizer makes them int8
        m.fake_quant = False
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # the tracer's notes on shape arithmetic
            torch.onnx.export(
                _exportable(model), (example,), buffer, dynamo=False, opset_version=OPSET,
                input_names=["tokens"], output_names=outputs,
                dynamic_axes={"tokens": {0: "batch"}, **{name: {0: "batch"} for name in outputs}},
            )
    finally:
        for m in simulating:
            m.fake_quant = True
    if not int8:
        return buffer.getvalue()
    from zerochess.neural.int8_export import matmul_node_names, quantize_matmuls

    return quantize_matmuls(buffer.getvalue(), matmul_node_names(buffer.getvalue(), int8))


def read_cached(path: Path, key: str, reference_size: int) -> tuple[bytes, bytes] | None:
    """(reference outputs, ONNX bytes) of the cache file of network ``key`` if the file is
    whole and names that key; None for one that is absent, truncated, altered or another's."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(_MAGIC) + 32
    if len(data) <= head + 64 + reference_size or not data.startswith(_MAGIC):
        return None
    body = data[head:]
    if hashlib.sha256(body).digest() != data[len(_MAGIC):head] or body[:64] != key.encode():
        return None
    return body[64:64 + reference_size], body[64 + reference_size:]


def write_cached(path: Path, key: str, reference: bytes, onnx_bytes: bytes) -> None:
    """Write atomically (a reader sees the old file or the whole new one); prune old entries.

    Layout: magic, SHA-256 of the rest, the network's key (64 hex digits), the reference
    outputs, the ONNX model."""
    body = key.encode() + reference + onnx_bytes
    write_atomic(path, lambda f: f.write(_MAGIC + hashlib.sha256(body).digest() + body))
    entries = sorted(path.parent.glob("*.onnxc"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[CACHE_ENTRIES:]:
        old.unlink(missing_ok=True)


class OnnxEvaluator:
    """An ``.onnx`` network file, or a torch network exported to ONNX, run by onnxruntime on
    the CPU.

    Args:
        network: an ``OnnxNetwork`` (``read_onnx_network``: its session is used as it is,
            no torch), or a ``PolicyValueModel`` or anything with a ``.model`` holding one
            (an fp32 CPU copy is exported, the caller's model is untouched).
        threads: onnxruntime intra-op threads (the engine's ``Threads``); None: its default.
            An ``OnnxNetwork`` was opened with its own (``read_onnx_network``).
        policy_temperature: priors are softmax(logits / T) over the legal moves; the
            attribute may be changed between batches and touches nothing of the model.
        max_batch: the batch size the search should aim for (a hint; any batch works).
        cache: directory of exported models (None: ``cache_dir()``); False: never cache.

    Raises RuntimeError when a fresh export does not reproduce torch's outputs on the
    probe positions (an exporter or runtime bug: better no backend than a wrong one).
    """

    def __init__(self, network, threads: int | None = None, policy_temperature: float = 1.0,
                 max_batch: int = 256, cache: str | os.PathLike | None | bool = None) -> None:
        import copy

        if policy_temperature <= 0:
            raise ValueError(f"policy_temperature must be positive, got {policy_temperature}")
        self.policy_temperature = float(policy_temperature)
        self.max_batch = int(max_batch)
        self.threads = threads
        self.cache_hit = False  # whether the ONNX model came from the cache
        self.cache_path = None
        if isinstance(network, OnnxNetwork):
            self.config = network.config  # a plain dict: no torch
            self.policy_size = network.policy_size
            self.source = network.source
            self.session = network.session
            self.threat_inputs = network.threat_inputs
            self.moves_left = network.moves_left
            return
        model = getattr(network, "model", network)
        self.config = model.config
        #: The network reads version-2 tokens: ``forward`` adds the threat flags.
        self.threat_inputs = bool(model.config.threat_inputs)
        #: The network has a moves-left head: ``evaluate`` returns its plies too.
        self.moves_left = bool(model.config.moves_left)
        self.policy_size = model.config.policy_size
        self.source = getattr(network, "source", "<memory>")
        model = copy.deepcopy(model).eval().float().cpu()
        self._key = network_key(model)
        if cache is not False:
            folder = cache_dir() if cache in (None, True) else Path(cache)
            self.cache_path = folder / f"{self._key[:40]}.onnxc"
        self.session = self._session_for(model)

    def _session_for(self, model):
        tokens = probe_tokens(self.threat_inputs)  # what the graph reads
        # float32 logits, WDL (and plies left) of each probe position
        size = tokens.shape[0] * (self.policy_size + 3 + self.moves_left) * 4
        if self.cache_path is not None:
            cached = read_cached(self.cache_path, self._key, size)
            if cached is not None:
                # torch's outputs at export time, covered by the checksum: no torch forward
                reference = np.frombuffer(cached[0], np.float32).reshape(tokens.shape[0], -1)
                session = self._try_session(cached[1], tokens, reference)
                if session is not None:
                    self.cache_hit = True
                    os.utime(self.cache_path)  # most recently used: pruned last
                    return session
            if self.cache_path.exists():
                logger.warning("ONNX cache file %s is corrupt; rebuilding it", self.cache_path)
        reference = self._reference(model, tokens)
        onnx_bytes = export_onnx(model)
        session = self._try_session(onnx_bytes, tokens, reference)
        if session is None:
            raise RuntimeError("the ONNX export of this network does not reproduce its "
                               "torch outputs; use Backend torch-fp32")
        if self.cache_path is not None:
            try:
                write_cached(self.cache_path, self._key, reference.tobytes(), onnx_bytes)
            except OSError as exc:  # a read-only home: run without the cache
                logger.warning("cannot write the ONNX cache %s: %s", self.cache_path, exc)
        return session

    @staticmethod
    def _reference(model, tokens: np.ndarray) -> np.ndarray:
        """torch's fp32 outputs on the probe tokens: float32 [K, P + 3] (logits, then WDL),
        [K, P + 4] with the plies left last for a network with a moves-left head."""
        import torch

        with torch.inference_mode():
            outputs = _exportable(model)(torch.from_numpy(tokens))
        columns = [o.numpy().reshape(len(tokens), -1) for o in outputs]
        return np.concatenate(columns, axis=1).astype(np.float32)

    def _try_session(self, onnx_bytes: bytes, tokens: np.ndarray, reference: np.ndarray):
        """A session for these bytes if it loads and reproduces ``reference``, else None."""
        import onnxruntime as ort

        try:
            session = ort.InferenceSession(onnx_bytes, session_options(self.threads),
                                           providers=["CPUExecutionProvider"])
            outputs = session.run(None, {"tokens": tokens})
        except Exception as exc:  # onnxruntime raises its own types for a bad model
            logger.warning("onnxruntime rejects the model: %s", (str(exc).splitlines() or ["?"])[0])
            return None
        if len(outputs) != 2 + self.moves_left:
            logger.warning("the ONNX model has %d outputs, not %d", len(outputs), 2 + self.moves_left)
            return None
        logits, wdl = outputs[:2]
        P = self.policy_size
        # fp32 with another summation order differs by ~1e-5: 1e-3 is far below what moves
        # a prior and far above rounding; an int8 graph (qat) has its own, looser bounds.
        logit_tol, wdl_tol, plies_tol = probe_tolerances(bool(self.config.qat))
        ref_logits, ref_wdl = reference[:, :P], reference[:, P:P + 3]
        same_plies = not self.moves_left or np.allclose(outputs[2], reference[:, P + 3],
                                                        rtol=1e-3, atol=plies_tol)
        if not (logits.shape == ref_logits.shape and same_plies
                and np.allclose(logits, ref_logits, rtol=1e-3, atol=logit_tol)
                and np.allclose(wdl, ref_wdl, atol=wdl_tol)):
            logger.warning("the ONNX model's outputs differ from torch's on the probe positions")
            return None
        return session

    def forward(self, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Raw network outputs for a batch of version-1 tokens (the search's): (policy
        logits [B, P], WDL probs [B, 3]); only legal moves' logits are meaningful
        (``legal_only``)."""
        logits, wdl = self._run(tokens)[:2]
        return logits, wdl

    def _run(self, tokens: np.ndarray) -> list[np.ndarray]:
        """The graph's outputs (``output_names``) for a batch of version-1 tokens."""
        tokens = network_tokens(np.ascontiguousarray(tokens), self.threat_inputs)
        return self.session.run(None, {"tokens": tokens})

    def evaluate(self, tokens: np.ndarray, legal_idx: np.ndarray, offsets: np.ndarray
                 ) -> tuple[np.ndarray, ...]:
        """(priors [N], WDL [B, 3]), and the plies left [B] for a network with a
        moves-left head (the ABI, zerochess.neural.evaluator)."""
        flat = gather_index(tokens, legal_idx, offsets, self.policy_size)  # (N,)
        if flat is None:
            return empty_outputs(self.moves_left)
        outputs = self._run(tokens)  # (B, P), (B, 3)[, (B,)]
        priors = legal_softmax(outputs[0].reshape(-1)[flat], offsets, self.policy_temperature)
        wdl = outputs[1].astype(np.float32, copy=False)
        if self.moves_left:
            return priors, wdl, outputs[2].astype(np.float32, copy=False)
        return priors, wdl

    def __repr__(self) -> str:
        return (f"OnnxEvaluator(threads={self.threads}, max_batch={self.max_batch}, "
                f"policy_temperature={self.policy_temperature}, cache_hit={self.cache_hit})")
