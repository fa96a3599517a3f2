"""γ-Bench `el_farol`: ``env()``, ``raw_env()``, ``parallel_env()``.

Keyword arguments: see :class:`arena_envs.gamma.el_farol.ElFarolEnv` (game parameters, paper
defaults) and :class:`arena_envs.gamma.base.GammaEnv` (options shared by the γ-Bench games).
"""
from arena_envs.core import entry_points, parallel_entry_point
from arena_envs.gamma.el_farol import ElFarolEnv

env, raw_env = entry_points(ElFarolEnv)
parallel_env = parallel_entry_point(ElFarolEnv)

__all__ = ["ElFarolEnv", "env", "parallel_env", "raw_env"]
