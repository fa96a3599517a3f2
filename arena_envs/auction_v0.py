"""AucArena multi-item English auction with budgets (planning, bidding, belief tracking).

``env(**kwargs)`` returns the wrapped AEC environment, ``raw_env(**kwargs)`` the bare one. The
auction has simultaneous rounds but variable eligibility (the leader skips), so it offers no
``parallel_env``. Arguments and their defaults: :class:`arena_envs.auction.env.AuctionEnv`.
"""
from __future__ import annotations

from arena_envs.auction.env import AuctionEnv
from arena_envs.core import entry_points

env, raw_env = entry_points(AuctionEnv)

__all__ = ["AuctionEnv", "env", "raw_env"]
