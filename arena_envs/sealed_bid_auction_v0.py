"""γ-Bench `sealed_bid_auction`: ``env()``, ``raw_env()``, ``parallel_env()``.

Keyword arguments: see :class:`arena_envs.gamma.sealed_bid_auction.SealedBidAuctionEnv` (game parameters, paper
defaults) and :class:`arena_envs.gamma.base.GammaEnv` (options shared by the γ-Bench games).
"""
from arena_envs.core import entry_points, parallel_entry_point
from arena_envs.gamma.sealed_bid_auction import SealedBidAuctionEnv

env, raw_env = entry_points(SealedBidAuctionEnv)
parallel_env = parallel_entry_point(SealedBidAuctionEnv)

__all__ = ["SealedBidAuctionEnv", "env", "parallel_env", "raw_env"]
