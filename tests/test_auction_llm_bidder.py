"""The AucArena LLM bidder on a scripted backend (no model): its plan, bids and belief updates read
the auction through the environment's texts and read-only state."""
from __future__ import annotations

import asyncio
import json
import re

from arena_envs import auction_v0
from baselines.auction.rule import AlwaysWithdraw
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
    backend = ScriptedBackend()
    raw, _ = play({"n_bidders": 3, "budgets": 100_000, "item_order": "random"}, {"cot": False}, backend,
                  others=AlwaysWithdraw, seed=3)

    items = raw.game.items
    assert raw.game.results == [(0, item.start_price) for item in items]  # the others always withdrew
    last_messages = [r.messages[-1]["content"] for r in backend.requests]
    beliefs = [text for text in last_messages if "has just been auctioned" in text]
    for item in items:
        hammer = (f"Sold! {item.name} to Bidder 1 at ${item.start_price}! The true value for {item.name} "
                  f"is ${item.true_value}. Congratulations! You won {item.name} at ${item.start_price}.")
        assert sum(hammer in p for p in beliefs) == 1, item.name
    checks = raw.record.of_type("belief_check")
    assert len(beliefs) == len(items)
    assert sorted({c["item"] for c in checks}) == list(range(len(items)))
    assert [p["kind"] for p in raw.record.of_type("plan")] == ["initial"] + ["replan"] * (len(items) - 1)


# ---------------------------------------------------------------------------------------------- the original's agent

