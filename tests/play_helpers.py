"""Playing one whole episode with one policy per seat, for the tests of every game."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena_envs.core.policy import Policy


def play(env, policies: Mapping[str, Policy] | Sequence[Policy], seed: int = 0) -> Any:
    """Reset ``env`` with ``seed``, bind and reset each seat's policy (seat ``i`` gets ``seed + i``),
    step until every agent is done (finished agents get ``None``); returns the unwrapped env."""
    env.reset(seed=seed)
    if not isinstance(policies, Mapping):
        policies = dict(zip(env.possible_agents, policies, strict=True))
    for i, (agent, policy) in enumerate(policies.items()):
        policy.bind(env.unwrapped)
        policy.reset(agent, seed + i)
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        env.step(None if term or trunc else policies[agent].act(obs, info))
    return env.unwrapped
