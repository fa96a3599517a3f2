"""Rule baselines of the sequential γ-Bench games: Battle Royale and the Pirate Game.

They read the structured state in ``info`` (never the text) and answer with native actions:
Battle Royale ``a < N`` shoots ``player_a`` and ``a = N`` misses on purpose; the Pirate Game takes
``{"proposal": shares (proposer first, zero-padded to N), "vote": 1 accept / 0 reject}``. Ties
between equally strong targets go to the lowest index. Random choices come from the seed given to
``reset``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arena_envs.core import Policy
from arena_envs.gamma.pirate_game import random_composition
from arena_envs.gamma.pirate_rules import ne_proposal, optimal_vote

# ------------------------------------------------------------------------------ Battle Royale


class _Shooter(Policy):
    """Picks a target from the living opponents in ``info``; ``None`` means an intentional miss."""

    reads_text = False  # decides from the info, mask and features

    def __init__(self) -> None:
        self._rng = np.random.default_rng()

    def reset(self, agent: str, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        me, rates = info["player"], info["hit_rates"]
        opponents = [p for p in info["alive"] if p != me]
        target = self._target(me, opponents, rates) if opponents else None
        return len(rates) if target is None else target

    def _target(self, me: int, opponents: list[int], rates: list[float]) -> int | None:
        raise NotImplementedError


class StrongestShooter(_Shooter):
    """The γ-Bench optimum proxy: shoot the strongest living opponent (scores 100 in all seats)."""

    name = "strongest"

    def _target(self, me: int, opponents: list[int], rates: list[float]) -> int | None:
        return min(opponents, key=lambda p: (-rates[p], p))


class WeakestShooter(_Shooter):
    """Shoot the weakest living opponent."""

    name = "weakest"

    def _target(self, me: int, opponents: list[int], rates: list[float]) -> int | None:
        return min(opponents, key=lambda p: (rates[p], p))


class RandomShooter(_Shooter):
    """Shoot a uniformly random living opponent (never misses on purpose)."""

    name = "random"

    def _target(self, me: int, opponents: list[int], rates: list[float]) -> int | None:
        return opponents[int(self._rng.integers(len(opponents)))]


class TruelMissShooter(StrongestShooter):
    """As ``strongest``, but miss on purpose when three are left and you are the weakest of them
    (the paper's truel illustration)."""

    name = "truel_miss"

    def _target(self, me: int, opponents: list[int], rates: list[float]) -> int | None:
        if len(opponents) == 2 and all((rates[me], me) < (rates[p], p) for p in opponents):
            return None
        return super()._target(me, opponents, rates)


# ------------------------------------------------------------------------------ Pirate Game


class _Pirate(Policy):
    """Proposes ``_shares(n, G)`` and votes ``_accept(position, offered)``."""

    reads_text = False  # decides from the info, mask and features

    def __init__(self) -> None:
        self._rng = np.random.default_rng()

    def reset(self, agent: str, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def act(self, observation: Any, info: dict[str, Any]) -> dict[str, Any]:
        proposal = np.zeros(info["n_players"], dtype=np.int64)
        vote = 0
        if info["phase"] == "propose":
            shares = self._shares(info["n_survivors"], info["golds"])
            proposal[: len(shares)] = shares
        else:
            vote = int(self._accept(info["position"], info["offered"]))
        return {"proposal": proposal, "vote": vote}

    def _shares(self, n: int, golds: int) -> list[int]:
        raise NotImplementedError

    def _accept(self, position: int, offered: int) -> bool:
        raise NotImplementedError


class NashPirate(_Pirate):
    """Equilibrium play: propose O(n, G), vote by Stewart's rule (scores 100 in all seats)."""

    name = "nash"

    def _shares(self, n: int, golds: int) -> list[int]:
        return ne_proposal(n, golds)

    def _accept(self, position: int, offered: int) -> bool:
        return optimal_vote(position, offered)


class GreedyPirate(_Pirate):
    """Propose everything to yourself; accept any plan that gives you at least one coin."""

    name = "greedy"

    def _shares(self, n: int, golds: int) -> list[int]:
        return [golds] + [0] * (n - 1)

    def _accept(self, position: int, offered: int) -> bool:
        return offered >= 1


class RandomPirate(_Pirate):
    """A uniformly random split of the coins; a fair-coin vote."""

    name = "random"

    def _shares(self, n: int, golds: int) -> list[int]:
        return random_composition(self._rng, golds, n)

    def _accept(self, position: int, offered: int) -> bool:
        return bool(self._rng.integers(2))
