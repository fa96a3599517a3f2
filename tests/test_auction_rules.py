"""Spec §8.1-8.2: items, orders and bidding rules of auction_v0."""
import pickle

import numpy as np
import pytest

from arena_envs import auction_v0
from arena_envs.auction.items import POOL_ITEMS, TABLE1_ITEMS
from baselines.auction.rule import AlwaysWithdraw, RandomValid, RuleBidder, TruthfulMinRaise
from tests.play_helpers import play

ITEM = [{"name": "Widget A", "start_price": 1000, "true_value": 2000}]
TWO_ITEMS = ITEM + [{"name": "Gadget B", "start_price": 1000, "true_value": 2000}]


def step_all(env, *answers):
    for answer in answers:
        env.step(answer)


def make(seed=0, **kwargs):
    kwargs.setdefault("items", ITEM)
    kwargs.setdefault("item_order", "given")
    env = auction_v0.env(**kwargs)
    env.reset(seed=seed)
    return env


def test_every_pool_item_has_its_own_description():
    descriptions = [item.desc for item in POOL_ITEMS]
    assert len(POOL_ITEMS) == 26 and len(set(descriptions)) == 26
    for item in POOL_ITEMS[10:]:  # ids 11-26: a sentence naming the kind of thing ("Tool K" -> "...tool...")
        assert item.desc[0].isupper() and item.name.split()[0].lower() in item.desc.lower(), item
        assert "of fine make" not in item.desc
    assert {i.name: i.desc for i in TABLE1_ITEMS} == {i.name: i.desc for i in POOL_ITEMS[:10]}


def test_default_items():
    prices = sorted(item.start_price for item in TABLE1_ITEMS)
    assert prices == [1000, 1000, 2000, 2000, 3000, 3000, 4000, 4000, 5000, 5000]
    assert [i.name for i in TABLE1_ITEMS][:3] == ["Widget A", "Gadget B", "Thingamajig C"]
    assert all(i.true_value == 2 * i.start_price for i in (*TABLE1_ITEMS, *POOL_ITEMS))
    assert sum(i.start_price for i in TABLE1_ITEMS) == 30000
    assert sum(i.true_value for i in TABLE1_ITEMS) == 60000
    expensive = [i.name for i in POOL_ITEMS[:20] if i.start_price == 5000]
    assert expensive == ["Equipment E", "Mechanism J", "Machine P", "Element R"]
    assert sum(1 for i in POOL_ITEMS[:20] if i.start_price == 1000) == 16
    assert len(POOL_ITEMS) == 26


@pytest.mark.parametrize("overestimate,expected", [
    (10, [2200, 6600, 8800, 4400, 11000, 6600, 4400, 8800, 2200, 11000]),
    (0, [2000, 6000, 8000, 4000, 10000, 6000, 4000, 8000, 2000, 10000]),
    (-10, [1800, 5400, 7200, 3600, 9000, 5400, 3600, 7200, 1800, 9000]),
])
def test_estimates(overestimate, expected):
    env = auction_v0.env(item_order="given", overestimate_percent=overestimate)
    env.reset(seed=0)
    for agent in env.possible_agents:
        env.unwrapped._refresh_info(agent, None)
    setup = env.unwrapped.record.of_type("setup")[0]
    assert setup["estimates"] == [expected] * 3


def test_increments():
    env = auction_v0.env(item_order="ascending")
    env.reset(seed=0)
    increments = [e["increment"] for e in env.unwrapped.record.of_type("item_open")]
    assert increments == [100]
    play(env, {a: AlwaysWithdraw() for a in env.possible_agents})
    by_price = {e["start_price"]: e["increment"] for e in env.unwrapped.record.of_type("item_open")}
    assert by_price == {1000: 100, 2000: 200, 3000: 300, 4000: 400, 5000: 500}


