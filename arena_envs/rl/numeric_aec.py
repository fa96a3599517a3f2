"""Several learner seats of a suite game as a PettingZoo AEC environment of numeric observations.

:class:`NumericAEC` is the multi-agent counterpart of :class:`~arena_envs.rl.LearnerEnv`, for
trainers that take a PettingZoo AEC environment (RLlib's ``PettingZooEnv``, :mod:`baselines.rllib`).
Its ``possible_agents`` are the learner seats; every other seat is played inside ``reset``/``step``
by its policy (a :class:`~arena_envs.core.Policy`, a function ``(observation, info) -> action`` or
a policy spec string such as ``"rule"`` or ``"vllm:MODEL@URL"``). A learner seat sees:

* ``Discrete`` actions: ``{"observations": features, "action_mask": int8 vector}`` (the keys
  RLlib's action-masking modules read), acting in ``Discrete(n)`` (a ``start`` added back);
* other actions (``Box``, ``MultiDiscrete``, a ``Dict`` flattened by
  :class:`~arena_envs.core.flat_actions.FlatActions`): the bare feature array, no mask;
* rewards, flags and infos as ``last()`` reports them for the seat; ``rewards`` holds what each
  learner got during the last ``step``, the other seats' moves included. No text is built for it.

Seeding as :class:`~arena_envs.rl.LearnerEnv` (episode ``k`` after ``reset(seed=S)`` plays as the
runner's episode ``k``); an episode in which no learner gets a decision is skipped. Async (LLM)
policies are awaited on a private event loop, each episode in one
:func:`~arena_envs.core.episode_context.episode_scope`, so a server pool keeps it on one server.
"""
from __future__ import annotations

import contextvars
import itertools
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from arena_envs.core import Policy
from arena_envs.core.episode_context import episode_scope
from arena_envs.core.flat_actions import FlatActions
from arena_envs.rl.learner_env import MAX_EMPTY_EPISODES, fresh_copy, is_async_policy, never_acted_error, numeric_space
from arena_envs.rl.opponents import SELF, as_policy
from arena_envs.rl.private_loop import PrivateLoop
from arena_envs.runner.policy_specs import make_policy
from arena_envs.runner.seeding import episode_seeds

#: Keys of a masked observation (RLlib's action-masking convention).
OBSERVATIONS, ACTION_MASK = "observations", "action_mask"

_INSTANCES = itertools.count()


