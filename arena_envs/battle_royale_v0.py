"""Battle Royale (γ-Bench game 7): ``env()`` and ``raw_env()``; sequential, so no ``parallel_env``.

Keyword arguments: ``n_players=10``, ``hit_rate_base=35``, ``hit_rate_step=5`` (player_i gets
base + i x step percent), ``hit_rates=None`` (an explicit list of percentages instead),
``max_turns=20`` (None: until one is left) and the options shared by the sequential γ-Bench games
(see :class:`arena_envs.gamma.base.GammaEnv`).
"""
from arena_envs.core import entry_points
from arena_envs.gamma.battle_royale import BattleRoyaleEnv

env, raw_env = entry_points(BattleRoyaleEnv)

__all__ = ["BattleRoyaleEnv", "env", "raw_env"]
