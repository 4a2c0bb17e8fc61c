"""The search: MCTS core (Cython), transposition table, time manager.

Import what you need from the submodules (``zerochess.search.search.Search``,
``zerochess.search.forest.Forest``, ``zerochess.search.params.SearchParams``); nothing is
imported here so that the UCI startup path stays fast. docs/search.md describes the design.
"""
