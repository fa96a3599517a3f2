"""What every LLM policy shares: a backend, sampling settings, per-call seeds and the trace."""
from __future__ import annotations

import time
from typing import Any

from arena_envs.core.answers import AnswerConstraint, encodable, excerpt
from arena_envs.core.policy import Policy
from llm_policies.aio import run_sync
from llm_policies.extraction import extract_answer
from llm_policies.types import Backend, ChatRequest, Message, Sampling

#: Follow-up request when a reasoning reply held no valid answer.
FINAL_ANSWER_REQUEST = "Now give only your final answer, in the required format: {description}"


class LLMPolicyBase(Policy):
    """Holds the backend and makes the calls; subclasses implement :meth:`aact`.

    Each call gets a seed derived from the episode seed and the call's index, so a seeded episode
    samples the same way whatever the batching. ``trace()`` lists the calls of the last decision
    (purpose, raw text, tokens, finish reason).
    """

    name = "llm"

    def __init__(self, backend: Backend, *, temperature: float = 0.0, max_tokens: int = 256, guided: bool = True):
        Sampling(temperature=temperature, max_tokens=max_tokens)  # validates both
        self.backend = backend
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.guided = guided
        self.env: Any = None
        self.agent: str | None = None
        self._seed: int | None = None
        self._n_calls = 0
        self._calls: list[dict[str, Any]] = []
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}

    def bind(self, env: Any) -> None:
        self.env = env

    def reset(self, agent: str, seed: int | None = None) -> None:
        self.agent = agent
        self._seed = seed
        self._n_calls = 0
        self._calls = []
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        return run_sync(self.aact(observation, info))

    def trace(self) -> dict[str, Any]:
        """The calls of the last decision, each with its purpose, raw text, tokens (prompt, of them
        served from the prefix cache where the backend reports it, completion), latency in seconds,
        requests it took and finish reason; and their totals."""
        calls = self._calls
        cached = [c["cached_tokens"] for c in calls]
        return {
            "backend": self.backend.label,
            "calls": calls,
            "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
            "cached_tokens": None if None in cached else sum(cached),
            "completion_tokens": sum(c["completion_tokens"] for c in calls),
            "latency_s": round(sum(c["latency_s"] for c in calls), 4),
        }

    def provenance(self) -> dict[str, Any]:
        """The backend's own description (``describe()``: model, server or weights, grammar engine),
        the sampling settings and whether answers are guided."""
        told = getattr(self.backend, "describe", None)
        backend = told() if callable(told) else {}
        if not self.guided:
            backend["grammar_engine"] = "none (guided=0)"
        return {"backend": self.backend.label, **backend, "guided": self.guided,
                "sampling": {"temperature": self.temperature, "max_tokens": self.max_tokens}}

    def close(self) -> None:
        """Backends are shared between policies (see :mod:`llm_policies.specs`); nothing to free."""

    def preflight(self) -> None:
        """Check before a run that the backend can serve this policy (``arena eval`` calls it, when a
        policy has it, before any game starts): the backend's own ``preflight()`` where it has one
        (the HTTP backend asks the server for its models); raises with one line when it cannot."""
        check = getattr(self.backend, "preflight", None)
        if callable(check):
            check()

    # ------------------------------------------------------------------ helpers for subclasses

    def start_decision(self) -> None:
        """Forget the calls of the previous decision (called at the start of each ``aact``)."""
        self._calls = []

    def constraint(self) -> AnswerConstraint | None:
        """The bound environment's constraint for this seat's current decision (``None``: the game
        declares free answers, or the environment has no ``answer_constraint`` at all). A game
        that has not declared it raises; that is a bug in the game, never read as "no constraint"."""
        if self.env is None or not hasattr(self.env, "answer_constraint"):
            return None
        return self.env.answer_constraint(self.agent)

    async def ask(self, messages: list[Message], constraint: AnswerConstraint | None = None, *,
                  purpose: str = "answer", max_tokens: int | None = None) -> str:
        """One chat call; the constraint is sent only when the policy is guided. Every message is made
        encodable (a model's lone surrogate, kept in a history, never fails a request); a reply that
        is not text (a backend that breaks its contract) is the empty answer, which no game takes as
        a decision, never an action: its call's trace quotes it."""
        sampling = Sampling(temperature=self.temperature, max_tokens=max_tokens or self.max_tokens,
                            seed=self._next_seed())
        messages = [{**m, "content": encodable(m["content"])} for m in messages]
        request = ChatRequest(tuple(messages), sampling, constraint if self.guided else None)
        start = time.perf_counter()
        response = await self.backend.generate(request)
        malformed = not isinstance(response.text, str)
        text = "" if malformed else response.text
        self._calls.append({"purpose": purpose, "text": excerpt(response.text) if malformed else text,
                            "prompt_tokens": response.prompt_tokens,
                            "cached_tokens": response.cached_tokens, "completion_tokens": response.completion_tokens,
                            "latency_s": round(time.perf_counter() - start, 4), "attempts": response.attempts,
                            "finish_reason": response.finish_reason, "guided": request.constraint is not None})
        self.usage["prompt_tokens"] += response.prompt_tokens
        self.usage["completion_tokens"] += response.completion_tokens
        self.usage["calls"] += 1
        return text

    async def think_then_answer(self, messages: list[Message], constraint: AnswerConstraint | None, *,
                                purpose: str, think_tokens: int, max_tokens: int | None = None) -> str:
        """A free reasoning call, then the answer read from it; when the reply holds no answer that
        satisfies ``constraint`` and the policy is guided, a second, constrained call asks for the
        answer alone (so guided answers always satisfy the constraint). Unguided, the whole
        reasoning is returned for the environment's lenient parser."""
        reasoning = await self.ask(messages, None, purpose=f"{purpose}:think", max_tokens=think_tokens)
        answer = extract_answer(reasoning, constraint)
        if answer is not None:
            return answer
        if constraint is None or not self.guided:
            return reasoning
        request = FINAL_ANSWER_REQUEST.format(description=constraint.description)
        follow = messages + [{"role": "assistant", "content": reasoning}, {"role": "user", "content": request}]
        return await self.ask(follow, constraint, purpose=purpose, max_tokens=max_tokens)

    def _next_seed(self) -> int | None:
        self._n_calls += 1
        if self._seed is None:
            return None
        return (self._seed * 1_000_003 + self._n_calls) % (2**31 - 1)
