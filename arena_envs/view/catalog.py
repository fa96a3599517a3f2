"""What ``arena view`` shows: the runs, evaluations and report cards found under the given folders.

Contract: :func:`find` walks each folder (at most :data:`MAX_DEPTH` levels below it, hidden folders
and symbolic links to folders skipped, at most :data:`MAX_FOLDERS` folders in all) and names:

* a **run**: a folder holding ``run.json`` and ``episodes.jsonl`` (``arena run``'s results folder);
  the walk does not go below it;
* an **evaluation**: a folder holding ``eval.json`` (``arena eval``'s; its parts are runs below it);
* a **report card**: a folder holding ``report.md``, ``card.json`` or ``report_*.png``.

Only regular files count (a symbolic link named ``report_x.png`` or ``run.json`` is ignored), so a
shared folder cannot make the viewer read or serve a file elsewhere on the disk.

Each is known by an id made from its resolved path (a short hash), which the pages use in their
links: a URL names an id, never a path, so nothing outside the catalog can be served. Only the
files the catalog lists are read. :class:`NotResults` when a folder holds none of the three;
``PermissionError`` when a given folder cannot be listed.

A run is **live** when its ``.lock`` names the process id of a running process and not every
planned episode is committed: the writer writes its pid into the lock file when it takes the lock,
and the OS releases the lock, not the file, when the writer dies. The viewer never takes the lock
(it must not block a writer) and reads the pid with an ordinary read. Caveats: a pid reused by an
unrelated process after the writer died reads as live until the run's next writer or a reboot; a
folder written on another machine (a network file system) is judged by this machine's processes.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena_envs.runner.results import LOCK_FILE

MAX_DEPTH = 8
MAX_FOLDERS = 20_000
CARD_FILES = ("report.md", "card.json")


class NotResults(ValueError):
    """A folder given to ``arena view`` that holds no run, evaluation or report card."""


def folder_id(path: Path) -> str:
    """The id of a catalogued folder: 12 hex digits of the SHA-256 of its resolved path."""
    return hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:12]


def card_id(path: Path) -> str:
    """The id of the report card in folder ``path`` (an evaluation's folder holds both: the ids differ)."""
    return "c" + folder_id(path)[1:]


def read_json(path: Path) -> tuple[Any, str | None]:
    """(the JSON value of ``path``, None), or (None, why it cannot be read) for a missing, unreadable or
    malformed file."""
    try:
        return json.loads(path.read_text(encoding="utf-8")), None
    except FileNotFoundError:
        return None, f"{path.name} is missing"
    except (OSError, UnicodeDecodeError, ValueError) as err:
        return None, f"{path.name} cannot be read: {err}"


@dataclass
class Found:
    """What the walk found: its id, its folder and the label the index shows."""

    id: str
    path: Path
    label: str


@dataclass
class Run(Found):
    """A results folder; ``config`` is ``run.json``'s (``{}`` with ``error`` when it cannot be read)."""

    config: dict[str, Any]
    error: str | None = None
    evaluation: str | None = None  # the id of the evaluation it is a part of

    @property
    def env(self) -> str:
        return str(self.config.get("env", "?"))

    @property
    def env_kwargs(self) -> dict[str, Any]:
        kwargs = self.config.get("env_kwargs")
        return kwargs if isinstance(kwargs, dict) else {}

    @property
    def planned(self) -> int | None:
        episodes = self.config.get("episodes")
        return episodes if type(episodes) is int else None


@dataclass
class Evaluation(Found):
    """An ``arena eval`` folder: ``manifest`` is its ``eval.json``; ``runs`` the ids of its parts."""

    manifest: dict[str, Any]
    error: str | None = None
    runs: list[str] = field(default_factory=list)
    card: str | None = None  # the id of its report card


@dataclass
class Card(Found):
    """A report card: its ``report.md`` text file, ``card.json`` and figures (the paths found)."""

    report: Path | None
    card_json: Path | None
    figures: list[Path]


@dataclass
class Catalog:
    roots: list[Path]
    runs: dict[str, Run] = field(default_factory=dict)
    evaluations: dict[str, Evaluation] = field(default_factory=dict)
    cards: dict[str, Card] = field(default_factory=dict)


def find(roots: Iterable[str | os.PathLike[str]]) -> Catalog:
    """The catalog of ``roots`` (see the module docstring)."""
    catalog = Catalog([Path(root) for root in roots])
    budget = [MAX_FOLDERS]
    for root in catalog.roots:
        if not root.is_dir():
            raise NotADirectoryError(20 if root.exists() else 2, "not a folder" if root.exists() else
                                     "no such folder", str(root))
        os.listdir(root)  # PermissionError here: the folder given cannot be read
        before = len(catalog.runs) + len(catalog.evaluations) + len(catalog.cards)
        _walk(root, root, 0, catalog, budget, None)
        if len(catalog.runs) + len(catalog.evaluations) + len(catalog.cards) == before:
            raise NotResults(f"{root} holds no results folder (run.json and episodes.jsonl), evaluation (eval.json) "
                             f"or report card (report.md, card.json) within {MAX_DEPTH} levels; give the folder "
                             "`arena run` or `arena eval` wrote (default: results/)")
    return catalog


def _label(root: Path, path: Path) -> str:
    """How a page names ``path``: from the name of the folder given (``results/auction_v0-...``)."""
    return str(Path(root.resolve().name or str(root)) / path.relative_to(root))


def _walk(root: Path, folder: Path, depth: int, catalog: Catalog, budget: list[int], evaluation: str | None) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        return
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return  # a subfolder that cannot be read is left out
    names = {entry.name for entry in entries if _regular_file(entry)}  # a link to elsewhere is never read
    label = _label(root, folder)
    if "run.json" in names and "episodes.jsonl" in names:
        _add_run(catalog, folder, label, evaluation)
        return
    if "eval.json" in names:
        evaluation = _add_evaluation(catalog, folder, label)
    figures = [folder / name for name in sorted(names) if name.startswith("report_") and name.endswith(".png")]
    if figures or any(name in names for name in CARD_FILES):
        _add_card(catalog, folder, label, names, figures, evaluation)
    if depth >= MAX_DEPTH:
        return
    for entry in entries:
        if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
            _walk(root, Path(entry.path), depth + 1, catalog, budget, evaluation)


def _regular_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _add_run(catalog: Catalog, folder: Path, label: str, evaluation: str | None) -> None:
    key = folder_id(folder)
    stored, error = read_json(folder / "run.json")
    config = stored.get("config") if isinstance(stored, dict) else None
    if error is None and not isinstance(config, dict):
        error = "run.json holds no run configuration"
    catalog.runs.setdefault(key, Run(key, folder, label, config if isinstance(config, dict) else {}, error,
                                     evaluation))
    if evaluation is not None and key not in catalog.evaluations[evaluation].runs:
        catalog.evaluations[evaluation].runs.append(key)


def _add_evaluation(catalog: Catalog, folder: Path, label: str) -> str:
    key = folder_id(folder)
    manifest, error = read_json(folder / "eval.json")
    if error is None and not isinstance(manifest, dict):
        error = "eval.json is not a JSON object"
    catalog.evaluations.setdefault(key, Evaluation(key, folder, label, manifest if isinstance(manifest, dict) else {},
                                                   error))
    return key


def _add_card(catalog: Catalog, folder: Path, label: str, names: set[str], figures: list[Path],
              evaluation: str | None) -> None:
    key = card_id(folder)
    catalog.cards.setdefault(key, Card(key, folder, label, folder / "report.md" if "report.md" in names else None,
                                       folder / "card.json" if "card.json" in names else None, figures))
    if evaluation is not None and catalog.evaluations[evaluation].path == folder:
        catalog.evaluations[evaluation].card = key


def writer_pid(folder: Path) -> int | None:
    """The process id written in ``folder/.lock`` (None: no lock file, or no pid in it); read, never locked."""
    try:
        with open(folder / LOCK_FILE, "rb") as f:
            text = f.read(32).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def process_alive(pid: int) -> bool:
    """Whether a process with id ``pid`` exists (signal 0 checks, sends nothing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    except OverflowError:
        return False
    return True


def is_live(run: Run, committed: int) -> bool:
    """Whether a process is writing ``run`` now (see the module docstring): its lock names a running
    process and fewer than its planned episodes are committed."""
    if run.planned is not None and committed >= run.planned:
        return False
    pid = writer_pid(run.path)
    return pid is not None and pid > 0 and process_alive(pid)
