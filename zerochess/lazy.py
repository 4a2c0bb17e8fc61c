"""Package names imported on first use (PEP 562), written once for every package that wants it.

``zerochess.chess`` and ``zerochess.neural`` export their main names at the package level
(``from zerochess.chess import Board``), yet importing one light submodule of theirs must
cost nothing else: the UCI handshake imports ``chess.layout`` and ``neural.extras`` but
neither the board (python-chess) nor a network runtime. So each package lists which module
defines each name, and ``lazy_exports`` gives it the module-level ``__getattr__`` and
``__dir__`` that import a name's module on its first lookup and keep the name.
"""

from __future__ import annotations

import importlib
from typing import Callable


def lazy_exports(package: str, where: dict[str, str], namespace: dict
                 ) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """(``__getattr__``, ``__dir__``) for ``package`` whose globals are ``namespace``:
    ``where`` maps each exported name to the module that defines it."""

    def __getattr__(name: str) -> object:
        if name in where:
            value = getattr(importlib.import_module(where[name]), name)
            namespace[name] = value  # once: later lookups do not come back here
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
