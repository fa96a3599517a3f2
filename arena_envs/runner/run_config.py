"""What defines a run (:class:`RunConfig`, stored in ``run.json``) and how its environment is built.

Every executor (the local runner, the Ray workers) builds its environments with
:func:`env_factory` and plays the episodes of one :class:`RunConfig`.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pettingzoo import AECEnv

from arena_envs.core import Policy
from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import MAX_EPISODES, MAX_SEATS, check_int
from arena_envs.registration import ENVIRONMENTS, unknown_environment
from arena_envs.runner.policy_specs import check_keywords, player_labels

EnvFactory = Callable[[], AECEnv]
PolicyFactory = Callable[[str, str], Policy]


@dataclass(frozen=True)
class RunConfig:
    """What defines a run (stored in ``run.json``; a folder only resumes the same configuration).

    ``env`` is a name of ``arena_envs.registration.ENVIRONMENTS`` or ``"package.module:callable"``
    returning an AEC environment; ``players`` are policy spec strings, one per seat; ``rotate``:
    whether seats rotate over episodes (:func:`arena_envs.runner.seeding.seat_players`; False:
    player ``i`` always plays seat ``i``).
    """

    env: str
    players: tuple[str, ...]
    episodes: int
    seed: int = 0
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    rotate: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "players", tuple(self.players))
        object.__setattr__(self, "env_kwargs", dict(self.env_kwargs))
        check_int("the number of players", len(self.players), 1, MAX_SEATS)
        check_int("episodes", self.episodes, 1, MAX_EPISODES)
        check_int("seed", self.seed, 0)

    @property
    def labels(self) -> list[str]:
        return player_labels(list(self.players))

    def to_dict(self) -> dict[str, Any]:
        fixed = {} if self.rotate else {"rotate": False}  # folders of rotating runs keep their run.json
        return {"env": self.env, "env_kwargs": dict(self.env_kwargs), "players": list(self.players),
                "seed": self.seed, "episodes": self.episodes, **fixed}


def env_factory(name: str, kwargs: Mapping[str, Any], builder: Callable[..., AECEnv] | None = None) -> EnvFactory:
    """A zero-argument builder of environment ``name`` with ``kwargs`` (checked by building one);
    ``builder``: ``env_builder(name)`` when the caller has resolved it already."""
    builder = builder or env_builder(name)
    kwargs = dict(kwargs)
    check_keywords(builder, kwargs, f"environment {name}: bad --env-arg")
    try:
        builder(**kwargs).close()
    except (TypeError, ValueError) as err:
        _check_against_env_class(builder, kwargs, f"environment {name}: bad --env-arg")
        given = " ".join(f"{key}={excerpt(value, 60)}" for key, value in kwargs.items())
        raise ValueError(f"environment {name}: bad --env-arg {given}: {err}") from err
    return lambda: builder(**kwargs)


def env_builder(name: str) -> Callable[..., AECEnv]:
    """The ``env`` function of environment ``name`` (registered, or ``package.module:callable``);
    a one-line ``ValueError`` when there is none."""
    if ":" in name:
        module, _, attribute = name.partition(":")
        try:
            builder = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError) as err:
            raise ValueError(f"cannot load environment {excerpt(name)}: {err}") from err
    else:
        if name not in ENVIRONMENTS:
            raise ValueError(unknown_environment(name))
        builder = ENVIRONMENTS[name].entry_module().env
    return builder


def _check_against_env_class(builder: Callable[..., AECEnv], kwargs: dict[str, Any], what: str) -> None:
    """Name the argument at fault by the environment class's own keywords (a builder of ``**kwargs``
    hides them): :func:`check_keywords` against the class of an environment built with defaults."""
    try:
        probe = builder()
    except Exception:  # no default environment to learn from: the caller reports the error
        return
    try:
        check_keywords(type(probe.unwrapped), kwargs, what)
    finally:
        probe.close()
