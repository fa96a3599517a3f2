"""Diner's Dilemma (γ-Bench game 5) as a PettingZoo AEC environment.

Native action 0 = cheap dish, 1 = costly dish (``Discrete(2)``); a text answer is
``{"chosen_dish": "costly"}`` (synonyms: expensive, pricey, high-priced / inexpensive,
affordable, low-priced). Reward: the dish's utility minus the equal share of the bill. Players
see how many chose each dish, never who chose what.
"""
from __future__ import annotations

from typing import Any, ClassVar

from arena_envs.gamma.answer import ChoiceField
from arena_envs.gamma.base import fmt
from arena_envs.gamma.diners_dilemma_rules import DISHES, DinersRules
from arena_envs.gamma.simultaneous import SimultaneousGameEnv

NA = -1.0
SYNONYMS = {"expensive": "costly", "pricey": "costly", "high-priced": "costly", "high priced": "costly",
            "costly dish": "costly", "inexpensive": "cheap", "affordable": "cheap", "low-priced": "cheap",
            "low priced": "cheap", "cheap dish": "cheap"}


class DinersDilemmaEnv(SimultaneousGameEnv):
    """Order costly or cheap and split the bill; see :mod:`arena_envs.gamma.diners_dilemma_rules`."""

    metadata: ClassVar[dict[str, Any]] = {"name": "diners_dilemma_v0", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": True}
    game_feature_names = ("costly_price", "cheap_price", "costly_utility", "cheap_utility",
                          "own_last_costly", "last_n_costly", "own_last_utility")

    def __init__(self, n_players: int = 10, n_rounds: int = 20, costly_price: float = 20, cheap_price: float = 10,
                 costly_utility: float = 20, cheap_utility: float = 15, **options: Any):
        self.settings = DinersRules(n_players, n_rounds, costly_price, cheap_price, costly_utility, cheap_utility)
        self._answer_field = ChoiceField("chosen_dish", ("costly", "cheap"), SYNONYMS)
        super().__init__(n_players=n_players, n_rounds=n_rounds, values=DISHES, **options)

    def params(self) -> dict[str, Any]:
        r = self.settings
        return {"n_players": self.n_players, "n_rounds": self.n_rounds, "costly_price": r.costly_price,
                "cheap_price": r.cheap_price, "costly_utility": r.costly_utility, "cheap_utility": r.cheap_utility}

    def _intro(self) -> str:
        return f"You are one of {self.n_players} diners who eat out together for {self.n_rounds} rounds."

    def _rules(self) -> list[str]:
        r = self.settings
        return [
            f"Every round, each diner orders either the costly dish (price {fmt(r.costly_price)}, utility "
            f"{fmt(r.costly_utility)}) or the cheap dish (price {fmt(r.cheap_price)}, utility {fmt(r.cheap_utility)}).",
            "The costly dish tastes better, but if you paid for it alone it would not be worth its extra price.",
            f"At the end of every round the total bill is split equally among all {self.n_players} diners.",
            "Your satisfaction in a round is the utility of your dish minus your share of the bill.",
            "All diners order at the same time. After each round you learn how many diners chose each dish, "
            "but not who chose what.",
        ]

    def _report(self, i: int, record: dict[str, Any]) -> tuple[str, str]:
        r, n = self.settings, self.n_players
        n_h = record["n_costly"]
        total, dish = record["total_cost"], record["orders"][i]
        public = (f"{n_h} diners chose the costly dish and {n - n_h} chose the cheap dish. The total bill is "
                  f"{n_h}×{fmt(r.costly_price)} + {n - n_h}×{fmt(r.cheap_price)} = {fmt(total)}, so each diner pays "
                  f"{fmt(total)}/{n} = {fmt(record['bill_share'])}.")
        private = (f"You chose the {dish} dish. Your satisfaction this round is {fmt(r.utility(dish))} − "
                   f"{fmt(total)}/{n} = {record['utilities'][i]:.2f}.")
        return public, private

    def _request(self, i: int) -> list[str]:
        return ["Your goal is to maximise your overall satisfaction, weighing the quality of your dish against your "
                "share of the bill.",
                'Decide: "costly" or "cheap".']

    def _observed(self, i: int, record: dict[str, Any]) -> dict[str, Any]:
        return {"round": record["round"], "n_costly": record["n_costly"], "total_cost": record["total_cost"],
                "bill_share": record["bill_share"], "own_order": record["orders"][i], "utility": record["utilities"][i]}

    def _game_features(self, i: int) -> list[float]:
        r, last = self.settings, self.last_record
        head = [r.costly_price, r.cheap_price, r.costly_utility, r.cheap_utility]
        if last is None:
            return head + [NA] * 3
        return head + [float(last["orders"][i] == "costly"), last["n_costly"], last["utilities"][i]]

    def _summary(self, record: dict[str, Any]) -> str:
        cheap = self.n_players - record["n_costly"]
        return f"{record['n_costly']} costly, {cheap} cheap, each pays {fmt(record['bill_share'])}"
