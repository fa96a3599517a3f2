"""The append-only results folder of a run, and how a killed run resumes from it.

Layout::

    run.json                      {"format": 1, "config": {env, env_kwargs, players, seed, episodes}}
    episodes.jsonl                one line per finished episode (the commit point)
    steps/episode_000012.jsonl    one line per decision; ``.partial`` while the episode runs
    records/episode_000012.json   the environment's episode_record()
    leaderboard.json, leaderboard.md

An episode is finished exactly when its line is in ``episodes.jsonl``. Its step file and record are
made durable (fsync, rename, directory fsync) *before* that line is appended and fsynced, so after a
``kill -9`` at any moment: finished episodes have both files; a torn last line is discarded (the
file is truncated to its last complete line); step files and records of unfinished episodes,
partial or complete, are removed and those episodes are played again.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import IO, Any

import numpy as np

FORMAT = 1
_EPISODE_FILE = re.compile(r"^episode_(\d+)\.")


class ResultsError(ValueError):
    """A results folder that cannot be used for this run (another configuration, corrupt files)."""


def to_jsonable(value: Any) -> Any:
    """``json.dumps`` fallback: numpy scalars and arrays become Python values, anything else its repr."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)


def dumps(value: Any) -> str:
    return json.dumps(value, default=to_jsonable, ensure_ascii=False)


def episode_name(episode: int) -> str:
    return f"episode_{episode:06d}"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durably(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically: a temporary file, fsync, rename."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


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
        if last and not raw:
            break
        try:
            episode = json.loads(raw) if not last else None
        except ValueError:
            episode = None
            if i < len(lines) - 2:
                raise ResultsError(f"{path}: line {i + 1} is not valid JSON; the file is corrupt") from None
        if episode is None:  # a torn tail: the final unterminated or unreadable line
            break
        if episode["episode"] in seen:
            raise ResultsError(f"{path}: episode {episode['episode']} appears twice")
        seen.add(episode["episode"])
        episodes.append(episode)
        good_end += len(raw) + 1
    if repair and good_end < len(data):
        with open(path, "r+b") as f:
            f.truncate(good_end)
            os.fsync(f.fileno())
    return episodes


def read_config(folder: Path) -> dict[str, Any]:
    """The configuration stored in ``folder/run.json``."""
    path = Path(folder) / "run.json"
    if not path.exists():
        raise ResultsError(f"{folder} is not a results folder (no run.json)")
    stored = json.loads(path.read_text(encoding="utf-8"))
    if stored.get("format") != FORMAT:
        raise ResultsError(f"{path}: unsupported results format {stored.get('format')!r} (expected {FORMAT})")
    return stored["config"]


class StepLog:
    """The per-step JSONL of one running episode, written to ``.partial`` until committed."""

    def __init__(self, final: Path):
        self.final = final
        self.partial = final.with_name(final.name + ".partial")
        self._file: IO[str] | None = open(self.partial, "w", encoding="utf-8")

    def write(self, entry: dict[str, Any]) -> None:
        self._file.write(dumps(entry) + "\n")
        self._file.flush()

    def finish(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self._file = None
        os.replace(self.partial, self.final)

    def discard(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self.partial.unlink(missing_ok=True)


class ResultsFolder:
    """A run's folder, created for ``config`` or reopened to resume the same configuration."""

    def __init__(self, path: str | os.PathLike[str], config: dict[str, Any]):
        self.path = Path(path)
        self.config = json.loads(dumps(config))  # compare as it reads back from run.json
        self.steps_dir = self.path / "steps"
        self.records_dir = self.path / "records"
        self.episodes_path = self.path / "episodes.jsonl"
        run_file = self.path / "run.json"
        if run_file.exists():
            stored = read_config(self.path)
            if stored != self.config:
                raise ResultsError(self._mismatch(stored))
        else:
            if self.path.exists() and any(self.path.iterdir()):
                raise ResultsError(f"{self.path} exists, is not empty and has no run.json; choose another --out")
            self.path.mkdir(parents=True, exist_ok=True)
            write_durably(run_file, json.dumps({"format": FORMAT, "config": self.config}, indent=2) + "\n")
            _fsync_dir(self.path)
        self.steps_dir.mkdir(exist_ok=True)
        self.records_dir.mkdir(exist_ok=True)
        self.episodes = read_episodes(self.episodes_path, repair=True)
        self.finished = {e["episode"] for e in self.episodes}
        self._remove_unfinished()

    def _mismatch(self, stored: dict[str, Any]) -> str:
        diffs = [f"{key}: folder has {stored.get(key)!r}, this run has {self.config.get(key)!r}"
                 for key in sorted(set(stored) | set(self.config)) if stored.get(key) != self.config.get(key)]
        return (f"{self.path} holds a run with another configuration ({'; '.join(diffs)}); "
                "use another --out, or repeat the original command to resume it")

    def _remove_unfinished(self) -> None:
        """Delete step files and records (partial or not) of episodes that have no line."""
        for directory in (self.steps_dir, self.records_dir):
            removed = False
            for path in directory.iterdir():
                match = _EPISODE_FILE.match(path.name)
                if match is None or int(match[1]) not in self.finished or path.name.endswith((".partial", ".tmp")):
                    path.unlink()
                    removed = True
            if removed:
                _fsync_dir(directory)

    def step_log(self, episode: int) -> StepLog:
        return StepLog(self.steps_dir / f"{episode_name(episode)}.jsonl")

    def commit(self, entry: dict[str, Any], steps: StepLog, record: dict[str, Any] | None) -> None:
        """Make an episode durable: its steps and record first, then its line in episodes.jsonl."""
        episode = entry["episode"]
        if episode in self.finished:
            raise ResultsError(f"episode {episode} is already in {self.episodes_path}")
        steps.finish()
        if record is not None:
            write_durably(self.records_dir / f"{episode_name(episode)}.json", dumps(record))
            _fsync_dir(self.records_dir)
        _fsync_dir(self.steps_dir)
        line = (dumps(entry) + "\n").encode("utf-8")
        fd = os.open(self.episodes_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        self.finished.add(episode)
        self.episodes.append(entry)
