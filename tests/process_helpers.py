"""Tests that run ``arena`` in a child process: the command, running it from the repository, waiting
until its results reach a count, signalling it mid-run, and the processes it leaves behind."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def child_env() -> dict[str, str]:
    """The environment of a child process: this repository first on ``PYTHONPATH``, then the caller's
    entries (a folder of the installed metadata that a checkout being tested puts there)."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def arena_command(env: str, players: str, episodes: int, out: Path) -> list[str]:
    """``arena run`` of ``episodes`` of ``env`` into ``out`` (seed 9, no progress bar)."""
    return [sys.executable, "-m", "arena_envs.cli", "run", env, "--players", players,
            "--episodes", str(episodes), "--seed", "9", "--out", str(out), "--no-progress"]


def run_in_repo(command: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``command`` run to its end from the repository (on ``PYTHONPATH``), its output captured."""
    env = child_env()
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def finished_count(out: Path) -> int:
    """The episodes committed under ``out``: complete lines of every ``episodes.jsonl`` in it."""
    return sum(path.read_bytes().count(b"\n") for path in out.rglob("episodes.jsonl")) if out.exists() else 0


def wait_until(done: Callable[[], bool], seconds: float, interval: float) -> bool:
    """Whether ``done()`` holds within ``seconds``, asked every ``interval`` seconds."""
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)
    return True


def signal_during_run(command: list[str], out: Path, at_least: int, sig: int,
                      before_signal: Callable[[int], None] | None = None) -> tuple[int, str]:
    """Start ``command``, send it ``sig`` once ``at_least`` episodes are committed under ``out`` and
    wait for its end; returns its exit status and stderr. ``before_signal(pid)`` is called just
    before the signal."""
    env = child_env()
    with subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as proc:
        def committed() -> bool:
            if finished_count(out) >= at_least:
                return True
            assert proc.poll() is None, f"run ended before the signal: {proc.communicate()[1].decode()}"
            return False

        assert wait_until(committed, 120, 0.005), "run too slow"
        if before_signal is not None:
            before_signal(proc.pid)
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    return proc.returncode, stderr.decode()


def kill_during_run(command: list[str], out: Path, at_least: int, total: int,
                    before_kill: Callable[[int], None] | None = None) -> int:
    """Start ``command``, SIGKILL it once ``at_least`` episodes are committed; returns the count then
    (fewer than ``total``). ``before_kill(pid)`` is called just before the kill."""
    status, _ = signal_during_run(command, out, at_least, signal.SIGKILL, before_kill)
    assert status == -signal.SIGKILL
    count = finished_count(out)
    assert count < total, "the run finished before the kill; raise the episode count"
    return count


def _stat(pid: int | str) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (ppid at 1, start time at 19)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def process_tree(root: int) -> dict[int, tuple[str, str]]:
    """pid -> (start time, command line) of every descendant of ``root``."""
    parents: dict[int, tuple[int, str]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = _stat(name)
            except OSError:
                continue
            parents[int(name)] = (int(fields[1]), fields[19])
    found: dict[int, tuple[str, str]] = {}
    stack = [root]
    while stack:
        parent = stack.pop()
        for pid, (ppid, started) in parents.items():
            if ppid == parent and pid not in found:
                try:
                    found[pid] = (started, Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ").strip())
                except OSError:
                    continue
                stack.append(pid)
    return found


def still_running(processes: dict[int, tuple[str, str]], ignore: tuple[str, ...] = ()) -> list[str]:
    """The command lines of ``processes`` (but those starting with ``ignore``) still running (the
    same process: the same start time)."""
    left = []
    for pid, (started, cmd) in processes.items():
        try:
            if _stat(pid)[19] == started and not cmd.startswith(ignore):
                left.append(cmd)
        except OSError:
            continue
    return left


def wait_gone(processes: dict[int, tuple[str, str]], seconds: float, ignore: tuple[str, ...] = ()) -> list[str]:
    """The command lines of ``processes`` (but those starting with ``ignore``) still running after
    at most ``seconds``."""
    wait_until(lambda: not still_running(processes, ignore), seconds, 0.2)
    return still_running(processes, ignore)