@pytest.mark.parametrize("order,expected", [
    ("ascending", ["Widget A", "Contraption I", "Doodad D", "Implement G", "Gadget B", "Gizmo F",
                   "Thingamajig C", "Apparatus H", "Equipment E", "Mechanism J"]),
    ("descending", ["Equipment E", "Mechanism J", "Thingamajig C", "Apparatus H", "Gadget B", "Gizmo F",
                    "Doodad D", "Implement G", "Widget A", "Contraption I"]),
])
def test_orders(order, expected):
    env = auction_v0.env(item_order=order)
    env.reset(seed=5)
    assert env.unwrapped.record.of_type("setup")[0]["order"] == expected


def test_random_order_is_seeded_and_visible():
    env = auction_v0.env()
    env.reset(seed=7)
    order = env.unwrapped.record.of_type("setup")[0]["order"]
    assert sorted(order) == sorted(i.name for i in TABLE1_ITEMS)
    env.reset(seed=7)
    assert env.unwrapped.record.of_type("setup")[0]["order"] == order
    orders = set()
    for seed in range(5):
        env.reset(seed=seed)
        orders.add(tuple(env.unwrapped.record.of_type("setup")[0]["order"]))
    assert len(orders) > 1
    env.reset(seed=7)
    text = env.observe("bidder_3")["text"]
    positions = [text.index(f". {name} - starting price") for name in order]
    assert positions == sorted(positions)


def test_round_one_everyone_decides_in_seat_order_and_opening_bids_need_no_increment():
    env = make(items=TWO_ITEMS)
    seen = []
    for text in ["I bid $1200!", "I bid $1000!", "I bid $1050!"]:
        seen.append(env.agent_selection)
        env.step(text)
        assert env.unwrapped.infos[seen[-1]]["invalid_action"] is None
    assert seen == ["bidder_1", "bidder_2", "bidder_3"]
    assert env.unwrapped.game.highest == 1200 and env.unwrapped.game.leader == 0
    assert env.agent_selection == "bidder_2"  # the leader skips round 2


def test_bid_below_start_is_rejected_and_reasked():
    env = make()
    before = env.unwrapped.state_dict()
    env.step("I bid $999!")
    info = env.unwrapped.infos["bidder_1"]
    assert env.agent_selection == "bidder_1"
    assert info["failed_bids"] == 1 and info["invalid_action"]["kind"] == "illegal"
    assert "starting price" in info["invalid_action"]["reason"]
    assert info["last_status"].startswith("rejected:")
    assert env.unwrapped.state_dict() == before
    assert "not accepted" in env.observe("bidder_1")["text"]
    assert "starting price of $1000" in env.observe("bidder_1")["text"]


def test_budget_limits():
    env = make(budgets=1500)
    env.step("I bid $1501!")
    assert "exceeds your remaining budget" in env.unwrapped.infos["bidder_1"]["invalid_action"]["reason"]
    env.step("I bid $1500!")
    assert env.unwrapped.infos["bidder_1"]["invalid_action"] is None


def test_minimum_raise_over_standing_bid():
    env = make(budgets=10000)
    step_all(env, "I bid $1200!", "I'm out!", "I bid $1100!")
    assert env.agent_selection == "bidder_3"  # bidder_2 withdrew, bidder_1 leads
    for bad in ["I bid $1299!", "I bid $1200!"]:
        env.step(bad)
        assert env.unwrapped.infos["bidder_3"]["invalid_action"] is not None
        assert "at least $100" in env.unwrapped.infos["bidder_3"]["invalid_action"]["reason"]
    env.step("I bid $1300!")  # exactly H + inc is enough
    assert env.unwrapped.infos["bidder_3"]["invalid_action"] is None
    assert env.unwrapped.infos["bidder_3"]["failed_bids"] == 2
    assert env.unwrapped.game.highest == 1300


