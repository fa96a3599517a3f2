"""Closing async clients from anywhere: what the OpenAI-compatible backend and the ``agent:`` policy
both need for their ``close`` (their probes run through :func:`arena_envs.core.event_loops.run_to_end`)."""
from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Protocol


class AsyncClient(Protocol):
    """What :func:`close_clients` needs of an ``httpx.AsyncClient``."""

    @property
    def is_closed(self) -> bool: ...

    async def aclose(self) -> None: ...


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
