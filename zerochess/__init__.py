"""zerochess: a UCI chess engine that learns the AlphaZero way.

Subpackages are concepts: ``engine`` (native board, encoding, network, evaluator),
``search`` (MCTS core, time manager), ``uci`` (the protocol loop, the only printer of UCI
text) and ``train`` (data generation, supervised and self-play training, matches).
"""

from zerochess._version import __version__

__all__ = ["__version__"]
