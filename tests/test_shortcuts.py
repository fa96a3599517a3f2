"""The speed shortcuts of the common path against the stock path each stands for: the order
enforcing wrapper of ``env()`` (arena_envs/core/order_enforcing.py) against PettingZoo's own, the
counted dead-agent steps (arena_envs/core/dead_agents.py) against ``AECEnv``'s own, and the space
cache of the constructors (arena_envs/core/space_cache.py) against spaces built afresh."""
from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

import arena_envs
from arena_envs.core.order_enforcing import OrderEnforcing
from arena_envs.core.space_cache import own_copy, prototype
from arena_envs.registration import ENVIRONMENTS

#: agent_iter steps compared per game (every game's rounds repeat well within them)
STEPS = 300


def played(env: Any, seed: int) -> list[bytes]:
    """Every step's ``last()`` and selected agent under seeded masked random play, then the
    episode record, each pickled (equal objects give equal bytes here: both runs build them alike)."""
    env.reset(seed=seed)
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(seed + i)
    steps = []
    for agent in env.agent_iter(STEPS):
        observation, reward, termination, truncation, info = env.last()
        steps.append(pickle.dumps((agent, observation, reward, termination, truncation, info)))
        mask = observation.get("action_mask") if isinstance(observation, dict) else None
        env.step(None if termination or truncation else env.action_space(agent).sample(mask))
    steps.append(pickle.dumps(env.unwrapped.episode_record()))
    return steps


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_the_order_enforcing_wrapper_plays_as_pettingzoos(name):
    module = getattr(arena_envs, name)
    ours = module.env()
    assert type(ours) is OrderEnforcing
    stock = wrappers.OrderEnforcingWrapper(module.raw_env())
    mine, theirs = played(ours, seed=3), played(stock, seed=3)
    assert len(mine) == len(theirs) > 2
    first = next((k for k, (a, b) in enumerate(zip(mine, theirs)) if a != b), None)
    assert first is None, f"{name}: step {first} differs"


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_the_counted_dead_agent_steps_play_as_pettingzoos(name):
    """The same game with PettingZoo's own dead-agent steps and reward accumulation (every agent
    scanned at every step): the same selections, observations, rewards and dicts, step by step."""
    module = getattr(arena_envs, name)
    raw = type(module.raw_env())

    def stock_dead_step(env: Any, action: Any) -> None:  # the environment's own count kept as it keeps it
        AECEnv._was_dead_step(env, action)
        env._done_count = env._count_done()

    stock_class = type(f"Stock{raw.__name__}", (raw,), {
        "_deads_step_first": AECEnv._deads_step_first, "_was_dead_step": stock_dead_step,
        "_accumulate_rewards": AECEnv._accumulate_rewards})
    stock = wrappers.OrderEnforcingWrapper(stock_class())
    mine, theirs = played(module.env(), seed=5), played(stock, seed=5)
    assert len(mine) == len(theirs) > 2
    first = next((k for k, (a, b) in enumerate(zip(mine, theirs)) if a != b), None)
    assert first is None, f"{name}: step {first} differs"


def test_the_order_enforcing_wrapper_refuses_what_pettingzoos_refuses(caplog):
    ours, stock = arena_envs.el_farol_v0.env(), wrappers.OrderEnforcingWrapper(arena_envs.el_farol_v0.raw_env())
    for call in (lambda env: env.step(0), lambda env: env.observe("player_0")):
        messages = []
        for env in (ours, stock):
            with pytest.raises(AssertionError) as caught:
                call(env)
            messages.append(str(caught.value))
        assert messages[0] == messages[1]
    with pytest.raises(AssertionError, match=r"^reset\(\) needs to be called before last\.$"):
        ours.last()
    warned = []
    for env in (ours, stock):  # an episode played out: a step is logged and changes nothing
        env.reset(seed=0)
        for agent in env.agent_iter():
            env.step(None if env.terminations[agent] or env.truncations[agent] else 0)
        caplog.clear()
        env.step(0)
        warned.append([record.getMessage() for record in caplog.records])
        assert not env.agents
    assert warned[0] == warned[1] and len(warned[0]) == 1


def _build() -> spaces.Dict:
    return spaces.Dict({"observation": spaces.Box(-1.0, 1.0, (3,), np.float32),
                        "action_mask": spaces.MultiBinary(4), "choice": spaces.Discrete(5, start=2)})


def test_a_cached_space_equals_one_built_afresh_and_has_its_own_generator():
    key = ("test_shortcuts", 3)
    first, second, fresh = own_copy(prototype(key, _build)), own_copy(prototype(key, _build)), _build()
    assert first == fresh and second == fresh
    assert first is not second and first["observation"] is not second["observation"]
    assert not first["observation"].low.flags.writeable  # shared by every copy, so read-only
    first.seed(7)
    fresh.seed(7)
    assert data_equivalence(first.sample(), fresh.sample())
    first.seed(11)
    expected = first.sample()
    first.seed(11)
    second.seed(11)
    for _ in range(5):  # a copy's draws leave the other's generator where it was
        second.sample()
    assert data_equivalence(first.sample(), expected)
