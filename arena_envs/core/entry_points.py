"""The ``env`` / ``raw_env`` / ``parallel_env`` triad of a versioned entry module.

Every entry module (``arena_envs/<name>_v<N>.py``) is two lines::

    env, raw_env = entry_points(ElFarolEnv)
    parallel_env = parallel_entry_point(ElFarolEnv)    # only where metadata["is_parallelizable"]
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.conversions import aec_to_parallel

E = TypeVar("E")


class OrderEnforcing(wrappers.OrderEnforcingWrapper):  # type: ignore[misc]
    """PettingZoo's OrderEnforcingWrapper, with the same checks, whose ``last()`` and ``step()`` go
    straight to the game once it has been reset.

    The base class answers ``last()`` by reading ``agent_selection``, ``_cumulative_rewards``,
    ``terminations``, ``truncations`` and ``infos`` through two Python ``__getattr__`` layers each
    (about 7 µs per decision, a tenth of a tank battle decision); here the game's own ``last()``
    reads them directly.
    """

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:  # PettingZoo's wording, as for step() and observe() (its own last() has none)
            raise AssertionError("reset() needs to be called before last.")
        result: tuple[Any, float, bool, bool, dict[str, Any]] = self.env.last(observe)
        return result

    def step(self, action: Any) -> None:
        if self._has_reset and self.env.agents:
            self._has_updated = True
            self.env.step(action)
        else:
            super().step(action)  # PettingZoo's error or warning

    def __str__(self) -> str:
        return str(self.env)


def entry_points(cls: type[E]) -> tuple[Callable[..., AECEnv], Callable[..., E]]:
    """``env`` (the game in :class:`OrderEnforcing`, PettingZoo's OrderEnforcingWrapper) and
    ``raw_env`` (the bare game).

    No TerminateIllegalWrapper: the games handle illegal answers themselves (re-ask, fallback).
    """

    def raw_env(**kwargs: Any) -> E:
        return cls(**kwargs)

    def env(**kwargs: Any) -> AECEnv:
        return OrderEnforcing(cls(**kwargs))

    raw_env.__doc__ = f"The unwrapped :class:`{cls.__module__}.{cls.__name__}`."
    env.__doc__ = f"{cls.__name__} wrapped in PettingZoo's OrderEnforcingWrapper (the AEC API)."
    return env, raw_env


def parallel_entry_point(cls: type[AECEnv]) -> Callable[..., ParallelEnv]:
    """``parallel_env`` of a game whose every live seat acts once per cycle (``aec_to_parallel``).

    It runs without re-asks (``max_retries=0``): the parallel API steps every agent once per cycle,
    so an invalid answer falls back at once (still recorded and counted).
    """
    if not cls.metadata.get("is_parallelizable", False):
        raise ValueError(f"{cls.__name__} is not parallelizable (metadata['is_parallelizable'] is not True)")
    env, _ = entry_points(cls)

    def parallel_env(**kwargs: Any) -> ParallelEnv:
        if kwargs.setdefault("max_retries", 0) != 0:
            raise ValueError(f"parallel_env needs max_retries=0 (every agent acts once per cycle), "
                             f"got {kwargs['max_retries']!r}")
        return aec_to_parallel(env(**kwargs))

    parallel_env.__doc__ = (f"{cls.__name__} through the Parallel API (aec_to_parallel; invalid answers fall "
                            "back at once).")
    return parallel_env
