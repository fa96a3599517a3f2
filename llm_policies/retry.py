"""Bounded retries with exponential backoff, independent of any transport."""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


class Retryable(Exception):
    """Raised by an attempt whose failure is transient (connection refused, 5xx, timeout)."""


@dataclass(frozen=True)
class Backoff:
    """``attempts`` tries in all; the wait before try k+1 is ``min(base * factor**(k-1), cap)``."""

    attempts: int = 4
    base: float = 0.5
    factor: float = 2.0
    cap: float = 8.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"attempts must be >= 1, got {self.attempts}")
        if self.base < 0 or self.cap < 0 or self.factor < 1:
            raise ValueError("backoff needs base >= 0, cap >= 0 and factor >= 1")

    def delays(self) -> list[float]:
        """The waits between consecutive tries (``attempts - 1`` of them)."""
        return [min(self.base * self.factor**k, self.cap) for k in range(self.attempts - 1)]


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
