"""History-driven and extreme rule players of the γ-Bench simultaneous games.

Each reads the game's parameters and last round from its own observation's feature vector (by
feature name; ``-1`` = not observed yet), so it sees exactly what an LLM in that seat is told, and
returns a native action. Rounding is half up (``round_half_up``). By policy spec name:

* Guess: ``best_response_last`` round(R x last mean), first round round(R x (MIN + MAX) / 2);
  ``level_k:k=K`` round(mid x R^k), mid = (MIN + MAX) / 2 (level 0 = the midpoint);
* El Farol: ``contrarian`` goes iff the last go-rate seen is <= R (none seen: with prob. R);
* Divide the Dollar: ``greedy`` bids all G golds; ``adaptive`` the fair share first, then +1 after
  a round that stayed within G, -2 after one that exceeded it (within 0..G);
* Public Goods: ``full`` contributes T (at most what one holds); ``conditional`` last round's mean
  contribution, first round T / 2;
* Diner's Dilemma: ``majority_tft`` cheap first, then cheap iff more than half chose cheap last
  round (a tie gives costly);
* Sealed-Bid Auction: ``half`` bids floor(v / 2).
"""
from __future__ import annotations

import math
from typing import Any

from pettingzoo import AECEnv

from arena_envs.core.answers import excerpt
from baselines.gamma.equilibrium import ElFarolMixed, _EnvPolicy

MISSING = -1.0


def round_half_up(x: float) -> int:
    return math.floor(x + 0.5)


class _FeaturePolicy(_EnvPolicy):
    """Reads named features of the seat's own observation."""

    def bind(self, env: AECEnv) -> None:
        super().bind(env)
        self._columns = {name: i for i, name in enumerate(env.feature_names)}

    def feature(self, observation: dict[str, Any], name: str) -> float | None:
        """Feature ``name`` of ``observation``, or None where it is not observed yet."""
        self._env()
        value = float(observation["observation"][self._columns[name]])
        return None if value == MISSING else value

    def parameter(self, observation: dict[str, Any], name: str) -> float:
        """Feature ``name`` of ``observation`` that is observed from the first round on (a game
        parameter or the seat's own holdings)."""
        value = self.feature(observation, name)
        if value is None:
            raise ValueError(f"feature {excerpt(name)} is {MISSING} (not observed); it should be observed from round 1")
        return value

    def answer(self, value: int, low: float = 0, high: float | None = None) -> int:
        """The native action of ``value`` clipped to ``[low, high]``."""
        clipped = max(int(low), value if high is None else min(int(high), value))
        return self._env().action_of(clipped)


class GuessBestResponse(_FeaturePolicy):
    name = "best_response_last"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        low, high = self.parameter(observation, "min_value"), self.parameter(observation, "max_value")
        last = self.feature(observation, "last_mean")
        base = (low + high) / 2 if last is None else last
        return self.answer(round_half_up(self.parameter(observation, "ratio") * base), low, high)


class GuessLevelK(_FeaturePolicy):
    name = "level_k"

    def __init__(self, k: int = 1):
        super().__init__()
        if int(k) != k or k < 0:
            raise ValueError(f"k must be a whole number >= 0, got {excerpt(k)}")
        self.k = int(k)

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        low, high = self.parameter(observation, "min_value"), self.parameter(observation, "max_value")
        target = (low + high) / 2 * self.parameter(observation, "ratio") ** self.k
        return self.answer(round_half_up(target), low, high)


class ElFarolContrarian(ElFarolMixed, _FeaturePolicy):
    """Goes when the bar was not over its threshold last time (mixed with ``p`` = R until then)."""

    name = "contrarian"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        rate = self.feature(observation, "last_go_rate")
        if rate is None:
            return super().act(observation, info)
        go = rate <= self.parameter(observation, "capacity_ratio")
        return self._env().action_of("go" if go else "stay")


class DivideGreedy(_FeaturePolicy):
    name = "greedy"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        return self.answer(int(self.parameter(observation, "golds")))


class DivideAdaptive(_FeaturePolicy):
    name = "adaptive"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        golds = int(self.parameter(observation, "golds"))
        last = self.feature(observation, "own_last_bid")
        if last is None:
            return self.answer(golds // int(self.parameter(observation, "n_players")))
        step = -2 if self.feature(observation, "last_exceeded") else 1
        return self.answer(int(last) + step, 0, golds)


class PublicGoodsFull(_FeaturePolicy):
    name = "full"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        held = math.floor(self.parameter(observation, "current_tokens"))
        return self.answer(int(self.parameter(observation, "tokens")), 0, held)


class PublicGoodsConditional(_FeaturePolicy):
    name = "conditional"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        mean = self.feature(observation, "mean_last_contribution")
        target = self.parameter(observation, "tokens") / 2 if mean is None else mean
        held = math.floor(self.parameter(observation, "current_tokens"))
        return self.answer(round_half_up(target), 0, held)


class DinersMajorityTFT(_FeaturePolicy):
    name = "majority_tft"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        costly = self.feature(observation, "last_n_costly")
        n = self._env().n_players
        cheap = costly is None or (n - costly) > n / 2
        return self._env().action_of("cheap" if cheap else "costly")


class SealedBidHalf(_EnvPolicy):
    name = "half"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        return self._env().action_of(int(info["valuation"]) // 2)
