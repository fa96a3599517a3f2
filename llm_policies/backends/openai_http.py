"""Async client for OpenAI-compatible chat servers (``vllm serve`` and any other).

Transport only: the JSON body comes from :func:`chat_payload`, the answer is read by
:func:`read_completion`, retries are :func:`llm_policies.retry.with_retries`.
"""
from __future__ import annotations

import asyncio
from typing import Any

from arena_envs.core.extras import needs_extra

with needs_extra("llm", __name__):
    import httpx

from arena_envs.core.answers import AnswerConstraint
from llm_policies.retry import Backoff, Retryable, with_retries
from llm_policies.types import DEFAULT_URL, BackendError, BackendUnavailable, ChatRequest, ChatResponse

DEFAULT_BACKOFF = Backoff()  # frozen, so one shared default is safe


class ServerDown(BackendUnavailable):
    """The server at ``url`` refused or dropped connections, or answered 5xx, on every attempt;
    ``reason`` is the last failure in one short line (a pool of servers moves the work elsewhere)."""

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


def read_completion(data: dict[str, Any], attempts: int = 1) -> ChatResponse:
    """A :class:`ChatResponse` from a chat-completions JSON answer (``usage.prompt_tokens_details.
    cached_tokens`` where the server reports it: vLLM with ``--enable-prompt-tokens-details``);
    BackendError if malformed."""
    try:
        choice = data["choices"][0]
        text = choice["message"]["content"] or ""
        finish = choice.get("finish_reason") or "stop"
    except (KeyError, IndexError, TypeError) as err:
        raise BackendError(f"malformed chat completion: {str(data)[:300]}") from err
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return ChatResponse(text=text, prompt_tokens=_count(usage.get("prompt_tokens")) or 0,
                        completion_tokens=_count(usage.get("completion_tokens")) or 0, finish_reason=finish,
                        cached_tokens=_count(cached), attempts=attempts)


def _count(value: Any) -> int | None:
    """A token count from a server's JSON: a non-negative integer, else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class OpenAIHTTPBackend:
    """Chat completions against ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``) for ``model``.

    ``timeout`` bounds each HTTP request; connection errors, connect timeouts and 5xx answers are
    retried with exponential backoff (``backoff``); an unknown model or a server that stays down
    raises :class:`BackendUnavailable` naming the URL and the model. A request the server took but
    did not answer within ``timeout`` (a read timeout) is not retried: the server is busy, not
    down, and sending it again would queue the same work twice.
    """

    def __init__(self, model: str, base_url: str = DEFAULT_URL, *, timeout: float = 120.0,
                 backoff: Backoff = DEFAULT_BACKOFF, api_key: str = "EMPTY", max_connections: int = 512):
        if not model:
            raise ValueError("model must be a non-empty model name")
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0, got {timeout}")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
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

        async def attempt() -> dict[str, Any]:
            nonlocal attempts
            attempts += 1
            return await self._post(url, body)

        try:
            data = await with_retries(attempt, self.backoff)
        except Retryable as err:
            raise ServerDown(
                f"OpenAI-compatible server at {self.base_url} (model {self.model!r}) did not answer after "
                f"{self.backoff.attempts} attempts within {self.timeout:g}s each: {err}. Is the server running? "
                f"Start one with: arena serve MODEL_PATH --port PORT", self.base_url, one_line(str(err))) from None
        return read_completion(data, attempts)

    async def _post(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            response = await self._client().post(url, json=body)
        except httpx.ReadTimeout:
            raise BackendUnavailable(
                f"server at {self.base_url} (model {self.model!r}) took the request but sent no answer within "
                f"{self.timeout:g}s; it is overloaded or stuck (give it more time with the policy option "
                f"timeout=SECONDS)") from None
        except (httpx.TransportError, httpx.TimeoutException) as err:
            raise Retryable(f"{type(err).__name__}: {err}") from None
        if response.status_code >= 500:
            raise Retryable(f"HTTP {response.status_code}: {response.text[:300]}")
        if response.status_code == 404:
            raise BackendUnavailable(
                f"server at {self.base_url} does not serve model {self.model!r} (HTTP 404: "
                f"{_error_message(response)}); models served: {await self.served_models()}")
        if response.status_code >= 400:
            raise BackendError(f"server at {self.base_url} rejected the request for model {self.model!r} "
                               f"(HTTP {response.status_code}): {_error_message(response)}")
        return response.json()

    def preflight(self, timeout: float = 10.0) -> None:
        """One ``GET /models`` (synchronous, ``timeout`` seconds): :class:`BackendUnavailable` when
        the server cannot be reached or lists models without this one."""
        try:
            response = httpx.get(f"{self.base_url}/models", headers=self._headers, timeout=timeout)
        except httpx.HTTPError as err:
            raise BackendUnavailable(
                f"cannot reach the OpenAI-compatible server at {self.base_url} ({type(err).__name__}: {err}); "
                "is it running? Start one with: arena serve MODEL_PATH --port PORT") from None
        if response.status_code >= 400:
            raise BackendUnavailable(f"server at {self.base_url} answered GET /models with HTTP "
                                     f"{response.status_code}: {_error_message(response)}")
        served = listed_models(response) or []  # a server that does not list them: the first request will tell
        if served and self.model not in served:
            raise BackendUnavailable(f"server at {self.base_url} does not serve model {self.model!r}; "
                                     f"models served: {served}")

    def describe(self, timeout: float = 5.0) -> dict[str, Any]:
        """The URL, the served model name and what the server lists about it (``GET /models``:
        its ``root``, ``max_model_len``, ``owned_by``...; ``None`` when it does not answer within
        ``timeout`` s); grammars are the server's (structured outputs)."""
        reported: Any = None
        try:
            response = httpx.get(f"{self.base_url}/models", headers=self._headers, timeout=timeout)
            entries = response.json().get("data", []) if response.status_code < 400 else []
            reported = next((e for e in entries if isinstance(e, dict) and e.get("id") == self.model), None)
        except (httpx.HTTPError, ValueError, AttributeError):
            pass
        if isinstance(reported, dict):  # what identifies the model; a server's permissions lists are noise
            reported = {k: v for k, v in reported.items() if k in ("id", "root", "max_model_len", "owned_by", "parent")}
        return {"url": self.base_url, "served_model": self.model, "server_reports": reported,
                "grammar_engine": "the server's structured outputs"}

    async def served_models(self) -> list[str]:
        """The ids listed by ``GET /models`` (empty when the server does not list them)."""
        try:
            response = await self._client().get(f"{self.base_url}/models")
        except httpx.HTTPError:
            return []
        return listed_models(response) or []

    async def serving(self, timeout: float = 10.0) -> bool:
        """Whether ``GET /models`` answers within ``timeout`` seconds and lists this model (or lists none)."""
        try:
            response = await self._client().get(f"{self.base_url}/models", timeout=timeout)
        except httpx.HTTPError:
            return False
        served = listed_models(response) if response.status_code < 400 else None
        return served is not None and (not served or self.model in served)

    def close(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
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


def listed_models(response: httpx.Response) -> list[str] | None:
    """The model ids of a ``GET /models`` answer (``{"data": [{"id": ...}, ...]}``; no ``data``
    lists none); None when the body is not that shape (not JSON, not an object, an entry without id)."""
    try:
        return [m["id"] for m in response.json().get("data", [])]
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def one_line(text: str, limit: int = 160) -> str:
    """``text`` on one line (whitespace runs become one space), cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


def _error_message(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:300]
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            return str(err.get("message", err))[:300]
        return str(err)[:300]
    return str(data)[:300]
