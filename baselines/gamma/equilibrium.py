"""Equilibrium players of the γ-Bench simultaneous games (the paper's equilibria, its section 2).

* Guess: the Nash number (MIN if R < 1, MAX if R > 1, MIN if R = 1) - :class:`GuessNash`;
* El Farol: the paper's mixed equilibrium, go with probability R (seeded) - :class:`ElFarolMixed`;
* Divide the Dollar: the fair share floor(G / N) - :class:`DivideFair`;
* Public Goods: contribute nothing (dominant) - :class:`PublicGoodsNash`;
* Diner's Dilemma: the costly dish (dominant) - :class:`DinersNash`;
* Sealed-Bid Auction: truthful bidding b = v in second price (weakly dominant); in first price
  the symmetric Bayes-Nash bid floor((N-1)/N v) - :class:`SealedBidEquilibrium`
  (:class:`Truthful` and :class:`BayesNash` pin one rule in either mode).

All read the unwrapped environment given to ``bind`` (parameters) and ``info`` (valuation), and
return native actions.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv

from arena_envs.core import Policy
from arena_envs.core.answers import excerpt


class _EnvPolicy(Policy):
    reads_text = False  # decides from the info, mask and features

    def __init__(self) -> None:
        self.env: Any = None

    def bind(self, env: AECEnv) -> None:
        self.env = env

    def _env(self) -> Any:
        if self.env is None:
            raise RuntimeError(f"{type(self).__name__} needs bind(env) before act()")
        return self.env


class GuessNash(_EnvPolicy):
    name = "equilibrium"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        env = self._env()
        return env.action_of(env.settings.nash_choice())


class ElFarolMixed(_EnvPolicy):
    """Goes with probability ``p`` (default: the capacity ratio R, the paper's MSNE)."""

    name = "equilibrium"

    def __init__(self, p: float | None = None):
        super().__init__()
        if p is not None and not 0 <= p <= 1:
            raise ValueError(f"p must be in [0, 1], got {excerpt(p)}")
        self.p = p
        self.rng = np.random.default_rng()

    def reset(self, agent: str, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        env = self._env()
        p = env.settings.capacity_ratio if self.p is None else self.p
        return env.action_of("go" if self.rng.random() < p else "stay")


class DivideFair(_EnvPolicy):
    name = "equilibrium"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        env = self._env()
        return env.action_of(env.settings.golds // env.n_players)


class PublicGoodsNash(_EnvPolicy):
    name = "equilibrium"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        return self._env().action_of(0)


class DinersNash(_EnvPolicy):
    name = "equilibrium"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        return self._env().action_of("costly")


class SealedBidEquilibrium(_EnvPolicy):
    """Truthful in second price; floor((N - 1) / N * v) in first price."""

    name = "equilibrium"
    rule = "auto"

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        env = self._env()
        v = info["valuation"]
        truthful = self.rule == "truthful" or (self.rule == "auto" and env.settings.mode == "second")
        return env.action_of(v if truthful else (env.n_players - 1) * v // env.n_players)


class Truthful(SealedBidEquilibrium):
    name, rule = "truthful", "truthful"


class BayesNash(SealedBidEquilibrium):
    name, rule = "bne", "bne"
