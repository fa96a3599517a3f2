"""Sealed-Bid Auction (γ-Bench game 6) as a PettingZoo AEC environment.

Native action ``a`` bids ``a`` (``Discrete(valuation_max + 1)``; masked to ``a <= valuation``
when ``allow_overbid=False``); a text answer is ``{"bid": "<integer>"}``. Reward: valuation -
price for the winner, 0 for everyone else. Players see the winning bid and the price, never
the winner, the other bids or the other valuations. ``infos[agent]["valuation"]`` holds the
current private valuation.

Only first-price is scored by γ-Bench; for ``mode="second"`` the metrics' score is ``None``
unless ``score_variant="second_price_diagnostic"``.
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from arena_envs.gamma.answer import IntField, format_instruction
from arena_envs.gamma.base import fmt
from arena_envs.gamma.sealed_bid_auction_rules import SealedBidRules
from arena_envs.gamma.simultaneous import SimultaneousGameEnv

NA = -1.0


class SealedBidAuctionEnv(SimultaneousGameEnv):
    """First- or second-price sealed bids; see :mod:`arena_envs.gamma.sealed_bid_auction_rules`."""

    metadata: ClassVar[dict[str, Any]] = {"name": "sealed_bid_auction_v0", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": True}
    game_feature_names = ("valuation", "valuation_max", "mode", "own_last_bid", "last_winning_bid", "last_price",
                          "own_last_won", "own_last_utility")

    def __init__(self, n_players: int = 10, n_rounds: int = 20, valuation_min: int = 0, valuation_max: int = 200,
                 interval: int = 10, mode: str = "first", valuation_rng: str = "paper", valuation_seed: int = 42,
                 allow_overbid: bool = True, tie_break: str = "random", **options: Any):
        self.settings = SealedBidRules(n_players, n_rounds, valuation_min, valuation_max, interval, mode,
                                    valuation_rng, valuation_seed, bool(allow_overbid), tie_break)
        self._any_bid = IntField("bid", 0, valuation_max)
        super().__init__(n_players=n_players, n_rounds=n_rounds, values=range(valuation_max + 1), **options)

    def params(self) -> dict[str, Any]:
        r = self.settings
        return {"n_players": self.n_players, "n_rounds": self.n_rounds, "valuation_min": r.valuation_min,
                "valuation_max": r.valuation_max, "interval": r.interval, "mode": r.mode,
                "valuation_rng": r.valuation_rng, "valuation_seed": r.valuation_seed, "allow_overbid": r.allow_overbid,
                "tie_break": r.tie_break}

    def _scored(self) -> bool:
        return self.settings.mode == "first" or self.score_variant == "second_price_diagnostic"

    def _intro(self) -> str:
        return f"You are one of {self.n_players} bidders in a sealed-bid auction that lasts {self.n_rounds} rounds."

    def _rules(self) -> list[str]:
        r = self.settings
        price = ("The highest bid wins, and the winner pays its own bid (the highest bid)." if r.mode == "first"
                 else "The highest bid wins, and the winner pays the second-highest bid.")
        return [
            f"At the start of every round each bidder receives a private valuation of the item for sale, between "
            f"{r.valuation_min} and {r.valuation_max}.",
            "Each bidder submits one secret bid, without knowing the other bids or valuations.",
            price + " A tie for the highest bid is broken at random.",
            "The winner's utility for the round is its valuation minus the price it pays; every other bidder gets 0.",
            "After each round you learn the winning bid and the price paid, but not who won, the other bids or the "
            "other valuations.",
        ]

    def _new_round(self) -> None:
        self.valuations = self.settings.valuations(self.round + 1, self.np_random)

    def _field(self, i: int) -> IntField:
        return self._any_bid if self.settings.allow_overbid else IntField("bid", 0, self.valuations[i])

    def _instruction(self, i: int) -> str:
        return format_instruction({"bid": f"an integer from 0 to {self.valuations[i]}"}, self.prompt.cot)

    def _round_mask(self, i: int) -> np.ndarray | None:
        if self.settings.allow_overbid:
            return None
        return (np.arange(self.settings.valuation_max + 1) <= self.valuations[i]).astype(np.int8)

    def _resolve(self, values: list[int]) -> tuple[dict[str, Any], list[float]]:
        return self.settings.resolve(self.round + 1, self.valuations, values, self.np_random)

    def _report(self, i: int, record: dict[str, Any]) -> tuple[str, str]:
        public = f"The winning bid was {record['winning_bid']}, and the winner paid {record['price']}."
        won = record["winner"] == i
        outcome = "You won the item" if won else "You did not win the item"
        private = (f"Your valuation was {record['valuations'][i]} and you bid {record['bids'][i]}. "
                   f"{outcome}; your utility this round is {fmt(record['utilities'][i])}.")
        return public, private

    def _request(self, i: int) -> list[str]:
        return ["Your goal is to maximise your total utility over the game.",
                f"Your valuation for this round is {self.valuations[i]}. Decide your bid."]

    def _private_info(self, i: int) -> dict[str, Any]:
        return {} if self.done else {"valuation": self.valuations[i]}

    def _observed(self, i: int, record: dict[str, Any]) -> dict[str, Any]:
        return {"round": record["round"], "winning_bid": record["winning_bid"], "price": record["price"],
                "own_valuation": record["valuations"][i], "own_bid": record["bids"][i],
                "won": record["winner"] == i, "utility": record["utilities"][i]}

    def _game_features(self, i: int) -> list[float]:
        r, last = self.settings, self.last_record
        head = [NA if self.done else self.valuations[i], r.valuation_max, float(r.mode == "second")]
        if last is None:
            return head + [NA] * 5
        return head + [last["bids"][i], last["winning_bid"], last["price"], float(last["winner"] == i),
                       last["utilities"][i]]

    def _summary(self, record: dict[str, Any]) -> str:
        return (f"valuations {record['valuations']}, bids {record['bids']}, player_{record['winner']} wins "
                f"and pays {record['price']}")
