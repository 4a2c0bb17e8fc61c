"""Evaluator defaults that the UCI options declare too: a module of plain constants, so that
``uci/options.py`` reads them while the engine answers ``uci`` without importing numpy or a
backend (issue 29: ``uciok`` within 0.3 s of launch)."""

#: Softmax temperature of the priors unless one is given (UCI ``PolicyTemperature``'s
#: default): 1 is the network's own distribution.
DEFAULT_POLICY_TEMPERATURE = 1.0
