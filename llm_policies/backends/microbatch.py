"""Micro-batching: gather the requests of concurrent episodes into one batched model call.

Requests that arrive within ``window`` seconds of the first one (or until ``max_batch`` are
waiting) are handed together to a blocking batch function, which runs in a worker thread so the
event loop never blocks. Each caller gets its own result (or the batch's exception).
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

Req = TypeVar("Req")
Res = TypeVar("Res")


class MicroBatcher(Generic[Req, Res]):
    """``await batcher.submit(req)``; ``run_batch(list_of_reqs) -> list_of_results`` (same order)."""

    def __init__(self, run_batch: Callable[[Sequence[Req]], Sequence[Res]], *, max_batch: int = 64,
                 window: float = 0.02):
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        if window < 0:
            raise ValueError(f"window must be >= 0, got {window}")
        self.run_batch = run_batch
        self.max_batch = max_batch
        self.window = window
        self.batch_sizes: list[int] = []
        self._queue: list[tuple[Req, asyncio.Future[Res]]] = []
        self._full: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None

    async def submit(self, request: Req) -> Res:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Res] = loop.create_future()
        self._queue.append((request, future))
        full = self._full
        if full is None or self._worker is None or self._worker.done() or self._worker.get_loop() is not loop:
            full = self._full = asyncio.Event()
            self._worker = loop.create_task(self._drain())
        if len(self._queue) >= self.max_batch:
            full.set()
        return await future

    async def _drain(self) -> None:
        """Serve batches until the queue is empty; one batch in flight at a time."""
        assert self._full is not None
        while self._queue:
            try:
                await asyncio.wait_for(self._full.wait(), self.window)
            except asyncio.TimeoutError:
                pass
            self._full.clear()
            batch, self._queue = self._queue[: self.max_batch], self._queue[self.max_batch :]
            if len(self._queue) >= self.max_batch:
                self._full.set()
            await self._run(batch)

    async def _run(self, batch: list[tuple[Req, asyncio.Future[Res]]]) -> None:
        self.batch_sizes.append(len(batch))
        try:
            results = await asyncio.to_thread(self.run_batch, [req for req, _ in batch])
            if len(results) != len(batch):
                raise RuntimeError(f"batch function returned {len(results)} results for {len(batch)} requests")
        except BaseException as err:  # every waiter must learn about the failure
            for _, future in batch:
                if not future.done():
                    future.set_exception(err)
            if not isinstance(err, Exception):
                raise
            return
        for (_, future), result in zip(batch, results):
            if not future.done():
                future.set_result(result)
