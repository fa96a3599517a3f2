"""Async client for OpenAI-compatible chat servers (``vllm serve`` and any other).

Transport only: the JSON body comes from :func:`chat_payload`, the answer is read by
:func:`read_completion`, retries are :func:`llm_policies.retry.with_retries`.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any

from arena_envs.core.extras import needs_extra

with needs_extra("llm", __name__):
    import httpx

from arena_envs.core.answers import EXCERPT_CHARS, AnswerConstraint, excerpt
from arena_envs.core.event_loops import run_to_end
from llm_policies.event_loops import close_clients
from llm_policies.retry import Backoff, Retryable, with_retries
from llm_policies.server_settings import check_timeout, server_url
from llm_policies.types import DEFAULT_URL, BackendError, BackendUnavailable, ChatRequest, ChatResponse

DEFAULT_BACKOFF = Backoff()  # frozen, so one shared default is safe
#: The longest reply body read, decompressed (a chat completion of thousands of tokens takes tens of KiB).
MAX_REPLY_BYTES = 16 * 1024 * 1024


class MalformedReply(BackendError):
    """A server's reply that is not a chat completion (not UTF-8, not JSON, a field missing or of the
    wrong type); the message names the field and quotes a short excerpt of the reply."""


class ServerDown(BackendUnavailable):
    """The server at ``url`` gave no usable answer on any attempt (it refused or dropped connections,
    answered 5xx, missed the deadline or replied malformed); ``reason`` is the last failure in one
    short line (a pool of servers moves the work elsewhere)."""

    def __init__(self, message: str, url: str, reason: str):
        super().__init__(message)
        self.url = url
        self.reason = reason


def chat_payload(request: ChatRequest, model: str, guided: bool = True) -> dict[str, Any]:
    """The body of ``POST /chat/completions``; vLLM's ``structured_outputs`` when constrained."""
    sampling = request.sampling
    body: dict[str, Any] = {
        "model": model,
        "messages": [dict(m) for m in request.messages],
        "temperature": sampling.temperature,
        "max_tokens": sampling.max_tokens,
        "top_p": sampling.top_p,
    }
    if sampling.seed is not None:
        body["seed"] = sampling.seed
    if guided and request.constraint is not None:
        body["structured_outputs"] = structured_outputs(request.constraint)
    return body


def structured_outputs(constraint: AnswerConstraint) -> dict[str, Any]:
    """vLLM's ``structured_outputs`` for a constraint; JSON without free whitespace, which small
    models otherwise fill until ``max_tokens``."""
    payload = constraint.structured_outputs()
    if constraint.kind == "json":
        payload["disable_any_whitespace"] = True
    return payload


def read_completion(data: Any, attempts: int = 1) -> ChatResponse:
    """A :class:`ChatResponse` from a chat-completions JSON answer, checked field by field:
    ``choices[0].message.content`` a string (``null``: empty), ``finish_reason`` a string or ``null``,
    else :class:`MalformedReply`. Token counts are telemetry, read where they are non-negative integers
    (``usage.prompt_tokens_details.cached_tokens`` where the server reports it: vLLM with
    ``--enable-prompt-tokens-details``) and 0 or ``None`` otherwise."""
    if not isinstance(data, dict):
        raise MalformedReply(f"malformed reply: not a JSON object: {excerpt(data)}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedReply(f"malformed reply: choices is not a non-empty list of objects: {excerpt(data)}")
    message = choices[0].get("message")
    if not isinstance(message, dict) or "content" not in message:
        raise MalformedReply(f"malformed reply: choices[0].message is not an object with a content: {excerpt(data)}")
    text = message["content"] if message["content"] is not None else ""
    finish = choices[0].get("finish_reason")
    if not isinstance(text, str) or not isinstance(finish, (str, type(None))):
        raise MalformedReply(f"malformed reply: choices[0].message.content or finish_reason is not a string: "
                             f"{excerpt(data)}")
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return ChatResponse(text=text, prompt_tokens=_count(usage.get("prompt_tokens")) or 0,
                        completion_tokens=_count(usage.get("completion_tokens")) or 0, finish_reason=finish or "stop",
                        cached_tokens=_count(cached), attempts=attempts)


def reply_json(response: httpx.Response) -> Any:
    """The JSON value of ``response``'s body; :class:`MalformedReply` with a short excerpt when the
    body is not UTF-8 or not JSON (nesting too deep for the parser included)."""
    try:
        text = response.content.decode("utf-8")  # the encoding of JSON on the wire (RFC 8259)
    except UnicodeDecodeError:
        raise MalformedReply(f"malformed reply: body is not UTF-8: {quoted_body(response.content)}") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise MalformedReply(f"malformed reply: body is not JSON: {excerpt(text)}") from None


async def bounded_request(client: httpx.AsyncClient, method: str, url: str, **kwargs: Any) -> httpx.Response:
    """``method url`` on ``client`` with the reply's body read to at most :data:`MAX_REPLY_BYTES`
    (decompressed): a longer body is a :class:`MalformedReply`. The response returned holds the body
    as read (no content encoding left to apply)."""
    response = await client.send(client.build_request(method, url, **kwargs), stream=True)
    try:
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_REPLY_BYTES:
                raise MalformedReply(f"malformed reply: body longer than {MAX_REPLY_BYTES} bytes: "
                                     f"{quoted_body(bytes(body[:2 * EXCERPT_CHARS]))}")
    finally:
        await response.aclose()
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in ("content-encoding",
                                                                                       "content-length")]
    return httpx.Response(response.status_code, headers=headers, content=bytes(body), request=response.request)


