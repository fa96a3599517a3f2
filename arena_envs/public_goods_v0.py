"""γ-Bench `public_goods`: ``env()``, ``raw_env()``, ``parallel_env()``.

Keyword arguments: see :class:`arena_envs.gamma.public_goods.PublicGoodsEnv` (game parameters, paper
defaults) and :class:`arena_envs.gamma.base.GammaEnv` (options shared by the γ-Bench games).
"""
from arena_envs.core import entry_points, parallel_entry_point
from arena_envs.gamma.public_goods import PublicGoodsEnv

env, raw_env = entry_points(PublicGoodsEnv)
parallel_env = parallel_entry_point(PublicGoodsEnv)

__all__ = ["PublicGoodsEnv", "env", "parallel_env", "raw_env"]
