"""Reading a record that may hold anything: bounded text, finite numbers or None, lists, seat orders."""
from __future__ import annotations

import math
from typing import Any

#: the most characters of one string a view holds (speeches, names)
MAX_TEXT = 2000
#: the most entries of one list a view holds (items, rounds, players, votes)
MAX_ITEMS = 1000


def text(value: Any, limit: int = MAX_TEXT) -> str:
    """``value`` as a string (None: ""), cut to ``limit`` characters with an ellipsis."""
    out = "" if value is None else value if isinstance(value, str) else str(value)
    return out if len(out) <= limit else out[:limit - 1] + "…"


def number(value: Any) -> float | int | None:
    """A finite int or float as it is; anything else (bools, strings, NaN, infinities) None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def events_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's events that are objects."""
    return [e for e in as_list(record.get("events")) if isinstance(e, dict)]


def seat_order(entry: dict[str, Any], record: dict[str, Any]) -> list[str]:
    """The game's agents in seat order: the entry's ``seats`` (written in the environment's agent
    order), else the record's per-agent metrics."""
    seats = entry.get("seats")
    if not isinstance(seats, dict) or not seats:
        metrics = record.get("metrics")
        seats = metrics.get("agents") if isinstance(metrics, dict) else None
    if not isinstance(seats, dict):
        return []
    return [text(agent, 80) for agent in list(seats)[:MAX_ITEMS]]


def obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}
