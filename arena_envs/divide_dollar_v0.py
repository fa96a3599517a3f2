"""γ-Bench `divide_dollar`: ``env()``, ``raw_env()``, ``parallel_env()``.

Keyword arguments: see :class:`arena_envs.gamma.divide_dollar.DivideDollarEnv` (game parameters, paper
defaults) and :class:`arena_envs.gamma.base.GammaEnv` (options shared by the γ-Bench games).
"""
from arena_envs.core import entry_points, parallel_entry_point
from arena_envs.gamma.divide_dollar import DivideDollarEnv

env, raw_env = entry_points(DivideDollarEnv)
parallel_env = parallel_entry_point(DivideDollarEnv)

__all__ = ["DivideDollarEnv", "env", "parallel_env", "raw_env"]
