"""Spec §5 / §8.6: failed-bid rate, belief checks, TrueSkill inputs, plans and Spearman."""
import json

import pytest
import trueskill

from arena_envs.auction import metrics as M
from arena_envs.runner.leaderboard import dense_ranks
from tests.auction_helpers import FIXTURES, replay

BELIEF_A = {"remaining_budget": 18500, "total_profits": {"Bidder 1": 500, "Bidder 2": 800, "Bidder 3": 0},
            "winning_bids": {"Bidder 1": {"Gadget B": 1500}, "Bidder 2": {"Widget A": 1200},
                             "Bidder 3": {"Thingamajig C": 2000}}}


def test_cfr():
    assert M.cfr(1, 9) == pytest.approx(0.1)
    assert M.cfr(0, 0) == 0.0


def test_failed_bid_rate_in_episode_metrics():
    env = replay(FIXTURES["A"])
    raw = env.unwrapped
    metrics = raw.episode_metrics()["agents"]["bidder_1"]
    assert metrics["failed_bid_rate"] == 0.0 and metrics["accepted_decisions"] == 7


@pytest.fixture
def env_a():
    return replay(FIXTURES["A"]).unwrapped


def test_correct_belief_has_seven_checks(env_a):
    assert env_a.check_belief("bidder_1", BELIEF_A) == []
    assert env_a.belief_checks["bidder_1"] == {"self_pass": 3, "self_fail": 0, "other_pass": 4,
                                               "other_fail": 0, "sanity_errors": 0}


def test_wrong_budget_is_one_self_error(env_a):
    belief = dict(BELIEF_A, remaining_budget=18000)
    errors = env_a.check_belief("bidder_1", belief)
    assert len(errors) == 1 and "budget" in errors[0] and "$18500" in errors[0]
    assert env_a.belief_checks["bidder_1"]["self_fail"] == 1


def test_prices_are_not_compared(env_a):
    belief = json.loads(json.dumps(BELIEF_A))
    belief["winning_bids"]["Bidder 3"]["Thingamajig C"] = 1900
    assert env_a.check_belief("bidder_1", belief) == []


def test_unmentioned_bidders_are_not_checked(env_a):
    belief = json.loads(json.dumps(BELIEF_A))
    del belief["total_profits"]["Bidder 2"], belief["winning_bids"]["Bidder 2"]
    assert env_a.check_belief("bidder_1", belief) == []
    counts = env_a.belief_checks["bidder_1"]
    assert counts["self_pass"] + counts["other_pass"] == 5


def test_lenient_matching_reads_self_name_variants_and_any_case():
    env = replay(FIXTURES["A"], belief_match="lenient").unwrapped
    belief = json.loads(json.dumps(BELIEF_A))
    belief["total_profits"] = {"Bidder 1 (you)": 500, "Bidder 3": 100}
    belief["winning_bids"]["Bidder 2"] = {"widget a": 1200}
    errors = env.check_belief("bidder_1", belief)
    assert errors == ["your belief of the total profit of Bidder 3 is wrong: it is $0, you think $100"]
    counts = env.belief_checks["bidder_1"]
    assert counts["self_pass"] == 3 and counts["other_fail"] == 1 and counts["other_pass"] == 2


def test_exact_matching_is_the_default_and_skips_other_keys(env_a):
    """The reference code checks only keys that are exactly a bidder's name; item names compare
    case-sensitively."""
    belief = json.loads(json.dumps(BELIEF_A))
    belief["total_profits"] = {"Bidder 1 (you)": 999, "bidder 3": 100, "Bidder 2": 800}
    belief["winning_bids"]["Bidder 2"] = {"widget a": 1200}
    errors = env_a.check_belief("bidder_1", belief)
    assert errors == ["your belief of the items won by Bidder 2 is wrong: Bidder 2 won Widget A"]
    counts = env_a.belief_checks["bidder_1"]
    # budget and own items (self); Bidder 2's profit, Bidder 2's and 3's items (other)
    assert counts == {"self_pass": 2, "self_fail": 0, "other_pass": 2, "other_fail": 1, "sanity_errors": 0}


def test_a_check_of_an_earlier_item_uses_the_state_after_that_item(env_a):
    """No stale checks: a belief about item 0, checked after item 2, is compared with the state
    right after item 0's hammer."""
    after_first = {"remaining_budget": 18500, "total_profits": {"Bidder 1": 500, "Bidder 2": 0, "Bidder 3": 0},
                   "winning_bids": {"Bidder 1": {"Gadget B": 1500}, "Bidder 2": {}, "Bidder 3": {}}}
    assert env_a.check_belief("bidder_1", after_first, item=0) == []
    assert env_a.check_belief("bidder_1", after_first) != []
    assert env_a.record.of_type("belief_check")[0]["item"] == 0
    with pytest.raises(ValueError, match="after_item must be a resolved item"):
        env_a.check_belief("bidder_1", after_first, item=3)


