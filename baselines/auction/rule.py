"""AucArena baselines: the paper's rule bidder and our scripted test bidders.

They read the structured state in ``info`` (never the text) and answer with native actions of the
environment's ``action_mode`` (``discrete``: 0 withdraw, 1 = the minimum valid bid, k = + (k−1)·inc;
``amount``: dollars, −1 withdraw).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arena_envs.core.policy import Policy


class _AuctionPolicy(Policy):
    reads_text = False  # decides from the info, mask and features

    def __init__(self) -> None:
        self._amount_mode = False

    def bind(self, env: Any) -> None:
        self._amount_mode = env.settings.action_mode == "amount"

    def _bid(self, amount: int, info: dict[str, Any]) -> int:
        if self._amount_mode:
            return amount
        return 1 + (amount - info["min_valid_bid"]) // info["increment"]

    def _withdraw(self) -> int:
        return -1 if self._amount_mode else 0


class RuleBidder(_AuctionPolicy):
    """Raises the standing bid by the minimum (or opens at the starting price) at most ``K`` times per
    item while the budget allows, else withdraws. Ignores values, order and opponents."""

    name = "rule"

    def __init__(self, K: int = 4):
        super().__init__()
        if K < 0:
            raise ValueError(f"K must be >= 0, got {K}")
        self.K = K
        self._item: int | None = None
        self._count = 0

    def reset(self, agent: str, seed: int | None = None) -> None:
        self._item, self._count = None, 0

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        if info["item_index"] != self._item:
            self._item, self._count = info["item_index"], 0
        amount = info["min_valid_bid"]
        if info["remaining_budget"] >= amount and self._count < self.K:
            self._count += 1
            return self._bid(amount, info)
        return self._withdraw()


class AlwaysWithdraw(_AuctionPolicy):
    """Withdraws every time."""

    name = "always_withdraw"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        return self._withdraw()


class TruthfulMinRaise(_AuctionPolicy):
    """Bids the minimum valid bid while it is <= min(budget, own estimate): shows the winner's curse."""

    name = "truthful"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        amount = info["min_valid_bid"]
        if amount <= min(info["remaining_budget"], info["est_value"]):
            return self._bid(amount, info)
        return self._withdraw()


class RandomValid(_AuctionPolicy):
    """Withdraws with probability ``q``, else bids a uniformly random multiple of the increment between
    the minimum valid bid and min(budget, own estimate) (withdraws if that range is empty)."""

    name = "random_valid"

    def __init__(self, q: float = 0.3):
        super().__init__()
        if not 0 <= q <= 1:
            raise ValueError(f"q must be in [0, 1], got {q}")
        self.q = q
        self._rng = np.random.default_rng()

    def reset(self, agent: str, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        low = info["min_valid_bid"]
        high = min(info["remaining_budget"], info["est_value"])
        if self._rng.random() < self.q or high < low:
            return self._withdraw()
        steps = (high - low) // info["increment"]
        return self._bid(low + int(self._rng.integers(steps + 1)) * info["increment"], info)