def quoted_body(body: bytes) -> str:
    """A short quote of a reply's body (:func:`~arena_envs.core.answers.excerpt`): its text where it
    is UTF-8, else its first bytes."""
    try:
        return excerpt(body.decode("utf-8"))
    except UnicodeDecodeError:
        return excerpt(body[:2 * EXCERPT_CHARS])


def _count(value: Any) -> int | None:
    """A token count from a server's JSON: a non-negative integer, else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class OpenAIHTTPBackend:
    """Chat completions against ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``) for ``model``.

    ``timeout`` is a wall-clock deadline for each attempt as a whole (connecting, sending, reading
    the full reply), from 0 to a day (:data:`~llm_policies.server_settings.MAX_TIMEOUT`). A failed
    attempt is retried with exponential backoff (``backoff``): a connection error, a 5xx answer, a
    missed deadline or a malformed reply (:class:`MalformedReply`); when every attempt failed,
    :class:`ServerDown` names the server, the model and the last failure in one line. An unknown
    model (HTTP 404) raises :class:`BackendUnavailable` naming the models served; another 4xx,
    :class:`BackendError`.
    """

    def __init__(self, model: str, base_url: str = DEFAULT_URL, *, timeout: float = 120.0,
                 backoff: Backoff = DEFAULT_BACKOFF, api_key: str = "EMPTY", max_connections: int = 512):
        if not model:
            raise ValueError("model must be a non-empty model name")
        self.model = model
        self.base_url = server_url(base_url)
        self.timeout = check_timeout(timeout)
        self.backoff = backoff
        self.label = f"vllm:{model}@{self.base_url}"
        self._headers = {"Authorization": f"Bearer {api_key}"}
        self._limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self._clients: dict[int, httpx.AsyncClient] = {}

    def _client(self) -> httpx.AsyncClient:
        """One pooled client per event loop (an httpx client must not cross loops)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(id(loop))
        if client is None or client.is_closed:
            client = httpx.AsyncClient(timeout=self.timeout, limits=self._limits, headers=self._headers)
            self._clients[id(loop)] = client
        return client

    async def generate(self, request: ChatRequest) -> ChatResponse:
        return await self.post_chat(chat_payload(request, self.model))

    async def post_chat(self, body: dict[str, Any]) -> ChatResponse:
        """POST a ready chat-completions body (the benchmark sends raw bodies through this too)."""
        url = f"{self.base_url}/chat/completions"
        attempts = 0

        async def attempt() -> ChatResponse:
            nonlocal attempts
            attempts += 1
            try:
                return read_completion(await self._post(url, body), attempts)
            except MalformedReply as err:
                raise Retryable(str(err)) from None

        try:
            return await with_retries(attempt, self.backoff)
        except Retryable as err:
            tries, last = f"{attempts} attempt{'s' if attempts > 1 else ''}", one_line(str(err), 400)
            raise ServerDown(f"OpenAI-compatible server at {self.base_url} (model {self.model!r}) gave no usable "
                             f"answer in {tries} of at most {self.timeout:g}s each; the last: {last}",
                             self.base_url, one_line(str(err))) from None

    async def _post(self, url: str, body: dict[str, Any]) -> Any:
        """One attempt: the reply's JSON value, the whole request within ``timeout`` seconds."""
        try:
            response = await asyncio.wait_for(bounded_request(self._client(), "POST", url, json=body), self.timeout)
        except (asyncio.TimeoutError, httpx.TimeoutException):
            raise Retryable(f"no complete answer within the {self.timeout:g}s deadline: the server is stuck, "
                            "overloaded or slow (the policy option timeout=SECONDS gives it more)") from None
        except httpx.TransportError as err:
            raise Retryable(f"{type(err).__name__}: {err}; is the server running? Start one with: "
                            "arena serve MODEL_PATH --port PORT") from None
        if response.status_code >= 500:
            raise Retryable(f"HTTP {response.status_code}: {quoted_body(response.content)}")
        if response.status_code == 404:
            raise BackendUnavailable(
                f"server at {self.base_url} does not serve model {self.model!r} (HTTP 404: "
                f"{_error_message(response)}); models served: {excerpt(await self.served_models())}")
        if response.status_code >= 400:
            raise BackendError(f"server at {self.base_url} rejected the request for model {self.model!r} "
                               f"(HTTP {response.status_code}): {_error_message(response)}")
        return reply_json(response)

    def preflight(self, timeout: float = 10.0) -> None:
        """One ``GET /models`` within ``timeout`` seconds in all (synchronous): :class:`BackendUnavailable`
        when the server cannot be reached or lists models without this one."""
        try:
            response = run_to_end(lambda: self._probe(timeout))
        except (httpx.HTTPError, asyncio.TimeoutError) as err:
            raise BackendUnavailable(
                f"cannot reach the OpenAI-compatible server at {self.base_url} ({_failure(err, timeout)}); "
                "is it running? Start one with: arena serve MODEL_PATH --port PORT") from None
        except MalformedReply as err:
            raise BackendUnavailable(f"server at {self.base_url} answered GET /models with a {err}") from None
        if response.status_code >= 400:
            raise BackendUnavailable(f"server at {self.base_url} answered GET /models with HTTP "
                                     f"{response.status_code}: {_error_message(response)}")
        served = listed_models(response) or []  # a server that does not list them: the first request will tell
        if served and self.model not in served:
            raise BackendUnavailable(f"server at {self.base_url} does not serve model {self.model!r}; "
                                     f"models served: {excerpt(served)}")

    def describe(self, timeout: float = 5.0) -> dict[str, Any]:
        """The URL, the served model name and what the server lists about it (``GET /models``:
        its ``root``, ``max_model_len``, ``owned_by``...; ``None`` when it does not answer within
        ``timeout`` s in all); grammars are the server's (structured outputs)."""
        reported: Any = None
        try:
            response = run_to_end(lambda: self._probe(timeout))
            entries = reply_json(response).get("data", []) if response.status_code < 400 else []
            reported = next((e for e in entries if isinstance(e, dict) and e.get("id") == self.model), None)
        except (httpx.HTTPError, asyncio.TimeoutError, MalformedReply, AttributeError, TypeError):
            pass
        if isinstance(reported, dict):  # what identifies the model; a server's permissions lists are noise
            reported = {k: v for k, v in reported.items() if k in ("id", "root", "max_model_len", "owned_by", "parent")}
        return {"url": self.base_url, "served_model": self.model, "server_reports": reported,
                "grammar_engine": "the server's structured outputs"}

    async def served_models(self) -> list[str]:
        """The ids listed by ``GET /models`` (empty when the server does not list them within ``timeout``)."""
        try:
            response = await self._get_models(self._client(), self.timeout)
        except (httpx.HTTPError, asyncio.TimeoutError, MalformedReply):
            return []
        return listed_models(response) or []

    async def serving(self, timeout: float = 10.0) -> bool:
        """Whether ``GET /models`` answers within ``timeout`` seconds in all and lists this model (or lists none)."""
        try:
            response = await self._get_models(self._client(), timeout)
        except (httpx.HTTPError, asyncio.TimeoutError, MalformedReply):
            return False
        served = listed_models(response) if response.status_code < 400 else None
        return served is not None and (not served or self.model in served)

    async def _probe(self, timeout: float) -> httpx.Response:
        """``GET /models`` on a client of its own (for the fresh event loop of
        :func:`~arena_envs.core.event_loops.run_to_end`)."""
        async with httpx.AsyncClient(headers=self._headers) as client:
            return await self._get_models(client, timeout)

    async def _get_models(self, client: httpx.AsyncClient, timeout: float) -> httpx.Response:
        """``GET /models`` with its full reply within ``timeout`` seconds (else ``asyncio.TimeoutError``)."""
        return await asyncio.wait_for(bounded_request(client, "GET", f"{self.base_url}/models", timeout=timeout),
                                      timeout)

    def close(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        close_clients(clients)


def _failure(err: Exception, timeout: float) -> str:
    """A failed probe in a few words (a missed deadline has no message of its own)."""
    if isinstance(err, asyncio.TimeoutError):
        return f"no complete answer within {timeout:g}s"
    return f"{type(err).__name__}: {one_line(str(err))}"


def listed_models(response: httpx.Response) -> list[str] | None:
    """The model ids of a ``GET /models`` answer (``{"data": [{"id": ...}, ...]}``; no ``data``
    lists none); None when the body is not that shape (not JSON, not an object, an entry without id)."""
    try:
        return [m["id"] for m in reply_json(response).get("data", [])]
    except (MalformedReply, KeyError, TypeError, AttributeError):
        return None


def one_line(text: str, limit: int = 160) -> str:
    """``text`` on one line (whitespace runs become one space), cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


def _error_message(response: httpx.Response) -> str:
    """What an error reply says (its ``error.message`` where it has one), as a short excerpt."""
    try:
        data = reply_json(response)
    except MalformedReply:
        return quoted_body(response.content)
    err = data.get("error", data) if isinstance(data, dict) else data
    return excerpt(err.get("message", err) if isinstance(err, dict) else err)
