"""Random legal actions and decision counting, shared by the benchmarks.

``sample`` draws a legal native action from the observation's ``action_mask`` (a ``Dict`` of
masks for a ``Dict`` action, as the tank battle's and the Pirate Game's).
``play`` counts *decisions*: steps of a live agent whose answer the game took (not a dead agent's
``step(None)``, not an invalid answer that is asked again).
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from arena_envs.core import Policy


def sample(env: Any, agent: str, observation: Any, rng: np.random.Generator) -> Any:
    space = env.action_space(agent)
    mask = observation.get("action_mask") if isinstance(observation, dict) else None
    if isinstance(space, spaces.Dict) and isinstance(mask, dict):
        return {key: _legal(sub, mask[key], rng) for key, sub in space.spaces.items()}
    return space.sample(mask)


def _legal(space: spaces.Space[Any], mask: Any, rng: np.random.Generator) -> Any:
    """A uniform legal value of one part of a ``Dict`` action, as gymnasium's masked ``sample`` draws
    it but without its per-call validation (which would cost more than a tank battle step): the legal
    entry with the largest uniform draw (ties have probability 0); the first value when none is legal."""
    if isinstance(space, spaces.Discrete):
        return int(space.start) + int(np.argmax(rng.random(len(mask)) * mask))
    if isinstance(space, spaces.MultiDiscrete):
        rows = np.stack(mask)
        return np.argmax(rng.random(rows.shape) * rows, axis=1).astype(space.dtype)
    return space.sample(mask)


@dataclass(frozen=True)
class PlayTime:
    """CPU seconds of :func:`play`."""

    total: float  #: the whole loop: dead agents' ``step(None)``, resets and sampling included
    moves: float  #: inside the live agents' ``last()`` and ``step()``: what the moves themselves cost


def play(env: Any, decisions: int, seed: int = 0, policies: Mapping[str, Policy] | None = None) -> PlayTime:
    """CPU time to make ``decisions`` random legal decisions (or those of ``policies``, one per
    agent, bound and reset for every episode), resetting when an episode ends."""
    rng = np.random.default_rng(seed)
    episode = 0
    raw = env.unwrapped

    def reset() -> None:
        env.reset(seed=seed + episode)
        if policies is not None:
            for i, agent in enumerate(env.possible_agents):
                policies[agent].bind(raw)
                policies[agent].reset(agent, seed + episode + i)

    made = 0
    moves = 0.0
    clock = time.process_time
    start = clock()
    reset()
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(seed + i)
    while made < decisions:
        if not env.agents:
            episode += 1
            reset()
        agent = env.agent_selection
        t0 = clock()
        observation, _, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        t1 = clock()
        action = sample(env, agent, observation, rng) if policies is None else policies[agent].act(observation, info)
        t2 = clock()
        env.step(action)
        moves += t1 - t0 + clock() - t2
        info = raw.infos.get(agent, {})
        if not info.get("invalid_action") or info.get("fallback"):  # asked again: not a decision
            made += 1
    return PlayTime(clock() - start, moves)