class NumericAEC(AECEnv):
    """``env`` with the ``learners`` seats left to the caller; see the module docstring.

    ``env``: an AEC environment of the suite, or a zero-argument function building one.
    ``learners``: the learner seats (default: every seat ``others`` does not name); ``others``: seat
    -> policy, function or policy spec, for every other seat.
    """

    metadata: dict[str, Any] = {"render_modes": [], "is_parallelizable": False}

    def __init__(self, env: AECEnv | Callable[[], AECEnv], *, learners: Sequence[str] | None = None,
                 others: Mapping[str, Any] | None = None):
        super().__init__()
        self.env: AECEnv = env if isinstance(env, AECEnv) else env()
        self.raw = self.env.unwrapped
        if not hasattr(self.raw, "observe_numeric"):
            raise ValueError(f"{type(self.raw).__name__} has no numeric view (observe_numeric); NumericAEC needs one")
        name = str(self.raw.metadata.get("name", type(self.raw).__name__))
        self.metadata = {**self.metadata, "name": f"numeric_{name}"}
        self.seats: list[str] = list(self.raw.possible_agents)
        others = dict(others or {})
        self.possible_agents = _learner_seats(learners, others, self.seats)
        self._learners = frozenset(self.possible_agents)
        self.policies = {seat: _policy(entry, name) for seat, entry in others.items()}
        self.seat_spaces = {a: LearnerSpaces.of(self.raw, a) for a in self.possible_agents}
        self.observation_spaces = {a: view.observation_space for a, view in self.seat_spaces.items()}
        self.action_spaces = {a: view.action_space for a, view in self.seat_spaces.items()}
        self.render_mode = getattr(self.raw, "render_mode", None)
        self._async = any(is_async_policy(p) for p in self.policies.values())
        self._loop = PrivateLoop()
        self._context: contextvars.Context | None = None
        self._scope: AbstractContextManager[None] | None = None
        self._instance = next(_INSTANCES)
        self._run_seed: int | None = None
        self._episode = -1
        self.agents: list[str] = []

    # ------------------------------------------------------------------ PettingZoo API

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start the next episode (a new sequence with ``seed``); ``options`` are not used."""
        for _ in range(MAX_EMPTY_EPISODES):
            self._start(seed)
            seed = None
            self._step_rewards = {a: 0.0 for a in self.possible_agents}
            self._play_others()
            selected = self.raw.agent_selection
            if self.raw.agents and selected in self._learners and not self._done(selected):
                self._sync()
                return
        raise never_acted_error()

    def observe(self, agent: str) -> Any:
        return self.seat_spaces[agent].observation(*self.raw.observe_numeric(agent))

    def step(self, action: Any) -> None:
        """Apply the selected learner's ``action`` (None for a finished seat), then play the other
        seats until a learner must act or the learners' episode is over."""
        agent = self.agent_selection
        self._step_rewards = {a: 0.0 for a in self.agents}
        self.env.step(None if self._done(agent) else self.seat_spaces[agent].native(action))
        self._add_rewards()
        self._play_others()
        self._sync()

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self._end_scope()
        self.env.close()
        for policy in self.policies.values():
            policy.close()
        self._loop.close()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_context=None, _scope=None)  # an episode's scope stays with the original
        return state

    # ------------------------------------------------------------------ the other seats

    def _start(self, seed: int | None) -> None:
        """Reset the game and the other seats' policies for the next episode of the sequence."""
        if seed is not None or self._run_seed is None:
            self._run_seed = int(seed) if seed is not None else int(np.random.default_rng().integers(2**31))
            self._episode = 0
        else:
            self._episode += 1
        seeds = episode_seeds(self._run_seed, self._episode, len(self.seats))
        self.env.reset(seed=seeds.env)
        for seat, policy_seed in zip(self.seats, seeds.seats):
            if seat in self.policies:
                self.policies[seat].bind(self.raw)
                self.policies[seat].reset(seat, policy_seed)
        if self._async:
            self._end_scope()
            self._begin_scope((f"numeric_aec-{self._instance}", self._run_seed, self._episode))

    def _play_others(self) -> None:
        """Play the other seats (their finishing calls included) until a learner is selected or
        no learner is left in the game."""
        raw = self.raw
        while raw.agents and raw.agent_selection not in self._learners and self._learners.intersection(raw.agents):
            seat = raw.agent_selection
            policy = self.policies[seat]
            if policy.reads_text:
                observation = raw.observe(seat)
            else:
                features, mask = raw.observe_numeric(seat)
                observation = {"observation": features, "action_mask": mask}
            if self._done(seat):
                self._call(policy.afinish if self._async else policy.finish, observation, raw.infos[seat])
                self.env.step(None)
            else:
                self.env.step(self._call(policy.aact if self._async else policy.act, observation, raw.infos[seat]))
            self._add_rewards()
        if self._async and not self._learners.intersection(raw.agents):
            self._end_scope()

    def _call(self, method: Callable[..., Any], observation: Any, info: dict[str, Any]) -> Any:
        if not self._async:
            return method(observation, info)
        assert self._context is not None
        # tasks copy the current context: run inside the episode's, so they see its scope
        return self._loop.run(method(observation, info), self._context)

    def _begin_scope(self, key: tuple[Any, ...]) -> None:
        self._context = contextvars.copy_context()
        self._scope = episode_scope(key)
        self._context.run(self._scope.__enter__)

    def _end_scope(self) -> None:
        if self._scope is not None and self._context is not None:
            self._context.run(self._scope.__exit__, None, None, None)
        self._scope = None

    # ------------------------------------------------------------------ the learners' view

    def _done(self, seat: str) -> bool:
        return bool(self.raw.terminations[seat] or self.raw.truncations[seat])

    def _add_rewards(self) -> None:
        for agent in self._step_rewards:
            self._step_rewards[agent] += float(self.raw.rewards.get(agent, 0.0))

    def _sync(self) -> None:
        """The learners' part of the game's state (its dicts keep only the seats still in the game)."""
        raw = self.raw
        self.agents = [a for a in raw.agents if a in self._learners]
        self.rewards = {a: self._step_rewards.get(a, 0.0) for a in self.agents}
        self._cumulative_rewards = {a: float(raw._cumulative_rewards[a]) for a in self.agents}
        self.terminations = {a: bool(raw.terminations[a]) for a in self.agents}
        self.truncations = {a: bool(raw.truncations[a]) for a in self.agents}
        self.infos = {a: fresh_copy(raw.infos[a]) for a in self.agents}
        if self.agents:
            self.agent_selection = raw.agent_selection


