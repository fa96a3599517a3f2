"""Hostile OpenAI-compatible servers and bad ``vllm:`` specs (issue 32, rows 5, 9 and 10).

Every server here is a real HTTP server on 127.0.0.1 (stdlib ``http.server`` in a thread). A request
ends within its deadline whatever the server does (a reply dripped a byte at a time included); a
malformed reply is a failed attempt counted against the retries, then one line naming the server
and a short excerpt; a bad spec or setting stops ``arena run`` before anything runs, in one line
with exit status 2 and never a traceback or an ``ExceptionGroup``.
"""
from __future__ import annotations

import asyncio
import gzip
import http.server
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena_envs.cli import main
from arena_envs.core import Policy
from arena_envs.runner.policy_specs import make_policy
from arena_envs.runner.runner import RunConfig, RunError, run
from llm_policies.backends.openai_http import MAX_REPLY_BYTES, OpenAIHTTPBackend
from llm_policies.backends.server_pool import ServerPool
from llm_policies.retry import Backoff
from llm_policies.types import BackendError, BackendUnavailable, ChatRequest, ChatResponse, Sampling
from tests.process_helpers import arena_command, run_in_repo

MODEL = "hostile-model"
REQUEST = ChatRequest(({"role": "user", "content": "Your bid?"},))
MARGIN = 1.0  # seconds past a deadline that thread start-up and a loaded machine may take

Reply = tuple[int, bytes] | Callable[["Handler"], None]


def chat(content: Any = "I'm out!", **extra: Any) -> tuple[int, bytes]:
    """A 200 chat completion whose message content is ``content`` (any JSON value); ``extra``
    replaces top-level fields."""
    body = {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3}, **extra}
    return 200, json.dumps(body).encode()


def raw(body: str | bytes, status: int = 200) -> tuple[int, bytes]:
    return status, body.encode() if isinstance(body, str) else body


class Server(http.server.ThreadingHTTPServer):
    """Lists :data:`MODEL` at ``GET /models`` (or answers it with ``models``) and answers the k-th
    POST with ``replies[k]`` (the last one repeats); ``posts`` counts the POSTs."""

    daemon_threads = True
    block_on_close = False  # a dripping handler must not hold the test's end

    def __init__(self, replies: list[Reply], models: Reply):
        super().__init__(("127.0.0.1", 0), Handler)
        self.replies = replies
        self.models = models
        self.posts = 0
        self.stopping = threading.Event()
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}/v1"

    def next_reply(self) -> Reply:
        with self._lock:
            self.posts += 1
            return self.replies[min(self.posts, len(self.replies)) - 1]


class Handler(http.server.BaseHTTPRequestHandler):
    server: Server

    def do_GET(self) -> None:
        self._answer(self.server.models)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._answer(self.server.next_reply())

    def _answer(self, reply: Reply) -> None:
        try:
            if callable(reply):
                reply(self)
                return
            status, body = reply
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # the client gave up (its deadline): nothing more to send
            pass

    def log_message(self, *args: object) -> None:
        pass


def drip(handler: Handler) -> None:
    """A 200 whose body comes one byte every 0.5 s (each read is quick, the reply never ends)."""
    handler.send_response(200)
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    while not handler.server.stopping.wait(0.5):
        handler.wfile.write(b" ")


def drip_status_line(handler: Handler) -> None:
    """The status line itself, one byte every 0.5 s."""
    for byte in b"HTTP/1.1 200 OK\r\n":
        if handler.server.stopping.wait(0.5):
            return
        handler.wfile.write(bytes([byte]))


def silent(handler: Handler) -> None:
    """Takes the request and never answers."""
    handler.server.stopping.wait(60)


