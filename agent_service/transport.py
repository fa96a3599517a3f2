"""HTTP transport of the agent protocol: one request with a deadline, bounded retries, checked answers.

A failed attempt is retried with backoff (:mod:`llm_policies.retry`): a refused or dropped
connection, a missed deadline, a 5xx, or an answer that is not the protocol's (:func:`read`), just as
an LLM server's. When every attempt failed, :class:`AgentDown` says so in one line naming the agent.
A 409 (the agent does not know the session: it restarted) is :class:`AgentLost`, a 422 (the agent cannot
play this seat: its own fault, which playing again repeats) a :class:`~arena_envs.core.PolicyFault`,
another 4xx a :class:`~llm_policies.types.BackendError`; none is retried.
"""
from __future__ import annotations

import asyncio
import socket
import time
import weakref
from collections.abc import Mapping
from typing import Any, TypeVar

from arena_envs.core.extras import needs_extra

with needs_extra("agents", __name__):
    import httpx

    from llm_policies.backends.openai_http import bounded_request, one_line, quoted_body

from agent_service.protocol import ProtocolError, decode, encode, read
from arena_envs.core.policy import PolicyFault
from llm_policies.event_loops import close_clients
from llm_policies.retry import Backoff, Retryable, with_retries
from llm_policies.types import BackendError, BackendUnavailable

M = TypeVar("M")
#: Small requests go out at once: without it, a request written in two pieces waits for the peer's
#: delayed acknowledgement (about 40 ms a decision on Linux).
NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


class AgentDown(BackendUnavailable):
    """The agent gave no usable answer on any attempt (refused, 5xx, too slow, malformed)."""


class AgentLost(BackendUnavailable):
    """The agent no longer knows the episode it was playing (it restarted, or dropped the session)."""


class AgentClient:
    """Requests to the agent at ``url`` (``http://HOST:PORT[/PATH]``): each attempt as a whole within
    ``timeout`` seconds, ``backoff.attempts`` attempts at most; ``headers`` go with every request.
    One pooled connection set per event loop (an httpx client must not cross loops)."""

    def __init__(self, url: str, *, timeout: float, backoff: Backoff, headers: Mapping[str, str]):
        self.url = url
        self.timeout = timeout
        self.backoff = backoff
        self.headers = dict(headers)
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary())

    def _client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None or client.is_closed:
            transport = httpx.AsyncHTTPTransport(socket_options=NODELAY, limits=httpx.Limits(
                max_connections=512, max_keepalive_connections=512))
            client = self._clients[loop] = httpx.AsyncClient(headers=self.headers, transport=transport,
                                                             timeout=self.timeout)
        return client

    async def call(self, path: str, message: Any, answer: type[M]) -> tuple[M, int, float]:
        """POST ``message`` to ``path`` (``message`` None: GET) and read the answer as ``answer``; returns
        it, the attempts it took and the seconds in all."""
        attempts = 0
        start = time.perf_counter()

        async def attempt() -> M:
            nonlocal attempts
            attempts += 1
            return await self._once(self._client(), path, message, answer, self.timeout)

        try:
            result = await with_retries(attempt, self.backoff)
        except Retryable as err:
            tries = f"{attempts} attempt{'s' if attempts > 1 else ''}"
            raise AgentDown(f"agent at {self.url} gave no usable answer to {path} in {tries} of at most "
                            f"{self.timeout:g}s each; the last: {one_line(str(err), 400)}") from None
        return result, attempts, time.perf_counter() - start

    async def probe(self, path: str, answer: type[M], timeout: float) -> M:
        """One GET of ``path`` on a client of its own, within ``timeout`` seconds (no retries)."""
        async with httpx.AsyncClient(headers=self.headers) as client:
            return await self._once(client, path, None, answer, timeout)

    async def _once(self, client: httpx.AsyncClient, path: str, message: Any, answer: type[M], timeout: float) -> M:
        if message is None:
            request = bounded_request(client, "GET", self.url + path, timeout=timeout)
        else:
            request = bounded_request(client, "POST", self.url + path, content=encode(message), timeout=timeout,
                                      headers={"Content-Type": "application/json"})
        try:
            response = await asyncio.wait_for(request, timeout)
        except (asyncio.TimeoutError, httpx.TimeoutException):
            raise Retryable(f"no complete answer within the {timeout:g}s deadline (the agent is stuck, overloaded "
                            "or slow; the option timeout=SECONDS gives it more)") from None
        except httpx.TransportError as err:
            raise Retryable(f"{type(err).__name__}: {one_line(str(err))}; is the agent running?") from None
        except BackendError as err:  # a body beyond the size limit
            raise Retryable(str(err)) from None
        status = response.status_code
        if status >= 500:
            raise Retryable(f"HTTP {status}: {quoted_body(response.content)}")
        if status == 409:
            raise AgentLost(f"agent at {self.url} no longer knows this episode (HTTP 409: "
                            f"{quoted_body(response.content)}); it restarted or dropped it")
        if status == 422:
            raise PolicyFault(f"agent at {self.url} cannot play this seat (HTTP 422): {quoted_body(response.content)}")
        if status >= 400:
            raise BackendError(f"agent at {self.url} refused {path} (HTTP {status}): {quoted_body(response.content)}")
        try:
            data = decode(response.content, f"the answer to {path}")
            if answer is not dict:
                return read(answer, data, f"the answer to {path}")
            if not isinstance(data, dict):
                raise ProtocolError(f"the answer to {path} must be a JSON object")
            return data  # type: ignore[return-value]  # M is dict here
        except ProtocolError as err:
            raise Retryable(f"malformed answer: {err}") from None

    def close(self) -> None:
        clients = list(self._clients.values())
        self._clients = weakref.WeakKeyDictionary()
        close_clients(clients)
