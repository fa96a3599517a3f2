"""Divide the Dollar (γ-Bench game 3) as a PettingZoo AEC environment.

Native action ``a`` (``Discrete(G + 1)``) bids ``a`` golds; a text answer is
``{"bid_amount": "<integer>"}``. Reward: the bid if the bids sum to at most G, else 0. Players
see the sum of the bids, never the others' bids.
"""
from __future__ import annotations

from typing import Any, ClassVar

from arena_envs.gamma.answer import IntField
from arena_envs.gamma.divide_dollar_rules import DivideDollarRules
from arena_envs.gamma.simultaneous import SimultaneousGameEnv

NA = -1.0


class DivideDollarEnv(SimultaneousGameEnv):
    """Bid for a share of G golds; see :mod:`arena_envs.gamma.divide_dollar_rules` for the rules."""

    metadata: ClassVar[dict[str, Any]] = {"name": "divide_dollar_v0", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": True}
    game_feature_names = ("golds", "n_players", "own_last_bid", "last_total", "last_exceeded", "own_last_payoff")

    def __init__(self, n_players: int = 10, n_rounds: int = 20, golds: int = 100, **options: Any):
        self.settings = DivideDollarRules(n_players, n_rounds, golds)
        self._answer_field = IntField("bid_amount", 0, golds)
        super().__init__(n_players=n_players, n_rounds=n_rounds, values=range(golds + 1), **options)

    def params(self) -> dict[str, Any]:
        return {"n_players": self.n_players, "n_rounds": self.n_rounds, "golds": self.settings.golds}

    def _intro(self) -> str:
        return (f"You are one of {self.n_players} players in a game that lasts {self.n_rounds} rounds. "
                f"Every round the players divide {self.settings.golds} golds among themselves.")

    def _rules(self) -> list[str]:
        g = self.settings.golds
        return [
            f"Every round, each player secretly bids a whole number of golds from 0 to {g}.",
            f"If the bids of all players add up to at most {g}, every player receives exactly its bid.",
            f"If the bids add up to more than {g}, no player receives anything that round.",
            "After each round you learn the sum of all bids, but not the other players' bids.",
        ]

    def _report(self, i: int, record: dict[str, Any]) -> tuple[str, str]:
        g, total = self.settings.golds, record["total"]
        public = (f"The bids add up to {total}, which is more than {g}: nobody receives anything." if record["exceeded"]
                  else f"The bids add up to {total}, which is at most {g}: every player receives its bid.")
        return public, f"You bid {record['bids'][i]} and receive {record['payoffs'][i]} golds."

    def _request(self, i: int) -> list[str]:
        return [f"Your goal is to gain as many golds as possible while keeping the sum of all bids at most "
                f"{self.settings.golds}.",
                "Decide how many golds to bid."]

    def _observed(self, i: int, record: dict[str, Any]) -> dict[str, Any]:
        return {"round": record["round"], "total": record["total"], "exceeded": record["exceeded"],
                "own_bid": record["bids"][i], "payoff": record["payoffs"][i]}

    def _game_features(self, i: int) -> list[float]:
        last = self.last_record
        head = [self.settings.golds, self.n_players]
        if last is None:
            return head + [NA] * 4
        return head + [last["bids"][i], last["total"], float(last["exceeded"]), last["payoffs"][i]]

    def _summary(self, record: dict[str, Any]) -> str:
        return f"bids {record['bids']}, sum {record['total']}{' (exceeded)' if record['exceeded'] else ''}"
