"""The ``env`` / ``raw_env`` / ``parallel_env`` triad of a versioned entry module.

Every entry module (``arena_envs/<name>_v<N>.py``) is two lines::

    env, raw_env = entry_points(ElFarolEnv)
    parallel_env = parallel_entry_point(ElFarolEnv)    # only where metadata["is_parallelizable"]

All three take ``obs_mode="numeric"``: the game through its numbers only, for RL libraries
(:class:`~arena_envs.core.numeric_view.NumericView`; the parallel form keeps every seat until the
episode ends, :class:`~arena_envs.core.numeric_view.FixedSeats`). A game with an ``obs_mode`` argument
of its own (the tank battle) gets the value too; to any other game it is not passed.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import aec_to_parallel

from arena_envs.core.answers import excerpt
from arena_envs.core.numeric_view import FixedSeats, NumericView
from arena_envs.core.order_enforcing import OrderEnforcing

#: The ``obs_mode`` of the numeric view.
NUMERIC = "numeric"

E = TypeVar("E")


def entry_points(cls: type[E]) -> tuple[Callable[..., AECEnv], Callable[..., E | NumericView]]:
    """``env`` (the game in :class:`OrderEnforcing`, PettingZoo's OrderEnforcingWrapper) and
    ``raw_env`` (the bare game; with ``obs_mode="numeric"`` its :class:`NumericView`).

    No TerminateIllegalWrapper: the games handle illegal answers themselves (re-ask, fallback).
    """
    own_obs_mode = "obs_mode" in inspect.signature(cls).parameters

    def raw_env(**kwargs: Any) -> E | NumericView:
        numeric = kwargs.get("obs_mode") == NUMERIC
        if not own_obs_mode and "obs_mode" in kwargs:
            if not numeric:
                raise ValueError(f"obs_mode must be {NUMERIC!r} (or left out: text and numbers), "
                                 f"got {excerpt(kwargs['obs_mode'])}")
            del kwargs["obs_mode"]
        game = cls(**kwargs)
        return NumericView(game) if numeric else game  # type: ignore[arg-type]

    def env(**kwargs: Any) -> AECEnv:
        return OrderEnforcing(raw_env(**kwargs))

    raw_env.__doc__ = f"The unwrapped :class:`{cls.__module__}.{cls.__name__}` (obs_mode='numeric': its numeric view)."
    env.__doc__ = f"{cls.__name__} wrapped in PettingZoo's OrderEnforcingWrapper (the AEC API)."
    return env, raw_env


def parallel_entry_point(cls: type[AECEnv]) -> Callable[..., ParallelEnv]:
    """``parallel_env`` of a game whose every live seat acts once per cycle (``aec_to_parallel``).

    It runs without re-asks (``max_retries=0``): the parallel API steps every agent once per cycle,
    so an invalid answer falls back at once (still recorded and counted). With ``obs_mode="numeric"``
    every seat stays until the episode ends (:class:`FixedSeats`).
    """
    if not cls.metadata.get("is_parallelizable", False):
        raise ValueError(f"{cls.__name__} is not parallelizable (metadata['is_parallelizable'] is not True)")
    env, _ = entry_points(cls)

    def parallel_env(**kwargs: Any) -> ParallelEnv:
        if kwargs.setdefault("max_retries", 0) != 0:
            raise ValueError(f"parallel_env needs max_retries=0 (every agent acts once per cycle), "
                             f"got {kwargs['max_retries']!r}")
        parallel = aec_to_parallel(env(**kwargs))
        return FixedSeats(parallel) if kwargs.get("obs_mode") == NUMERIC else parallel

    parallel_env.__doc__ = (f"{cls.__name__} through the Parallel API (aec_to_parallel; invalid answers fall "
                            "back at once).")
    return parallel_env