class ConversationBackend:
    """Bids the starting price once per item, then withdraws; answers JSON requests with ``belief(request)``."""

    label = "scripted"

    def __init__(self, belief=None) -> None:
        self.requests: list[ChatRequest] = []
        self.belief = belief or (lambda request: {"remaining_budget": 0, "total_profits": {}, "winning_bids": {}})

    async def generate(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        last = request.messages[-1]["content"]
        if is_belief(request):
            belief = self.belief(request)
            text = belief if isinstance(belief, str) else "Notes first. " + json.dumps(belief)
        elif not is_bid(request):
            text = "A plan. {}"
        elif "Up now:" in last:
            price = re.search(r"starting at \$(\d+)", last).group(1)
            text = f"It is cheap; my reasons are many. I bid ${price}!"
        else:
            text = "Too expensive now. I'm out!"
        return ChatResponse(text, prompt_tokens=1, completion_tokens=1)

    def close(self) -> None:
        pass


def play(env_kwargs, bidder_kwargs, backend, others=None, seed=0):
    """One episode: the bidder in seat 1, ``others`` (default: the rule bidder) in seats 2 and 3."""
    from baselines.auction.rule import RuleBidder
    env = auction_v0.env(**{"item_order": "given", **env_kwargs})
    raw = env.unwrapped
    bidder = AucArenaBidder(backend, **bidder_kwargs)
    policies = {"bidder_1": bidder, "bidder_2": (others or RuleBidder)(), "bidder_3": (others or RuleBidder)()}
    env.reset(seed=seed)
    for agent, policy in policies.items():
        policy.bind(raw)
        policy.reset(agent, 0)
    for agent in env.agent_iter():
        observation, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            if agent == "bidder_1":
                asyncio.run(bidder.afinish(observation, info))
            action = None
        elif agent == "bidder_1":
            action = asyncio.run(bidder.aact(observation, info))
        else:
            action = policies[agent].act(observation, info)
        env.step(action)
    return raw, bidder


def is_bid(request):
    last = request.messages[-1]["content"]
    return any(mark in last for mark in ("Up now:", "The auctioneer now says", "reconsider your decision"))


def is_belief(request):
    return "has just been auctioned" in request.messages[1]["content"]


def bid_requests(backend):
    return [r for r in backend.requests if is_bid(r)]


def test_paper_prompt_replays_the_items_conversation_as_chat_messages():
    backend = ConversationBackend()
    play({"prompt": "paper"}, {"cot": False, "guided": False}, backend)
    requests = bid_requests(backend)
    first, second = requests[0].messages, requests[1].messages
    assert [m["role"] for m in first] == ["system", "user", "assistant", "user"]  # system, plan, the turn
    assert "Up now: Widget A" in first[-1]["content"] and "Give your reasons first" in first[-1]["content"]
    # round 2 of Widget A: the first turn and the whole first reply come back as chat messages
    assert second[:4] == first
    assert second[4] == {"role": "assistant", "content": "It is cheap; my reasons are many. I bid $1000!"}
    assert second[5]["content"].startswith('The auctioneer now says: "Thanks! The bids of round 1 of this item:')
    # the next item starts a fresh conversation after the new plan
    nxt = next(r.messages for r in requests if "Up now: Gadget B" in r.messages[-1]["content"])
    assert [m["role"] for m in nxt] == ["system", "user", "assistant", "user"]
    assert all("Widget A" not in m["content"] for m in nxt[3:])


def test_paper_prompt_guided_keeps_the_original_answer_format():
    backend = ConversationBackend()
    play({"prompt": "paper"}, {"cot": True, "guided": True}, backend)
    think = bid_requests(backend)[0]
    assert think.constraint is None  # the reasoning call is free; the decision is read under the constraint
    assert 'saying "I bid $xxx!"' in think.messages[-1]["content"]
    guided = AucArenaBidder(backend, cot=False)
    raw = auction_v0.env(prompt="paper").unwrapped
    raw.reset(seed=0)
    guided.bind(raw)
    guided.reset("bidder_1", 0)
    asyncio.run(guided.aact(raw.observe("bidder_1"), raw.infos["bidder_1"]))
    request = backend.requests[-1]
    assert request.constraint is not None and request.constraint.kind == "regex"
    assert "Give your reasons first" in request.messages[-1]["content"]


def test_plan_none_in_paper_mode_never_shows_estimates_or_the_priced_item_list():
    backend = ConversationBackend()
    play({"prompt": "paper"}, {"plan": "none", "cot": False, "guided": False}, backend)
    for request in bid_requests(backend):
        text = "\n".join(m["content"] for m in request.messages)
        assert "estimated value" not in text and "starting price is" not in text and "items, auctioned" not in text
    openings = [r.messages for r in bid_requests(backend) if "Up now:" in r.messages[-1]["content"]]
    assert len(openings) == 10
    assert all(m[-1]["content"].startswith("Your status in this auction so far (JSON):") for m in openings)
    assert [m["role"] for m in openings[0]] == ["system", "user"]


def belief_requests(backend):
    return [r for r in backend.requests if is_belief(r)]


def test_a_wrong_belief_gets_four_corrections_and_four_checks_per_item():
    backend = ConversationBackend()  # always the same wrong status
    raw, bidder = play({"prompt": "paper"}, {"cot": False}, backend)
    checks = raw.record.of_type("belief_check")
    assert [sum(c["item"] == i and c["agent"] == "bidder_1" for c in checks) for i in range(10)] == [4] * 10
    first_item = [r for r in belief_requests(backend) if "Item Widget A has" in r.messages[1]["content"]]
    assert len(first_item) == 5 and len(first_item[-1].messages) == 2 + 2 * 4
    assert "Bidder 1" in first_item[0].messages[1]["content"]
    assert "You (Bidder 1)" not in first_item[0].messages[1]["content"]
    assert bidder.status == {"remaining_budget": 0, "total_profits": {}, "winning_bids": {}}  # adopted, unchecked


def test_without_correct_belief_only_malformed_json_is_sent_back():
    backend = ConversationBackend()
    raw, _ = play({}, {"cot": False, "correct_belief": False}, backend)
    assert len(belief_requests(backend)) == 10 and len(raw.record.of_type("belief_check")) == 10
    backend = ConversationBackend(belief=lambda request: "no json here")
    raw, bidder = play({}, {"cot": False, "correct_belief": False, "guided": False}, backend)
    assert len(belief_requests(backend)) == 50 and len(raw.record.of_type("belief_check")) == 40
    assert raw.belief_checks["bidder_1"]["sanity_errors"] == 40 and bidder.status == {}


def test_beliefs_caught_up_late_are_checked_against_their_own_item():
    """A bidder who cannot afford anything is never asked (automatic withdrawals): its ten belief
    updates all come at the end, each checked against the state right after its item."""
    holder = {}

    def truth(request):
        raw = holder["env"]
        name = re.search(r"Item (.+) has just been auctioned", request.messages[1]["content"]).group(1)
        index = [i.name for i in raw.game.items].index(name)
        status = raw.ground_truth_status(after_item=index)
        return dict(status, remaining_budget=status["remaining_budget"]["Bidder 1"])

    backend = ConversationBackend(belief=truth)
    original_env = auction_v0.env

    def capture(**kwargs):
        env = original_env(**kwargs)
        holder["env"] = env.unwrapped
        return env

    auction_v0.env = capture
    try:
        raw, _ = play({"budgets": [500, 20000, 20000], "auto_withdraw_unaffordable": True}, {"cot": False}, backend)
    finally:
        auction_v0.env = original_env
    assert not bid_requests(backend)  # never asked to bid
    checks = [c for c in raw.record.of_type("belief_check") if c["agent"] == "bidder_1"]
    assert [c["item"] for c in checks] == list(range(10)) and all(not c["errors"] for c in checks)
    assert raw.belief_checks["bidder_1"]["other_fail"] == 0 and raw.belief_checks["bidder_1"]["other_pass"] == 40
