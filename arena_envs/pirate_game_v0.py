"""The Pirate Game (γ-Bench game 8): ``env()`` and ``raw_env()``; sequential, so no ``parallel_env``.

Keyword arguments: ``n_players=10`` pirates, ``golds=100`` coins, ``death_reward=-1`` (reward of
a proposer thrown overboard) and the options shared by the sequential γ-Bench games (see
:class:`arena_envs.gamma.base.GammaEnv`).
"""
from arena_envs.core import entry_points
from arena_envs.gamma.pirate_game import PirateGameEnv

env, raw_env = entry_points(PirateGameEnv)

__all__ = ["PirateGameEnv", "env", "raw_env"]
