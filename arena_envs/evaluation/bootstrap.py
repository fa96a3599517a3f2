"""A seeded percentile bootstrap interval over episodes, for any statistic of an evaluation's parts.

Each resample draws every part's episodes with replacement (as many as the part holds) and
recomputes the statistic, so a statistic over several parts (the tank battle's stages, Who is Spy's
two roles) keeps each part's weight. numpy is imported inside the function (``import arena_envs``
stays light).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Episodes = Mapping[str, Sequence[Mapping[str, Any]]]

RESAMPLES = 1000
LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    point: float  #: the statistic of the episodes as played
    low: float
    high: float
    episodes: int  #: all parts together
    #: why there is no interval (low = high = point), e.g. ``"one episode per part"``; empty when there is one
    degenerate: str = ""

    def format(self, digits: int = 2) -> str:
        """``"12.34 [10.00, 14.50]"``; a degenerate interval reads ``"12.34 [no interval: one episode per part]"``."""
        if math.isnan(self.point):
            return "–"
        if self.degenerate:
            return f"{self.point:.{digits}f} [no interval: {self.degenerate}]"
        return f"{self.point:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def bootstrap(episodes: Episodes, statistic: Callable[[Episodes], float], resamples: int = RESAMPLES,
              seed: int = 0, level: float = LEVEL) -> Interval:
    """The ``level`` percentile interval of ``statistic`` over ``resamples`` resamples of
    ``episodes`` (part -> entries), drawn from ``numpy.random.default_rng(seed)``.

    A resample whose statistic is not finite (e.g. a rate with no case in it) is left out; when
    every part holds at most one episode the interval is the point itself."""
    import numpy as np

    if resamples < 1 or not 0 < level < 1:
        raise ValueError(f"bootstrap needs resamples >= 1 and 0 < level < 1, got {resamples} and {level}")
    point = float(statistic(episodes))
    total = sum(len(entries) for entries in episodes.values())
    if all(len(entries) <= 1 for entries in episodes.values()):
        return Interval(point, point, point, total, "one episode per part" if len(episodes) > 1 else "one episode")
    if not math.isfinite(point):
        return Interval(point, point, point, total, "undefined")
    rng = np.random.default_rng(seed)
    parts = sorted(episodes)
    values = []
    for _ in range(resamples):
        sample = {}
        for part in parts:
            entries = episodes[part]
            picks = rng.integers(0, len(entries), len(entries)) if entries else ()
            sample[part] = [entries[i] for i in picks]
        value = float(statistic(sample))
        if math.isfinite(value):
            values.append(value)
    if not values:
        return Interval(point, point, point, total, "undefined on every resample")
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(point, float(low), float(high), total)
