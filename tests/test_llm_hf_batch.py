"""The micro-batched ``hf:`` backend on the real SmolLM2-135M-Instruct (transformers, CPU): concurrent
requests are generated together, in fewer model calls, with the answers of one request at a time.

The model runs in float32: in bfloat16 a left-padded row's logits differ from the unpadded run's by
rounding (up to 0.25 measured here), enough to flip a greedy near-tie; float32 differences (~4e-5)
do not."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from arena_envs.core.answers import AnswerConstraint
from llm_policies.local_stack import smollm2_dir
from llm_policies.types import ChatRequest, ChatResponse, Sampling
from tests.llm_helpers import OWN_ENGINE

# without the stack of scripts/setup_llm.sh these skip, or fail under CI (tests/conftest.py)
pytestmark = [pytest.mark.llm, pytest.mark.slow, OWN_ENGINE]

QUESTIONS = ["What is the capital of France?", "Name a color.", "Count to five.", "Say hello.", "What is 2+2?",
             "Name a fruit.", "What day follows Monday?", "Give a number."]


class ModelCalls:
    """Counts the real model's ``generate`` calls (a wrapper around the bound method) and its
    forward passes (a forward hook), since being reset."""

    def __init__(self, model: Any):
        self.generate = self.forward = 0
        real_generate = model.generate

        def counted_generate(*args: Any, **kwargs: Any) -> Any:
            self.generate += 1
            return real_generate(*args, **kwargs)

        model.generate = counted_generate
        model.register_forward_hook(self._forward_hook)

    def _forward_hook(self, module: Any, args: Any, output: Any) -> None:
        self.forward += 1

    def reset(self) -> None:
        self.generate = self.forward = 0


@pytest.fixture(scope="module")
def backend() -> Iterator[Any]:
    from llm_policies.backends.hf_transformers import TransformersBackend

    backend = TransformersBackend(str(smollm2_dir()), dtype="float32", max_batch=16, window=0.05)
    yield backend
    backend.close()


def one_at_a_time(backend: Any, requests: list[ChatRequest]) -> list[ChatResponse]:
    async def each() -> list[ChatResponse]:
        return [await backend.generate(request) for request in requests]

    return asyncio.run(each())


def concurrently(backend: Any, requests: list[ChatRequest]) -> list[ChatResponse]:
    async def together() -> list[ChatResponse]:
        return list(await asyncio.gather(*(backend.generate(request) for request in requests)))

    return asyncio.run(together())


def answer(response: ChatResponse) -> tuple[Any, ...]:
    """What must not depend on batching: all but the choices' log-probabilities."""
    extra = {key: value for key, value in response.extra.items() if key != "choice_logprobs"}
    return response.text, response.prompt_tokens, response.completion_tokens, response.finish_reason, extra


def ask(question: str, **sampling: Any) -> ChatRequest:
    return ChatRequest(({"role": "user", "content": question},), Sampling(**sampling))


def test_eight_concurrent_requests_take_fewer_model_calls_with_the_same_greedy_answers(backend):
    calls = ModelCalls(backend.model)
    # different prompt lengths (left padding) and max_tokens (each row stops at its own length or EOS)
    requests = [ask(q, max_tokens=8 + 2 * i) for i, q in enumerate(QUESTIONS)]

    calls.reset()
    started = time.perf_counter()
    alone = one_at_a_time(backend, requests)
    sequential = (time.perf_counter() - started, calls.generate, calls.forward)

    calls.reset()
    batches_before = len(backend.batch_sizes)
    started = time.perf_counter()
    together = concurrently(backend, requests)
    concurrent = (time.perf_counter() - started, calls.generate, calls.forward)
    print(f"\n8 sequential: {sequential[0]:.1f} s, {sequential[1]} generate calls, {sequential[2]} forward passes"
          f"\n8 concurrent: {concurrent[0]:.1f} s, {concurrent[1]} generate calls, {concurrent[2]} forward passes, "
          f"batches {backend.batch_sizes[batches_before:]}")

    assert sequential[1] == 8
    assert concurrent[1] < 8 and concurrent[2] < sequential[2]
    assert together == alone  # text, token counts, finish reason
    for request, response in zip(requests, alone):
        assert response.text.strip() and response.prompt_tokens > 0
        assert 0 < response.completion_tokens <= request.sampling.max_tokens
        assert response.finish_reason in ("stop", "length")
        if response.finish_reason == "length":
            assert response.completion_tokens == request.sampling.max_tokens
    assert {r.finish_reason for r in alone} == {"stop", "length"}  # both ways of ending met in one batch


def test_guided_and_seeded_requests_in_one_batch_match_one_at_a_time(backend):
    """``choice`` answers by batched scoring, ``regex`` answers checked (and retried) on batched
    generations, and a sampled request with a seed gives the same text in a batch as alone."""
    calls = ModelCalls(backend.model)
    yes_no = AnswerConstraint("choice", "yes or no", choices=("yes", "no"))
    number = AnswerConstraint("regex", "a whole number", pattern=r"\d+")
    requests = [
        ChatRequest(({"role": "user", "content": "Is the sky blue? Answer yes or no."},), constraint=yes_no),
        ChatRequest(({"role": "user", "content": "Is fire cold? Answer yes or no."},), constraint=yes_no),
        ChatRequest(({"role": "user", "content": "How many legs does a dog have? Answer with a number."},),
                    Sampling(max_tokens=12), constraint=number),
        ChatRequest(({"role": "user", "content": "How many days are in a week? Answer with a number."},),
                    Sampling(max_tokens=12), constraint=number),
        ask("Tell me a word.", temperature=1.0, max_tokens=10, seed=3),
        ask("Name a color.", max_tokens=10),
    ]
    alone = one_at_a_time(backend, requests)
    calls.reset()
    together = concurrently(backend, requests)
    assert [answer(r) for r in together] == [answer(r) for r in alone]
    for batched, single in zip(together[:2], alone[:2]):  # the choices' scores, to float32 rounding
        assert batched.extra["choice_logprobs"] == pytest.approx(single.extra["choice_logprobs"], abs=1e-3)
    assert calls.generate < 4  # 3 generating requests (+ retries) and no generate call for the choices
    assert alone[0].text in ("yes", "no") and alone[1].text in ("yes", "no")
    assert set(alone[0].extra["choice_logprobs"]) == {"yes", "no"}
    for response in alone[2:4]:
        assert response.extra["constraint_ok"] and number.accepts(response.text)
    assert alone[4].text != one_at_a_time(backend, [ask("Tell me a word.", temperature=1.0, max_tokens=10,
                                                        seed=4)])[0].text