def _learner_seats(learners: Sequence[str] | None, others: Mapping[str, Any], seats: list[str]) -> list[str]:
    """The learner seats in game order; every seat is either a learner or in ``others``."""
    unknown = sorted(set(others).union(learners or ()) - set(seats))
    if unknown:
        raise ValueError(f"seat {unknown[0]!r} is not a seat of this environment; seats: {', '.join(seats)}")
    chosen = [s for s in seats if s not in others] if learners is None else [s for s in seats if s in learners]
    both = sorted(set(chosen) & set(others))
    if both:
        raise ValueError(f"seat {both[0]} is both a learner and played by {others[both[0]]!r}; name it once")
    missing = [s for s in seats if s not in chosen and s not in others]
    if missing:
        raise ValueError(f"seat {missing[0]} is neither a learner nor in others; every seat needs one of the two")
    if not chosen:
        raise ValueError(f"no learner seat: others play every seat ({', '.join(seats)})")
    return chosen


def _policy(entry: Any, env_name: str) -> Policy:
    """The policy of an ``others`` entry: a spec string is built as ``arena run`` builds it."""
    if isinstance(entry, str):
        if entry.strip() == SELF:
            raise ValueError(f"{SELF!r} is not a seat of NumericAEC; make the seat a learner (learners share "
                             "a network when the trainer maps them to one policy)")
        return make_policy(entry, env_name)
    return as_policy(entry)


class LearnerSpaces:
    """A learner seat's spaces and the conversions between the game's numeric view and the learner's
    (shared by :class:`NumericAEC` and players of trained models, ``baselines.rllib.policy``)."""

    def __init__(self, features: spaces.Space[Any], game_actions: spaces.Space[Any]):
        self.game_actions = game_actions
        self.flat = FlatActions(game_actions)
        self._size = int(self.flat.space.n) if isinstance(self.flat.space, spaces.Discrete) else 0
        if self._size:
            n = self._size
            self.action_space: spaces.Space[Any] = spaces.Discrete(n)  # the start is added back in native()
            self.observation_space: spaces.Space[Any] = spaces.Dict(
                {OBSERVATIONS: features, ACTION_MASK: spaces.Box(0, 1, (n,), dtype=np.int8)})
        else:
            self.action_space, self.observation_space = self.flat.space, features
        self.masked = isinstance(self.observation_space, spaces.Dict)

    @classmethod
    def of(cls, raw: AECEnv, agent: str) -> LearnerSpaces:
        """The spaces of ``agent``'s seat in the (unwrapped) game ``raw``."""
        return cls(numeric_space(raw, agent), raw.action_space(agent))

    def observation(self, features: np.ndarray, mask: Any) -> Any:
        """The learner's observation for the game's numeric ``features`` and ``mask``."""
        features = features.copy()  # the game may hand the same array to every seat of a round
        if not self.masked:
            return features
        flat = self.flat.mask(mask)
        allowed = np.ones(self._size, dtype=np.int8) if flat is None else flat.astype(np.int8)
        return {OBSERVATIONS: features, ACTION_MASK: allowed}

    def native(self, action: Any) -> Any:
        """The game's action for the learner's ``action``."""
        if isinstance(self.game_actions, spaces.Discrete):
            return int(action) + int(self.game_actions.start)
        return self.flat.native(action)
