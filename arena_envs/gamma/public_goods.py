"""Public Goods Game (γ-Bench game 4) as a PettingZoo AEC environment.

Native action ``a`` contributes ``a`` tokens (``Discrete(cap + 1)``, masked to
``a <= floor(current tokens)``); a text answer is ``{"tokens_contributed": "<integer>"}``.
Everyone sees every contribution and holding (in player order) after the round.

Reward: with ``reset=True`` (paper) the tokens held at the end of the round, T - c + R S / N, so
the cumulative reward is the total earned; with ``reset=False`` the round's gain R S / N - c, so
the cumulative reward plus the starting tokens is the final holding (the agent's ``score``).
``cap`` (the action space's largest contribution) is T with reset, else ``max_contribution``
(default 10 T, at most ``MAX_VALUE``).
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from arena_envs.gamma.answer import IntField
from arena_envs.gamma.base import fmt
from arena_envs.gamma.public_goods_rules import PublicGoodsRules
from arena_envs.gamma.simultaneous import SimultaneousGameEnv
from arena_envs.gamma.simultaneous_rules import MAX_VALUE, check_int

NA = -1.0


class PublicGoodsEnv(SimultaneousGameEnv):
    """Contribute to a multiplied pot; see :mod:`arena_envs.gamma.public_goods_rules` for the rules."""

    metadata: ClassVar[dict[str, Any]] = {"name": "public_goods_v0", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": True}
    game_feature_names = ("ratio", "tokens", "current_tokens", "own_last_contribution", "last_pot",
                          "own_last_gain", "mean_last_contribution")

    def __init__(self, n_players: int = 10, n_rounds: int = 20, ratio: float = 2.0, tokens: int = 20,
                 reset: bool = True, token_init: str = "fixed", rand_min: int = 11,
                 max_contribution: int | None = None, **options: Any):
        self.settings = PublicGoodsRules(n_players, n_rounds, ratio, tokens, bool(reset), token_init, rand_min)
        cap = min(10 * tokens, MAX_VALUE) if max_contribution is None else max_contribution
        self.cap = tokens if reset else check_int("max_contribution", cap, tokens, MAX_VALUE)
        super().__init__(n_players=n_players, n_rounds=n_rounds, values=range(self.cap + 1), **options)

    def params(self) -> dict[str, Any]:
        r = self.settings
        return {"n_players": self.n_players, "n_rounds": self.n_rounds, "ratio": r.ratio, "tokens": r.tokens,
                "reset": r.reset, "token_init": r.token_init, "rand_min": r.rand_min, "max_contribution": self.cap}

    def _intro(self) -> str:
        r = self.settings
        held = (f"At the start of every round each player holds {r.tokens} tokens."
                if r.reset and r.token_init == "fixed"
                else "Each player holds a number of tokens; you are told yours before every decision.")
        return f"You are one of {self.n_players} players in a game that lasts {self.n_rounds} rounds. {held}"

    def _rules(self) -> list[str]:
        r = self.settings
        keep = ("Your tokens are restored at the start of the next round." if r.reset
                else "What you hold at the end of a round carries over to the next round.")
        return [
            "Every round, each player secretly decides how many of its tokens (a whole number) to put into a "
            "public pot.",
            f"The tokens in the pot are multiplied by {fmt(r.ratio)} and split evenly among all {self.n_players} "
            "players, whatever each of them contributed.",
            "Tokens you do not contribute stay yours. After the round you hold the tokens you kept plus your share "
            "of the pot. " + keep,
            "After each round everyone sees each player's contribution and tokens, listed in player order.",
        ]

    def _new_round(self) -> None:
        r = self.settings
        if self.round == 0:
            self._initial = r.initial_tokens(self.np_random)
            self.holdings = list(self._initial)
        elif r.reset:
            self.holdings = list(self._initial)
        else:
            self.holdings = list(self.history[-1]["payoffs"])

    def _limit(self, i: int) -> int:
        return min(self.settings.max_contribution(self.holdings[i]), self.cap)

    def _field(self, i: int) -> IntField:
        return IntField("tokens_contributed", 0, self._limit(i))

    def _round_mask(self, i: int) -> np.ndarray | None:
        limit = self._limit(i)
        if limit >= self.cap:
            return None
        return (np.arange(self.cap + 1) <= limit).astype(np.int8)

    def _resolve(self, values: list[int]) -> tuple[dict[str, Any], list[float]]:
        record, held = self.settings.resolve(self.round + 1, self.holdings, values)
        if self.settings.reset:
            return record, held
        return record, [record["share"] - c for c in values]

    def _agent_score(self, i: int) -> float:
        return self.totals[i] if self.settings.reset else self.totals[i] + self._initial[i]

    def _report(self, i: int, record: dict[str, Any]) -> tuple[str, str]:
        share, c = record["share"], record["contributions"][i]
        public = (f"Contributions this round, in player order: {record['contributions']}. "
                  f"The pot holds {record['pot']} tokens; "
                  f"multiplied by {fmt(self.settings.ratio)} and split evenly, each player gets {fmt(share)}. "
                  f"Tokens after the round, in player order: [{', '.join(fmt(t) for t in record['payoffs'])}].")
        private = (f"You contributed {c}. Your gain this round is {fmt(share - c)}, and you now hold "
                   f"{fmt(record['payoffs'][i])} tokens.")
        return public, private

    def _request(self, i: int) -> list[str]:
        return ["Your goal is to gain as many tokens as possible over the whole game.",
                f"You currently have {fmt(self.holdings[i])} tokens. Decide how many tokens to contribute to the pot."]

    def _private_info(self, i: int) -> dict[str, Any]:
        return {"tokens": self.holdings[i], "max_contribution": self._limit(i)} if not self.done else {}

    def _observed(self, i: int, record: dict[str, Any]) -> dict[str, Any]:
        return {k: record[k] for k in ("round", "contributions", "pot", "share", "payoffs")}

    def _game_features(self, i: int) -> list[float]:
        r, last = self.settings, self.last_record
        current = self.holdings[i] if last is None or not self.done else last["payoffs"][i]
        head = [r.ratio, r.tokens, current]
        if last is None:
            return head + [NA] * 4
        c = last["contributions"]
        return head + [c[i], last["pot"], last["share"] - c[i], sum(c) / len(c)]

    def _summary(self, record: dict[str, Any]) -> str:
        return f"contributions {record['contributions']}, pot {record['pot']}, share {fmt(record['share'])}"
