"""Bounded retries with exponential backoff, independent of any transport."""
from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

#: The most attempts a :class:`Backoff` makes (the limit of the ``retries`` option).
MAX_ATTEMPTS = 100


class Retryable(Exception):
    """Raised by an attempt whose failure is transient (connection refused, 5xx, a missed
    deadline, a malformed reply)."""


@dataclass(frozen=True)
class Backoff:
    """``attempts`` tries in all (1 to :data:`MAX_ATTEMPTS`); the wait before try k+1 is
    ``min(base * factor**(k-1), cap)``; ``base``, ``factor`` and ``cap`` are finite."""

    attempts: int = 4
    base: float = 0.5
    factor: float = 2.0
    cap: float = 8.0

    def __post_init__(self) -> None:
        if not 1 <= self.attempts <= MAX_ATTEMPTS:
            raise ValueError(f"attempts must be from 1 to {MAX_ATTEMPTS}, got {self.attempts}")
        if not (0 <= self.base < math.inf and 0 <= self.cap < math.inf and 1 <= self.factor < math.inf):
            raise ValueError(f"backoff needs finite base >= 0, cap >= 0 and factor >= 1, got {self}")

    def delays(self) -> list[float]:
        """The waits between consecutive tries (``attempts - 1`` of them)."""
        delays: list[float] = []
        wait = min(self.base, self.cap)
        for _ in range(self.attempts - 1):
            delays.append(wait)
            wait = min(wait * self.factor, self.cap)  # never factor**k: it overflows
        return delays


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    backoff: Backoff,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """Run ``attempt`` until it succeeds; on :class:`Retryable` wait and retry, at most
    ``backoff.attempts`` times in all, then re-raise the last :class:`Retryable`."""
    delays = backoff.delays()
    for k in range(backoff.attempts):
        try:
            return await attempt()
        except Retryable:
            if k == len(delays):
                raise
            await sleep(delays[k])
    raise AssertionError("unreachable")
