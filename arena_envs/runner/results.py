"""The append-only results folder of a run, and how a killed run resumes from it.

Layout (format 2)::

    run.json          {"format": 2, "config": {env, env_kwargs, players, seed, episodes},
                       "sessions": [the provenance of each session that played it: provenance.py]}
    episodes.jsonl    one line per committed episode: the commit point
    log.jsonl         per episode, one block: a line per decision, then its record line
    leaderboard.json, leaderboard.md
    .lock             the writer's lock (:class:`WriterLock`), holding its process id

One writer per folder (an exclusive ``flock`` on ``.lock``; a second is refused naming the
holder's pid, :class:`FolderBusy`); readers read committed lines without the lock. Every line of
``log.jsonl`` starts with ``{"episode": K, ``; a block ends with ``{"episode": K, "record": ...}``
(:class:`~arena_envs.runner.line_json.EpisodeLines`). Group commit: at most every ``sync_interval``
seconds the held blocks are appended to ``log.jsonl`` and fsynced, then their ``episodes.jsonl``
lines, so a line is never durable before its block. Resuming after a crash cuts a torn last line
of ``episodes.jsonl`` and the uncommitted tail of ``log.jsonl`` and replays those episodes byte for
byte; a committed episode is never lost or duplicated.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import mmap
import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena_envs.runner.line_json import dumps, finite, to_jsonable

FORMAT = 2
SYNC_INTERVAL = 0.2  # seconds between group commits
HELD_BYTES = 1 << 20  # held log blocks written (not synced) beyond this size
_LINE_START = re.compile(rb'\{"episode": (\d+), ("record": )?')
LOCK_FILE = ".lock"  # the writer's lock, in every folder a command writes


class ResultsError(ValueError):
    """A results folder that cannot be used for this run (another configuration, corrupt files)."""


class FolderBusy(ResultsError):
    """A folder another process is writing (it holds the folder's :class:`WriterLock`)."""


class WriterLock:
    """The one writer's lock on ``folder`` (which must exist): an exclusive ``flock`` on
    ``folder/.lock``, which then holds this process's id. Taken when built (:class:`FolderBusy`,
    naming the holder's pid, when another process holds it); the OS releases it when the process
    ends, however it ends; ``release`` (or leaving a ``with`` block) releases it before."""

    def __init__(self, folder: str | os.PathLike[str]):
        self.folder = Path(folder)
        fd = os.open(self.folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            pid = f"pid {holder}" if holder.isdigit() else "its pid not recorded yet"
            raise FolderBusy(f"{self.folder} is being written by another process ({pid}); wait for it to end, "
                             "or choose another folder (--out)") from None
        except BaseException:
            os.close(fd)
            raise
        self._fd: int | None = fd
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        """Release the lock (once; later calls do nothing)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def holds_data(folder: Path) -> bool:
    """Whether ``folder`` holds anything but a writer's lock file and the temporary files of writes
    that a killed process left unfinished (:func:`write_durably`)."""
    return any(path.name != LOCK_FILE and not path.name.endswith(".tmp") for path in folder.iterdir())


@contextlib.contextmanager
def _naming(path: Path) -> Iterator[None]:
    """Re-raise an ``OSError`` that names no file (a failed ``write`` or ``fsync`` on a descriptor)
    as the same error naming ``path``, so that its one-line report says which file failed."""
    try:
        yield
    except OSError as err:
        if err.filename is not None or err.errno is None:
            raise
        raise OSError(err.errno, err.strerror, str(path)) from err


def dumps_indented(value: Any) -> str:
    """A JSON file's text: indented, non-finite numbers as ``null``, a final newline."""
    return json.dumps(finite(value), indent=2, ensure_ascii=False, default=to_jsonable, allow_nan=False) + "\n"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durably(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically: a temporary file, fsync, rename. When that fails
    (disk full...) the temporary file is removed and ``path`` is as it was."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with _naming(path), open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise


def _truncate(path: Path, size: int) -> None:
    with open(path, "r+b") as f:
        f.truncate(size)
        os.fsync(f.fileno())


def read_episodes(path: Path, repair: bool = False) -> list[dict[str, Any]]:
    """The finished episodes of ``episodes.jsonl`` in file order.

    A torn last line (no newline, or not valid JSON) is ignored, and cut off when ``repair``. Any
    other bad line, or an episode id seen twice, is a :class:`ResultsError`.
    """
    if not path.exists():
        return []
    data = path.read_bytes()
    episodes: list[dict[str, Any]] = []
    seen: set[int] = set()
    good_end = 0
    lines = data.split(b"\n")
    for i, raw in enumerate(lines):
        last = i == len(lines) - 1
        if last:  # a torn tail, if any: the final unterminated line
            break
        try:
            episode = json.loads(raw)
        except ValueError:
            if i < len(lines) - 2:
                raise ResultsError(f"{path}: line {i + 1} is not valid JSON; the file is corrupt") from None
            break  # the final line unreadable: torn too
        if not isinstance(episode, dict) or type(episode.get("episode")) is not int:
            raise ResultsError(f"{path}: line {i + 1} is {_excerpt(raw)}, not an episode entry (a JSON object "
                               'with an integer "episode"); the file is corrupt')
        if episode["episode"] in seen:
            raise ResultsError(f"{path}: episode {episode['episode']} appears twice")
        seen.add(episode["episode"])
        episodes.append(episode)
        good_end += len(raw) + 1
    if repair and good_end < len(data):
        _truncate(path, good_end)
    return episodes


def _excerpt(raw: bytes, limit: int = 60) -> str:
    """``raw`` as a short quoted text for a message (at most ``limit`` characters of it)."""
    text = raw.decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[:limit] + "...")


def read_config(folder: Path) -> dict[str, Any]:
    """The configuration stored in ``folder/run.json``."""
    path = Path(folder) / "run.json"
    if not path.exists():
        raise ResultsError(f"{folder} is not a results folder (no run.json)")
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise ResultsError(f"{path} cannot be read ({err}); it should hold the run's JSON configuration, "
                           "as `arena run` writes it") from None
    if not isinstance(stored, dict) or not isinstance(stored.get("config"), dict):
        raise ResultsError(f"{path} holds no run configuration (expected a JSON object with 'format' and 'config')")
    if stored.get("format") != FORMAT:
        raise ResultsError(f"{path}: results format {stored.get('format')!r} cannot be read or resumed by this "
                           f"version (format {FORMAT}); run into a new --out folder")
    config: dict[str, Any] = stored["config"]
    return config


@dataclass
class EpisodeLog:
    """An episode's block of ``log.jsonl``: its step lines and its record."""

    episode: int
    steps: list[dict[str, Any]]
    record: dict[str, Any] | None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _scan_log(data: bytes | mmap.mmap) -> Iterator[tuple[int, int, int, bool]]:
    """(episode, line start, line end after the newline, is a record line) of each complete line;
    stops at the first line that is unterminated or does not start like a log line."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        match = _LINE_START.match(data, start)
        if end < 0 or match is None:
            return
        yield int(match[1]), start, end + 1, match[2] is not None
        start = end + 1


def iter_log(folder: str | os.PathLike[str], episodes: Iterable[int] | None = None) -> Iterator[EpisodeLog]:
    """The committed blocks of ``log.jsonl`` in commit order (only those of ``episodes`` when given);
    only the wanted lines are parsed."""
    folder = Path(folder)
    committed = {e["episode"] for e in read_episodes(folder / "episodes.jsonl")}
    wanted = committed if episodes is None else committed & set(episodes)
    with open(folder / "log.jsonl", "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:  # a long log is not read into memory
            steps: list[dict[str, Any]] = []
            for episode, start, end, is_record in _scan_log(data):
                if episode not in wanted:
                    continue
                line = json.loads(data[start:end])
                if is_record:
                    yield EpisodeLog(episode, steps, line["record"])
                    steps = []
                else:
                    steps.append(line)


def read_steps(folder: str | os.PathLike[str], episode: int) -> list[dict[str, Any]]:
    """The step lines of committed episode ``episode`` (``ResultsError`` when it has none)."""
    for block in iter_log(folder, (episode,)):
        return block.steps
    raise ResultsError(f"{folder}: episode {episode} is not committed")


def read_record(folder: str | os.PathLike[str], episode: int) -> dict[str, Any] | None:
    """The ``episode_record()`` of committed episode ``episode``."""
    for block in iter_log(folder, (episode,)):
        return block.record
    raise ResultsError(f"{folder}: episode {episode} is not committed")


class ResultsFolder:
    """A run's folder, created for ``config`` or reopened (and repaired) to resume the same configuration.

    ``finished`` holds the ids committed when it was opened; ``resumed`` their entries. ``commit``
    appends an episode; ``sync`` makes every appended episode committed (``close`` too).
    """

    def __init__(self, path: str | os.PathLike[str], config: dict[str, Any], sync_interval: float = SYNC_INTERVAL,
                 session: dict[str, Any] | None = None):
        if not sync_interval >= 0:
            raise ValueError(f"sync_interval must be >= 0 seconds, got {sync_interval!r}")
        self.path = Path(path)
        self.config = json.loads(dumps(config))  # compare as it reads back from run.json
        self.episodes_path = self.path / "episodes.jsonl"
        self.log_path = self.path / "log.jsonl"
        self.sync_interval = sync_interval
        if self.path.exists() and not self.path.is_dir():
            raise ResultsError(f"results folder {str(self.path)!r} is a file, not a folder; choose another --out")
        if self.path.is_dir():
            self._holds_run()  # a folder that cannot hold this run is refused untouched, lock file included
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError) as err:
            raise ResultsError(f"results folder {str(self.path)!r} cannot be created: {err.strerror or err}; "
                               "choose a folder you can write to (--out)") from None
        self._lock = WriterLock(self.path)
        self.error: OSError | None = None  # the write that failed: nothing more is written
        try:
            self._open([] if session is None else [session])
        except BaseException:
            self._lock.release()
            raise

    def _holds_run(self) -> bool:
        """Whether the folder holds this run (a ``run.json`` of this configuration) rather than
        nothing; :class:`ResultsError` when it cannot hold it (another configuration, an unreadable
        ``run.json``, other files)."""
        if (self.path / "run.json").exists():
            stored = read_config(self.path)
            if stored != self.config:
                raise ResultsError(self._mismatch(stored))
            return True
        if holds_data(self.path):
            raise ResultsError(f"{self.path} exists, is not empty and has no run.json; choose another --out")
        return False

    def _open(self, sessions: list[dict[str, Any]]) -> None:
        """Create or check ``run.json`` again, repair the files, open them for appending (under the
        lock). A folder refused (another configuration, a corrupt file) is left as it was."""
        run_file = self.path / "run.json"
        if not self._holds_run():
            write_durably(run_file, dumps_indented({"format": FORMAT, "config": self.config,
                                                    **({"sessions": sessions} if sessions else {})}))
            sessions = []
        for path in (self.episodes_path, self.log_path):
            path.touch()
        self.resumed = read_episodes(self.episodes_path, repair=True)
        self.finished = {e["episode"] for e in self.resumed}
        self._repair_log()
        if sessions:  # this session joins those that played the folder before
            document = json.loads(run_file.read_text(encoding="utf-8"))
            previous = document.get("sessions")
            document["sessions"] = (previous if isinstance(previous, list) else []) + sessions
            write_durably(run_file, dumps_indented(document))
        _fsync_dir(self.path)
        self._log = os.open(self.log_path, os.O_WRONLY | os.O_APPEND)
        self._episodes = os.open(self.episodes_path, os.O_WRONLY | os.O_APPEND)
        self._held: list[bytes] = []  # episodes.jsonl lines of the group
        self._blocks: list[bytes] = []  # log.jsonl blocks of the group not written yet
        self._block_bytes = 0
        self._synced_at = time.monotonic()

    def _mismatch(self, stored: dict[str, Any]) -> str:
        diffs = [f"{key}: folder has {stored.get(key)!r}, this run has {self.config.get(key)!r}"
                 for key in sorted(set(stored) | set(self.config)) if stored.get(key) != self.config.get(key)]
        return (f"{self.path} holds a run with another configuration ({'; '.join(diffs)}); "
                "use another --out, or repeat the original command to resume it")

    def _repair_log(self) -> None:
        """Cut ``log.jsonl`` after the block of the last committed episode; check every committed
        episode has exactly one block, before any uncommitted one."""
        blocks: set[int] = set()
        good_end = size = self.log_path.stat().st_size
        if size:
            with open(self.log_path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                good_end = 0
                for episode, _, end, is_record in _scan_log(data):
                    if episode not in self.finished:
                        break
                    if is_record:
                        if episode in blocks:
                            raise ResultsError(f"{self.log_path}: episode {episode} has two blocks; "
                                               "the folder is corrupt")
                        blocks.add(episode)
                        good_end = end
        if blocks != self.finished:
            missing = sorted(self.finished - blocks)[:5]
            raise ResultsError(f"{self.log_path}: committed episodes {missing} have no complete block; "
                               "the folder is corrupt")
        if good_end < size:
            _truncate(self.log_path, good_end)

    def commit(self, line: bytes, block: bytes) -> None:
        """Append an episode: its ``log.jsonl`` block and its ``episodes.jsonl`` line (the entry's
        JSON and a newline) at the next sync (the block earlier when the held blocks are large)."""
        if self.error is not None:
            raise self.error
        self._blocks.append(block)
        self._block_bytes += len(block)
        self._held.append(line)
        if time.monotonic() - self._synced_at >= self.sync_interval:
            self.sync()
        elif self._block_bytes >= HELD_BYTES:
            self._write_blocks()

    def _append(self, fd: int, path: Path, data: bytes, fsync: bool) -> None:
        """Append ``data`` to ``path`` (open as ``fd``), then fsync it when ``fsync``. The first
        failure (disk full, file too large...) is kept in ``error``, named by ``path``, and stops
        every later write: a retry would append after a torn part, which a resume could not cut."""
        if self.error is not None:
            raise self.error
        try:
            with _naming(path):
                _write_all(fd, data)
                if fsync:
                    os.fsync(fd)
        except OSError as err:
            self.error = err
            raise

    def _write_blocks(self, fsync: bool = False) -> None:
        self._append(self._log, self.log_path, b"".join(self._blocks), fsync)
        self._blocks.clear()
        self._block_bytes = 0

    @property
    def held(self) -> bool:
        """Whether appended episodes wait for the next :meth:`sync`."""
        return bool(self._held)

    def sync(self) -> None:
        """Commit every appended episode: append the held blocks and fsync the log, then append and
        fsync their lines."""
        if self._held:
            self._write_blocks(fsync=True)
            self._append(self._episodes, self.episodes_path, b"".join(self._held), fsync=True)
            self._held.clear()
        self._synced_at = time.monotonic()

    def close(self) -> None:
        """Commit every appended episode (unless a write failed), close the files, release the lock."""
        try:
            if self.error is None:
                self.sync()
        finally:
            os.close(self._log)
            os.close(self._episodes)
            self._lock.release()
