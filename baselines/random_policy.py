"""A uniformly random player for any environment: samples the native action space.

Where the observation carries an ``action_mask`` (in the form the space's ``sample(mask=...)`` takes:
an array for ``Discrete``, a tuple for ``MultiDiscrete``, a dict for ``Dict``), only unmasked actions
are drawn.
All randomness comes from the seed given to :meth:`RandomPolicy.reset`; the policy samples its own
copy of the action space, so it never touches the environment's generators.
"""
from __future__ import annotations

import copy
from typing import Any

from gymnasium import spaces
from pettingzoo import AECEnv

from arena_envs.core import Policy


class RandomPolicy(Policy):
    """Samples the seat's native action space (masked when the observation has an action mask)."""

    name = "random"
    reads_text = False  # decides from the info, mask and features

    def __init__(self) -> None:
        self._env: AECEnv | None = None
        self._source: spaces.Space | None = None
        self._space: spaces.Space | None = None

    def bind(self, env: AECEnv) -> None:
        self._env = env

    def reset(self, agent: str, seed: int | None = None) -> None:
        if self._env is None:
            raise RuntimeError("RandomPolicy needs bind(env) before reset(agent, seed): "
                               "it samples env.action_space(agent)")
        source = self._env.action_space(agent)
        space = self._space
        if space is None or source is not self._source:
            space = copy.deepcopy(source)
            self._source, self._space = source, space
        space.seed(seed)

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        if self._space is None:
            raise RuntimeError("RandomPolicy.act before reset(agent, seed)")
        mask = observation.get("action_mask") if isinstance(observation, dict) else None
        action = self._space.sample(mask=mask)
        return int(action) if isinstance(self._space, spaces.Discrete) else action
