"""The public face of the network: ``load_network`` and ``Network.predict``.

``Network`` bundles a fp32 model (``build_model``) with its metadata and where it came from,
and answers questions about whole boards (python users, tests, analysis scripts). The
search does not use ``predict``: it talks to an evaluator (``Network.evaluator()``), which
takes the token buffer the Cython core fills.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Iterable

import numpy as np
import torch

from zerochess.neural.checkpoint import load_checkpoint, save_checkpoint
from zerochess.neural.network import NetworkConfig, PolicyValueModel, build_model
from zerochess.neural.shipped import SHIPPED_NETWORKS, shipped_network_path  # noqa: F401 (public here too)
from zerochess.neural.torch_evaluator import TorchEvaluator, resolve_device

logger = logging.getLogger(__name__)

__all__ = ["Network", "load_network", "shipped_network_path", "fresh_network"]

#: Seed of the stand-in network used until a trained one ships (reproducible engine output).
STAND_IN_SEED = 20240601


class Network:
    """A network ready for inference: ``predict`` boards, or build an ``evaluator`` for search.

    Attributes:
        model: the fp32 ``PolicyValueModel`` in eval mode, on ``device``.
        config: its ``NetworkConfig``.
        metadata: the checkpoint's metadata (step, data, metrics, ...); ``{"untrained": True,
            ...}`` for the freshly initialised stand-in.
        source: the checkpoint path, or a description for a network built in memory.
    """

    def __init__(self, model: PolicyValueModel, metadata: dict | None = None,
                 source: str = "<memory>", device: str | torch.device = "cpu") -> None:
        self.device = resolve_device(device)
        self.model = model.eval().to(self.device)
        self.config: NetworkConfig = model.config
        self.metadata = dict(metadata or {})
        self.source = source

    def predict(self, boards: Iterable) -> tuple[np.ndarray, np.ndarray]:
        """Raw policy logits ``[B, POLICY_SIZE]`` and WDL probabilities ``[B, 3]`` (float32).

        ``boards`` holds ``zerochess.chess.Board`` objects or FEN strings (anything else
        with a ``.fen()`` method, e.g. a ``chess.Board``, is converted through its FEN; a
        FEN carries no history, so its repetition token says "not seen before"). Logits
        cover the whole move space, legal or not; mask them with ``legal_move_indices``.
        WDL is (loss, draw, win) from the side to move. Runs in fp32: this is the
        reference the faster evaluators are checked against.
        """
        from zerochess.chess.encoding import encode_board
        from zerochess.chess.threats import network_tokens

        boards = list(boards)
        if not boards:
            p = self.config.policy_size
            return np.zeros((0, p), np.float32), np.zeros((0, 3), np.float32)
        tokens = np.stack([encode_board(_as_board(b)) for b in boards]).astype(np.uint8)
        tokens = network_tokens(tokens, self.config.threat_inputs)  # version 2 if it reads them
        with torch.inference_mode():
            logits, wdl_logits = self.model(torch.from_numpy(tokens).to(self.device))
            wdl = torch.softmax(wdl_logits.float(), dim=-1)
        return logits.float().cpu().numpy(), wdl.cpu().numpy()

    def evaluator(self, **kwargs):
        """A ``TorchEvaluator`` for this network (kwargs: device, threads, precision, ...)."""
        kwargs.setdefault("device", self.device)
        return TorchEvaluator(self, **kwargs)

    def save(self, path: str | os.PathLike, **metadata) -> Path:
        """Write a checkpoint; ``metadata`` updates this network's metadata in the file."""
        return save_checkpoint(path, self.model, {**self.metadata, **metadata})

    def __repr__(self) -> str:
        c = self.config
        return (f"Network(d_model={c.d_model}, n_layers={c.n_layers}, "
                f"policy_head={c.policy_head!r}, source={self.source!r})")


def _as_board(b):
    from zerochess.chess.board import Board

    if isinstance(b, Board):
        return b
    if isinstance(b, str):
        return Board(b)
    if hasattr(b, "fen"):
        return Board(b.fen())
    raise TypeError(f"expected a Board or a FEN string, got {type(b).__name__}")


def fresh_network(preset: str = "tiny", seed: int = STAND_IN_SEED, **overrides) -> PolicyValueModel:
    """A newly initialised model, reproducible from ``seed`` without touching global RNG state."""
    config = NetworkConfig.preset(preset, **overrides)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build_model(config).eval()


def load_network(path: str | os.PathLike | None = None, device: str = "auto") -> Network:
    """Load a checkpoint (``None``: the network shipped with zerochess) onto ``device``.

    Until a trained network ships, ``None`` gives a freshly initialised ``tiny`` network
    with a fixed seed, so the engine runs (and plays reproducibly, if badly) out of the
    box; its metadata says ``untrained`` and a warning is logged. Raises
    ``CheckpointError`` for an unusable file.
    """
    if path is None:
        shipped = shipped_network_path()
        if not shipped.is_file():
            logger.warning("no trained network shipped at %s; using an untrained tiny "
                           "network (seed %d)", shipped, STAND_IN_SEED)
            metadata = {"untrained": True, "preset": "tiny", "seed": STAND_IN_SEED}
            return Network(fresh_network(), metadata, "<untrained tiny stand-in>", device)
        path = shipped
    model, info = load_checkpoint(path)
    return Network(model, info["metadata"], str(path), device)
