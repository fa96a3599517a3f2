"""AucArena multi-item English auction with budgets (planning, bidding, belief tracking).

``env(**kwargs)`` returns the wrapped AEC environment, ``raw_env(**kwargs)`` the bare one. The
auction has simultaneous rounds but variable eligibility (the leader skips), so it offers no
``parallel_env``. Arguments and their defaults: :class:`arena_envs.auction.env.AuctionEnv`.
"""
from __future__ import annotations

from typing import Any

from pettingzoo.utils import wrappers

from arena_envs.auction.env import AuctionEnv

#: Metrics the run's leaderboard table shows beside TrueSkill (all metrics stay in leaderboard.json).
LEADERBOARD_METRICS = ("profit", "items_won", "money_left", "failed_bid_rate", "parse_failures", "belief_error_rate")


def raw_env(**kwargs: Any) -> AuctionEnv:
    return AuctionEnv(**kwargs)


def env(**kwargs: Any):
    """The auction wrapped in PettingZoo's OrderEnforcingWrapper (illegal moves are handled by the
    environment itself, with the auctioneer's correction, so no TerminateIllegalWrapper)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))