def test_cheap_items_still_need_a_one_dollar_raise():
    """start_price × 10 // 100 is 0 below $10; the raise is then $1, so every auction ends."""
    cheap = [{"name": "Pin", "desc": "p", "start_price": 5, "true_value": 9}]
    env = make(items=cheap, budgets=100)
    assert env.unwrapped.game.increment == 1
    step_all(env, "I bid $5!", "I bid $5!", "I'm out!")
    env.step("I bid $5!")  # bidder_1 (tied, not leading) must now beat $5
    assert "at least $1" in env.unwrapped.infos[env.agent_selection]["invalid_action"]["reason"]
    for seed in range(5):  # random play ends, with the item sold at most at a bidder's budget
        raw = play(auction_v0.env(items=cheap, budgets=100), [RandomValid(), RandomValid(), RandomValid()], seed)
        assert not raw.agents and len(raw.record.of_type("hammer")) == 1


def test_withdrawn_never_selected_again_and_outbid_bidder_returns():
    env = make(items=TWO_ITEMS, budgets=10000)
    step_all(env, "I bid $1000!", "I'm out!", "I bid $1100!")
    # round 2: bidder_1 (outbid) is selected again, bidder_2 is out, bidder_3 leads
    assert env.unwrapped.game.eligible == [0]
    env.step("I bid $1200!")
    assert env.unwrapped.game.eligible == [2]
    env.step("I'm out!")
    # item sold to bidder_1; the next item starts with everybody in seat order
    assert env.unwrapped.game.results == [(0, 1200)]
    assert env.agent_selection == "bidder_1" and env.unwrapped.game.eligible == [0, 1, 2]


def test_unsold_when_everybody_withdraws():
    env = make(items=TWO_ITEMS)
    for _ in range(3):
        env.step("I'm out!")
    raw = env.unwrapped
    assert raw.game.results == [None]
    assert raw.game.remaining == [20000] * 3 and raw.game.profit == [0] * 3
    assert all(r == 0 for r in raw.rewards.values())
    assert "true value" not in env.observe("bidder_1")["text"].split("Auction log:")[1]  # unsold: kept hidden
    for _ in range(3):
        env.step("I'm out!")
    assert "None bid" in raw._render_text()
    assert len(raw.record.of_type("unsold")) == 2


def test_single_opening_bid_sells_at_once():
    env = make(items=TWO_ITEMS)
    step_all(env, "I bid $1300!", "I'm out!", "I'm out!")
    raw = env.unwrapped
    assert raw.game.results == [(0, 1300)]
    assert len(raw.record.of_type("round_end")) == 1
    assert raw.rewards["bidder_1"] == 700 and raw.rewards["bidder_2"] == 0


def test_hammer_to_leader_when_round_has_no_new_bid():
    env = make()
    step_all(env, "I bid $1000!", "I bid $1100!", "I'm out!")
    env.step("I'm out!")  # bidder_1 gives up: sold to bidder_2 at 1100
    raw = env.unwrapped
    assert raw.game.results == [(1, 1100)]
    assert raw.game.remaining[1] == 20000 - 1100 and raw.game.profit[1] == 900
    assert raw.rewards == {"bidder_1": 0, "bidder_2": 900.0, "bidder_3": 0}
    assert all(env.terminations.values())


@pytest.mark.parametrize("seed", range(6))
def test_random_tie_break_is_seeded(seed):
    def leader(**kw):
        env = make(seed=seed, **kw)
        step_all(env, "I bid $1500!", "I bid $1500!", "I bid $1500!")
        return env.unwrapped.game.leader
    assert leader() == leader()
    assert leader(tie_break="lowest_seat") == 0


def test_random_tie_break_uses_every_candidate():
    leaders = set()
    for seed in range(30):
        env = make(seed=seed)
        env.reset(seed=seed)
        for _ in range(3):
            env.step("I bid $1500!")
        leaders.add(env.unwrapped.game.leader)
    assert leaders == {0, 1, 2}


