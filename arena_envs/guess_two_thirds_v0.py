"""Guess 2/3 of the Average (γ-Bench game 1): ``env()``, ``raw_env()``, ``parallel_env()``.

Keyword arguments: ``n_players=10``, ``n_rounds=20``, ``min_value=0``, ``max_value=100``,
``ratio=2/3`` (Fraction, float, ``"2/3"`` or ``"60%"``), ``tie_rule="all"`` and the options shared
by the γ-Bench games (see :class:`arena_envs.gamma.base.GammaEnv`).
"""
from arena_envs.core import entry_points, parallel_entry_point
from arena_envs.gamma.guess import GuessTwoThirdsEnv

env, raw_env = entry_points(GuessTwoThirdsEnv)
parallel_env = parallel_entry_point(GuessTwoThirdsEnv)

__all__ = ["GuessTwoThirdsEnv", "env", "parallel_env", "raw_env"]
