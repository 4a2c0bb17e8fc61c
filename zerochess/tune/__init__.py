"""`zerochess tune`: SPSA over any numeric UCI option, played through the match runner.

Modules: `params` (the ``NAME=START,MIN,MAX,C_END,R_END`` specs, bound to the engine's
declared options), `spsa` (the gains and the update rule, pure), `engine` (asks the engine
which options it has and whether it takes the values), `games` (an iteration's games through
`zerochess.match`), `state` (state.json and history.jsonl: exact resume), `run` (the loop and
the plot), `cli`. docs/tune.md says how to use it.
"""
