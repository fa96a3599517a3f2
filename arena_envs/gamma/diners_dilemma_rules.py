"""Diner's Dilemma (γ-Bench game 5) rules, free of PettingZoo.

Each round every diner orders the costly dish (price P_h, utility U_h) or the cheap one (P_l,
U_l); the bill is split evenly, so utility_i = U(dish_i) - total / N. Alone, cheap is better
(U_h - P_h < U_l - P_l); with a shared bill, costly is better (U_h - P_h/N > U_l - P_l/N), so
all-costly is the equilibrium although all-cheap gives everyone more.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena_envs.core.arguments import check_real
from arena_envs.gamma.simultaneous_rules import SimultaneousRules

DISHES = ("cheap", "costly")  # native action 0 = cheap, 1 = costly


@dataclass(frozen=True)
class DinersRules(SimultaneousRules):
    costly_price: float = 20
    cheap_price: float = 10
    costly_utility: float = 20
    cheap_utility: float = 15

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("costly_price", "cheap_price", "costly_utility", "cheap_utility"):
            check_real(name, getattr(self, name))
        ph, pl, uh, ul, n = self.costly_price, self.cheap_price, self.costly_utility, self.cheap_utility, self.n_players
        problems = []
        if not ph > pl:
            problems.append("costly_price > cheap_price")
        if not uh > ul:
            problems.append("costly_utility > cheap_utility")
        if not uh - ph < ul - pl:
            problems.append("costly_utility - costly_price < cheap_utility - cheap_price (alone, cheap is better)")
        if not uh - ph / n > ul - pl / n:
            problems.append("costly_utility - costly_price/N > cheap_utility - cheap_price/N "
                            "(shared bill, costly is better)")
        if problems:
            raise ValueError(f"Diner's Dilemma parameters ({pl}, {ul}, {ph}, {uh}) with N={n} break: "
                             + "; ".join(problems))

    def price(self, dish: str) -> float:
        return self.costly_price if dish == "costly" else self.cheap_price

    def utility(self, dish: str) -> float:
        return self.costly_utility if dish == "costly" else self.cheap_utility

    def resolve(self, round_no: int, orders: Sequence[str]) -> tuple[dict[str, Any], list[float]]:
        n = len(orders)
        n_costly = sum(o == "costly" for o in orders)
        total = n_costly * self.costly_price + (n - n_costly) * self.cheap_price
        share = total / n
        utilities = [self.utility(o) - share for o in orders]
        record = {"round": round_no, "orders": list(orders), "n_costly": n_costly, "total_cost": total,
                  "bill_share": share, "utilities": utilities}
        return record, utilities
