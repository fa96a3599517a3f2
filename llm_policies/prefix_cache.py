"""Read a vLLM server's prefix-cache counters from its Prometheus ``/metrics`` endpoint.

vLLM (v1 engine, 0.32) counts, in prompt tokens, how many it looked up in its prefix cache
(``vllm:prefix_cache_queries_total``) and how many it found there (``vllm:prefix_cache_hits_total``).
Read the counters before and after some requests; the difference's :attr:`~PrefixCacheCounters.hit_rate`
is the share of those requests' prompt tokens served from the cache.
"""
from __future__ import annotations

from dataclasses import dataclass

import httpx

QUERIES = "vllm:prefix_cache_queries_total"
HITS = "vllm:prefix_cache_hits_total"


@dataclass(frozen=True)
class PrefixCacheCounters:
    """Prompt tokens looked up in the prefix cache and found there (summed over the engines)."""

    queries: float
    hits: float

    def __sub__(self, earlier: PrefixCacheCounters) -> PrefixCacheCounters:
        return PrefixCacheCounters(self.queries - earlier.queries, self.hits - earlier.hits)

    @property
    def hit_rate(self) -> float:
        """Hits over queries (0 when nothing was looked up)."""
        return self.hits / self.queries if self.queries else 0.0


def parse_counters(metrics_text: str) -> PrefixCacheCounters:
    """The two counters of a Prometheus text page (a ValueError when the page has neither)."""
    totals = {QUERIES: 0.0, HITS: 0.0}
    seen = set()
    for line in metrics_text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in totals:
            totals[name] += float(line.rsplit(" ", 1)[1])
            seen.add(name)
    if seen != set(totals):
        raise ValueError(f"the metrics page has no {' / '.join(sorted(set(totals) - seen))} counter "
                         "(not a vLLM v1 server, or its prefix caching is off)")
    return PrefixCacheCounters(totals[QUERIES], totals[HITS])


def read_counters(url: str, timeout: float = 10.0) -> PrefixCacheCounters:
    """The counters of the server at ``url`` (its OpenAI base ``http://host:port/v1`` or its root)."""
    response = httpx.get(url.removesuffix("/").removesuffix("/v1") + "/metrics", timeout=timeout)
    response.raise_for_status()
    return parse_counters(response.text)
