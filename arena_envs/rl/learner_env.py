"""One seat of any suite environment as a single-agent Gymnasium environment (a learner's view).

The learner plays one seat; the other seats are played by the given opponents (policies, plain
functions, or :data:`~arena_envs.rl.opponents.SELF` snapshots of the learner). A step applies the
learner's action, then plays the other seats until the learner must act again or is done.

* observation: the seat's numeric ``observation`` (features, or the game's own shape such as the
  tank battle's grid); the text is built for no one who does not read it (``reads_text``);
* reward: what ``last()`` reports for the seat since its previous action, invalid-answer penalty
  included; ``terminated`` / ``truncated``: the seat's flags (an invalid action is asked again);
* ``action_masks()``: the seat's mask as one flat boolean vector (sb3-contrib's ``MaskablePPO``);
  a ``Dict`` action space flattened (:class:`~arena_envs.core.flat_actions.FlatActions`).

Seeding follows the runner: after ``reset(seed=S)``, episode ``k`` seeds the game and each
opponent as episode ``k`` of ``arena run --seed S`` (:func:`arena_envs.runner.seeding.episode_seeds`);
a seat drawn per episode (``seat="random"`` or a list) comes from the view's own generator.
:meth:`LearnerEnv.astep` / :meth:`LearnerEnv.areset` await async (LLM) opponents, so many copies
share one event loop and a server's batches; ``step``/``reset`` run them on a private loop, each
episode in one :func:`~arena_envs.core.episode_context.episode_scope` (one server of a pool).
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from arena_envs.core import Policy
from arena_envs.core.episode_context import episode_scope
from arena_envs.core.flat_actions import FlatActions
from arena_envs.rl.opponents import SELF, SnapshotPolicy, SnapshotPool, as_policy
from arena_envs.rl.private_loop import PrivateLoop
from arena_envs.runner.seeding import episode_seeds

#: A request of the turn loop: the policy, whether the seat is finishing, its observation and info.
Turn = tuple[Policy, bool, Any, dict[str, Any]]

#: Episodes in a row in which the learner never got a decision before the view gives up.
MAX_EMPTY_EPISODES = 100

_VIEWS = itertools.count()  # numbers the views of a process, for their episode keys


class LearnerEnv(gym.Env[Any, Any]):
    """``env`` seen from one seat; see the module docstring.

    ``env``: an AEC environment, or a zero-argument function building one. ``opponents``: one entry
    per other seat, in ``possible_agents`` order with the learner's seat left out, or (learner seat
    fixed) a mapping seat -> entry; an entry is a :class:`Policy`, a function ``(observation, info)
    -> action`` or :data:`SELF`. ``seat``: the learner's seat (default: the first), ``"random"``
    (drawn among all seats per episode) or a list to draw from. ``snapshots``: how many learner
    snapshots the self-play pool keeps.
    """

    def __init__(self, env: AECEnv | Callable[[], AECEnv], opponents: Sequence[Any] | Mapping[str, Any], *,
                 seat: str | Sequence[str] | None = None, snapshots: int = 10):
        self.env: AECEnv = env if isinstance(env, AECEnv) else env()
        self.raw = self.env.unwrapped
        agents = list(self.raw.possible_agents)
        self.candidates = _learner_seats(seat, agents)
        self.snapshots = SnapshotPool(snapshots)
        spaces_of = {agent: numeric_space(self.raw, agent) for agent in self.candidates}
        first = self.candidates[0]
        for agent in self.candidates[1:]:
            if spaces_of[agent] != spaces_of[first] or self.raw.action_space(agent) != self.raw.action_space(first):
                raise ValueError(f"learner seats {first} and {agent} have different spaces; draw only among "
                                 "seats with the same observation and action spaces")
        self.observation_space = spaces_of[first]
        self.actions = FlatActions(self.raw.action_space(first))
        self.action_space = self.actions.space
        self.render_mode = getattr(self.raw, "render_mode", None)
        self.opponents = self._opponent_policies(opponents, agents)
        self._numeric = hasattr(self.raw, "observe_numeric")
        self._async = any(is_async_policy(p) for p in self.opponents)
        self._loop = PrivateLoop()
        self._run_seed: int | None = None
        self._episode = -1
        self._view = next(_VIEWS)
        self.learner = first
        self._seat_policy: dict[str, Policy] = {}
        self._mask: np.ndarray | None = None

    def _opponent_policies(self, opponents: Sequence[Any] | Mapping[str, Any], agents: list[str]) -> list[Policy]:
        """One policy per other seat, in seat order (a mapping is put in that order)."""
        if isinstance(opponents, Mapping):
            if len(self.candidates) > 1:
                raise ValueError("opponents must be a list (one per other seat, in seat order) when the learner's "
                                 "seat is drawn per episode")
            others = [a for a in agents if a != self.candidates[0]]
            if set(opponents) != set(others):
                raise ValueError(f"opponents name seats {sorted(opponents)}; the learner in {self.candidates[0]} "
                                 f"needs exactly {others}")
            opponents = [opponents[a] for a in others]
        elif isinstance(opponents, (str, bytes)) or not isinstance(opponents, Sequence):
            raise TypeError(f"opponents must be a list or a mapping seat -> policy, got {opponents!r}")
        if len(opponents) != len(agents) - 1:
            raise ValueError(f"{self.raw.metadata.get('name', type(self.raw).__name__)} has {len(agents)} seats: "
                             f"the learner and {len(agents) - 1} opponents expected, got {len(opponents)}")
        return [SnapshotPolicy(self.snapshots, self.actions) if entry == SELF else as_policy(entry)
                for entry in opponents]

    # ------------------------------------------------------------------ Gymnasium API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start the next episode (a new sequence with ``seed``); ``options`` are not used."""
        if self._async:
            return self._run(self.areset(seed=seed, options=options))
        self._start(seed)
        for _ in range(MAX_EMPTY_EPISODES):
            self._drive(self._turns())
            ready = self._ready()
            if ready is not None:
                return ready
        raise never_acted_error()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._async:
            return self._run(self.astep(action))
        self._learner_step(action)
        self._drive(self._turns())
        return self._result()

    async def areset(self, *, seed: int | None = None,
                     options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """:meth:`reset`, awaiting async opponents."""
        self._start(seed)
        for _ in range(MAX_EMPTY_EPISODES):
            with episode_scope(self._episode_key()):
                await self._adrive(self._turns())
            ready = self._ready()
            if ready is not None:
                return ready
        raise never_acted_error()

    async def astep(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """:meth:`step`, awaiting async opponents."""
        self._learner_step(action)
        with episode_scope(self._episode_key()):
            await self._adrive(self._turns())
        return self._result()

    def _episode_key(self) -> tuple[str, int, int | None, int]:
        """This view's current episode, as an :func:`episode_scope` key unique within the process."""
        return ("learner_env", self._view, self._run_seed, self._episode)

    @property
    def async_opponents(self) -> bool:
        """Whether an opponent has its own ``aact`` (an LLM policy): then :meth:`astep` lets many
        copies' requests be in flight at once."""
        return self._async

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as one flat boolean vector (every action when the game has no mask)."""
        if self._mask is None:
            size = int(np.sum(self.action_space.nvec)) if isinstance(self.action_space, spaces.MultiDiscrete) \
                else int(getattr(self.action_space, "n", 0))
            return np.ones(size, dtype=bool)
        return self._mask

    def add_snapshot(self, snapshot: Callable[[np.ndarray, np.ndarray | None], Any]) -> None:
        """Keep a frozen learner ``snapshot(observation, action_mask) -> action`` for the :data:`SELF` seats."""
        self.snapshots.add(snapshot)

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()
        for policy in self.opponents:
            policy.close()
        self._loop.close()

    # ------------------------------------------------------------------ the turn loop

    def _start(self, seed: int | None) -> None:
        """Reset the game and the opponents for the next episode of the sequence (a new one with ``seed``)."""
        if seed is not None or self._run_seed is None:
            super().reset(seed=seed)
            self._run_seed = int(seed) if seed is not None else int(self.np_random.integers(2**31))
            self._episode = 0
        else:
            self._episode += 1
        agents = list(self.raw.possible_agents)
        seeds = episode_seeds(self._run_seed, self._episode, len(agents))
        self.learner = self.candidates[int(self.np_random.integers(len(self.candidates)))] \
            if len(self.candidates) > 1 else self.candidates[0]
        self.env.reset(seed=seeds.env)
        others = iter(self.opponents)
        self._seat_policy = {}
        for agent, policy_seed in zip(agents, seeds.seats):
            if agent == self.learner:
                continue
            policy = self._seat_policy[agent] = next(others)
            policy.bind(self.raw)
            policy.reset(agent, policy_seed)

    def _turns(self) -> Generator[Turn, Any, None]:
        """Play the other seats until the learner acts or its episode is over: yields each seat's
        decision (or its finishing call) and takes the action that the driver sends back."""
        raw, env = self.raw, self.env
        while raw.agents:
            agent = raw.agent_selection
            if agent == self.learner:
                return
            policy = self._seat_policy[agent]
            info = raw.infos[agent]
            if policy.reads_text or not self._numeric:
                observation = raw.observe(agent)
            else:
                features, mask = raw.observe_numeric(agent)
                observation = {"observation": features, "action_mask": mask}
            if raw.terminations[agent] or raw.truncations[agent]:
                yield policy, True, observation, info
                env.step(None)
            else:
                env.step((yield policy, False, observation, info))

    def _drive(self, turns: Generator[Turn, Any, None]) -> None:
        """Answer the turn loop with sync calls."""
        try:
            policy, finishing, observation, info = next(turns)
            while True:
                if finishing:
                    policy.finish(observation, info)
                    reply = None
                else:
                    reply = policy.act(observation, info)
                policy, finishing, observation, info = turns.send(reply)
        except StopIteration:
            return

    async def _adrive(self, turns: Generator[Turn, Any, None]) -> None:
        """Answer the turn loop, awaiting each call."""
        try:
            policy, finishing, observation, info = next(turns)
            while True:
                if finishing:
                    await policy.afinish(observation, info)
                    reply = None
                else:
                    reply = await policy.aact(observation, info)
                policy, finishing, observation, info = turns.send(reply)
        except StopIteration:
            return

    def _learner_step(self, action: Any) -> None:
        if self.raw.agent_selection != self.learner or not self._learner_can_act():
            raise RuntimeError("step() on a finished episode: call reset() first")
        self.env.step(self.actions.native(action))

    def _learner_can_act(self) -> bool:
        agent = self.learner
        return agent in self.raw.terminations and not (self.raw.terminations[agent] or self.raw.truncations[agent])

    def _ready(self) -> tuple[Any, dict[str, Any]] | None:
        """The learner's first observation and info; ``None`` (and the next episode started) when
        its episode ended before its first decision (an eliminated seat, a game over at once)."""
        if self._learner_can_act():
            observation, _, _, _, info = self._result()
            return observation, info
        self._start(None)
        return None

    def _result(self) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """The learner's observation, reward, flags and info (as ``last()`` reports them for its seat)."""
        raw, agent = self.raw, self.learner
        if self._numeric:
            features, mask = raw.observe_numeric(agent)
        else:
            observation = raw.observe(agent)
            features, mask = observation["observation"], observation.get("action_mask")
        self._mask = self.actions.mask(mask)
        # fresh copies: the game may hand the same arrays and info parts to every seat of a round
        return (features.copy(), float(raw._cumulative_rewards[agent]), bool(raw.terminations[agent]),
                bool(raw.truncations[agent]), fresh_copy(raw.infos[agent]))

    def _run(self, coroutine: Any) -> Any:
        return self._loop.run(coroutine)


def _learner_seats(seat: str | Sequence[str] | None, agents: list[str]) -> tuple[str, ...]:
    if seat is None:
        return (agents[0],)
    if seat == "random":
        return tuple(agents)
    chosen = (seat,) if isinstance(seat, str) else tuple(seat)
    unknown = [s for s in chosen if s not in agents]
    if unknown or not chosen:
        raise ValueError(f"learner seat {unknown[0] if unknown else seat!r} is not a seat of this environment; "
                         f"seats: {', '.join(agents)} (or 'random')")
    return chosen


def numeric_space(raw: AECEnv, agent: str) -> spaces.Space[Any]:
    """The numeric part of ``agent``'s observation space (what a learner reads; never the text)."""
    space = raw.observation_space(agent)
    if isinstance(space, spaces.Dict) and "observation" in space.spaces:
        return space.spaces["observation"]
    raise ValueError(f"{agent}'s observation space has no numeric 'observation' part: {space}")


def fresh_copy(value: Any) -> Any:
    """A copy of a JSON-like value (dicts, lists, tuples, arrays) that shares no container with it."""
    kind = type(value)
    if kind is dict:
        return {key: fresh_copy(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return kind(fresh_copy(item) for item in value)
    if kind is np.ndarray:
        return value.copy()
    return value


def never_acted_error() -> RuntimeError:
    return RuntimeError(f"the learner's seat had no decision in {MAX_EMPTY_EPISODES} episodes in a row")


def is_async_policy(policy: Policy) -> bool:
    """Whether ``policy`` has its own ``aact`` (an LLM policy), rather than :class:`Policy`'s, which calls ``act``."""
    return getattr(type(policy), "aact", None) is not Policy.aact
