"""Two real vLLM servers (SmolLM2 on 127.0.0.1) behind one ``vllm:MODEL@URL1@URL2`` spec: the runner's
episodes spread over both, each episode's requests go to one server (the pool's placement record,
checked against the servers' own ``vllm:request_success_total`` and the step log), and when one
server is killed mid-run the run finishes on the other, every episode exactly once.

The servers' request counters must count this module's requests alone: the first server is the
worker's own (``private_vllm_server``, tests/conftest.py), the second is this module's, started
beside it."""
from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena_envs.runner.results import read_episodes, read_steps
from arena_envs.runner.runner import RunConfig, run
from llm_policies.backends.server_pool import ServerPool
from llm_policies.base import LLMPolicyBase
from llm_policies.cpu_cores import SMALL_MACHINE_CPUS, usable_cpus
from llm_policies.prefix_cache import read_requests
from llm_policies.serve import VLLMServer, smollm2_server
from llm_policies.specs import policy_from_spec
from tests.llm_helpers import MODEL_NAME, OWN_ENGINE, running

# without the stack of scripts/setup_llm.sh these skip, or fail under CI (tests/conftest.py)
pytestmark = [pytest.mark.llm, pytest.mark.slow, OWN_ENGINE]

ENV = "guess_two_thirds_v0"
ENV_KWARGS = {"n_players": 3, "n_rounds": 2}
EPISODES = 6


@pytest.fixture(scope="module")
def two_servers(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[VLLMServer]]:
    """This worker's own server and a second one (1 GiB of KV cache, the library's core binding),
    started while the first starts."""
    second = smollm2_server(name=MODEL_NAME, log_path=tmp_path_factory.mktemp("vllm2") / "server.log",
                            env={"VLLM_CPU_KVCACHE_SPACE": "1"})
    failed: list[BaseException] = []

    def start() -> None:
        try:
            second.start(timeout=900)
        except BaseException as err:  # reported below, in the test's thread
            failed.append(err)

    starting = threading.Thread(target=start)
    starting.start()
    try:
        first = running(request.getfixturevalue("own_vllm_server"))  # started now unless already running
    finally:
        starting.join()
    try:
        if failed:
            raise failed[0]
        yield [first, second]
    finally:
        second.stop()


def pool_of(spec: str) -> ServerPool:
    """The process-wide pool the runner's policies of ``spec`` share."""
    policy = policy_from_spec(spec, ENV)
    assert isinstance(policy, LLMPolicyBase) and isinstance(policy.backend, ServerPool)
    return policy.backend


def llm_calls(out: Path) -> int:
    """The LLM calls of every committed episode, from the step log's traces."""
    return sum(len(step["trace"]["calls"]) for entry in read_episodes(out / "episodes.jsonl")
               for step in read_steps(out, entry["episode"]) if step.get("trace"))


def test_the_library_engine_reserves_no_core_on_a_small_machine(two_servers: list[VLLMServer]) -> None:
    """vLLM reserves one core for its scheduler unless told; on a small machine the library tells it
    (llm_policies.cpu_cores). The second server runs on the library's defaults (the suite binds its
    other engines to one core each: tests.llm_helpers.one_core)."""
    log_path = two_servers[1].log_path
    assert log_path is not None
    found = re.search(r"reserved_cpus=\[([0-9, ]*)\]", log_path.read_text())
    assert found, "the server log states its OpenMP binding"
    assert (found.group(1) == "") == (usable_cpus() <= SMALL_MACHINE_CPUS), found.group(0)


def test_episodes_spread_over_two_servers_one_server_each(two_servers: list[VLLMServer],
                                                          tmp_path: Path) -> None:
    urls = [server.url for server in two_servers]
    spec = f"vllm:{MODEL_NAME}@{urls[0]}@{urls[1]}"
    pool = pool_of(spec)
    before = [read_requests(url) for url in urls]
    summary = run(RunConfig(ENV, (spec,) * 3, episodes=EPISODES, seed=5, env_kwargs=ENV_KWARGS),
                  tmp_path / "run", concurrency=4)
    answered = [read_requests(url) - count for url, count in zip(urls, before)]
    assert summary.played == EPISODES
    assert all(n > 0 for n in answered), answered  # both servers worked
    assert sum(answered) == llm_calls(tmp_path / "run")  # and answered every call of the step log
    assert [pool.requests[url] for url in urls] == answered  # the pool sent each server what it answered
    assert len(pool.history) == EPISODES  # one placement per episode, never moved
    assert all(len(placed) == 1 for placed in pool.history.values()), pool.history
    assert {placed[0] for placed in pool.history.values()} == set(urls)


def test_a_server_killed_mid_run_leaves_its_episodes_to_the_other(two_servers: list[VLLMServer],
                                                                   tmp_path: Path,
                                                                   capfd: pytest.CaptureFixture[str]) -> None:
    first, second = two_servers
    spec = f"vllm:{MODEL_NAME}@{first.url}@{second.url}?probe=600"  # a pool of its own (other options)
    pool = pool_of(spec)
    committed: list[int] = []

    def kill_second(entry: dict[str, Any]) -> None:
        committed.append(entry["episode"])
        if len(committed) == 1:
            second.kill()  # SIGKILL while the other episodes are in flight

    summary = run(RunConfig(ENV, (spec,) * 3, episodes=EPISODES, seed=6, env_kwargs=ENV_KWARGS),
                  tmp_path / "run", concurrency=4, on_episode=kill_second)
    down = [line for line in capfd.readouterr().err.splitlines() if "is down" in line]
    assert summary.played == EPISODES
    assert sorted(e["episode"] for e in read_episodes(tmp_path / "run" / "episodes.jsonl")) == list(range(EPISODES))
    assert len(down) == 1 and down[0].startswith(f"arena: LLM server {second.url} is down (")
    moved = [key for key, placed in pool.history.items() if placed == [second.url, first.url]]
    assert moved, pool.history  # the kill hit episodes in flight there
    assert f"its {len(moved)} episode{'s move' if len(moved) > 1 else ' moves'} to the other 1 server;" in down[0]
    assert all(placed in ([first.url], [second.url], [second.url, first.url]) for placed in pool.history.values())
    assert sum(pool.requests.values()) == llm_calls(tmp_path / "run")
