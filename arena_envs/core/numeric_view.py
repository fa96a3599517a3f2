"""The numeric view of a game, for multi-agent RL libraries: what ``obs_mode="numeric"`` builds.

``env()``, ``raw_env()`` and ``parallel_env()`` with ``obs_mode="numeric"`` wrap every game in
:class:`NumericView`, an AEC wrapper showing each seat only the game's numbers (its
``observe_numeric``: the text is never built), in PettingZoo's classic form:

* a seat with a finite action set: ``Dict(observation=Box, action_mask=Box(0, 1, (n,), int8))``,
  acting in ``Discrete(n)`` (a game's ``start`` added back) or in one :class:`FlatMaskMultiDiscrete`
  (a ``Dict`` of discrete parts flattened in key order, :class:`~arena_envs.core.flat_actions.FlatActions`;
  its mask one flat vector, part after part, as sb3-contrib's ``MaskablePPO`` reads it), so
  ``action_space(agent).sample(mask=observation["action_mask"])`` works for every seat;
* a seat without one (a ``Box`` action, Who is Spy's free text): the bare ``Box`` of features.

``step()`` passes anything outside these spaces to the game, which reads it or records an invalid
answer; rewards, flags, infos and records are the game's (``env.unwrapped``). :class:`FixedSeats`,
the numeric parallel form's last layer, keeps every seat until the episode ends (SuperSuit's
vector environments need it): a seat out early gets :func:`blank_observation`, reward 0, ``{}``
and has its actions ignored. ``reset(seed=S)`` starts a sequence of episodes that later
``reset()`` calls continue (each draws the next seed), so a vector env seeded once replays.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper, BaseWrapper

from arena_envs.core.flat_actions import FlatActions
from arena_envs.core.text_env import TextAECEnv, _not_reset

OBSERVATION, ACTION_MASK = "observation", "action_mask"


class SeatSpaces:
    """One seat's numeric spaces (:attr:`observation_space`, :attr:`action_space`) and the
    conversions from the game's numbers (:meth:`observation`) and to its actions (:meth:`native`)."""

    def __init__(self, features: spaces.Box, game_actions: spaces.Space[Any]):
        self.game_actions = game_actions
        try:
            self.flat: FlatActions | None = FlatActions(game_actions)
        except ValueError:  # free text: no RL form, no mask
            self.flat = None
        rl_actions = game_actions if self.flat is None else self.flat.space
        if isinstance(rl_actions, spaces.Discrete):
            rl_actions = spaces.Discrete(int(rl_actions.n))  # the start is added back in native()
        elif isinstance(rl_actions, spaces.MultiDiscrete):
            rl_actions = FlatMaskMultiDiscrete(rl_actions.nvec, start=rl_actions.start)
        self.action_space: spaces.Space[Any] = rl_actions
        self.mask_size = _finite_size(rl_actions)
        self.observation_space: spaces.Space[Any] = features if not self.mask_size else spaces.Dict(
            {OBSERVATION: features, ACTION_MASK: spaces.Box(0, 1, (self.mask_size,), dtype=np.int8)})

    def observation(self, features: np.ndarray, mask: Any) -> Any:
        """The seat's observation for the game's ``features`` and ``mask`` (fresh arrays: the game
        may hand the same read-only ones to every seat)."""
        features = features.copy()
        if not self.mask_size:
            return features
        assert self.flat is not None
        flat = self.flat.mask(mask)
        allowed = np.ones(self.mask_size, dtype=np.int8) if flat is None else flat.astype(np.int8)
        return {OBSERVATION: features, ACTION_MASK: allowed}

    def native(self, action: Any) -> Any:
        """The game's action for ``action`` of :attr:`action_space`; anything else unchanged."""
        if isinstance(self.game_actions, spaces.Discrete):
            if isinstance(action, np.ndarray) and action.shape == ():
                action = action.item()
            if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
                return int(action) + int(self.game_actions.start)
            return action
        if self.flat is None or not self.flat.keys or isinstance(action, str):
            return action
        try:
            values = np.asarray(action)
        except (TypeError, ValueError, OverflowError, RecursionError):
            return action
        if values.shape != self.action_space.shape or values.dtype.kind not in "iu":
            return action
        return self.flat.native(values)


class FlatMaskMultiDiscrete(spaces.MultiDiscrete):
    """A 1-D ``MultiDiscrete`` whose ``sample(mask=...)`` also takes the numeric view's flat mask (one
    0/1 vector of ``sum(nvec)`` entries), split at the part sizes; other masks as gymnasium's."""

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if isinstance(mask, np.ndarray) and mask.shape == (int(np.sum(self.nvec)),):
            mask = tuple(np.split(mask.astype(np.int8), np.cumsum(self.nvec)[:-1]))
        return super().sample(mask=mask, probability=probability)


