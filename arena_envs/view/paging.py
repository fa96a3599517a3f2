"""Byte-offset indexes of a run's ``episodes.jsonl`` and ``log.jsonl``, so that a page of episodes or
one episode's decisions is read without parsing the whole file.

Contract: an index covers the complete lines (those ending in a newline) of its file; ``refresh``
extends it over what was appended since (a live run), and starts again when the file shrank or was
replaced (a resumed run cut a torn tail). A torn last line is never indexed. Files are opened
read-only and read with ``pread`` in chunks of :data:`CHUNK` bytes, not memory-mapped: a resumed run
may cut the file's tail while the viewer reads it, which makes a mapped page fault (SIGBUS) but a
read merely short. Nothing is locked or written. An index is safe to share between the threads of a
server (one lock each).
"""
from __future__ import annotations

import json
import os
import re
import threading
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_EPISODE_ID = re.compile(rb'\{"episode": (\d+)[,}]')
_RECORD_LINE = re.compile(rb'\{"episode": (\d+), "record": ')
_RECORD_KEY = b', "record": '
_NEWLINE = re.compile(rb"\n")


CHUNK = 8 << 20
#: a longer run of bytes without a newline is not a line a writer made: indexing stops before it
MAX_LINE = 256 << 20


def complete_lines(path: Path, start: int) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) pieces of ``path`` from ``start`` on, each ending at a newline: the complete
    lines there, in order, read a chunk at a time (a line longer than a chunk is read whole, up to
    :data:`MAX_LINE` bytes)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        carry = b""
        offset = start
        while True:
            data = os.pread(fd, CHUNK, offset + len(carry))
            if not data:
                return
            data = carry + data
            end = data.rfind(b"\n") + 1
            if end:
                yield offset, data[:end]
                offset += end
            carry = data[end:]
            if len(carry) > MAX_LINE:
                return
    finally:
        os.close(fd)


def read_span(path: Path, start: int, end: int) -> bytes:
    """Bytes ``start`` to ``end`` of ``path`` (fewer when it was cut since)."""
    with open(path, "rb") as f:
        return os.pread(f.fileno(), end - start, start)


