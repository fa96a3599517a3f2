"""InvestorAgent's layered memory: four layers with their own decay, scored by
``recency + relevancy + importance``, with token-Jaccard relevancy (deterministic, no embeddings).

``recency = exp(-days_since / Q_layer)``; items whose recency falls below :data:`EVICT_BELOW`
are evicted. Retrieval takes the top ``k`` items per layer; ties keep the newer item first.
"""
from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_choice
from arena_envs.trading.news import STOP_WORDS

#: Decay windows in days (InvestorBench style).
LAYER_DECAY = {"short": 14.0, "mid": 90.0, "long": 365.0, "reflection": 365.0}
LAYERS = tuple(LAYER_DECAY)
EVICT_BELOW = 0.05
TOP_K = 5
_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")


def tokens(text: str) -> frozenset[str]:
    """Lower-case words and numbers of ``text``, stop words dropped."""
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a & b| / |a | b| (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def days_between(earlier: str, later: str) -> int:
    return (dt.date.fromisoformat(later) - dt.date.fromisoformat(earlier)).days


@dataclass(frozen=True)
class MemoryItem:
    id: str
    layer: str
    date: str
    text: str
    importance: float
    words: frozenset[str]


class LayeredMemory:
    """The agent's memory; cheap: each day scores only the items still alive."""

    def __init__(self) -> None:
        self.items: list[MemoryItem] = []
        self._count = 0

    def add(self, layer: str, date: str, text: str, importance: float) -> MemoryItem:
        check_choice("memory layer", layer, LAYER_DECAY)
        if not 0.0 <= importance <= 1.0:
            raise ValueError(f"memory importance must be in [0, 1], got {excerpt(importance)}")
        self._count += 1
        item = MemoryItem(f"{layer[0]}{self._count}", layer, date, text, float(importance), tokens(text))
        self.items.append(item)
        return item

    @staticmethod
    def recency(item: MemoryItem, today: str) -> float:
        return math.exp(-max(0, days_between(item.date, today)) / LAYER_DECAY[item.layer])

    def evict(self, today: str) -> list[MemoryItem]:
        """Drop (and return) the items whose recency is below :data:`EVICT_BELOW`."""
        kept: list[MemoryItem] = []
        gone: list[MemoryItem] = []
        for item in self.items:
            (kept if self.recency(item, today) >= EVICT_BELOW else gone).append(item)
        self.items = kept
        return gone

    def score(self, item: MemoryItem, today: str, query: frozenset[str]) -> float:
        return self.recency(item, today) + jaccard(item.words, query) + item.importance

    def retrieve(self, today: str, query: str | Iterable[str], k: int = TOP_K) -> dict[str, list[MemoryItem]]:
        """Evict, then the top ``k`` items of each layer for ``query`` (best first)."""
        self.evict(today)
        words = tokens(query) if isinstance(query, str) else tokens(" ".join(query))
        ranked = sorted(enumerate(self.items), key=lambda p: (-self.score(p[1], today, words), -p[0]))
        out: dict[str, list[MemoryItem]] = {layer: [] for layer in LAYERS}
        for _, item in ranked:
            if len(out[item.layer]) < k:
                out[item.layer].append(item)
        return out
