"""The network architectures: one module per ``NetworkConfig.architecture`` value.

Each module defines a ``zerochess.engine.network.PolicyValueModel`` subclass and names it
``Model``; ``zerochess.engine.network.build_model`` finds it by the module's name. How to add
one: ``zerochess/engine/network.py``'s docstring.
"""
