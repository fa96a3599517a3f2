"""The records of the servers that ``arena serve --detach`` left running, and stopping one of them.

A record is ``<cache_dir>/servers/<host>-<port>.json`` (:func:`llm_policies.local_stack.cache_dir`,
``ARENA_CACHE_DIR``): the server's process id (the leader of its process group), start time and command
line, URL, model, served name and log file. ``arena serve --stop`` reads it, stops the process group and
removes it, but only when the process is the server ``arena serve`` started: the leader of its own
group, with the recorded start time and command line, serving that name at that host and port (read
from ``/proc``). A record naming any other process is refused in one line, and nothing is signalled.
Without ``/proc`` (not Linux) nothing can be checked, so ``--stop`` refuses too; ``kill -- -PID`` with
the pid ``arena serve`` printed stops the server by hand.
"""
from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from llm_policies.local_stack import cache_dir


class NoServer(Exception):
    """No running server is recorded at the host and port asked for (a user error, one line)."""


@dataclass(frozen=True)
class ServerRecord:
    """A detached server: the process group it leads, where it answers and what it serves."""

    pid: int
    url: str
    model: str
    name: str
    log: str | None = None
    #: the leader's start time and command line (:class:`Process`), to tell it from any other process
    started: str | None = None
    command: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Process:
    """What ``/proc`` shows of a live process: its process group, start time (clock ticks since boot)
    and command line."""

    group: int
    started: str
    command: tuple[str, ...]


def records_dir() -> Path:
    return cache_dir() / "servers"


def record_path(host: str, port: int) -> Path:
    """Where the record of the server at ``host:port`` lives."""
    return records_dir() / f"{host}-{port}.json"


def write_record(path: Path, record: ServerRecord) -> None:
    """Write ``record`` to ``path`` (its folder made if needed), replacing an older record there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(asdict(record), indent=1) + "\n", encoding="utf-8")
    partial.replace(path)


def read_record(path: Path) -> ServerRecord:
    """The record in ``path``; :class:`NoServer` when there is none or it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        command = data.get("command")
        return ServerRecord(pid=int(data["pid"]), url=str(data["url"]), model=str(data["model"]),
                            name=str(data["name"]), log=data.get("log"), started=data.get("started"),
                            command=None if command is None else tuple(map(str, command)))
    except FileNotFoundError:
        raise NoServer(f"no server is recorded at {_address(path)} (no {path}); {recorded_text()}") from None
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise NoServer(f"server record {path} cannot be read ({type(err).__name__}: {err}); "
                       "delete it and stop the server with kill -- -PID") from None


def recorded_text() -> str:
    """Which servers are recorded, for an error message."""
    names = sorted(_address(p) for p in records_dir().glob("*.json"))
    if not names:
        return f"none is recorded in {records_dir()} (arena serve MODEL_PATH --detach records one)"
    return f"recorded: {', '.join(names)} (arena serve --stop --host HOST --port PORT stops one)"


def _address(path: Path) -> str:
    """``127.0.0.1:8000`` of the record file ``127.0.0.1-8000.json``."""
    host, _, port = path.stem.rpartition("-")
    return f"{host}:{port}"


def process_of(pid: int) -> Process | None:
    """Process ``pid`` as ``/proc`` shows it; None when there is no such process (or only its zombie)
    or no ``/proc`` to read."""
    fields = _stat(Path(f"/proc/{pid}/stat"))
    if not fields or fields[0] == "Z":
        return None
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    # proc(5) fields 5 (process group) and 22 (start time)
    return Process(int(fields[2]), fields[19], tuple(os.fsdecode(arg) for arg in command.split(b"\0")[:-1]))


def server_record(pid: int, url: str, model: str, name: str, log: str | None) -> ServerRecord:
    """The record of the server that ``arena serve`` started as process ``pid``, with its start time and
    command line as they are now."""
    now = process_of(pid)
    return ServerRecord(pid, url, model, name, log, now.started if now else None, now.command if now else None)


def stop_recorded(host: str, port: int, grace: float = 20.0) -> ServerRecord:
    """Stop the recorded server at ``host:port`` (SIGTERM to its process group, SIGKILL to what is left
    after ``grace`` seconds) and remove its record. :class:`NoServer` when none is recorded, when the
    recorded one is no longer running (that stale record is removed), or when the record names a process
    that is not a server ``arena serve`` started (module docstring; nothing is signalled)."""
    path = record_path(host, port)
    record = read_record(path)
    leader = process_of(record.pid)
    if leader is None or (record.started is not None and leader.started != record.started):  # gone, or id reused
        path.unlink()
        raise NoServer(f"the server recorded at {record.url} (pid {record.pid}) is no longer running; "
                       f"its record {path} is removed")
    why = _not_started_here(record, leader, host, port)
    if why:
        raise NoServer(f"{path} names process {record.pid}, which is not a server arena serve started ({why}); "
                       "nothing was stopped; delete the record if it is wrong")
    _signal_group(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and _group_alive(record.pid):
        time.sleep(0.2)
    _signal_group(record.pid, signal.SIGKILL)
    path.unlink()
    return record


def _not_started_here(record: ServerRecord, leader: Process, host: str, port: int) -> str:
    """Why ``leader`` is not the server that ``arena serve`` recorded at ``host:port`` ("" when it is)."""
    if record.started is None or record.command is None:
        return "the record holds no start time and command line to check it by"
    if leader.group != record.pid:
        return f"it is in process group {leader.group}, not leading its own"
    if leader.command != record.command:
        return "it runs another command line than the recorded one"
    flags = dict(zip(record.command, record.command[1:]))
    if (flags.get("--host"), flags.get("--port"), flags.get("--served-model-name")) != (host, str(port), record.name):
        return f"its command line does not serve {record.name!r} at {host}:{port}"
    return ""


def _group_alive(pgid: int) -> bool:
    """Whether process group ``pgid`` has a process that is not a zombie (exited, not reaped yet by its
    parent); without ``/proc``, whether it has any process."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of another user
        raise NoServer(f"process group {pgid} is not this user's; arena serve --stop stops your own servers only") \
            from None
    if not Path("/proc").is_dir():
        return True
    # proc(5) fields from the third on: state, parent, process group...
    return any(fields[2] == str(pgid) and fields[0] != "Z" for fields in map(_stat, Path("/proc").glob("[0-9]*/stat"))
               if fields)


def _stat(path: Path) -> list[str] | None:
    """The fields of a ``/proc/PID/stat`` after the command name (proc(5) fields 3 on); None if unreadable."""
    try:
        return path.read_text(encoding="ascii", errors="replace").rpartition(")")[2].split()
    except OSError:
        return None


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass
    except PermissionError:
        raise NoServer(f"process group {pid} is not this user's; arena serve --stop stops your own servers only") \
            from None
