"""Where a run's numbers come from: the code, the prompts and each player, recorded in ``run.json``.

Each time a results folder is opened to play (created, or resumed) the runner appends one
*session* to ``run.json``'s ``sessions``:

* ``package``, ``commit``: this package's version and, when it runs from a git checkout, the commit
  (with ``+dirty`` when files differ from it);
* ``prompt_sha256``: a hash of the game's prompt texts (every seat's text observation at a reset
  with seed 0 under the run's settings; :func:`prompt_hash`), so runs whose prompts differ, by code
  or settings, show it;
* ``players``: per player label, what its policy says of itself (``Policy.provenance()``: an LLM
  policy's backend, served model and what its server reports, weights and their config hash,
  sampling settings, the grammar engine in effect).

A folder's ``config`` is what must match to resume it; sessions only accumulate.
"""
from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from pettingzoo import AECEnv

from arena_envs.core.policy import Policy
from arena_envs.runner.seeding import episode_seeds

#: Seconds ``git`` may take to name the commit.
GIT_TIMEOUT = 5.0
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def package_version() -> str:
    try:
        return metadata.version("arena-envs")
    except metadata.PackageNotFoundError:
        return "not installed"


@lru_cache(maxsize=1)
def source_commit() -> str | None:
    """The checkout's commit (``+dirty`` when its tracked files changed); None outside a git checkout."""
    if not (PACKAGE_ROOT / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(PACKAGE_ROOT), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=GIT_TIMEOUT)
        changed = subprocess.run(["git", "-C", str(PACKAGE_ROOT), "status", "--porcelain", "--untracked-files=no"],
                                 capture_output=True, text=True, timeout=GIT_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+dirty" if changed.returncode == 0 and changed.stdout.strip() else "")


def prompt_hash(make_env: Callable[[], AECEnv], run_seed: int = 0) -> str | None:
    """The SHA-256 of every seat's text observation at a reset with seed 0 (None: no text). An
    environment that plays only the episodes of its run (the tank battle's paper layouts) is reset
    with the seed of the run's first episode instead."""
    env = make_env()
    try:
        try:
            env.reset(seed=0)
        except ValueError:
            env.reset(seed=episode_seeds(run_seed, 0, len(env.possible_agents)).env)
        raw = env.unwrapped
        texts = []
        for agent in raw.possible_agents:
            observation = raw.observe(agent)
            text = observation.get("text") if isinstance(observation, dict) else observation
            if isinstance(text, str):
                texts.append(f"{agent}\n{text}")
    finally:
        env.close()
    return hashlib.sha256("\n\n".join(texts).encode("utf-8")).hexdigest() if texts else None


def describe(policy: Policy) -> dict[str, Any]:
    """``policy.provenance()``, with its class; a failure to describe is recorded, never raised."""
    try:
        told = policy.provenance()
    except Exception as err:  # a description must not stop a run
        told = {"describe_failed": f"{type(err).__name__}: {err}"}
    return {"class": f"{type(policy).__module__}.{type(policy).__qualname__}", **told}


def session(labels: Sequence[str], policies: Sequence[Policy], make_env: Callable[[], AECEnv],
            run_seed: int = 0) -> dict[str, Any]:
    """The provenance of a session that plays with ``policies`` (one per player label)."""
    return {"started": datetime.now(timezone.utc).isoformat(timespec="seconds"), "package": package_version(),
            "commit": source_commit(), "prompt_sha256": prompt_hash(make_env, run_seed),
            "players": {label: describe(policy) for label, policy in zip(labels, policies)}}
