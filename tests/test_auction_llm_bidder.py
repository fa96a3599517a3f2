"""The AucArena LLM bidder on a scripted backend (no model): its plan, bids and belief updates read
the auction through the environment's texts and read-only state."""
from __future__ import annotations

import asyncio
import json
import re

from arena_envs import auction_v0
from baselines.auction_rule import AlwaysWithdraw
from llm_policies.auction_bidder import AucArenaBidder
from llm_policies.types import ChatRequest, ChatResponse

MIN_BID = re.compile(r"Your minimum valid bid: \$(\d+)")


class ScriptedBackend:
    """Bids the minimum valid bid whenever it may bid; answers JSON requests with a fixed status."""

    label = "scripted"

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def generate(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        constraint = request.constraint
        assert constraint is not None  # the bidder is guided
        if constraint.kind == "json":
            text = json.dumps({"remaining_budget": 0, "total_profits": {}, "winning_bids": {}})
        elif constraint.kind == "choice":
            text = "I'm out!"
        else:
            text = f"I bid ${MIN_BID.findall(request.messages[-1]['content'])[-1]}!"
        return ChatResponse(text, prompt_tokens=1, completion_tokens=1)

    def close(self) -> None:
        pass


def test_llm_bidder_reads_the_hammers_through_the_env_texts():
    env = auction_v0.env(n_bidders=3, budgets=100_000)
    raw = env.unwrapped
    backend = ScriptedBackend()
    bidder = AucArenaBidder(backend, cot=False)
    policies = {"bidder_1": bidder, "bidder_2": AlwaysWithdraw(), "bidder_3": AlwaysWithdraw()}
    env.reset(seed=3)
    for agent, policy in policies.items():
        policy.bind(raw)
        policy.reset(agent, 0)
    for agent in env.agent_iter():
        observation, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            if agent == "bidder_1":  # the belief update after the last hammer
                asyncio.run(bidder.afinish(observation, info))
            action = None
        elif agent == "bidder_1":
            action = asyncio.run(bidder.aact(observation, info))
        else:
            action = policies[agent].act(observation, info)
        env.step(action)

    items = raw.rules.items
    assert raw.rules.results == [(0, item.start_price) for item in items]  # the others always withdrew
    last_messages = [r.messages[-1]["content"] for r in backend.requests]
    beliefs = [text for text in last_messages if "has just been auctioned" in text]
    for item in items:
        hammer = (f"Sold! {item.name} to You (Bidder 1) at ${item.start_price}! The true value for {item.name} "
                  f"is ${item.true_value}. Congratulations! You won {item.name} at ${item.start_price}.")
        assert sum(hammer in p for p in beliefs) == 1, item.name
    checks = raw.record.of_type("belief_check")
    assert len(beliefs) == len(items)
    assert sorted({c["item"] for c in checks}) == list(range(len(items)))
    assert [p["kind"] for p in raw.record.of_type("plan")] == ["initial"] + ["replan"] * (len(items) - 1)
