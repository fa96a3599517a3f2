"""What the two sequential γ-Bench environments (Battle Royale, Pirate Game) share.

:class:`SequentialGameEnv` is a :class:`~arena_envs.gamma.base.GammaEnv` (options, rules blocks,
history, scores) with a per-decision cache of the request block and of the features, and per-seat
returns. A game supplies the rules, the text and the moves.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from arena_envs.gamma.base import GammaEnv


class SequentialGameEnv(GammaEnv):
    """Shared adapter of Battle Royale and the Pirate Game; see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {"name": "gamma_sequential", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": False}

    def _start_episode(self) -> None:
        """Fresh per-episode state every sequential game has; call from ``_start_game``."""
        self.history: list[dict[str, Any]] = []
        self.returns = [0.0] * self.n_players
        self._request_cache: dict[int, tuple[Any, str]] = {}
        self._feature_cache: dict[int, np.ndarray] = {}

    def _changed(self) -> None:
        """Drop the cached requests and features after the state moved on."""
        self._request_cache.clear()
        self._feature_cache.clear()

    def _cached_request(self, i: int, key: Any, build: Callable[[], str]) -> str:
        """The request block of seat ``i`` for decision ``key`` (rebuilt only when ``key`` changes)."""
        cached = self._request_cache.get(i)
        if cached is None or cached[0] != key:
            cached = self._request_cache[i] = (key, build())
        return cached[1]

    def _cached_features(self, i: int, build: Callable[[], list[float]], row: np.ndarray | None = None) -> np.ndarray:
        """Seat ``i``'s features: ``build()``, or a copy of the float32 ``row`` (its tail: features
        shared by every seat) that starts with ``build()``."""
        cached = self._feature_cache.get(i)
        if cached is None:
            head = build()
            if row is None:
                cached = np.array(head, dtype=np.float32)
            else:
                cached = row.copy()
                cached[:len(head)] = head
            cached.setflags(write=False)
            self._feature_cache[i] = cached
        return cached

    def _reward(self, i: int, value: float) -> None:
        self.rewards[self.possible_agents[i]] = value
        self.returns[i] += value