def test_observation_does_not_leak_same_round_decisions():
    first = make(items=TWO_ITEMS, n_bidders=3)
    first_obs = {a: first.observe(a) for a in first.possible_agents}
    other = make(items=TWO_ITEMS, n_bidders=3)
    step_all(other, "I bid $1900!", "I'm out!")
    assert other.agent_selection == "bidder_3"
    late = other.observe("bidder_3")
    early = first_obs["bidder_3"]
    assert late["text"] == early["text"]
    assert np.array_equal(late["observation"], early["observation"])
    assert np.array_equal(late["action_mask"], early["action_mask"])


@pytest.mark.parametrize("variant", [{}, {"enable_discount": True, "auto_withdraw_unaffordable": True}])
@pytest.mark.parametrize("seed", range(5))
def test_invariants_under_random_play(seed, variant):
    env = auction_v0.env(budgets=[5000, 20000, 40000], **variant)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    totals = {a: 0.0 for a in env.possible_agents}
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(rng.choice(legal)))
        for a, r in env.rewards.items():
            totals[a] += r
        assert all(b >= 0 for b in env.unwrapped.game.remaining)
    raw = env.unwrapped
    assert len(raw.record.of_type("hammer")) + len(raw.record.of_type("unsold")) == 10
    for seat, agent in enumerate(raw.possible_agents):
        paid = sum(p for _, p in raw.game.won[seat])
        assert paid <= raw.game.budgets[seat]
        assert totals[agent] == raw.game.profit[seat]  # fact 23
    for hammer in raw.record.of_type("hammer"):
        last_bid = [e for e in raw.record.of_type("decision")
                    if e["item"] == hammer["item"] and e["agent"] == hammer["winner"] and e["amount"] is not None][-1]
        assert last_bid["amount"] == hammer["price"]


def test_fourth_invalid_reply_forces_withdrawal():
    env = make()
    for attempt in range(1, 4):
        env.step("I bid $10!" if attempt % 2 else "hmm")
        assert env.agent_selection == "bidder_1"
        assert env.unwrapped.infos["bidder_1"]["retries"] == attempt
    env.step("I bid $10!")
    info = env.unwrapped.infos["bidder_1"]
    assert info["forced_withdraw"] and info["fallback"]
    assert info["failed_bids"] == 3 and info["parse_failures"] == 1
    assert env.unwrapped.game.withdrawn[0]
    assert env.agent_selection == "bidder_2"
    metrics = env.unwrapped.episode_metrics()["agents"]["bidder_1"]
    assert metrics["forced_withdrawals"] == 1 and metrics["fallback"] == 1


def test_masked_native_action_is_a_failed_bid():
    env = make(budgets=1000)
    mask = env.observe("bidder_1")["action_mask"]
    assert mask.tolist()[:3] == [1, 1, 0]
    env.step(2)  # would bid 1100 > budget
    assert env.unwrapped.infos["bidder_1"]["failed_bids"] == 1
    env.step(1)
    assert env.unwrapped.infos["bidder_1"]["invalid_action"] is None


def test_discrete_grid_and_amount_mode():
    env = make()
    env.step(3)  # min valid 1000 + 2 * 100
    assert env.unwrapped.record.of_type("decision")[-1]["amount"] == 1200
    env = make(action_mode="amount", budgets=3000)
    assert env.action_space("bidder_1").start == -1 and env.action_space("bidder_1").n == 3002
    mask = env.observe("bidder_1")["action_mask"]
    assert mask[0] == 1 and mask[1:1001].sum() == 0 and mask[1001:].all()
    env.step(1234)
    env.step(-1)
    assert env.unwrapped.record.of_type("decision")[0]["amount"] == 1234
    assert env.unwrapped.record.of_type("decision")[1]["amount"] is None


