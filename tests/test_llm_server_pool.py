"""Several LLM servers behind one spec (llm_policies.backends.server_pool): spec forms and errors,
placement (fewest requests in flight, one server per episode, rotation by process rank), failover,
all servers down, ``failover=0`` and the probe that takes a server back.

FAKE SERVERS: :class:`FakeChatServer` is a small asyncio HTTP server on 127.0.0.1 that speaks just
enough of the OpenAI chat API (``GET /v1/models``, ``POST /v1/chat/completions``). It stands in for
vLLM here only because these tests need faults and loads a real vLLM cannot be made to produce on
demand (a server that slows down, breaks its connections or turns to HTTP 503 at a chosen
request). The real-server test with two SmolLM2 vLLM servers is tests/test_llm_vllm_servers.py.
"""
from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena_envs.cli import main as arena_main
from arena_envs.core.episode_context import episode_scope
from arena_envs.runner.results import read_episodes
from llm_policies.backends.openai_http import OpenAIHTTPBackend
from llm_policies.backends.server_pool import ServerPool
from llm_policies.base import LLMPolicyBase
from llm_policies.retry import Backoff
from llm_policies.specs import parse_spec, parse_target, policy_from_spec
from llm_policies.types import BackendUnavailable, ChatRequest
from tests.llm_helpers import free_port

MODEL = "fake-model"
ONE_TRY = Backoff(attempts=1)
#: What the fake servers answer: a valid move of guess_two_thirds_v0.
ANSWER = '{"chosen_number": 50}'


