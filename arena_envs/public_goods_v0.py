"""γ-Bench `public_goods`: ``env()``, ``raw_env()``, ``parallel_env()``.

Keyword arguments: see :class:`arena_envs.gamma.public_goods.PublicGoodsEnv` (game parameters, paper defaults)
and :class:`arena_envs.gamma.base.SimultaneousGameEnv` (options shared by the γ-Bench games).
"""
from arena_envs.gamma.base import entry_points
from arena_envs.gamma.public_goods import PublicGoodsEnv

env, raw_env, parallel_env = entry_points(PublicGoodsEnv)

__all__ = ["PublicGoodsEnv", "env", "parallel_env", "raw_env"]