def _finite_size(space: spaces.Space[Any]) -> int:
    """Entries of a mask of ``space``: n of a ``Discrete``, sum(nvec) of a ``MultiDiscrete``, else 0."""
    if isinstance(space, spaces.Discrete):
        return int(space.n)
    if isinstance(space, spaces.MultiDiscrete):
        return int(np.sum(space.nvec))
    return 0


class NumericView(BaseWrapper):  # type: ignore[misc]
    """``game`` seen through its numbers; see the module docstring."""

    def __init__(self, game: TextAECEnv):
        super().__init__(game)
        self.game = game
        shared: dict[tuple[int, int], SeatSpaces] = {}  # seats whose game spaces are one object share theirs
        self.seats: dict[str, SeatSpaces] = {}
        for agent in game.possible_agents:
            observation, action = game.observation_space(agent), game.action_space(agent)
            key = (id(observation), id(action))
            if key not in shared:
                assert isinstance(observation, spaces.Dict)
                features = observation[OBSERVATION]
                assert isinstance(features, spaces.Box)
                shared[key] = SeatSpaces(features, action)
            self.seats[agent] = shared[key]
        self.observation_spaces = {a: seat.observation_space for a, seat in self.seats.items()}
        self.action_spaces = {a: seat.action_space for a, seat in self.seats.items()}

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def observe(self, agent: str) -> Any:
        if self.game.record is None:
            raise _not_reset("observe")
        return self.seats[agent].observation(*self.game.observe_numeric(agent))

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """The game's ``last()`` (its checks too), with the numeric observation."""
        _, reward, termination, truncation, info = self.game.last(observe=False)
        return (self.observe(self.game.agent_selection) if observe else None), reward, termination, truncation, info

    def step(self, action: Any) -> None:
        if self.game.record is None:  # before reset(): the game says so
            self.game.step(action)
            return
        self.game.step(self.seats[self.game.agent_selection].native(action))


def blank_observation(observation_space: spaces.Space[Any], action_space: spaces.Space[Any]) -> Any:
    """The observation of a seat out of the game: zero features (clipped into their bounds) and,
    with a mask, the first action of each part allowed (a masked sampler still has a choice)."""
    features = observation_space[OBSERVATION] if isinstance(observation_space, spaces.Dict) else observation_space
    assert isinstance(features, spaces.Box)
    zeros = np.clip(np.zeros(features.shape), features.low, features.high).astype(features.dtype)
    if not isinstance(observation_space, spaces.Dict):
        return zeros
    if isinstance(action_space, spaces.Discrete):
        sizes = [int(action_space.n)]
    else:
        assert isinstance(action_space, spaces.MultiDiscrete)
        sizes = action_space.nvec.tolist()
    mask = np.zeros(sum(sizes), dtype=np.int8)
    mask[np.cumsum([0, *sizes[:-1]])] = 1
    return {OBSERVATION: zeros, ACTION_MASK: mask}


class FixedSeats(BaseParallelWrapper):  # type: ignore[misc]
    """A parallel game in which every seat plays until the episode ends; see the module docstring."""

    def __init__(self, env: ParallelEnv):
        super().__init__(env)
        self.metadata = env.metadata
        self.agents: list[str] = []
        self._out: dict[str, tuple[bool, bool]] = {}  # seat out of the game -> its (terminated, truncated)
        self._seeds: np.random.Generator | None = None  # the game seeds of a seeded sequence

    def reset(self, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        if seed is not None:
            self._seeds = np.random.default_rng(seed)
        elif self._seeds is not None:
            seed = int(self._seeds.integers(2**31))
        observations, infos = self.env.reset(seed=seed, options=options)
        self._out = {}
        self.agents = list(self.possible_agents)
        return self._fill(observations), {a: infos.get(a, {}) for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], dict[str, float], dict[str, bool],
                                                     dict[str, bool], dict[str, dict[str, Any]]]:
        live = list(self.env.agents)
        observations, rewards, terminations, truncations, infos = self.env.step({a: actions[a] for a in live})
        for agent in live:
            if agent not in self.env.agents:
                self._out[agent] = (bool(terminations[agent]), bool(truncations[agent]))
        seats = self.agents
        over = not self.env.agents
        ended = {a: self._out.get(a, (False, False)) if over else (False, False) for a in seats}
        result = (self._fill(observations), {a: float(rewards.get(a, 0.0)) for a in seats},
                  {a: ended[a][0] for a in seats}, {a: ended[a][1] for a in seats},
                  {a: infos.get(a, {}) if a in live else {} for a in seats})
        if over:
            self.agents = []
        return result

    def _fill(self, observations: dict[str, Any]) -> dict[str, Any]:
        return {a: observations[a] if a in observations else
                blank_observation(self.observation_space(a), self.action_space(a)) for a in self.agents}