MODELS = raw(json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model"}]}))


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    """``serve(*replies, models=...)`` starts a :class:`Server`; all are stopped at the test's end."""
    started: list[Server] = []

    def start(*replies: Reply, models: Reply = MODELS) -> Server:
        server = Server(list(replies), models)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stopping.set()
        server.shutdown()
        server.server_close()


def ask(url: str, timeout: float = 2.0, attempts: int = 2) -> tuple[ChatResponse | Exception, float]:
    """One request of :data:`REQUEST` (``attempts`` tries 0.01 s apart): the response or the error,
    and the seconds it took."""
    backend = OpenAIHTTPBackend(MODEL, url, timeout=timeout, backoff=Backoff(attempts=attempts, base=0.01))
    start = time.monotonic()
    try:
        outcome: ChatResponse | Exception = asyncio.run(backend.generate(REQUEST))
    except BackendError as err:
        outcome = err
    return outcome, time.monotonic() - start


def checked_line(err: object, url: str) -> str:
    """The message of ``err``: one line naming the server, at most about 600 characters."""
    message = str(err)
    assert "\n" not in message and "\x1b" not in message and url in message and len(message) < 700, message
    return message


# ------------------------------------------------------------------------------------ malformed replies

MALFORMED: list[tuple[str, Reply, str]] = [
    ("html", raw("<html><body>502 Bad Gateway\n(proxy)</body></html>"), "body is not JSON: '<html><body>502"),
    ("empty", raw(b""), "body is not JSON"),
    ("truncated", raw('{"choices": [{"message": {"content": "I bid'), "body is not JSON"),
    ("not utf-8", raw(b'{"choices": "\xff\xfe\xfa"}'), "body is not UTF-8: b'{\"choices\": \"\\xff"),
    ("latin-1", raw('{"choices": [{"message": {"content": "é"}}]}'.encode("latin-1")), "body is not UTF-8"),
    ("utf-16", raw('{"choices": []}'.encode("utf-16")), "body is not UTF-8"),
    ("deep nesting", raw("[" * 100_000 + "]" * 100_000), "body is not JSON"),
    ("escapes", raw("\x1b[2J\x1b[31mfake\nprompt\x00"), "body is not JSON: '\\x1b[2J"),
    ("huge", raw("x" * 2_000_000), "body is not JSON: 'xxx"),
    ("a list", raw("[1, 2]"), "not a JSON object: [1, 2]"),
    ("a string", raw('"I bid $100!"'), "not a JSON object"),
    ("null", raw("null"), "not a JSON object"),
    ("no choices", raw('{"id": "x"}'), "choices is not a non-empty list"),
    ("empty choices", raw('{"choices": []}'), "choices is not a non-empty list"),
    ("choices lots", raw('{"choices": "lots"}'), "choices is not a non-empty list"),
    ("choice a number", raw('{"choices": [5]}'), "choices is not a non-empty list"),
    ("no message", raw('{"choices": [{"finish_reason": "stop"}]}'), "choices[0].message is not an object"),
    ("message a string", raw('{"choices": [{"message": "I bid $5!"}]}'), "choices[0].message is not an object"),
    ("no content", raw('{"choices": [{"message": {"role": "assistant"}}]}'), "with a content"),
    ("content 21", chat(21), "content or finish_reason is not a string"),
    ("content float", chat(1.5), "content or finish_reason is not a string"),
    ("content bool", chat(True), "content or finish_reason is not a string"),
    ("content list", chat(["I bid $5!"]), "content or finish_reason is not a string"),
    ("content object", chat({"bid": 5}), "content or finish_reason is not a string"),
    ("content NaN", raw('{"choices": [{"message": {"content": NaN}}]}'), "content or finish_reason is not a string"),
    ("finish 5", raw('{"choices": [{"message": {"content": "x"}, "finish_reason": 5}]}'), "finish_reason"),
    ("HTTP 500 not utf-8", raw(b"\xff\xfe boom", 500), "HTTP 500: b'\\xff\\xfe boom'"),
    ("HTTP 503 multi-line", raw("overloaded\n\n  try later", 503), "HTTP 503: 'overloaded\\n\\n try later'"),
]


@pytest.mark.parametrize("reply, expected", [case[1:] for case in MALFORMED], ids=[case[0] for case in MALFORMED])
def test_a_malformed_reply_is_a_failed_attempt_then_one_line(serve, reply: Reply, expected: str) -> None:
    server = serve(reply)
    outcome, took = ask(server.url, timeout=3.0, attempts=2)
    assert isinstance(outcome, BackendUnavailable), outcome
    message = checked_line(outcome, server.url)
    assert expected in message and f"'{MODEL}'" in message and "in 2 attempts" in message
    assert server.posts == 2 and took < 2 * 3.0 + MARGIN


def test_malformed_replies_count_against_the_retries_and_a_good_one_ends_them(serve) -> None:
    server = serve(raw("not json"), chat(42), chat("I bid $120!"))
    outcome, _ = ask(server.url, attempts=3)
    assert isinstance(outcome, ChatResponse), outcome
    assert (outcome.text, outcome.attempts, server.posts) == ("I bid $120!", 3, 3)


@pytest.mark.parametrize("reply, expected", [
    (chat(None), ("", 7, 3)),  # null content: an empty answer (the game asks again)
    (chat("I bid $5!", usage="lots"), ("I bid $5!", 0, 0)),  # token counts are telemetry
    (chat("I bid $5!", usage={"prompt_tokens": -3, "completion_tokens": True}), ("I bid $5!", 0, 0)),
    (chat("I bid $5!", usage=None), ("I bid $5!", 0, 0)),
], ids=["null content", "usage lots", "usage negative and bool", "usage null"])
def test_what_a_reply_may_leave_out_or_get_wrong_without_failing(serve, reply: Reply, expected: tuple) -> None:
    outcome, _ = ask(serve(reply).url, attempts=1)
    assert isinstance(outcome, ChatResponse), outcome
    assert (outcome.text, outcome.prompt_tokens, outcome.completion_tokens) == expected


def test_a_4xx_is_not_retried_and_is_one_line(serve) -> None:
    server = serve(raw(b"\xffbad\nrequest", 400))
    outcome, _ = ask(server.url, attempts=3)
    assert isinstance(outcome, BackendError) and not isinstance(outcome, BackendUnavailable)
    assert "HTTP 400" in checked_line(outcome, server.url) and server.posts == 1


def test_a_404_with_garbage_everywhere_is_one_line(serve) -> None:
    server = serve(raw("[[[" * 10, 404), models=raw(b"\xff" * 50))
    outcome, _ = ask(server.url, attempts=3)
    assert isinstance(outcome, BackendUnavailable) and "models served: []" in checked_line(outcome, server.url)


def test_a_pool_moves_off_a_server_that_replies_malformed(serve, capsys) -> None:
    bad, good = serve(raw("<html>oops</html>")), serve(chat("I bid $7!"))
    pool = ServerPool(MODEL, [bad.url, good.url], backoff=Backoff(attempts=2, base=0.01))
    try:
        assert asyncio.run(pool.generate(REQUEST)).text == "I bid $7!"
    finally:
        pool.close()
    assert bad.posts == 2 and good.posts == 1
    assert f"LLM server {bad.url} is down (malformed reply: body is not JSON" in capsys.readouterr().err


# ------------------------------------------------------------------------------------ sizes

def endless(handler: Handler) -> None:
    """A 200 whose body never ends (no length, closed by the server): 1 MiB after 1 MiB."""
    handler.send_response(200)
    handler.send_header("Connection", "close")
    handler.end_headers()
    chunk = b"x" * 2**20
    while not handler.server.stopping.is_set():
        handler.wfile.write(chunk)


def gzip_bomb(handler: Handler) -> None:
    """A 200 of about 100 KiB that gzip makes 100 MiB."""
    body = gzip.compress(b" " * 100 * 2**20, compresslevel=9)
    handler.send_response(200)
    handler.send_header("Content-Encoding", "gzip")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@pytest.mark.parametrize("reply", [raw(b" " * (MAX_REPLY_BYTES + 1)), endless, gzip_bomb],
                         ids=["one byte over", "endless", "gzip bomb"])
def test_a_reply_is_read_to_a_bounded_size(serve, reply: Reply) -> None:
    server = serve(reply)
    outcome, took = ask(server.url, timeout=20.0, attempts=2)
    assert isinstance(outcome, BackendUnavailable), outcome
    assert f"body longer than {MAX_REPLY_BYTES} bytes" in checked_line(outcome, server.url)
    assert server.posts == 2 and took < 20.0


def test_a_model_listing_is_read_to_a_bounded_size(serve) -> None:
    server = serve(chat(), models=endless)
    backend = OpenAIHTTPBackend(MODEL, server.url, timeout=20.0)
    with pytest.raises(BackendUnavailable, match=f"body longer than {MAX_REPLY_BYTES} bytes") as err:
        backend.preflight(timeout=20.0)
    checked_line(err.value, server.url)
    assert asyncio.run(backend.serving(20.0)) is False


# ------------------------------------------------------------------------------------ deadlines

@pytest.mark.parametrize("reply", [drip, drip_status_line, silent], ids=["drip body", "drip status line", "silent"])
def test_the_timeout_is_a_deadline_for_the_whole_request(serve, reply: Reply) -> None:
    server = serve(reply)
    outcome, took = ask(server.url, timeout=1.0, attempts=2)
    assert isinstance(outcome, BackendUnavailable), outcome
    message = checked_line(outcome, server.url)
    assert "no complete answer within the 1s deadline" in message and "timeout=SECONDS" in message
    assert server.posts == 2  # a missed deadline is a failed attempt, counted against the retries
    assert 2 * 1.0 <= took < 2 * 1.0 + MARGIN


def test_model_listing_probes_have_deadlines_too(serve) -> None:
    server = serve(chat(), models=drip)
    backend = OpenAIHTTPBackend(MODEL, server.url, timeout=1.0)
    start = time.monotonic()
    with pytest.raises(BackendUnavailable, match=r"no complete answer within 1s") as err:
        backend.preflight(timeout=1.0)
    checked_line(err.value, server.url)
    assert backend.describe(timeout=1.0)["server_reports"] is None
    assert asyncio.run(backend.serving(1.0)) is False
    assert time.monotonic() - start < 3 * 1.0 + MARGIN

    async def from_a_running_loop() -> None:  # a synchronous probe called by async code
        with pytest.raises(BackendUnavailable, match="no complete answer"):
            backend.preflight(timeout=0.5)

    start = time.monotonic()
    asyncio.run(from_a_running_loop())
    assert time.monotonic() - start < 0.5 + MARGIN


def test_a_dripping_server_stops_arena_run_within_its_deadline(serve, tmp_path, capsys) -> None:
    server = serve(drip)
    spec = f"vllm:{MODEL}@{server.url}?timeout=1&retries=1"
    start = time.monotonic()
    status = main(["run", "auction_v0", "--players", f"{spec},rule,rule", "--episodes", "2",
                   "--out", str(tmp_path / "r"), "--no-progress", "--no-plots"])
    took = time.monotonic() - start
    err = capsys.readouterr().err
    assert status == 1 and "Traceback" not in err and server.posts == 1
    assert "no complete answer within the 1s deadline" in err.splitlines()[0] and took < 1 + 4 * MARGIN, err


def test_a_malformed_reply_stops_arena_run_in_one_line(serve, tmp_path, capsys) -> None:
    server = serve(raw(b"\x89PNG\r\n\x1a\n\x00\x00"))
    spec = f"vllm:{MODEL}@{server.url}?retries=2"
    status = main(["run", "auction_v0", "--players", f"{spec},rule,rule", "--episodes", "1",
                   "--out", str(tmp_path / "r"), "--no-progress", "--no-plots"])
    first = capsys.readouterr().err.splitlines()[0]
    assert status == 1 and server.posts == 2
    assert first.startswith(f"arena: run stopped: policy '{spec}' raised in episode 0") and server.url in first
    assert "body is not UTF-8: b'\\x89PNG" in first and "\x1a" not in first


# ------------------------------------------------------------------------------------ bad specs and settings

BAD_SPECS: list[tuple[str, str]] = [
    ("vllm:m@ftp://127.0.0.1/v1", "'ftp://127.0.0.1/v1' is not an http:// or https:// URL"),
    ("vllm:m@file:///etc/passwd", "is not an http:// or https:// URL"),
    ("vllm:m@127.0.0.1:8000/v1", "model 'm@127.0.0.1:8000/v1' holds '@'"),
    ("vllm:m@http://127.0.0.1:8000/v1#frag", "has a #fragment"),
    ("vllm:m@http://127.0.0.1:99999/v1", "port that is not a number from 1 to 65535"),
    ("vllm:m@http://127.0.0.1:0/v1", "port that is not a number from 1 to 65535"),
    ("vllm:m@http://127.0.0.1:-1/v1", "port that is not a number from 1 to 65535"),
    ("vllm:m@http://127.0.0.1:http/v1", "port that is not a number from 1 to 65535"),
    ("vllm:m@http:///v1", "names no host"),
    ("vllm:m@http://[zz]/v1", "has a malformed host"),
    ("vllm:m@http://127.0.0.1:8000/v1@http://127.0.0.1:99999/v1", "port that is not a number"),
    ("vllm:m?temperature=nan", "option temperature must be a finite number, got 'nan'"),
    ("vllm:m?temperature=inf", "option temperature must be a finite number, got 'inf'"),
    ("vllm:m?temperature=-1", "temperature must be a finite number >= 0"),
    ("vllm:m?retries=1000000", "option retries (attempts in all) must be from 1 to 100, got '1000000'"),
    ("vllm:m?retries=0", "must be from 1 to 100, got '0'"),
    ("vllm:m?timeout=nan", "option timeout must be a finite number"),
    ("vllm:m?timeout=-inf", "option timeout must be a finite number"),
    ("vllm:m?timeout=0", "option timeout must be seconds > 0 and at most 86400 (one day), got 0.0"),
    ("vllm:m?timeout=1e9", "at most 86400"),
    ("vllm:m@http://127.0.0.1:1/v1@http://127.0.0.1:2/v1?probe=nan", "option probe must be a finite number"),
    ("hf:/tmp?window=inf", "option window must be a finite number"),
]


@pytest.mark.parametrize("spec, expected", BAD_SPECS, ids=[spec[:50] for spec, _ in BAD_SPECS])
def test_a_bad_spec_stops_arena_run_in_one_line_with_status_2(spec: str, expected: str, tmp_path, capsys,
                                                              monkeypatch) -> None:
    monkeypatch.delenv("ARENA_DEBUG", raising=False)
    monkeypatch.delenv("ARENA_VLLM_URL", raising=False)
    assert _arena_run("auction_v0", f"{spec},rule,rule", tmp_path, capsys, expected) == 2
    assert not (tmp_path / "r").exists()  # refused before the results folder is made


def test_a_bad_default_server_url_is_refused_naming_the_variable(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("ARENA_VLLM_URL", "http://127.0.0.1:8000/v1#frag")
    assert _arena_run("auction_v0", "vllm:m,rule,rule", tmp_path, capsys, "$ARENA_VLLM_URL: server URL") == 2


@pytest.mark.parametrize("line, expected", [
    ("http://127.0.0.1:70000/v1", "line 2: server URL 'http://127.0.0.1:70000/v1' has a port"),
    ("https://127.0.0.1:8000/v1?key=1", "line 2: server URL 'https://127.0.0.1:8000/v1?key=1' has a query"),
    ("gopher://127.0.0.1/v1", "line 2: server URL 'gopher://127.0.0.1/v1' is not an http:// or https:// URL"),
], ids=["port", "query", "scheme"])
def test_a_bad_line_of_a_servers_file_is_refused(line: str, expected: str, tmp_path, capsys) -> None:
    listing = tmp_path / "servers.txt"
    listing.write_text(f"http://127.0.0.1:8001/v1\n{line}  # node 2\n", encoding="utf-8")
    assert _arena_run("auction_v0", f"vllm:m?servers={listing},rule,rule", tmp_path, capsys, expected) == 2


def test_port_99999_through_the_installed_command_is_one_line(tmp_path) -> None:
    """The real entry point in a child process: no traceback, no ``ExceptionGroup`` from the HTTP client."""
    spec = "vllm:m@http://127.0.0.1:99999/v1"
    result = run_in_repo(arena_command("auction_v0", f"{spec},rule,rule", 1, tmp_path / "r"), timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "Group" not in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"arena: error: policy spec '{spec}': server URL 'http://127.0.0.1:99999/v1'")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="ExceptionGroup is built in from Python 3.11")
def test_an_exception_group_from_a_policy_is_reported_by_its_first_real_error(tmp_path) -> None:
    class Grouped(Policy):
        def act(self, observation: Any, info: dict[str, Any]) -> Any:
            raise ExceptionGroup("unhandled errors in a TaskGroup",  # noqa: F821 (Python 3.11+)
                                 [OverflowError("getsockaddrarg: port must be 0-65535.")])

    def policies(spec: str, env: str) -> Policy:
        return Grouped() if spec == "grouped" else make_policy(spec, env)

    config = RunConfig("auction_v0", ("grouped", "rule", "rule"), episodes=1)
    with pytest.raises(RunError) as err:
        run(config, tmp_path / "r", policy_factory=policies, plots=False)
    assert "Group" not in str(err.value)
    assert str(err.value).endswith("OverflowError: getsockaddrarg: port must be 0-65535.")


@pytest.mark.parametrize("build, expected", [
    (lambda: OpenAIHTTPBackend("m", timeout=float("nan")), "timeout must be seconds > 0 and at most 86400"),
    (lambda: OpenAIHTTPBackend("m", timeout=1e9), "timeout must be seconds > 0 and at most 86400"),
    (lambda: OpenAIHTTPBackend("m", "http://127.0.0.1:8000/v1#frag"), "has a #fragment"),
    (lambda: Backoff(attempts=1_000_000), "attempts must be from 1 to 100"),
    (lambda: Backoff(base=float("inf")), "finite base"),
    (lambda: Sampling(temperature=float("nan")), "temperature must be a finite number"),
    (lambda: ServerPool("m", ["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"], probe_after=float("nan")),
     "probe_after must be a finite number"),
], ids=["timeout nan", "timeout 1e9", "url fragment", "attempts", "backoff inf", "temperature nan", "probe nan"])
def test_the_library_checks_the_same_limits(build: Callable[[], object], expected: str) -> None:
    with pytest.raises(ValueError, match=re.escape(expected)):
        build()


def test_the_longest_backoff_never_overflows() -> None:
    assert Backoff(attempts=100, base=1e300, factor=1e300, cap=8).delays() == [8] * 99


def _arena_run(env: str, players: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], expected: str) -> int:
    """``arena run`` in this process; its stderr must be one line holding ``expected``, without a
    traceback; returns the exit status."""
    capsys.readouterr()
    try:
        status = main(["run", env, "--players", players, "--episodes", "1", "--out", str(tmp_path / "r"),
                       "--no-progress", "--no-plots"])
    except SystemExit as exit_:  # argparse errors leave through SystemExit
        status = int(exit_.code or 0)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "Group" not in err, err
    assert err.startswith("arena: error: ") and expected in err, err
    assert len(err) < 700, err  # no message echoes more than a short excerpt of its input
    return status
