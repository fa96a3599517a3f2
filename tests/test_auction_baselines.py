"""Spec §4 / §8.4: the paper's rule bidder and the scripted bidders."""
import pytest

from arena_envs import auction_v0
from baselines.auction.rule import AlwaysWithdraw, RuleBidder, TruthfulMinRaise
from tests.play_helpers import play

ONE_ITEM = [{"name": "Widget A", "start_price": 1000, "true_value": 2000}]


def test_rule_bidder_opens_at_start_then_raises_by_minimum():
    env = auction_v0.env(items=ONE_ITEM, item_order="given")
    env.reset(seed=0)
    bidder = RuleBidder()
    bidder.bind(env.unwrapped)
    bidder.reset("bidder_1", 0)
    obs, _, _, _, info = env.last()
    assert bidder.act(obs, info) == 1  # the minimum valid bid = starting price
    env.step(1)
    env.step("I bid $1500!")
    env.step("I'm out!")
    obs, _, _, _, info = env.last()
    assert env.agent_selection == "bidder_1" and info["min_valid_bid"] == 1600
    env.step(bidder.act(obs, info))
    assert env.unwrapped.record.of_type("decision")[-1]["amount"] == 1600


@pytest.mark.parametrize("K,price,rounds", [(1, 1000, 2), (4, 1600, 8), (5, 1800, 10), (8, 2400, 16)])
@pytest.mark.parametrize("tie_break", ["random", "lowest_seat"])
def test_two_rule_bidders_end_at_p_plus_2k_minus_2_increments(K, price, rounds, tie_break):
    env = auction_v0.env(items=ONE_ITEM, item_order="given", n_bidders=2, tie_break=tie_break)
    play(env, {"bidder_1": RuleBidder(K=K), "bidder_2": RuleBidder(K=K)})
    raw = env.unwrapped
    assert raw.game.results[0][1] == price
    assert len(raw.record.of_type("round_end")) == rounds
    winner = raw.game.results[0][0]
    assert raw.game.profit[winner] == 2000 - price
    assert all(m["failed_bids"] == 0 for m in raw.episode_metrics()["agents"].values())


def test_two_rule_bidders_on_a_5000_item():
    env = auction_v0.env(items=[{"name": "Equipment E", "start_price": 5000, "true_value": 10000}],
                         item_order="given", n_bidders=2)
    play(env, {"bidder_1": RuleBidder(), "bidder_2": RuleBidder()})
    assert env.unwrapped.game.results[0][1] == 8000


@pytest.mark.parametrize("budget,order,items,profit,left", [
    (20000, "ascending", 8, 20000, 0),
    (20000, "descending", 5, 20000, 0),
    (10000, "ascending", 5, 9000, 1000),
    (10000, "descending", 2, 10000, 0),
    (40000, "random", 10, 30000, 10000),
    (40000, "ascending", 10, 30000, 10000),
])
def test_rule_bidder_against_withdrawers(budget, order, items, profit, left):
    env = auction_v0.env(item_order=order, budgets=budget)
    play(env, {"bidder_1": RuleBidder(), "bidder_2": AlwaysWithdraw(), "bidder_3": AlwaysWithdraw()})
    m = env.unwrapped.episode_metrics()["agents"]["bidder_1"]
    assert (m["items_won"], m["profit"], m["money_left"]) == (items, profit, left)


def test_descending_twenty_thousand_wins_the_expected_items():
    env = auction_v0.env(item_order="descending")
    play(env, {"bidder_1": RuleBidder(), "bidder_2": AlwaysWithdraw(), "bidder_3": AlwaysWithdraw()})
    won = [item["name"] for item in env.unwrapped.final_report()["bidders"][0]["items"]]
    assert won == ["Equipment E", "Mechanism J", "Thingamajig C", "Apparatus H", "Doodad D"]


def test_rule_bidder_in_amount_mode():
    env = auction_v0.env(action_mode="amount", items=ONE_ITEM, item_order="given", n_bidders=2)
    play(env, {"bidder_1": RuleBidder(), "bidder_2": RuleBidder()})
    assert env.unwrapped.game.results[0][1] == 1600


def test_truthful_bidder_suffers_the_winners_curse():
    env = auction_v0.env(items=ONE_ITEM, item_order="given", n_bidders=2)
    play(env, {"bidder_1": TruthfulMinRaise(), "bidder_2": TruthfulMinRaise()})
    price = env.unwrapped.game.results[0][1]
    assert 2000 < price <= 2200  # bids up to the +10 % estimate, above the true value


def test_rule_bidder_rejects_negative_k():
    with pytest.raises(ValueError):
        RuleBidder(K=-1)
