"""PettingZoo's OrderEnforcingWrapper with its checks, minus its attribute lookups per decision.

Contract: after ``reset()`` every call returns, raises and warns as
``pettingzoo.utils.wrappers.OrderEnforcingWrapper`` does (tests/test_shortcuts.py plays every game
through both); before it, ``last()`` raises as that wrapper's ``step()`` does.
"""
from __future__ import annotations

from typing import Any

from pettingzoo.utils import wrappers


class OrderEnforcing(wrappers.OrderEnforcingWrapper):  # type: ignore[misc]
    """PettingZoo's OrderEnforcingWrapper, with the same checks, whose ``last()`` and ``step()`` go
    straight to the game once it has been reset.

    The base class answers ``last()`` by reading ``agent_selection``, ``_cumulative_rewards``,
    ``terminations``, ``truncations`` and ``infos`` through two Python ``__getattr__`` layers each
    (about 7 µs per decision, a tenth of a tank battle decision); here the game's own ``last()``
    reads them directly.
    """

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:  # PettingZoo's wording, as for step() and observe() (its own last() has none)
            raise AssertionError("reset() needs to be called before last.")
        result: tuple[Any, float, bool, bool, dict[str, Any]] = self.env.last(observe)
        return result

    def step(self, action: Any) -> None:
        if self._has_reset and self.env.agents:
            self._has_updated = True
            self.env.step(action)
        else:
            super().step(action)  # PettingZoo's error or warning

    def __str__(self) -> str:
        return str(self.env)
