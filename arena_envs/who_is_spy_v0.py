"""Who is Spy (WiS): six players, one spy with a related word; describe, deceive and vote.

``env(**kwargs)`` returns the wrapped AEC environment, ``raw_env(**kwargs)`` the bare one. Turns
are sequential (each clue is public as soon as it is said), so there is no ``parallel_env``.
Arguments and their defaults: :class:`arena_envs.who_is_spy.env.WhoIsSpyEnv`.
"""
from __future__ import annotations

from arena_envs.core import entry_points
from arena_envs.who_is_spy.env import WhoIsSpyEnv

env, raw_env = entry_points(WhoIsSpyEnv)

__all__ = ["WhoIsSpyEnv", "env", "raw_env"]
