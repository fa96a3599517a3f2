"""The seats a learner does not play: policies, plain functions, and frozen snapshots of the learner.

An opponent is a :class:`~arena_envs.core.Policy` (rule, random, trained RL or LLM; ``act`` or
``aact``), a plain function ``f(observation, info) -> action``, or :data:`SELF`: a frozen
snapshot of the learner (self-play). Snapshots are functions ``f(observation, action_mask) ->
action`` of the learner's numeric observation and flat mask, returning an action of the
learner's RL action space (:class:`arena_envs.core.flat_actions.FlatActions`); the training loop adds
them to the view's :class:`SnapshotPool` (``LearnerEnv.add_snapshot``), and each :data:`SELF`
seat draws one of the kept snapshots per episode.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

from arena_envs.core import Policy
from arena_envs.core.flat_actions import FlatActions

#: The opponent entry that means "a frozen snapshot of the learner".
SELF = "self"

Snapshot = Callable[[np.ndarray, "np.ndarray | None"], Any]


class FunctionPolicy(Policy):
    """A plain function ``f(observation, info) -> action`` on the policy interface."""

    def __init__(self, function: Callable[[Any, dict[str, Any]], Any]):
        self.function = function
        self.name = getattr(function, "__name__", "function")

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        return self.function(observation, info)


def as_policy(opponent: Any) -> Policy:
    """``opponent`` as a :class:`Policy` (a callable is wrapped); anything else is a one-line error."""
    if isinstance(opponent, Policy):
        return opponent
    if callable(opponent):
        return FunctionPolicy(opponent)
    raise TypeError(f"opponent {opponent!r} is neither a Policy, a function (observation, info) -> action, "
                    f"nor {SELF!r} (a snapshot of the learner)")


class SnapshotPool:
    """The last ``size`` snapshots of the learner (oldest dropped first)."""

    def __init__(self, size: int = 10):
        if size < 1:
            raise ValueError(f"snapshot pool size must be >= 1, got {size}")
        self.snapshots: deque[Snapshot] = deque(maxlen=size)

    def add(self, snapshot: Snapshot) -> None:
        self.snapshots.append(snapshot)

    def draw(self, rng: np.random.Generator) -> Snapshot | None:
        """A kept snapshot drawn uniformly; ``None`` while the pool is empty."""
        if not self.snapshots:
            return None
        return self.snapshots[int(rng.integers(len(self.snapshots)))]


class SnapshotPolicy(Policy):
    """A seat played by a snapshot of the learner drawn from ``pool`` at each episode's start.

    While the pool is empty it plays uniformly random legal actions (seeded by ``reset``), the usual
    first opponent of self-play.
    """

    name = SELF
    reads_text = False

    def __init__(self, pool: SnapshotPool, actions: FlatActions):
        self.pool = pool
        self.actions = actions
        self.rng = np.random.default_rng()
        self.snapshot: Snapshot | None = None

    def reset(self, agent: str, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.snapshot = self.pool.draw(self.rng)

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        mask = self.actions.mask(observation.get("action_mask"))
        if self.snapshot is not None:
            action = self.snapshot(observation["observation"], mask)
        else:
            action = random_action(self.actions.space, mask, self.rng)
        return self.actions.native(action)


def random_action(space: spaces.Space[Any], mask: np.ndarray | None, rng: np.random.Generator) -> Any:
    """A uniformly random action of an RL action space (:class:`FlatActions`'s ``space``) allowed by
    its flat boolean ``mask`` (``None``: every action), drawn from ``rng``."""
    if isinstance(space, spaces.Discrete):
        allowed = np.arange(int(space.n)) if mask is None else np.flatnonzero(mask)
        return int(space.start + allowed[rng.integers(len(allowed))])
    if isinstance(space, spaces.MultiDiscrete):
        bounds = np.cumsum(space.nvec)[:-1]
        parts = np.split(mask, bounds) if mask is not None else [np.ones(n, dtype=bool) for n in space.nvec]
        return np.array([np.flatnonzero(part)[rng.integers(part.sum())] for part in parts],
                        dtype=space.dtype) + space.start
    if isinstance(space, spaces.Box):
        low = np.where(np.isfinite(space.low), space.low, -1.0)
        high = np.where(np.isfinite(space.high), space.high, 1.0)
        return rng.uniform(low, high).astype(space.dtype)
    raise ValueError(f"no random action for space {space}")
