"""AucArena (Chen et al., 2023): a multi-item English auction with budgets. See ``docs/envs/auction.md``."""
from arena_envs.auction.env import AuctionEnv
from arena_envs.auction.items import POOL_ITEMS, TABLE1_ITEMS, Item

__all__ = ["POOL_ITEMS", "TABLE1_ITEMS", "AuctionEnv", "Item"]
