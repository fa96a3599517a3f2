"""The tank battle with the paper's start layouts taken in turn over a run's episodes.

BattleAgentBench ran every stage several times, each on a map with the agents' start positions
sampled anew (open models: 5 runs, here the shipped layouts 1-5). A runner episode only passes its
environment seed to ``reset``, so this builder (a ``module:callable`` environment of
:class:`arena_envs.runner.runner.RunConfig`) finds which episode
of the run seeded ``run_seed`` that seed belongs to (:func:`arena_envs.runner.seeding.episode_seeds`)
and plays episode ``k`` on ``layouts[k % len(layouts)]``. The environment's own ``layout_seed``
is set to it before the reset, so each episode's record states its layout, and a replay of the
results folder (same seed) rebuilds the same map.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils import BaseWrapper

from arena_envs import tank_battle_v0
from arena_envs.core.answers import excerpt
from arena_envs.runner.seeding import episode_seeds

#: The paper's layouts (shipped as data) in run order.
PAPER_LAYOUTS = (1, 2, 3, 4, 5)
#: How many episode ids a reset seed is looked up among.
MAX_EPISODES = 10_000


class LayoutByEpisode(BaseWrapper):  # type: ignore[type-arg]
    """Resets the wrapped tank battle on the layout of the run episode its seed belongs to."""

    def __init__(self, env: AECEnv, layouts: Sequence[int], run_seed: int):
        super().__init__(env)
        self.layouts = tuple(layouts)
        self.run_seed = run_seed
        self._episode_of: dict[int, int] = {}

    def episode_of(self, seed: int) -> int:
        """The episode id of the run whose environment seed is ``seed``."""
        k = len(self._episode_of)
        while seed not in self._episode_of:
            if k >= MAX_EPISODES:
                raise ValueError(f"seed {seed} is not the environment seed of any of the first {MAX_EPISODES} "
                                 f"episodes of a run seeded {self.run_seed}")
            self._episode_of[episode_seeds(self.run_seed, k, 0).env] = k
            k += 1
        return self._episode_of[seed]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        k = 0 if seed is None else self.episode_of(seed)
        self.env.unwrapped.layout_seed = self.layouts[k % len(self.layouts)]
        super().reset(seed=seed, options=options)


def env(layouts: Sequence[int] = PAPER_LAYOUTS, run_seed: int = 0, **kwargs: Any) -> AECEnv:
    """``tank_battle_v0.env(**kwargs)`` whose episode ``k`` of a run seeded ``run_seed`` plays layout
    ``layouts[k % len(layouts)]`` (``kwargs`` may not hold ``layout_seed``)."""
    if "layout_seed" in kwargs:
        raise ValueError("layout_seed is chosen per episode from layouts; pass layouts=[...] instead")
    if not layouts or any(isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in layouts):
        raise ValueError(f"layouts must be a non-empty list of integers >= 0, got {excerpt(layouts)}")
    return LayoutByEpisode(tank_battle_v0.env(**kwargs), layouts, run_seed)
