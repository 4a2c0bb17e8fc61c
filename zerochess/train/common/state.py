"""Versioned state files of resumable runs, and the RNG states an exact resume restores.

Every state a run writes for itself (resume.pt, learner.pt, state.json) carries a format
name and version, so a file from another program or an incompatible zerochess is refused
with a message naming it instead of being half-applied.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np

from zerochess.atomic import write_atomic


def check_version(state: object, path: str | os.PathLike, fmt: str, version: int, what: str,
                  error: type[Exception] = ValueError) -> dict:
    """``state`` if it is a dict of format ``fmt`` version ``version``; else ``error``."""
    if not isinstance(state, dict) or state.get("format") != fmt or state.get("format_version") != version:
        raise error(f"{path}: not a zerochess {what} of version {version}")
    return state


def save_state(path: str | os.PathLike, fmt: str, version: int, payload: dict) -> None:
    """``torch.save`` ``payload`` with its format header, atomically."""
    import torch

    state = {"format": fmt, "format_version": version, **payload}
    write_atomic(path, lambda f: torch.save(state, f))


def load_state(path: str | os.PathLike, fmt: str, version: int, what: str,
               error: type[Exception] = ValueError) -> dict:
    """Read a state written by ``save_state``; ``error`` names the file when it is
    unreadable or of another format or version."""
    import torch

    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise error(f"{path}: unreadable {what} ({type(e).__name__}: {e})") from e
    return check_version(state, path, fmt, version, what, error)


def rng_state() -> dict:
    """The torch (CPU and CUDA), numpy and python RNG states, in a form ``torch.load`` with
    ``weights_only`` accepts (tensors, numbers, lists)."""
    import torch

    np_state = np.random.get_state(legacy=False)
    py = random.getstate()
    return {"torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            "numpy": {"bit_generator": np_state["bit_generator"],
                      "key": torch.from_numpy(np_state["state"]["key"].astype(np.int64)),
                      "pos": int(np_state["state"]["pos"]),
                      "has_gauss": int(np_state["has_gauss"]), "gauss": float(np_state["gauss"])},
            "python": [py[0], list(py[1]), py[2]]}


def set_rng_state(s: dict) -> None:
    import torch

    torch.set_rng_state(s["torch"])
    if s["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(s["cuda"])
    n = s["numpy"]
    np.random.set_state({"bit_generator": n["bit_generator"],
                         "state": {"key": n["key"].numpy().astype(np.uint32), "pos": n["pos"]},
                         "has_gauss": n["has_gauss"], "gauss": n["gauss"]})
    random.setstate((s["python"][0], tuple(s["python"][1]), s["python"][2]))