def test_auto_withdraw_unaffordable_skips_poor_bidders():
    env = make(items=TWO_ITEMS, budgets=[5000, 500, 5000], auto_withdraw_unaffordable=True)
    assert env.unwrapped.game.eligible == [0, 2]
    assert env.unwrapped.record.of_type("auto_withdraw")[0]["agent"] == "bidder_2"


def test_discount_variant_halves_the_price():
    env = make(enable_discount=True)
    for _ in range(3):
        env.step("I'm out!")
    assert env.unwrapped.game.price == 500 and env.unwrapped.game.increment == 50
    text = env.observe(env.agent_selection)["text"]
    assert "Highest bid: no bids yet" in text and "lowered to $500. Who bids first?" in text
    for _ in range(9):
        env.step("I'm out!")
    assert env.unwrapped.game.results == [None]
    assert [e["price"] for e in env.unwrapped.record.of_type("discount")] == [500, 250, 125]


def test_max_steps_truncates():
    env = auction_v0.env(max_steps=5)
    env.reset(seed=0)
    for _ in range(5):
        env.step(0)
    assert all(env.truncations.values()) and not any(env.terminations.values())


def test_items_objective_rewards_count_items():
    env = make(desires=["maximize_items", "maximize_profit", "maximize_profit"])
    step_all(env, "I bid $1900!", "I'm out!", "I'm out!")
    assert env.unwrapped.rewards["bidder_1"] == 1.0
    assert env.unwrapped.episode_metrics()["agents"]["bidder_1"]["score"] == 1
    assert "win the highest number of items" in env.observe("bidder_1")["text"]


def test_reveal_status_off_hides_the_budget_left():
    env = make(reveal_status=False)
    text = env.observe("bidder_1")["text"]
    assert "budget left" not in text and "Your starting budget: $20000" in text


@pytest.mark.parametrize("kwargs", [
    {"item_order": "sideways"}, {"n_bidders": 1}, {"budgets": [1, 2]}, {"desires": "greed"},
    {"action_mode": "words"}, {"tie_break": "coin"}, {"reward_mode": "fun"}, {"overestimate_percent": 300},
    {"items": []}, {"invalid_action_penalty": 1.0}, {"max_retries": -1},
])
def test_bad_arguments_are_rejected(kwargs):
    with pytest.raises(ValueError):
        auction_v0.env(**kwargs)


def test_rule_and_scripted_bidders_play_full_games():
    env = auction_v0.env()
    play(env, {"bidder_1": RuleBidder(), "bidder_2": TruthfulMinRaise(), "bidder_3": RandomValid()}, seed=3)
    record = env.unwrapped.episode_record()
    ends = [e for e in record["events"] if e["type"] in ("hammer", "unsold")]
    # every item was auctioned to its end, once and in order, and nobody decided after the last one
    assert [e["item"] for e in ends] == list(range(len(record["config"]["items"])))
    last = record["events"].index(ends[-1])
    assert not [e for e in record["events"][last:] if e["type"] == "decision"]
    metrics = env.unwrapped.episode_metrics()["agents"]
    assert set(metrics) == set(env.possible_agents)
    for agent, m in metrics.items():
        assert m["accepted_decisions"] > 0 and m["failed_bids"] == 0 and m["parse_failures"] == 0
        paid = sum(e["price"] for e in ends if e["type"] == "hammer" and e["winner"] == agent)
        assert m["money_left"] == record["config"]["budgets"][env.possible_agents.index(agent)] - paid >= 0
    assert sum(m["items_won"] for m in metrics.values()) == sum(e["type"] == "hammer" for e in ends)


def test_pickle_round_trip_mid_game():
    env = auction_v0.env()
    env.reset(seed=11)
    env.step("I bid $5000!")
    copy = pickle.loads(pickle.dumps(env))
    assert copy.observe(copy.agent_selection)["text"] == env.observe(env.agent_selection)["text"]
    copy.step(0)
    env.step(0)
    assert copy.unwrapped.record.events == env.unwrapped.record.events