class FakeChatServer:
    """A chat-completions server on 127.0.0.1 in its own thread; see the module docstring.

    It answers :data:`ANSWER` after ``delay`` seconds, records each request's last user message in
    ``prompts``, answers HTTP 503 once ``fail_after`` requests were answered, and :meth:`stop`
    closes the listening socket and every open connection (a killed server)."""

    def __init__(self, *, delay: float = 0.0):
        self.port = free_port()
        self.delay = delay
        self.fail_after: int | None = None
        self.prompts: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeChatServer:
        async def listen() -> None:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        asyncio.run_coroutine_threadsafe(listen(), self._loop).result(5)
        return self

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
                for writer in list(self._writers):
                    writer.close()
                await self._server.wait_closed()
                self._server = None
        asyncio.run_coroutine_threadsafe(close(), self._loop).result(5)

    def shutdown(self) -> None:
        self.stop()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                method, path, _ = head.split(b"\r\n", 1)[0].decode().split(" ", 2)
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                body = json.loads(await reader.readexactly(length)) if length else {}
                status, data = await self._answer(method, path, body)
                payload = json.dumps(data).encode()
                writer.write(f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n"
                             f"content-length: {len(payload)}\r\n\r\n".encode() + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _answer(self, method: str, path: str, body: dict) -> tuple[int, dict]:
        if method == "GET" and path == "/v1/models":
            return 200, {"data": [{"id": MODEL}]}
        if self.fail_after is not None and len(self.prompts) >= self.fail_after:
            return 503, {"error": {"message": "engine dead"}}
        self.prompts.append(body["messages"][-1]["content"])
        await asyncio.sleep(self.delay)
        return 200, {"choices": [{"message": {"content": ANSWER}, "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 5, "completion_tokens": 1}}


@pytest.fixture
def servers() -> Iterator[list[FakeChatServer]]:
    started = [FakeChatServer().start() for _ in range(3)]
    yield started
    for server in started:
        server.shutdown()


def ask(text: str) -> ChatRequest:
    return ChatRequest(({"role": "user", "content": text},))


async def play(pool: ServerPool, episode: int, turns: int, first: int = 0) -> None:
    """An episode (or its part from turn ``first``): ``turns`` requests one after another inside its
    scope; each names the episode and the turn."""
    with episode_scope(("test", episode)):
        for turn in range(first, first + turns):
            await pool.generate(ask(f"episode {episode} turn {turn}"))


def episodes_seen(server: FakeChatServer) -> set[int]:
    return {int(prompt.split()[1]) for prompt in server.prompts}


def closed_url() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there


# ---------------------------------------------------------------------- spec strings

def test_spec_forms_and_backends(tmp_path: Path) -> None:
    a, b = "http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"
    target = parse_target(f"vllm:smollm2@{a}@{b}/?failover=0&probe=5")
    assert (target.model, target.urls, target.options) == ("smollm2", (a, b), {"failover": "0", "probe": "5"})
    assert parse_spec(f"vllm:smollm2@{a}@{b}") == ("vllm", "smollm2", a, {})
    listing = tmp_path / "servers.txt"
    listing.write_text(f"# two servers\n{a}   # node 1\n\n{b}\n")
    assert parse_target(f"vllm:smollm2?servers={listing}").urls == (a, b)

    one = policy_from_spec(f"vllm:{MODEL}@{a}")
    assert isinstance(one, LLMPolicyBase) and type(one.backend) is OpenAIHTTPBackend
    assert one.backend.label == f"vllm:{MODEL}@{a}"  # one server: today's backend and trace label
    pooled = policy_from_spec(f"vllm:{MODEL}@{a}@{b}?failover=0&probe=7&retries=2")
    assert isinstance(pooled, LLMPolicyBase)
    pool = pooled.backend
    assert isinstance(pool, ServerPool) and pool.label == f"vllm:{MODEL}@pool(2)"
    assert (pool.urls, pool.failover, pool.probe_after) == ([a, b], False, 7.0)
    assert pooled.name == f"vllm:{MODEL}@{a}@{b}?failover=0&probe=7&retries=2"
    from_file = policy_from_spec(f"vllm:{MODEL}?servers={listing}&failover=0&probe=7&retries=2")
    assert isinstance(from_file, LLMPolicyBase) and from_file.backend is pool  # the same servers: one pool


@pytest.mark.parametrize("spec, message", [
    ("vllm:m@http://h:1/v1@http://h:1/v1/", "server http://h:1/v1 is listed twice"),
    ("vllm:m@http://h:1/v1@http://h:2/v1?servers=x.txt", "either with @URL or with servers=FILE, not both"),
    ("vllm:m?servers={empty}", "lists no server URL"),
    ("vllm:m?servers={missing}", "cannot read servers file"),
    ("vllm:m?servers={bad}", "line 2: server URL 'h:2' is not an http:// or https:// URL"),
    ("vllm:m?servers={twice}", "server http://h:1/v1 is listed twice in servers file"),
    ("vllm:m@http://h:1/v1@http://h:2/v1?failover=maybe", "option failover must be one of"),
    ("vllm:m@http://h:1/v1@http://h:2/v1?probe=0", "option probe must be a number of seconds > 0, got '0'"),
    ("vllm:m@http://h:1/v1@http://h:2/v1?probe=soon", "option probe must be float, got 'soon'"),
])
def test_spec_errors(tmp_path: Path, spec: str, message: str) -> None:
    files = {"empty": "# nothing yet\n\n", "bad": "http://h:1/v1\nh:2\n", "twice": "http://h:1/v1\nhttp://h:1/v1/\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    spec = spec.format(**{name: tmp_path / name for name in [*files, "missing"]})
    with pytest.raises(ValueError) as caught:
        parse_target(spec)
    assert message in str(caught.value) and "\n" not in str(caught.value)


# ---------------------------------------------------------------------- placement

def test_episodes_stick_to_the_least_loaded_server(servers: list[FakeChatServer]) -> None:
    for server in servers:
        server.delay = 0.02
    pool = ServerPool(MODEL, [s.url for s in servers], backoff=ONE_TRY)

    async def main() -> None:
        await asyncio.gather(*(play(pool, k, 4) for k in range(6)))

    asyncio.run(main())
    assert all(len(urls) == 1 for urls in pool.history.values()) and len(pool.history) == 6
    placed = {k: pool.history[("test", k)][0] for k in range(6)}
    for server in servers:  # the servers' own view: each got whole episodes, two of them
        mine = {k for k, url in placed.items() if url == server.url}
        assert episodes_seen(server) == mine and len(mine) == 2
        assert len(server.prompts) == pool.requests[server.url] == 8


def test_episodes_played_one_after_another_take_turns(servers: list[FakeChatServer]) -> None:
    """One episode at a time (a learner's environment, ``--concurrency 1``): every placement is a tie
    on load, and the servers take turns instead of the first one getting every episode."""
    pool = ServerPool(MODEL, [s.url for s in servers], backoff=ONE_TRY, rank=1)

    async def main() -> None:
        for k in range(6):
            await play(pool, k, 2)

    asyncio.run(main())
    order = [pool.history[("test", k)][0] for k in range(6)]
    urls = [s.url for s in servers]
    assert order == [urls[1], urls[2], urls[0]] * 2  # from the rank's server on, in turn
    assert [len(episodes_seen(server)) for server in servers] == [2, 2, 2]


def test_a_new_episode_avoids_the_busy_server(servers: list[FakeChatServer]) -> None:
    slow, fast = servers[:2]
    slow.delay = 0.6
    pool = ServerPool(MODEL, [slow.url, fast.url], backoff=ONE_TRY, rank=0)

    async def main() -> None:
        busy = asyncio.ensure_future(pool.generate(ask("no episode")))  # rank 0: the first server
        await asyncio.sleep(0.2)
        await play(pool, 1, 2)  # while the slow one holds a request in flight
        assert not busy.done()
        await busy

    asyncio.run(main())
    assert slow.prompts == ["no episode"] and pool.history[("test", 1)] == [fast.url]
    # once the episode ended, ties are broken by the rank's rotation
    for rank, expected in [(0, 0), (1, 1), (2, 2), (4, 1)]:
        rotated = ServerPool(MODEL, [s.url for s in servers], backoff=ONE_TRY, rank=rank)
        asyncio.run(play(rotated, 7, 1))
        assert rotated.history[("test", 7)] == [servers[expected].url]


# ---------------------------------------------------------------------- failures

def test_episodes_move_when_a_server_dies(servers: list[FakeChatServer], capsys: pytest.CaptureFixture[str]) -> None:
    keep, dying = servers[:2]
    pool = ServerPool(MODEL, [keep.url, dying.url, closed_url()], backoff=Backoff(attempts=2, base=0.01))

    async def main() -> None:
        await asyncio.gather(*(play(pool, k, 1) for k in range(4)))  # placed; the closed port fails over
        dying.stop()
        await asyncio.gather(*(play(pool, k, 2, first=1) for k in range(4)))

    asyncio.run(main())
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2, err
    assert err[0].startswith(f"arena: LLM server {pool.urls[2]} is down (ConnectError")
    assert "its 1 episode moves to the other 2 servers;" in err[0]
    moved = [k for k in range(4) if dying.url in pool.history[("test", k)]]
    assert moved and err[1].startswith(f"arena: LLM server {dying.url} is down (")
    assert f"its {len(moved)} episode{'s move' if len(moved) > 1 else ' moves'} to the other 1 server;" in err[1]
    assert all(pool.history[("test", k)][-1] == keep.url for k in range(4))
    # every request answered exactly once, the ones after the failure on the server left
    answered = sorted(keep.prompts + dying.prompts)
    assert answered == sorted(f"episode {k} turn {t}" for k in range(4) for t in range(3))
    assert all(f"episode {k} turn {t}" in keep.prompts for k in range(4) for t in (1, 2))
    assert pool.requests[pool.urls[2]] == 0 and sum(pool.requests.values()) == 12


def test_all_down_is_one_line_and_the_run_stops(servers: list[FakeChatServer], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    a, b = servers[:2]
    a.fail_after, b.fail_after = 6, 6
    out = tmp_path / "run"
    spec = f"vllm:{MODEL}@{a.url}@{b.url}?retries=1"
    code = arena_main(["run", "guess_two_thirds_v0", "--players", f"{spec}*3", "--episodes", "6",
                       "--env-arg", "n_players=3", "--env-arg", "n_rounds=2", "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    stop = [line for line in err.splitlines() if line.startswith("arena: run stopped:")]
    assert code == 1 and len(stop) == 1, err
    assert f"all 2 servers of model '{MODEL}' are down: {a.url} (HTTP 503: " in stop[0]
    assert f"; {b.url} (HTTP 503: " in stop[0]
    assert len([line for line in err.splitlines() if " is down (" in line]) == 1  # the first to fail; then the stop
    # 12 answers = 2 episodes of 3 seats x 2 rounds (run one at a time), both kept
    assert [e["episode"] for e in read_episodes(out / "episodes.jsonl")] == [0, 1]


def test_failover_off_stops_at_the_first_dead_server(servers: list[FakeChatServer]) -> None:
    dead = closed_url()
    pool = ServerPool(MODEL, [dead, servers[0].url], backoff=ONE_TRY, failover=False, rank=0)
    with pytest.raises(BackendUnavailable) as caught:
        asyncio.run(play(pool, 0, 1))
    message = str(caught.value)
    assert message.startswith(f"LLM server {dead} of model '{MODEL}' is down and failover=0: {dead} (ConnectError")
    assert message.endswith(f"; {servers[0].url} (up)") and "\n" not in message


def test_a_down_server_is_probed_and_taken_back(servers: list[FakeChatServer],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    later = FakeChatServer()  # its port stays closed until started
    now = [0.0]
    pool = ServerPool(MODEL, [later.url, servers[0].url], backoff=ONE_TRY, probe_after=30, rank=0,
                      clock=lambda: now[0])
    try:
        asyncio.run(play(pool, 0, 1))
        assert pool.history[("test", 0)] == [later.url, servers[0].url]
        later.start()
        now[0] = 29.0  # not yet: the pool does not look
        asyncio.run(play(pool, 1, 1))
        now[0] = 31.0
        asyncio.run(play(pool, 2, 1))
    finally:
        later.shutdown()
    assert pool.history[("test", 1)] == [servers[0].url] and pool.history[("test", 2)] == [later.url]
    assert later.prompts == ["episode 2 turn 0"]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[1] == f"arena: LLM server {later.url} answers again; new episodes may go to it"


def test_preflight_names_the_down_servers(servers: list[FakeChatServer], capsys: pytest.CaptureFixture[str]) -> None:
    dead = closed_url()
    pool = ServerPool(MODEL, [dead, servers[0].url], backoff=ONE_TRY)
    pool.preflight(timeout=2)
    assert capsys.readouterr().err.startswith(f"arena: LLM server {dead} is down (cannot reach")
    asyncio.run(play(pool, 0, 1))
    assert pool.history[("test", 0)] == [servers[0].url]
    both = ServerPool(MODEL, [dead, closed_url()], backoff=ONE_TRY)
    with pytest.raises(BackendUnavailable, match=f"^all 2 servers of model '{MODEL}' are down: {dead} "):
        both.preflight(timeout=2)


def test_learner_env_keeps_each_episode_on_one_server(servers: list[FakeChatServer]) -> None:
    from arena_envs.registration import make as make_env
    from arena_envs.rl import LearnerEnv

    spec = f"vllm:{MODEL}@{servers[0].url}@{servers[1].url}?retries=1"
    opponents = [policy_from_spec(spec, "guess_two_thirds_v0") for _ in range(2)]
    view = LearnerEnv(lambda: make_env("guess_two_thirds_v0", n_players=3, n_rounds=3), opponents)
    assert isinstance(opponents[0], LLMPolicyBase) and isinstance(opponents[0].backend, ServerPool)
    pool = opponents[0].backend
    view.reset(seed=3)
    view_number = view._episode_key()[1]
    for _ in range(2):  # two episodes of three steps, each opening its own scope
        done = False
        while not done:
            _, _, terminated, truncated, _ = view.step(view.action_space.sample())
            done = terminated or truncated
        view.reset()
    view.close()
    # the pool saw the view's episodes (the third has no request yet: the learner's seat moves first)
    assert list(pool.history) == [("learner_env", view_number, 3, k) for k in range(2)]
    assert all(len(urls) == 1 for urls in pool.history.values())
    assert sum(pool.requests.values()) == 2 * 3 * 2  # episodes x rounds x opponents
