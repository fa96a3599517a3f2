"""The JSON episode record every environment keeps (the paper's log).

Events are plain dicts with a ``type`` and JSON-safe fields, appended in the order they happen.
Nothing nondeterministic (time, latency) goes in, so equal seeds and actions give equal records.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arena_envs.core.answers import excerpt

#: How deep a value is copied into a record (deeper parts: their excerpt).
MAX_RECORD_DEPTH = 16


class EpisodeRecord:
    """Append-only list of events plus the episode's identity (environment, seed, configuration)."""

    __slots__ = ("config", "env", "events", "seed")

    def __init__(self, env: str, seed: int | None, config: dict[str, Any]):
        self.env = env
        self.seed = seed
        self.config = config
        self.events: list[dict[str, Any]] = []

    def add(self, type_: str, **fields: Any) -> dict[str, Any]:
        event = {"type": type_, **fields}
        self.events.append(event)
        return event

    def of_type(self, type_: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == type_]

    def to_dict(self) -> dict[str, Any]:
        return {"env": self.env, "seed": self.seed, "config": self.config, "events": list(self.events)}


def jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-safe copy of any value given as an action, for a record: NumPy values become Python
    values; a part nested deeper than :data:`MAX_RECORD_DEPTH`, an integer of more than 64 bits (no
    action space has one) and any other object become their :func:`~arena_envs.core.answers.excerpt`.
    Never raises; non-finite floats stay (the results folder writes them as ``null``)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, float, str)):
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= 64 else excerpt(value)
    if depth < MAX_RECORD_DEPTH and isinstance(value, dict):
        return {k if isinstance(k, str) else excerpt(k): jsonable(v, depth + 1) for k, v in value.items()}
    if depth < MAX_RECORD_DEPTH and isinstance(value, (list, tuple)):
        return [jsonable(v, depth + 1) for v in value]
    return excerpt(value)
