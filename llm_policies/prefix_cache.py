"""Read a vLLM server's prefix-cache counters from its Prometheus ``/metrics`` endpoint.

vLLM (v1 engine, 0.32) counts, in prompt tokens, how many it looked up in its prefix cache
(``vllm:prefix_cache_queries_total``) and how many it found there (``vllm:prefix_cache_hits_total``).
Read the counters before and after some requests; the difference's :attr:`~PrefixCacheCounters.hit_rate`
is the share of those requests' prompt tokens served from the cache. :func:`read_requests` reads
how many requests the server has answered (``vllm:request_success_total``), e.g. to see how a pool
of servers shared the work.
"""
from __future__ import annotations

from dataclasses import dataclass

from arena_envs.core.extras import needs_extra

with needs_extra("llm", __name__):
    import httpx

QUERIES = "vllm:prefix_cache_queries_total"
HITS = "vllm:prefix_cache_hits_total"
REQUESTS = "vllm:request_success_total"


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
    totals = parse_totals(metrics_text, (QUERIES, HITS))
    return PrefixCacheCounters(totals[QUERIES], totals[HITS])


def parse_totals(metrics_text: str, names: tuple[str, ...]) -> dict[str, float]:
    """Each counter of ``names`` summed over its label sets (engines, finish reasons); a ValueError
    when the page lacks one."""
    totals = dict.fromkeys(names, 0.0)
    seen = set()
    for line in metrics_text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in totals:
            totals[name] += float(line.rsplit(" ", 1)[1])
            seen.add(name)
    if seen != set(totals):
        raise ValueError(f"the metrics page has no {' / '.join(sorted(set(totals) - seen))} counter "
                         "(not a vLLM v1 server; the prefix-cache ones need prefix caching on)")
    return totals


def metrics_page(url: str, timeout: float = 10.0) -> str:
    """The ``/metrics`` page of the server at ``url`` (its OpenAI base ``http://host:port/v1`` or its root)."""
    response = httpx.get(url.removesuffix("/").removesuffix("/v1") + "/metrics", timeout=timeout)
    response.raise_for_status()
    return response.text


def read_counters(url: str, timeout: float = 10.0) -> PrefixCacheCounters:
    """The prefix-cache counters of the server at ``url``."""
    return parse_counters(metrics_page(url, timeout))


def read_requests(url: str, timeout: float = 10.0) -> int:
    """How many requests the server at ``url`` has answered (``vllm:request_success_total``, all
    finish reasons)."""
    return int(parse_totals(metrics_page(url, timeout), (REQUESTS,))[REQUESTS])
