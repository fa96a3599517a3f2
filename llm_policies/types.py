"""What every backend takes and returns: one chat request, one response, and the backend errors.

A backend is anything with ``async generate(request) -> ChatResponse`` and ``close()``; the
policies never see transport details (HTTP, batching, a local model).
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from arena_envs.core.answers import AnswerConstraint, excerpt

#: A chat message as OpenAI-compatible servers and chat templates take it.
Message = dict[str, str]

#: The OpenAI-compatible server of a local ``vllm serve`` (or ``arena serve``) on its default port.
DEFAULT_URL = "http://127.0.0.1:8000/v1"


@dataclass(frozen=True)
class Sampling:
    """Sampling parameters of one request; ``seed=None`` leaves the backend's default."""

    temperature: float = 0.0
    max_tokens: int = 256
    top_p: float = 1.0
    seed: int | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.temperature < math.inf:
            raise ValueError(f"temperature must be a finite number >= 0, got {self.temperature}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")


@dataclass(frozen=True)
class ChatRequest:
    """Chat messages, sampling parameters and an optional constraint for guided decoding."""

    messages: tuple[Message, ...]
    sampling: Sampling = Sampling()
    constraint: AnswerConstraint | None = None

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValueError("a chat request needs at least one message")
        for message in self.messages:
            role, content = message.get("role"), message.get("content")
            if role not in ("system", "user", "assistant") or not isinstance(content, str):
                raise ValueError(f"bad chat message {excerpt(message)}: needs role system/user/assistant and "
                                 "str content")


@dataclass(frozen=True)
class ChatResponse:
    """The generated text, token usage and why generation stopped (``stop``, ``length``...);
    ``cached_tokens``: the prompt tokens served from the prefix cache where the backend reports them
    (``None``: not reported); ``attempts``: the requests it took (a server's retried failures count)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = "stop"
    extra: dict[str, Any] = field(default_factory=dict)
    cached_tokens: int | None = None
    attempts: int = 1

    def usage(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}


class Backend(Protocol):
    """The one interface of the LLM backends."""

    #: Short description for logs and traces (e.g. ``vllm:MODEL@URL``).
    label: str

    async def generate(self, request: ChatRequest) -> ChatResponse: ...

    def close(self) -> None: ...


class BackendError(RuntimeError):
    """A request failed for good (after retries): the message says where and why."""


class BackendUnavailable(BackendError):
    """The backend cannot be reached or does not serve the model; retrying later may help."""


def weights_description(model: str) -> dict[str, Any]:
    """A local model's folder and the SHA-256 of its ``config.json`` (a hub id: the id alone)."""
    folder = Path(model).expanduser()
    config = folder / "config.json"
    digest = hashlib.sha256(config.read_bytes()).hexdigest() if config.is_file() else None
    return {"weights": str(folder.resolve()) if folder.is_dir() else model, "config_sha256": digest}
