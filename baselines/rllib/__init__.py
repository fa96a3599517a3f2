"""RLlib baselines: PPO in several seats of a suite game at once, on a Ray cluster or a local one.

* :mod:`baselines.rllib.env`: the suite's games under RLlib's ``PettingZooEnv`` wrapper, through
  :class:`arena_envs.rl.NumericAEC` (numeric observations; the text never reaches the network);
* :mod:`baselines.rllib.masking`: the PPO module that masks illegal actions;
* :mod:`baselines.rllib.train`: :func:`~baselines.rllib.train.train` (multi-agent PPO, saved modules);
* :mod:`baselines.rllib.policy`: the policy spec ``rllib:PATH`` (a trained module as a player).

Needs the ``ray`` extra (``pip install -e '.[ray]'``). Ray is imported only by these modules, and
the package itself imports nothing (its modules are imported by name).
"""
