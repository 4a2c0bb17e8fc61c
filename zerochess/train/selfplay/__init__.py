"""Self-play reinforcement (phase 2): actors play through the engine's own search, the
learner trains on the replay window, gating promotes a better network, ratings in Elo.

``loop.SelfPlayRun`` drives an iteration (actors -> learner -> gate); ``cli.selfplay`` is
the `zerochess train selfplay` command."""
