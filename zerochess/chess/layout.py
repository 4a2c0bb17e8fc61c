"""The network's input and output sizes, written once (plain Python: no torch, no compiled code).

``encoding.pyx`` documents the layout these numbers size (72 tokens per position, 44 token
values, 4168 policy indices). Every Python user imports them from here (or, equally, from
``zerochess.chess.encoding``, which re-exports the same values). The only other copy is the
C enum in ``encoding.pxd`` that the nogil encoder and the search need at compile time;
``encoding`` refuses to import when the two disagree, so a changed layout cannot ship half-done.
"""

SEQ_LEN = 72  # tokens per position
VOCAB_SIZE = 44  # distinct token values
N_SQUARES = 64
N_FROM_TO = N_SQUARES * N_SQUARES  # from-square x to-square policy indices
N_UNDERPROMOTIONS = 72  # 8 from-files x 3 directions x 3 pieces
POLICY_SIZE = N_FROM_TO + N_UNDERPROMOTIONS  # 4168
N_THREAT_FLAGS = 4  # threat inputs, per square: opponent attacks it (bit 0), mover does (bit 1)
THREAT_VOCAB_SIZE = VOCAB_SIZE * N_THREAT_FLAGS  # version-2 token values (threats.pyx): 176

__all__ = ["SEQ_LEN", "VOCAB_SIZE", "N_SQUARES", "N_FROM_TO", "N_UNDERPROMOTIONS", "POLICY_SIZE",
           "N_THREAT_FLAGS", "THREAT_VOCAB_SIZE"]
