"""The JSON episode record every environment keeps (the paper's log).

Events are plain dicts with a ``type`` and JSON-safe fields, appended in the order they happen.
Nothing nondeterministic (time, latency) goes in, so equal seeds and actions give equal records.
"""
from __future__ import annotations

from typing import Any


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
