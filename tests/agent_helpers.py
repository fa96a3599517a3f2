"""Agent services for the tests: the reference server (a real uvicorn on 127.0.0.1 in a thread) with
a switch that makes its ``/act`` misbehave, the results of a run without the timing fields, and
``arena serve-agent`` processes."""
from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

from agent_service.serve_agent import listen
from agent_service.server import AgentService
from arena_envs.runner.policy_specs import make_policy
from tests.process_helpers import REPO, child_env

#: What ``/act`` does besides answering (``ok``): ``silent`` takes the request and never answers,
#: ``garbage`` answers 200 with a body that is not JSON, ``error`` answers 503, ``once`` answers 503
#: once then as usual, ``nonsense`` answers an action no game reads, ``lost`` answers 409 (the agent
#: restarted and no longer knows the session), ``report`` answers with a report call to the game.
MODES = ("ok", "silent", "garbage", "error", "once", "nonsense", "lost", "report")


class Switch:
    """An ASGI app in front of the reference service whose ``mode`` decides what ``/act`` gets."""

    def __init__(self, app: Any):
        self.app = app
        self.mode = "ok"
        self.after = 0
        self.acts = 0
        self.stopping = threading.Event()

    def set(self, mode: str, after: int = 0) -> None:
        """``/act`` behaves as ``mode`` once ``after`` more requests of it were answered as usual."""
        assert mode in MODES
        self.mode, self.after = mode, after

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/act" or self.mode == "ok" or self.after > 0:
            if scope["type"] == "http" and scope["path"] == "/act" and self.after > 0:
                self.after -= 1
            await self.app(scope, receive, send)
            return
        self.acts += 1
        mode = self.mode
        if mode == "silent":
            while not self.stopping.is_set():
                await asyncio.sleep(0.05)
            return
        if mode == "once":
            self.mode = "ok"
        if mode == "nonsense":
            await _send(send, 200, b'{"action": "\\u001b[2J I pass, obviously", "explanation": "no idea"}')
        elif mode == "report":
            await _send(send, 200, b'{"action": "x", "reports": [["check_belief", ["player_0", {}], {}]]}')
        elif mode == "lost":
            await _send(send, 409, b'{"error": "unknown session (never started here, or dropped)"}')
        elif mode == "garbage":
            await _send(send, 200, b"\x89PNG\r\n\x1a\n garbage")
        else:
            await _send(send, 503, b"overloaded\n try later")


async def _send(send: Any, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class Served:
    """A running reference service: its ``url``, its ``switch`` and the ``service`` itself."""

    def __init__(self, url: str, switch: Switch, service: AgentService):
        self.url, self.switch, self.service = url, switch, service


@contextmanager
def served(game: str, spec: str, token: str | None = None, port: int = 0) -> Iterator[Served]:
    """The reference service of ``spec`` for ``game`` on 127.0.0.1 (``port`` 0: a free one) while the block runs."""
    service = AgentService(game, spec, make_policy, token)
    switch = Switch(service.app())
    sock = listen("127.0.0.1", port)
    # log_config None: the test process's logging is left as it is (uvicorn's default would point new
    # handlers at whatever sys.stderr is now: a test's captured stream)
    server = uvicorn.Server(uvicorn.Config(switch, log_config=None, log_level="error", lifespan="off",
                                           timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the agent service did not start"
        time.sleep(0.01)
    try:
        yield Served(f"http://127.0.0.1:{sock.getsockname()[1]}", switch, service)
    finally:
        switch.stopping.set()
        server.should_exit = True
        thread.join(10)
        sock.close()


def comparable(folder: Path, labels: dict[str, str]) -> list[str]:
    """The episodes and step-log lines of a results folder without the policies' traces (latency,
    attempts: timing), with player labels renamed by ``labels``, sorted."""
    lines = []
    for name in ("episodes.jsonl", "log.jsonl"):
        for line in (folder / name).read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            entry.pop("trace", None)
            if "seats" in entry:
                entry["seats"] = {seat: labels.get(label, label) for seat, label in entry["seats"].items()}
            if "policy" in entry:
                entry["policy"] = labels.get(entry["policy"], entry["policy"])
            lines.append(json.dumps(entry, sort_keys=True))
    return sorted(lines)


@contextmanager
def serve_agent_process(game: str, spec: str, port: int = 0,
                        *extra: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``arena serve-agent GAME SPEC`` in a child process, and its URL once it listens."""
    command = [sys.executable, "-m", "arena_envs.cli", "serve-agent", game, spec, "--port", str(port), *extra]
    with subprocess.Popen(command, cwd=REPO, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline()
            found = re.search(r"at (http://\S+) ", first)
            assert found, f"serve-agent said {first!r}; stderr: {proc.stderr.read() if proc.poll() is not None else ''}"
            yield proc, found.group(1)
        finally:
            if proc.poll() is None:
                proc.terminate()
            proc.communicate(timeout=30)