def _identity(path: Path) -> tuple[int, int, int] | None:
    """(device, inode, size) of ``path``; None when it does not exist."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino, st.st_size


class _FileIndex:
    """What two indexes share: the file, how far it is indexed, and the refresh protocol."""

    def __init__(self, path: Path):
        self.path = path
        self.lock = threading.Lock()
        self._file: tuple[int, int] | None = None  # (device, inode) indexed
        self._scanned = 0  # bytes indexed: the end of the last complete line

    def refresh(self) -> None:
        """Index what was appended since the last call (all of it when the file was cut or replaced)."""
        with self.lock:
            found = _identity(self.path)
            if found is None:
                self._reset()
                self._file = None
                return
            file, size = found[:2], found[2]
            if file != self._file or size < self._scanned:
                self._reset()
                self._file = file
            for offset, data in complete_lines(self.path, self._scanned):
                self._extend(offset, data)
                self._scanned = offset + len(data)

    def _reset(self) -> None:
        self._scanned = 0
        self._clear()

    def _clear(self) -> None:
        raise NotImplementedError

    def _extend(self, offset: int, data: bytes) -> None:
        """Index ``data``, complete lines that start at byte ``offset`` of the file."""
        raise NotImplementedError


@dataclass(frozen=True)
class EpisodeLine:
    """One line of ``episodes.jsonl``: its position (0-based, in commit order), its entry, or why it is
    not one (``error``: not JSON, not an episode entry)."""

    index: int
    entry: dict[str, Any] | None
    error: str | None = None

    @property
    def episode(self) -> int | None:
        return None if self.entry is None else self.entry["episode"]


class EpisodeIndex(_FileIndex):
    """The line starts of ``episodes.jsonl`` and the episode id at the start of each line."""

    def __init__(self, path: Path):
        super().__init__(path)
        self._starts = array("q")
        self._ids: dict[int, int] = {}  # episode id -> line index (its first line)

    def _clear(self) -> None:
        self._starts = array("q")
        self._ids = {}

    def _extend(self, offset: int, data: bytes) -> None:
        start = 0
        for newline in _NEWLINE.finditer(data):
            index = len(self._starts)
            self._starts.append(offset + start)
            match = _EPISODE_ID.match(data, start)
            if match is not None:
                self._ids.setdefault(int(match[1]), index)
            start = newline.end()

    def __len__(self) -> int:
        with self.lock:
            return len(self._starts)

    def line_of(self, episode: int) -> int | None:
        """The index of the line that commits ``episode``; None when none does."""
        with self.lock:
            return self._ids.get(episode)

    def lines(self, first: int, count: int) -> list[EpisodeLine]:
        """Lines ``first`` .. ``first + count - 1`` (those that exist), each parsed on its own."""
        with self.lock:
            last = min(len(self._starts), first + count)
            spans = [(i, self._starts[i], self._starts[i + 1] if i + 1 < len(self._starts) else self._scanned)
                     for i in range(max(first, 0), last)]
        if not spans:
            return []
        data = read_span(self.path, spans[0][1], spans[-1][2])
        base = spans[0][1]
        return [_episode_line(i, data[a - base:b - base]) for i, a, b in spans]


def _episode_line(index: int, raw: bytes) -> EpisodeLine:
    try:
        entry = json.loads(raw)
    except ValueError:
        return EpisodeLine(index, None, f"line {index + 1} is not valid JSON ({len(raw)} bytes)")
    if not isinstance(entry, dict) or type(entry.get("episode")) is not int:
        return EpisodeLine(index, None, f"line {index + 1} is not an episode entry (a JSON object with an integer "
                                        '"episode")')
    return EpisodeLine(index, entry)


class LogIndex(_FileIndex):
    """Where each episode's block of ``log.jsonl`` lies: from the end of the block before it (or the
    start of the file) to the end of its record line. Only complete record lines are indexed, so a
    block being written is not found until its record line is whole."""

    def __init__(self, path: Path):
        super().__init__(path)
        self._blocks: dict[int, tuple[int, int]] = {}
        self._block_start = 0  # where the next block starts: the end of the last record line

    def _clear(self) -> None:
        self._blocks = {}
        self._block_start = 0

    def _extend(self, offset: int, data: bytes) -> None:
        # a record line is the only line whose top-level object has "record" as its second key: find
        # the key's text (fast, in C), then check the line starts as a record line does
        at = data.find(_RECORD_KEY)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            match = _RECORD_LINE.match(data, start)
            end = data.index(b"\n", at) + 1
            if match is not None and match.end() == at + len(_RECORD_KEY):
                self._blocks.setdefault(int(match[1]), (self._block_start, offset + end))
                self._block_start = offset + end
            at = data.find(_RECORD_KEY, end)

    def block(self, episode: int) -> list[dict[str, Any]] | None:
        """Every line of ``episode``'s block, parsed; a line that is not JSON or not of this episode
        is ``{"corrupt": why}`` in its place. None when the log holds no complete block for it."""
        with self.lock:
            span = self._blocks.get(episode)
        if span is None:
            return None
        raw = read_span(self.path, *span)
        return [_log_line(episode, number, line) for number, line in enumerate(raw.split(b"\n")[:-1])]


def _log_line(episode: int, number: int, raw: bytes) -> dict[str, Any]:
    try:
        line = json.loads(raw)
    except ValueError:
        return {"corrupt": f"line {number + 1} of the episode's block is not valid JSON ({len(raw)} bytes)"}
    if not isinstance(line, dict) or line.get("episode") != episode:
        return {"corrupt": f"line {number + 1} of the episode's block does not belong to episode {episode}"}
    return line


class RunFiles:
    """A run folder's two indexes, refreshed together: ``episodes.jsonl`` first, since the writer
    appends an episode's block to the log before the line that commits it, so every episode the
    first index holds has its block in the log when the second is refreshed."""

    def __init__(self, folder: Path):
        self.log = LogIndex(folder / "log.jsonl")
        self.episodes = EpisodeIndex(folder / "episodes.jsonl")

    def refresh(self) -> None:
        self.episodes.refresh()
        self.log.refresh()
