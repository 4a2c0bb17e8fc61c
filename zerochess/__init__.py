"""zerochess: a UCI chess engine that learns the AlphaZero way.

Subpackages are concepts: ``chess`` (the native board, the input encoding), ``neural``
(the network, its files and evaluators), ``search`` (the MCTS core, time management),
``uci`` (the protocol loop, the only printer of UCI text), ``train`` (data, supervised and
self-play training), ``match``, ``book``, ``tune`` and ``client``; README.md has the map.
"""

from zerochess._version import __version__

__all__ = ["__version__"]
