"""Files the repository does not ship, found beside the checkout: the papers' specs tables
(``ARENA_SPECS``, else ``../shared/specs``) and their published logs (``ARENA_REFERENCE_DATA``, else
``../shared/reference_data``).

A test that needs one calls ``require``: without the folder it skips, with one fixed reason per
folder (so pytest folds the skips into one summary line, and conftest adds a line of its own). When
``CI`` is set, conftest turns every skip into a failure: there, nothing may skip.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[1]


def ci_set() -> bool:
    """True when the caller set ``CI`` to anything but empty, 0, false or no (CI services set ``true``)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@dataclass(frozen=True)
class OutsideFolder:
    variable: str  # the environment variable that points to the folder
    name: str  # its name beside the checkout, under shared/
    what: str

    @property
    def path(self) -> Path:
        if os.environ.get(self.variable):
            return Path(os.environ[self.variable])
        # a checkout, or a worktree inside a folder beside shared/
        candidates = [_ROOT.parent / "shared" / self.name, _ROOT.parent.parent / "shared" / self.name]
        return next((p for p in candidates if p.is_dir()), candidates[0])

    @property
    def reason(self) -> str:
        return f"{self.what} not found at {self.path} (not in the repository; set {self.variable} to the folder)"


SPECS = OutsideFolder("ARENA_SPECS", "specs", "the papers' specs tables")
REFERENCE_DATA = OutsideFolder("ARENA_REFERENCE_DATA", "reference_data", "the papers' published logs")
FOLDERS = (SPECS, REFERENCE_DATA)


def require(folder: OutsideFolder) -> Path:
    """The folder; skip the calling test without it."""
    path = folder.path
    if not path.is_dir():
        pytest.skip(folder.reason)
    return path
