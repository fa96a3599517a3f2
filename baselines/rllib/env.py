"""The suite's games as RLlib multi-agent environments: :class:`~arena_envs.rl.NumericAEC` under
RLlib's ``PettingZooEnv`` wrapper, registered under :data:`ENV_NAME`.

``env_config`` (plain data, so it travels to remote EnvRunners): ``env`` (a name of ``arena
list``), ``env_kwargs``, ``learners`` (the learner seats; default: every seat ``others`` leaves)
and ``others`` (seat -> policy spec, e.g. ``"rule"`` or ``"vllm:MODEL@URL"``). The learner
defaults of ``arena train`` apply (the tank battle's discrete actions and grid, Who is Spy's
discrete actions).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena_envs.core.extras import needs_extra

with needs_extra("ray", __name__):
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.tune.registry import register_env

from arena_envs.rl import NumericAEC
from arena_envs.runner.runner import env_factory
from baselines.rl.envs import learner_env_kwargs

#: The name RLlib knows the suite's environments by (``config.environment(ENV_NAME, env_config=...)``).
ENV_NAME = "arena_pz"


def numeric_env(env_config: Mapping[str, Any]) -> NumericAEC:
    """The :class:`NumericAEC` that ``env_config`` describes."""
    name = env_config["env"]
    kwargs = learner_env_kwargs(name, env_config.get("env_kwargs") or {})
    learners = env_config.get("learners")
    return NumericAEC(env_factory(name, kwargs), learners=list(learners) if learners is not None else None,
                      others=dict(env_config.get("others") or {}))


def make_env(env_config: Mapping[str, Any]) -> PettingZooEnv:
    """An RLlib multi-agent environment (RLlib's env creator)."""
    return PettingZooEnv(numeric_env(env_config))


def register() -> str:
    """Register :func:`make_env` with Ray as :data:`ENV_NAME` (in the current Ray session) and return the name."""
    register_env(ENV_NAME, make_env)
    return ENV_NAME
