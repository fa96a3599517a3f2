"""AucArena multi-item English auction with budgets (planning, bidding, belief tracking).

``env(**kwargs)`` returns the wrapped AEC environment, ``raw_env(**kwargs)`` the bare one. The
auction has simultaneous rounds but variable eligibility (the leader skips), so it offers no
``parallel_env``. Arguments and their defaults: :class:`arena_envs.auction.env.AuctionEnv`.
"""
from __future__ import annotations

from arena_envs.auction.env import AuctionEnv
from arena_envs.core import entry_points

#: AucArena ranks its bidders with TrueSkill over the episodes (the run's leaderboard does too).
RATING = "trueskill"
#: Metrics the run's leaderboard table shows beside TrueSkill (all metrics stay in leaderboard.json).
LEADERBOARD_METRICS = ("profit", "items_won", "money_left", "failed_bid_rate", "parse_failures", "belief_error_rate")

env, raw_env = entry_points(AuctionEnv)

__all__ = ["AuctionEnv", "env", "raw_env"]
