"""tie_break="repo" (issue 11, point 8): the reference code's order of preference among tied top bids.

Measured on the reference code: a two-way tie followed by one more recorded decision ends
0.376 / 0.624, a three-way tie 0.19 / 0.31 / 0.50 (later seats favoured). Proportions are checked
with a fixed seed against the exact values within four standard errors.
"""
import math

import numpy as np
import pytest

from arena_envs import auction_v0
from arena_envs.auction.rules import WITHDRAW, repo_tie_break


def shares(decisions, n, seed=0):
    rng = np.random.default_rng(seed)
    wins = [repo_tie_break(decisions, lambda: int(rng.integers(2))) for _ in range(n)]
    return {seat: wins.count(seat) / n for seat in set(wins)}


def close(observed, expected, n):
    return abs(observed - expected) < 4 * math.sqrt(expected * (1 - expected) / n)


@pytest.mark.parametrize(("decisions", "expected"), [
    ([(0, 1200), (1, 1200), (2, WITHDRAW)], {0: 3 / 8, 1: 5 / 8}),  # a two-way tie, then one more record
    ([(0, 1200), (1, 1200), (2, 1100)], {0: 3 / 8, 1: 5 / 8}),  # the extra record may be a lower bid
    ([(0, 1200), (1, 1200)], {0: 1 / 2, 1: 1 / 2}),  # nothing recorded after the tie
    ([(0, 1200), (1, 1200), (2, 1200)], {0: 3 / 16, 1: 5 / 16, 2: 1 / 2}),  # a three-way tie
    ([(0, WITHDRAW), (1, 1300), (2, 1300), (3, WITHDRAW)], {1: 3 / 8, 2: 5 / 8}),
])
def test_repo_tie_break_reproduces_the_reference_proportions(decisions, expected):
    n = 20000
    observed = shares(decisions, n)
    assert set(observed) == set(expected)
    for seat, p in expected.items():
        assert close(observed[seat], p, n), (seat, observed[seat], p)


def test_a_higher_bid_after_the_tie_takes_the_lead():
    assert shares([(0, 1200), (1, 1200), (2, 1300)], 200) == {2: 1.0}


def leaders(n_bidders, answers, tie_break, n):
    env = auction_v0.raw_env(n_bidders=n_bidders, item_order="given", tie_break=tie_break)
    counts: dict[str, int] = {}
    for seed in range(n):
        env.reset(seed=seed)
        for answer in answers:
            env.step(answer)
        leader = env.state_dict()["leader"]
        counts[env.possible_agents[leader]] = counts.get(env.possible_agents[leader], 0) + 1
    return {agent: c / n for agent, c in counts.items()}


def test_the_env_breaks_ties_in_the_reference_order_with_repo():
    n = 3000
    two = leaders(3, ["I bid $1200!", "I bid $1200!", "I'm out!"], "repo", n)
    assert close(two["bidder_1"], 3 / 8, n) and close(two["bidder_2"], 5 / 8, n)
    three = leaders(3, ["I bid $1200!"] * 3, "repo", n)
    for agent, p in (("bidder_1", 3 / 16), ("bidder_2", 5 / 16), ("bidder_3", 1 / 2)):
        assert close(three[agent], p, n), (agent, three[agent])
    uniform = leaders(3, ["I bid $1200!"] * 3, "random", n)  # the default stays uniform
    assert all(close(share, 1 / 3, n) for share in uniform.values())
    assert leaders(3, ["I bid $1200!"] * 3, "repo", 50) == leaders(3, ["I bid $1200!"] * 3, "repo", 50)  # seeded
