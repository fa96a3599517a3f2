"""Spaces built once per configuration, and cheap per-agent copies of them.

Contract: ``own_copy(prototype(key, build))`` equals ``build()`` (same bounds, dtype and shape)
and has its own random generator, so ``seed()`` and ``sample()`` stay per agent and per instance
(tests/test_shortcuts.py). Building a gymnasium ``Box`` validates and casts its bounds, which made
``env()`` several times slower than a classic PettingZoo environment when every agent of every
instance built its own.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np
from gymnasium import spaces
from gymnasium.spaces import Space

S = TypeVar("S", bound=Space[Any])

#: configuration key -> the space built once for it (read-only arrays; never handed out itself)
_PROTOTYPES: dict[Hashable, Space[Any]] = {}
#: Bound on the cache: distinct configurations of one process (a sweep over budgets, say) stay few.
_MAX_PROTOTYPES = 1024


def prototype(key: Hashable, build: Callable[[], S]) -> S:
    """The space built by ``build()`` for configuration ``key``, built once per process.

    Its arrays are made read-only. Hand out :func:`own_copy` of it, never the prototype itself.
    """
    space = _PROTOTYPES.get(key)
    if space is None:
        space = _freeze(build())
        if len(_PROTOTYPES) >= _MAX_PROTOTYPES:
            _PROTOTYPES.pop(next(iter(_PROTOTYPES)))
        _PROTOTYPES[key] = space
    return space  # type: ignore[return-value]


def own_copy(space: S) -> S:
    """A copy of ``space`` that shares its (read-only) arrays and has its own random generator.

    Dict and Tuple spaces are copied down to their leaves, so seeding a copy never seeds another.
    """
    clone = object.__new__(type(space))
    clone.__dict__.update(space.__dict__)
    clone.__dict__["_np_random"] = None  # created (unseeded) on first use, or by seed()
    if isinstance(space, spaces.Dict):
        clone.__dict__["spaces"] = {k: own_copy(s) for k, s in space.spaces.items()}
    elif isinstance(space, spaces.Tuple):
        clone.__dict__["spaces"] = tuple(own_copy(s) for s in space.spaces)
    return clone


def array_key(value: Any) -> Hashable:
    """A hashable key of an array-like value (dtype, shape and bytes), for :func:`prototype` keys."""
    array = np.asarray(value)
    return (array.dtype.str, array.shape, array.tobytes())


def _freeze(space: S) -> S:
    """Make the arrays a space holds read-only (they are shared by every copy)."""
    if isinstance(space, spaces.Dict):
        for sub in space.spaces.values():
            _freeze(sub)
    elif isinstance(space, spaces.Tuple):
        for sub in space.spaces:
            _freeze(sub)
    else:
        for value in vars(space).values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
    return space
