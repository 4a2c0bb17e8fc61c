"""The log file of a run directory (train.log, selfplay.log): attached to a logger for the
run's lifetime, detached at its end so a second run in the same process logs elsewhere."""

from __future__ import annotations

import logging
import os


def attach_log(logger: logging.Logger, path: str | os.PathLike) -> None:
    """Log ``logger``'s INFO records to ``path`` too (once, however often it is called)."""
    path = os.path.abspath(path)
    if not any(getattr(h, "baseFilename", None) == path for h in logger.handlers):
        h = logging.FileHandler(path)
        h.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        logger.addHandler(h)
    logger.setLevel(logging.INFO)


def detach_log(logger: logging.Logger, path: str | os.PathLike) -> None:
    path = os.path.abspath(path)
    for h in list(logger.handlers):
        if getattr(h, "baseFilename", None) == path:
            logger.removeHandler(h)
            h.close()
