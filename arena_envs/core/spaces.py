"""Observation/action spaces shared by the text games, and cheap per-agent copies of them.

gymnasium's ``Text`` space only admits a fixed alphabet (alphanumerics by default), which rejects
prompts with spaces, punctuation or non-ASCII. :class:`UnicodeText` accepts any Python string up
to ``max_length`` characters (``None``: any length, for a text that keeps a growing history), so a
prompt or a raw LLM reply is always a member of the space.

Building a gymnasium ``Box`` validates and casts its bounds, which made ``env()`` several times
slower than a classic PettingZoo environment when every agent of every instance built its own.
:func:`prototype` builds a space once per distinct configuration (process-wide cache) and
:func:`own_copy` gives each agent a copy that shares the prototype's read-only bounds but has its
own random generator, so ``space.seed()`` and ``space.sample()`` stay per agent and per instance.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np
from gymnasium import spaces
from gymnasium.spaces import Space

_SAMPLE_ALPHABET = np.array(list("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789$!.,:;'\"-\né€ü"))

S = TypeVar("S", bound=Space[Any])

#: configuration key -> the space built once for it (read-only arrays; never handed out itself)
_PROTOTYPES: dict[Hashable, Space[Any]] = {}
#: Bound on the cache: distinct configurations of one process (a sweep over budgets, say) stay few.
_MAX_PROTOTYPES = 1024


class UnicodeText(Space[str]):
    """Any ``str`` of ``min_length`` to ``max_length`` characters (every Unicode code point allowed).

    ``max_length=None`` declares no upper bound: the right declaration for a text that keeps the
    whole history of an episode whose length the configuration does not bound.
    """

    def __init__(self, max_length: int | None, min_length: int = 0,
                 seed: int | np.random.Generator | None = None):
        if min_length < 0 or (max_length is not None and max_length < min_length):
            raise ValueError(f"need 0 <= min_length <= max_length, got {min_length}, {max_length}")
        self.max_length = None if max_length is None else int(max_length)
        self.min_length = int(min_length)
        super().__init__(dtype=str, seed=seed)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            raise ValueError("UnicodeText.sample takes no mask")
        top = 64 if self.max_length is None else min(self.max_length, 64)
        length = int(self.np_random.integers(self.min_length, max(top, self.min_length) + 1))
        return "".join(self.np_random.choice(_SAMPLE_ALPHABET, size=length))

    def contains(self, x: Any) -> bool:
        return (isinstance(x, str) and self.min_length <= len(x)
                and (self.max_length is None or len(x) <= self.max_length))

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"UnicodeText(max_length={self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, UnicodeText)
            and other.max_length == self.max_length
            and other.min_length == self.min_length
        )

    def __hash__(self) -> int:
        return hash(("UnicodeText", self.min_length, self.max_length))


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
