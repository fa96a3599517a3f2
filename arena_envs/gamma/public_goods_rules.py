"""Public Goods Game (γ-Bench game 4) rules, free of PettingZoo.

Each round every player secretly puts c_i of its tokens in a pot; the pot S is multiplied by R
and split evenly: share = R S / N, and player i ends the round with tokens_i - c_i + share. A
contributed token returns R/N - 1 < 0 to its giver when R < N, so contributing nothing is
dominant. ``reset=True`` (paper) restarts every round from T tokens; ``reset=False`` carries
(possibly fractional) holdings over, contributions limited to floor(holdings).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena_envs.core.arguments import check_choice, check_int, check_real
from arena_envs.gamma.simultaneous_rules import MAX_VALUE, SimultaneousRules

TOKEN_INITS = ("fixed", "random")


@dataclass(frozen=True)
class PublicGoodsRules(SimultaneousRules):
    ratio: float = 2.0
    tokens: int = 20
    reset: bool = True
    token_init: str = "fixed"
    rand_min: int = 11

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("tokens", self.tokens, 1, MAX_VALUE)
        check_real("ratio", self.ratio, 0)
        check_choice("token_init", self.token_init, TOKEN_INITS)
        if self.token_init == "random" and not 0 <= self.rand_min <= self.tokens - self.n_players + 1:
            raise ValueError(f"token_init='random' draws {self.n_players} distinct integers from "
                             f"[rand_min, tokens]; need 0 <= rand_min <= {self.tokens - self.n_players + 1}, "
                             f"got {self.rand_min}")

    def initial_tokens(self, rng: np.random.Generator) -> list[float]:
        """T for everyone, or distinct integers from [rand_min, T] (env RNG)."""
        if self.token_init == "fixed":
            return [float(self.tokens)] * self.n_players
        drawn = rng.choice(np.arange(self.rand_min, self.tokens + 1), size=self.n_players, replace=False)
        return [float(t) for t in drawn]

    @staticmethod
    def max_contribution(tokens: float) -> int:
        return math.floor(tokens + 1e-9)

    def resolve(self, round_no: int, tokens: Sequence[float],
                contributions: Sequence[int]) -> tuple[dict[str, Any], list[float]]:
        """The round record; rewards are the holdings at the end of the round."""
        pot = sum(contributions)
        share = self.ratio * pot / len(contributions)
        payoffs = [t - c + share for t, c in zip(tokens, contributions)]
        record = {"round": round_no, "contributions": list(contributions), "tokens": list(tokens),
                  "pot": pot, "share": share, "payoffs": payoffs}
        return record, payoffs
