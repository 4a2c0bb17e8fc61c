"""The network architectures: one module per ``NetworkConfig.architecture`` value.

Each module defines a ``zerochess.neural.network.PolicyValueModel`` subclass and names it
``Model``; ``zerochess.neural.network.build_model`` finds it by the module's name. How to add
one: ``zerochess/neural/network.py``'s docstring.
"""
