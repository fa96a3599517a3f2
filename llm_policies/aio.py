"""Running the async policies from synchronous code (a plain PettingZoo loop)."""
from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def run_sync(coro: Awaitable[T]) -> T:
    """Run ``coro`` to completion on one persistent private event loop.

    A persistent loop (rather than ``asyncio.run`` per call) lets backends keep their pooled
    connections and batching workers across decisions. Inside a running event loop, use the
    policy's ``aact`` instead.
    """
    global _loop
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError("act() was called inside a running event loop; await policy.aact(...) instead")
    with _lock:
        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
        return _loop.run_until_complete(coro)
