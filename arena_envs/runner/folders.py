"""Default results folders that name their configuration, so that runs of other settings never meet.

    results/<env>[-<settings>]-<players>-<N>ep-seed<S>[-fixed][-<hash>]    arena run
    results/gamma[-<settings>]-<players>-<R>runs-seed<S>[-<hash>]          arena run gamma
    results/eval-<backend>-<model>-seed<S>[-quick][-<hash>]                arena eval
    results/play-<env>[-<settings>]-seat<N>-<opponents>-seed<S>[-<hash>]   arena play (then -2, -3...)

``<settings>`` are the ``--env-arg`` values as ``key=value`` joined by commas, in key order;
``<players>`` the specs joined by commas (``KIND:REST`` as ``KIND-REST``), a run of one spec as
``spec_xN``, and a spec naming a model file, folder or server (``sb3:runs/tank4``,
``vllm:Qwen/Qwen2.5-7B@http://...``) as its kind and the model's last path part (``sb3-tank4``,
``vllm-Qwen2.5-7B``); ``<backend>-<model>`` is such a part of the evaluated spec. Characters other than letters,
digits and ``._=+,-`` become ``_``, and a part longer than :data:`PART_LIMIT` characters is cut.
When anything was cut or replaced, ``<hash>`` (:data:`HASH_CHARS` hexadecimal digits of the
SHA-256 of the whole configuration) follows, so two configurations get two folders.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from itertools import groupby
from pathlib import Path
from typing import Any

from arena_envs.runner.policy_specs import parse_value

ROOT = Path("results")
#: The most characters of one part of a folder name (settings, players, a model's name).
PART_LIMIT = 48
HASH_CHARS = 8
_UNSAFE = re.compile(r"[^A-Za-z0-9._=+,-]+")


class _Name:
    """A folder name built part by part; ``exact`` once a part was cut or had characters replaced."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.exact = True

    def add(self, text: str, exact: bool = True) -> None:
        clean = _UNSAFE.sub("_", text)
        if len(clean) > PART_LIMIT:
            clean = clean[:PART_LIMIT].rstrip("._=+,-")
        self.exact = self.exact and exact and clean == text
        self.parts.append(clean)

    def path(self, identity: Any) -> Path:
        if not self.exact:
            digest = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()
            self.parts.append(digest[:HASH_CHARS])
        return ROOT / "-".join(self.parts)


def settings_text(kwargs: Mapping[str, Any]) -> str:
    """``key=value`` joined by commas, in key order (a string bare when it reads back as itself, else JSON)."""
    return ",".join(f"{key}={_value(kwargs[key])}" for key in sorted(kwargs))


def _value(value: Any) -> str:
    if isinstance(value, str) and parse_value(value) == value:
        return value
    return json.dumps(value, separators=(",", ":"), default=str)


def spec_text(spec: str) -> tuple[str, bool]:
    """A player's part of a name (``KIND:REST`` as ``KIND-REST``) and whether it holds the whole spec: a
    spec naming a model file, folder or server is shortened to its kind and the model's last path part."""
    kind, sep, rest = spec.partition(":")
    if not sep:
        return spec, True
    target = re.split(r"[?+]", rest, maxsplit=1)[0].partition("@")[0].rstrip("/")
    if ("/" in rest or "@" in rest) and target:
        return f"{kind}-{target.rpartition('/')[2]}", False
    return f"{kind}-{rest}", True


def players_text(players: Sequence[str]) -> tuple[str, bool]:
    """The players' part of a name (``rule_x2,random``) and whether every spec is written as itself."""
    parts, exact = [], True
    for spec, run in groupby(players):
        text, whole = spec_text(spec)
        exact = exact and whole
        count = len(list(run))
        parts.append(f"{text}_x{count}" if count > 1 else text)
    return ",".join(parts), exact


def run_folder(env: str, env_kwargs: Mapping[str, Any], players: Sequence[str], episodes: int, seed: int,
               rotate: bool = True) -> Path:
    """The default folder of ``arena run`` for this configuration."""
    name = _Name()
    name.add(env.replace(":", "."), exact=":" not in env)
    if env_kwargs:
        name.add(settings_text(env_kwargs))
    name.add(*players_text(players))
    name.add(f"{episodes}ep")
    name.add(f"seed{seed}")
    if not rotate:
        name.add("fixed")
    return name.path([env, dict(env_kwargs), list(players), episodes, seed, rotate])


def gamma_folder(players: Sequence[str], env_args: Mapping[str, Any], runs: int, seed: int) -> Path:
    """The default folder of ``arena run gamma``; ``env_args``: ``[GAME.]KEY`` -> value, as given."""
    name = _Name()
    name.add("gamma")
    if env_args:
        name.add(settings_text(env_args))
    name.add(*players_text(players))
    name.add(f"{runs}runs")
    name.add(f"seed{seed}")
    return name.path(["gamma", dict(env_args), list(players), runs, seed])


def eval_folder(spec: str, seed: int, quick: bool) -> Path:
    """The default folder of ``arena eval``: the backend (the spec's kind) and the model."""
    name = _Name()
    name.add("eval")
    name.add(*spec_text(spec))
    name.add(f"seed{seed}")
    if quick:
        name.add("quick")
    return name.path(["eval", spec, seed, quick])


def play_folder(env: str, env_kwargs: Mapping[str, Any], seat: int, opponents: Sequence[str], seed: int) -> Path:
    """The default folder of ``arena play`` for this game (``arena play`` takes the next free
    ``-2``, ``-3``... when it exists: each game is a folder of its own)."""
    name = _Name()
    name.add("play")
    name.add(env.replace(":", "."), exact=":" not in env)
    if env_kwargs:
        name.add(settings_text(env_kwargs))
    name.add(f"seat{seat}")
    if opponents:
        name.add(*players_text(opponents))
    name.add(f"seed{seed}")
    return name.path(["play", env, dict(env_kwargs), seat, list(opponents), seed])
