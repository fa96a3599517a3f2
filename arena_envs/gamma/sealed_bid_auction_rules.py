"""Sealed-Bid Auction (γ-Bench game 6) rules, free of PettingZoo.

Each round every player has a private valuation and submits one sealed bid. The highest bid wins
(ties broken uniformly at random, see ``tie_break``); the winner pays the highest bid (``mode="first"``) or the
second entry of the bids sorted high to low (``"second"``, which equals the top bid on a tie) and
gets valuation - price; everyone else gets 0.

Valuations: ``valuation_rng="paper"`` reproduces the repo exactly - round j (1-based) seeds
Python's ``random`` with ``valuation_seed + j - 1`` and samples N distinct values of the grid
{vmin, vmin+interval, ..., vmax}; ``"env"`` draws them from the environment's generator.

Ties for the highest bid: ``tie_break="random"`` (default) picks a leader with the environment's
generator; ``"repo"`` picks as the original code does, with the same seeded generator that drew
the round's valuations, right after drawing them: leader ``randint(0, k - 1)`` of the k leaders
in player order (239 of the 245 tie rounds of the published logs follow it). It needs
``valuation_rng="paper"``.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena_envs.core.arguments import check_choice, check_int
from arena_envs.gamma.simultaneous_rules import MAX_VALUE, SimultaneousRules

MODES = ("first", "second")
VALUATION_RNGS = ("paper", "env")
TIE_BREAKS = ("random", "repo")


@dataclass(frozen=True)
class SealedBidRules(SimultaneousRules):
    valuation_min: int = 0
    valuation_max: int = 200
    interval: int = 10
    mode: str = "first"
    valuation_rng: str = "paper"
    valuation_seed: int = 42
    allow_overbid: bool = True
    tie_break: str = "random"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("tie_break", self.tie_break, TIE_BREAKS)
        if self.tie_break == "repo" and self.valuation_rng != "paper":
            raise ValueError(f"tie_break='repo' draws from the repo's valuation generator, so it needs "
                             f"valuation_rng='paper'; got valuation_rng={self.valuation_rng!r}")
        check_choice("mode", self.mode, MODES)
        check_choice("valuation_rng", self.valuation_rng, VALUATION_RNGS)
        check_int("interval", self.interval, 1, MAX_VALUE)
        lo = check_int("valuation_min", self.valuation_min, 0, MAX_VALUE)
        hi = check_int("valuation_max", self.valuation_max, 0, MAX_VALUE)
        if lo > hi:
            raise ValueError(f"valuation_min must be <= valuation_max, got {lo} and {hi}")
        if (self.valuation_max - self.valuation_min) % self.interval:
            raise ValueError(f"valuation_max - valuation_min must be a multiple of interval, got "
                             f"{self.valuation_min}, {self.valuation_max}, {self.interval}")
        if len(self.grid()) < self.n_players:
            raise ValueError(f"the valuation grid has {len(self.grid())} values but n_players={self.n_players} "
                             "distinct valuations are drawn; widen [valuation_min, valuation_max] or shrink interval")

    def grid(self) -> range:
        """The possible valuations {vmin, vmin + interval, ..., vmax}."""
        return range(self.valuation_min, self.valuation_max + self.interval, self.interval)

    def _repo_generator(self, round_no: int) -> random.Random:
        """The repo's generator of round ``round_no`` (1-based), reseeded every round."""
        return random.Random(self.valuation_seed + round_no - 1)

    def paper_valuations(self, round_no: int) -> list[int]:
        """The repo's valuations of round ``round_no`` (1-based); element i belongs to player_i."""
        return self._repo_generator(round_no).sample(self.grid(), self.n_players)

    def repo_tie_winner(self, round_no: int, leaders: Sequence[int]) -> int:
        """The leader the repo picks among ``leaders`` (player order) in round ``round_no``: its
        seeded generator draws the valuations, then ``randint(0, len(leaders) - 1)``."""
        generator = self._repo_generator(round_no)
        generator.sample(self.grid(), self.n_players)
        return leaders[generator.randint(0, len(leaders) - 1)]

    def tie_winner(self, round_no: int, leaders: Sequence[int], rng: np.random.Generator) -> int:
        """The winner among the highest bidders ``leaders`` (player order), by ``tie_break``."""
        if len(leaders) == 1:
            return leaders[0]
        if self.tie_break == "repo":
            return self.repo_tie_winner(round_no, leaders)
        return leaders[int(rng.integers(len(leaders)))]

    def valuations(self, round_no: int, rng: np.random.Generator) -> list[int]:
        if self.valuation_rng == "paper":
            return self.paper_valuations(round_no)
        grid = self.grid()
        return [grid[int(k)] for k in rng.choice(len(grid), size=self.n_players, replace=False)]

    def resolve(self, round_no: int, valuations: Sequence[int], bids: Sequence[int],
                rng: np.random.Generator) -> tuple[dict[str, Any], list[float]]:
        top = max(bids)
        leaders = [i for i, b in enumerate(bids) if b == top]
        winner = self.tie_winner(round_no, leaders, rng)
        price = top if self.mode == "first" else sorted(bids, reverse=True)[1]
        utilities = [0.0] * len(bids)
        utilities[winner] = float(valuations[winner] - price)
        record = {"round": round_no, "valuations": list(valuations), "bids": list(bids), "winner": winner,
                  "winning_bid": top, "price": price, "utilities": utilities, "mode": self.mode}
        return record, utilities
