"""An event loop of one learner environment, for awaiting LLM players from synchronous ``step`` calls.

RL libraries call ``reset``/``step`` synchronously; the other seats' LLM policies are async. Each
environment runs them on a loop of its own, made on first use (rule players never need one). A
copy of the environment (pickled to a subprocess or a Ray actor) gets no loop and makes its own.
"""
from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine
from typing import Any


class PrivateLoop:
    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, coroutine: Coroutine[Any, Any, Any], context: contextvars.Context | None = None) -> Any:
        """Run ``coroutine`` to completion (inside ``context`` when given: its tasks copy it)."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        if context is None:
            return self._loop.run_until_complete(coroutine)
        return context.run(self._loop.run_until_complete, coroutine)

    def close(self) -> None:
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    def __getstate__(self) -> dict[str, Any]:
        return {"_loop": None}  # an event loop does not pickle
