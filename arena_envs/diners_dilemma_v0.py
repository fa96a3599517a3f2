"""γ-Bench `diners_dilemma`: ``env()``, ``raw_env()``, ``parallel_env()``.

Keyword arguments: see :class:`arena_envs.gamma.diners_dilemma.DinersDilemmaEnv` (game parameters, paper
defaults) and :class:`arena_envs.gamma.base.GammaEnv` (options shared by the γ-Bench games).
"""
from arena_envs.core import entry_points, parallel_entry_point
from arena_envs.gamma.diners_dilemma import DinersDilemmaEnv

env, raw_env = entry_points(DinersDilemmaEnv)
parallel_env = parallel_entry_point(DinersDilemmaEnv)

__all__ = ["DinersDilemmaEnv", "env", "parallel_env", "raw_env"]