@pytest.mark.parametrize("belief", [
    "not json at all", "[1, 2]", '{"remaining_budget": "lots"}',
    {"remaining_budget": 1, "total_profits": {"Bidder 1": "5 + 5"}, "winning_bids": {}},
])
def test_sanity_errors_count_no_checks(env_a, belief):
    errors = env_a.check_belief("bidder_1", belief)
    assert len(errors) == 1
    counts = env_a.belief_checks["bidder_1"]
    assert counts["sanity_errors"] == 1 and counts["self_pass"] + counts["self_fail"] == 0


def test_belief_error_rate_in_metrics(env_a):
    env_a.check_belief("bidder_1", BELIEF_A)
    env_a.check_belief("bidder_1", dict(BELIEF_A, remaining_budget=0))
    m = env_a.episode_metrics()["agents"]["bidder_1"]
    assert m["belief_checks"] == 14 and m["belief_errors"] == 1
    assert m["belief_error_rate"] == pytest.approx(1 / 14)
    assert m["belief_error_rate_self"] == pytest.approx(1 / 6)
    assert m["belief_error_rate_other"] == 0.0


def test_ground_truth_status(env_a):
    truth = env_a.ground_truth_status()
    assert truth["remaining_budget"]["Bidder 1"] == 18500
    assert truth == {"remaining_budget": {"Bidder 1": 18500, "Bidder 2": 18800, "Bidder 3": 18000},
                     "total_profits": BELIEF_A["total_profits"], "winning_bids": BELIEF_A["winning_bids"]}


def rate(ranks):
    env = trueskill.TrueSkill()
    groups = [(env.create_rating(),) for _ in ranks]
    return [g[0] for g in env.rate(groups, ranks=ranks)]


def test_trueskill_inputs_from_profits():
    assert dense_ranks([500, 800, 0]) == [1, 0, 2]
    ratings = rate(dense_ranks([500, 800, 0]))
    assert [r.mu for r in ratings] == pytest.approx([25.000, 31.675, 18.325], abs=0.01)
    fresh = rate([0, 1, 2])
    assert [r.sigma for r in fresh] == pytest.approx([6.656, 6.208, 6.656], abs=0.01)
    profits_b = [FIXTURES["B"]["expected"]["profit"][f"Bidder {i}"] for i in range(1, 6)]
    assert dense_ranks(profits_b) == [2, 1, 2, 3, 0]
    assert [r.mu for r in rate([2, 1, 2, 3, 0])] == pytest.approx([23.24, 27.77, 23.26, 17.31, 33.43], abs=0.01)


def test_spearman():
    assert M.spearman([3, 1, 2, 3], [4, 0, 1, 2]) == pytest.approx(0.9487, abs=1e-4)
    assert M.spearman([2, 2, 2], [1, 2, 3]) is None
    assert M.spearman([1], [1]) is None


def test_plans_and_spearman_rows(env_a):
    raw = env_a
    names = [item.name for item in raw.game.items]
    assert raw.record_plan("bidder_1", {"gadget b": 3, "Thingamajig C": 1, "Widget A": 7, "Nope": 2}) == {0: 3, 1: 1}
    with pytest.raises(ValueError):
        raw.record_plan("bidder_1", {}, kind="dream")
    rows = raw.episode_metrics()["agents"]["bidder_1"]["plan_rows"]
    assert [(r["r1"], r["n"], r["x"]) for r in rows] == [(3, 3, 1), (1, 1, 0), (None, 1, 0)]
    assert names == ["Gadget B", "Thingamajig C", "Widget A"]
    table = M.spearman_table(rows)
    assert set(table) == {"rho(r1,n)", "rho(r1,x)", "rho(rj,n)", "rho(rj,x)"}


def test_replan_applies_from_its_stamp():
    plans = [{"kind": "initial", "stamp": 0, "priorities": {0: 1, 1: 1, 2: 1}},
             {"kind": "replan", "stamp": 1, "priorities": {1: 3, 2: 2}},
             {"kind": "replan", "stamp": 2, "priorities": {2: 3}}]
    rows = M.plan_rows(plans, 3, [0, 1, 2], [0, 1, 1])
    assert [r["r1"] for r in rows] == [1, 1, 1]
    assert [r["rj"] for r in rows] == [1, 3, 3]
