"""Divide the Dollar (γ-Bench game 3) rules, free of PettingZoo.

Each round every player bids an integer in [0, G]. If the bids sum to at most G, everyone
receives its bid; otherwise everyone receives 0. Every profile summing to exactly G is a pure
Nash equilibrium (the paper names the fair one, G/N each).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena_envs.core.arguments import check_int
from arena_envs.gamma.simultaneous_rules import MAX_VALUE, SimultaneousRules


@dataclass(frozen=True)
class DivideDollarRules(SimultaneousRules):
    golds: int = 100

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("golds", self.golds, 1, MAX_VALUE)

    def resolve(self, round_no: int, bids: Sequence[int]) -> tuple[dict[str, Any], list[float]]:
        total = sum(bids)
        exceeded = total > self.golds
        payoffs = [0 if exceeded else b for b in bids]
        record = {"round": round_no, "bids": list(bids), "total": total, "exceeded": exceeded, "payoffs": payoffs}
        return record, [float(p) for p in payoffs]
