"""Running async work to its end from synchronous code, wherever that code is called from.

:func:`run_to_end` is ``asyncio.run`` in a thread without an event loop (a script, the command
line), and a fresh loop in a helper thread in one that runs a loop already (a Jupyter cell, an async
caller of a synchronous method), where ``asyncio.run`` refuses. There a Ctrl-C (the notebook's
interrupt) cancels the work and waits for it to stop, as ``asyncio.run`` does, before it is raised.
"""
from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar, cast

T = TypeVar("T")


def run_to_end(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``work()`` run to its end on a fresh event loop: in this thread, or in a helper thread when this
    one already runs a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work())
    return _in_helper_thread(work)


def _in_helper_thread(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    started = threading.Event()
    done = threading.Event()
    box: dict[str, Any] = {}

    async def main() -> T:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        started.set()
        return await work()

    def target() -> None:
        try:
            box["result"] = asyncio.run(main())
        except BaseException as err:  # handed to the caller's thread
            box["error"] = err
        finally:
            started.set()
            done.set()

    thread = threading.Thread(target=target, name="run_to_end", daemon=True)
    thread.start()
    try:
        while not done.wait(0.1):  # short waits: a KeyboardInterrupt reaches this thread between them
            pass
    except KeyboardInterrupt:
        started.wait()
        if "task" in box:
            box["loop"].call_soon_threadsafe(box["task"].cancel)
        done.wait()
        raise
    if "error" in box:
        raise box["error"]
    return cast(T, box["result"])
