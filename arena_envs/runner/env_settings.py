"""The environment settings that players carry, merged into a run's own before its environment is built.

A policy names the environment keyword arguments it needs in
:attr:`arena_envs.core.Policy.env_settings` (``sb3:PATH`` and ``rllib:PATH``: the settings their
model was trained with, such as the tank battle's ``action_mode="discrete"`` and ``obs_mode="grid"``).
A run's own arguments (``--env-arg``) come first; a player's setting that they leave out is added; a
setting they give otherwise, or two players that need different values of one setting, stop the run
before its first episode with one line naming the ``--env-arg`` to give.
"""
from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from arena_envs.core import Policy
from arena_envs.core.answers import excerpt
from arena_envs.runner.policy_specs import SpecError, parse_value


def env_arg(key: str, value: Any) -> str:
    """``--env-arg KEY=VALUE`` as a shell takes it: a string bare when it reads back as itself, else JSON."""
    text = value if isinstance(value, str) and parse_value(value) == value else json.dumps(value)
    return f"--env-arg {shlex.quote(f'{key}={text}')}"


def players_settings(labels: Sequence[str], policies: Sequence[Policy]) -> dict[str, tuple[str, Any]]:
    """Setting -> (the first player that needs it, its value), over every player's ``env_settings``;
    :class:`SpecError` when two players need different values of one setting."""
    needed: dict[str, tuple[str, Any]] = {}
    for label, policy in zip(labels, policies):
        for key, value in getattr(policy, "env_settings", {}).items():  # a duck-typed policy may have none
            first = needed.setdefault(key, (label, value))
            if first[1] != value:
                raise SpecError(f"players {excerpt(first[0])} and {excerpt(label)} need other values of the "
                                f"environment setting {key} ({excerpt(first[1], 60)} and {excerpt(value, 60)}); "
                                "they cannot play in one run")
    return needed


def settled_env_kwargs(given: Mapping[str, Any], labels: Sequence[str], policies: Sequence[Policy], *,
                       can_add: bool = True) -> dict[str, Any]:
    """``given`` with the settings the players need (one policy per label) added where it leaves them
    out. :class:`SpecError` (one line naming the ``--env-arg``) when ``given`` sets one otherwise, or
    when one is missing and ``can_add`` is False (the caller builds its environment itself)."""
    settled = dict(given)
    for key, (label, value) in players_settings(labels, policies).items():
        if key in given and given[key] != value:
            raise SpecError(f"player {excerpt(label)} was trained with {key}={excerpt(value, 60)} and this run sets "
                            f"{key}={excerpt(given[key], 60)}; give {env_arg(key, value)} (or leave {key} out)")
        if key not in given:
            if not can_add:
                raise SpecError(f"player {excerpt(label)} needs the environment setting {key}={excerpt(value, 60)} "
                                f"(it was trained with it); add {env_arg(key, value)}")
            settled[key] = value
    return settled
