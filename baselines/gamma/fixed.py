"""Fixed-strategy players of the γ-Bench simultaneous games (γ-Bench paper, Appendix G).

:class:`FixedAnswer` always gives the same answer (``value=91``), or cycles through a list by
round (``values=[0, 50]``: round r answers ``values[(r - 1) % len(values)]``, the repo's
``specified=v1/v2/...``). Answers are the game's own values: numbers for Guess, Divide, Public
Goods and the auction, words for El Farol (``"go"``/``"stay"``) and the Diner
(``"costly"``/``"cheap"``). The named classes are common fixed players.

Spec strings: ``fixed:value=91``, ``fixed:values=[0,100]``, ``always_go``, ``free_rider``...
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pettingzoo import AECEnv

from arena_envs.core import Policy


class FixedAnswer(Policy):
    """Answers ``value`` every round, or ``values`` in turn by round number."""

    name = "fixed"
    reads_text = False  # decides from the info, mask and features
    default: Any = None

    def __init__(self, value: Any = None, values: Sequence[Any] | None = None):
        if value is not None and values is not None:
            raise ValueError("give value=... or values=[...], not both")
        if value is None and values is None and self.default is None:
            raise ValueError(f"{type(self).__name__} needs value=... or values=[...]")
        chosen = list(values) if values is not None else [self.default if value is None else value]
        if not chosen:
            raise ValueError("values must not be empty")
        self.values = chosen
        self._actions: list[int] | None = None

    def bind(self, env: AECEnv) -> None:
        self._actions = [env.action_of(v) for v in self.values]

    def act(self, observation: Any, info: dict[str, Any]) -> int:
        if self._actions is None:
            raise RuntimeError(f"{type(self).__name__} needs bind(env) before act()")
        return self._actions[(info["round"] - 1) % len(self._actions)]


class AlwaysGo(FixedAnswer):
    name, default = "always_go", "go"


class AlwaysStay(FixedAnswer):
    name, default = "always_stay", "stay"


class AlwaysCostly(FixedAnswer):
    name, default = "always_costly", "costly"


class AlwaysCheap(FixedAnswer):
    name, default = "always_cheap", "cheap"


class FreeRider(FixedAnswer):
    """Contributes nothing (Public Goods), the paper's persistent free rider."""

    name, default = "free_rider", 0


class ZeroBid(FixedAnswer):
    """Bids nothing (Sealed-Bid Auction)."""

    name, default = "zero", 0
