"""Running async HTTP work from synchronous code, and closing async clients from anywhere: what the
OpenAI-compatible backend and the ``agent:`` policy both need for their probes and their ``close``."""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class AsyncClient(Protocol):
    """What :func:`close_clients` needs of an ``httpx.AsyncClient``."""

    @property
    def is_closed(self) -> bool: ...

    async def aclose(self) -> None: ...


def run_to_end(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``work()`` run to its end from synchronous code, on a fresh event loop: in this thread, or in a
    helper thread when this one already runs a loop (an async caller of a synchronous method)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work())
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(work())).result()


def close_clients(clients: Iterable[AsyncClient]) -> None:
    """Close each open client: as a task of the running loop, else on a fresh loop (a client bound to a
    loop that is gone cannot be closed and is left to the garbage collector)."""
    for client in clients:
        if client.is_closed:
            continue
        try:
            asyncio.get_running_loop().create_task(client.aclose())
        except RuntimeError:  # no loop running: close on a fresh one
            try:
                asyncio.run(client.aclose())
            except RuntimeError:
                pass
