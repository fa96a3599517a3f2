"""Which episode the running code belongs to, for parts that keep per-episode state across calls.

A runner plays each episode inside :func:`episode_scope`; code it calls (an LLM backend choosing
one server per episode so that the episode's prompts stay in that server's prefix cache) reads
:func:`current_episode` without any policy passing the key along. The key lives in a
:class:`contextvars.ContextVar`, so every asyncio task has its own and tasks started inside the
scope (``asyncio.gather`` of an agent's sub-calls) inherit it. When a scope ends, the callbacks
registered with :func:`on_episode_end` are called with its key, so such state is freed.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_CURRENT: ContextVar[Hashable | None] = ContextVar("arena_episode", default=None)
_ENDED: list[Callable[[Hashable], None]] = []


def current_episode() -> Hashable | None:
    """The key of the episode being played here, or None outside any :func:`episode_scope`."""
    return _CURRENT.get()


@contextmanager
def episode_scope(key: Hashable) -> Iterator[None]:
    """Run the block as episode ``key`` (unique within the process, e.g. ``(run_token, episode)``)."""
    token = _CURRENT.set(key)
    try:
        yield
    finally:
        _CURRENT.reset(token)
        for callback in list(_ENDED):
            callback(key)


def on_episode_end(callback: Callable[[Hashable], None]) -> Callable[[], None]:
    """Call ``callback(key)`` whenever an episode scope ends; returns the function that unregisters it."""
    _ENDED.append(callback)

    def remove() -> None:
        if callback in _ENDED:
            _ENDED.remove(callback)

    return remove
