"""What the model's decisions cost, read from the step log of each results folder.

An LLM policy's trace (``log.jsonl``, the ``trace`` of each decision line) lists the calls of the
decision, each with its prompt tokens, the prompt tokens served from the server's prefix cache
where the backend reports them, completion tokens, latency and the requests it took. Over a
subject's evaluated seats: its LLM decisions, calls, tokens per decision and the call latency's
median and 95th percentile. Policies without calls (random, rule) have no telemetry.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena_envs.runner.results import iter_log


@dataclass(frozen=True)
class Telemetry:
    decisions: int  #: decisions (and end-of-episode lines) that made at least one call
    calls: int
    prompt_tokens: int
    cached_tokens: int | None  #: None when a call's backend did not report it
    completion_tokens: int
    requests: int  #: HTTP requests, retried failures included
    latency_p50: float | None  #: seconds per call
    latency_p95: float | None

    @property
    def tokens_per_decision(self) -> float:
        return (self.prompt_tokens + self.completion_tokens) / self.decisions

    def to_json(self) -> dict[str, Any]:
        return {"decisions": self.decisions, "calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "cached_tokens": self.cached_tokens, "completion_tokens": self.completion_tokens,
                "requests": self.requests, "tokens_per_decision": self.tokens_per_decision,
                "latency_p50_s": self.latency_p50, "latency_p95_s": self.latency_p95}


def percentile(values: list[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) of ``values``, linear between the nearest ranks; None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def telemetry(folders: Mapping[Path, Iterable[str]]) -> Telemetry | None:
    """The telemetry of the seats ``folders[folder]`` over those results folders (a folder not
    played yet is skipped); None when none of their decisions made a call."""
    decisions = calls = prompt = completion = requests = 0
    cached: int | None = 0
    latencies: list[float] = []
    for folder, agents in folders.items():
        if not (folder / "log.jsonl").exists():
            continue
        wanted = set(agents)
        for block in iter_log(folder):
            for step in block.steps:
                trace = step.get("trace")
                made = trace.get("calls") if isinstance(trace, dict) and step.get("agent") in wanted else None
                if not made:
                    continue
                decisions += 1
                for call in made:
                    calls += 1
                    prompt += int(call.get("prompt_tokens") or 0)
                    completion += int(call.get("completion_tokens") or 0)
                    requests += int(call.get("attempts") or 1)
                    reported = call.get("cached_tokens")
                    cached = None if cached is None or not isinstance(reported, int) else cached + reported
                    if isinstance(call.get("latency_s"), (int, float)):
                        latencies.append(float(call["latency_s"]))
    if not decisions:
        return None
    return Telemetry(decisions, calls, prompt, cached, completion, requests, percentile(latencies, 50),
                     percentile(latencies, 95))
