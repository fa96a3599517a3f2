"""The auction's layers inside the game: the rules produce their events (the environment keeps the
record), the texts read the rules' state through the read-only view, without the environment."""
from __future__ import annotations

from arena_envs import auction_v0
from arena_envs.auction import text as T
from arena_envs.auction.items import TABLE1_ITEMS
from arena_envs.auction.rules import WITHDRAW, AuctionRules


def _rules() -> AuctionRules:
    items = TABLE1_ITEMS[:2]
    estimates = [[item.true_value for item in items]] * 3
    return AuctionRules(items, [20000] * 3, estimates, lambda tied, ctx: tied[0], ["a", "b", "c"])


def test_rules_hand_their_events_to_the_caller():
    rules = _rules()
    opening = rules.take_events()
    assert [e["type"] for e in opening] == ["item_open"] and opening[0]["item"] == 0
    assert rules.take_events() == []  # taken once
    first = rules.decide(0, rules.price)
    assert [e["type"] for e in first] == ["decision"] and first[0]["amount"] == rules.price
    rules.decide(1, WITHDRAW)
    last = rules.decide(2, WITHDRAW)  # the round resolves: only bidder 0 left in it, so the hammer
    assert [e["type"] for e in last] == ["decision", "round_end", "hammer", "item_open"]
    assert last[2]["winner"] == "a" and rules.results == [(0, TABLE1_ITEMS[0].start_price)]
    assert rules.take_events() == []


def test_env_record_is_the_rules_events_in_order():
    env = auction_v0.raw_env(n_bidders=3, budgets=1_000_000)
    env.reset(seed=1)
    setup = env.record.events[0]
    items = [next(item for item in TABLE1_ITEMS if item.name == name) for name in setup["order"]]
    rules = AuctionRules(items, setup["budgets"], setup["estimates"], lambda tied, ctx: tied[0], env.possible_agents)
    expected = [setup, *rules.take_events()]
    while not all(env.terminations.values()):  # bidder_1 opens every item, the others withdraw
        agent = env.agent_selection
        bid = env.game.min_valid_bid() if agent == "bidder_1" else WITHDRAW
        env.step(0 if bid == WITHDRAW else 1)
        expected += rules.decide(env.seat_of[agent], bid)
    assert env.record.events == expected
    assert len(env.record.of_type("hammer")) == len(items)


def test_texts_read_the_view_alone():
    env = auction_v0.raw_env(n_bidders=3, desires=["maximize_items", "maximize_profit", "maximize_profit"])
    env.reset(seed=4)
    texts = T.AuctionTexts(env.game, T.PromptConfig(("maximize_items", "maximize_profit", "maximize_profit"), True))
    for agent in env.agents:
        assert texts.prompt(env.seat_of[agent], None) == env.observe(agent)["text"]
    assert T.OBJECTIVES["maximize_items"] in texts.prompt(0, None)
    assert T.OBJECTIVES["maximize_items"] not in texts.prompt(1, None)
    hidden = T.AuctionTexts(env.game, T.PromptConfig(("maximize_profit",) * 3, False))
    assert "Your status:" in texts.prompt(0, None) and "Your status:" not in hidden.prompt(0, None)
