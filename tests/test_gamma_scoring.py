"""γ-Bench scoring: every score formula, edge case and checkable score fact of the spec."""
from __future__ import annotations

import math

import pytest

from arena_envs.gamma import scoring
from arena_envs.gamma.history import GAMES, missing_keys
from arena_envs.gamma.scoring import score, table_row

N, K = 10, 20


# --- helpers building histories in the schema of arena_envs.gamma.history ---------------------

def guess(choices_per_round, min_value=0, max_value=100, ratio=2 / 3):
    params = {"n_players": len(choices_per_round[0]), "n_rounds": len(choices_per_round),
              "min_value": min_value, "max_value": max_value, "ratio": ratio}
    history = []
    for j, choices in enumerate(choices_per_round, start=1):
        avg = sum(choices) / len(choices)
        target = ratio * avg
        best = min(abs(c - target) for c in choices)
        winners = [i for i, c in enumerate(choices) if abs(c - target) == best]
        history.append({"round": j, "choices": list(choices), "average": avg, "target": target,
                        "winners": winners, "winning_numbers": sorted({choices[i] for i in winners})})
    return params, history


def el_farol(go_per_round, ratio=0.6):
    n = len(go_per_round[0])
    params = {"n_players": n, "n_rounds": len(go_per_round), "capacity_ratio": ratio, "max_utility": 10,
              "min_utility": 0, "home_utility": 5, "mode": "implicit"}
    history = []
    for j, go in enumerate(go_per_round, start=1):
        g = sum(go)
        crowded = g / n > ratio
        history.append({"round": j, "go": list(go), "attendance": g, "go_rate": g / n, "crowded": crowded,
                        "utilities": [(0 if crowded else 10) if x else 5 for x in go]})
    return params, history


def divide(bids_per_round, golds=100):
    params = {"n_players": len(bids_per_round[0]), "n_rounds": len(bids_per_round), "golds": golds}
    history = [{"round": j, "bids": list(b), "total": sum(b), "exceeded": sum(b) > golds,
                "payoffs": [0 if sum(b) > golds else x for x in b]} for j, b in enumerate(bids_per_round, 1)]
    return params, history


def public_goods(contrib_per_round, tokens=20, ratio=2):
    n = len(contrib_per_round[0])
    params = {"n_players": n, "n_rounds": len(contrib_per_round), "ratio": ratio, "tokens": tokens, "reset": True}
    history = []
    for j, c in enumerate(contrib_per_round, start=1):
        share = ratio * sum(c) / n
        history.append({"round": j, "contributions": list(c), "tokens": [tokens] * n, "pot": sum(c),
                        "share": share, "payoffs": [tokens - x + share for x in c]})
    return params, history


def diners(orders_per_round):
    n = len(orders_per_round[0])
    params = {"n_players": n, "n_rounds": len(orders_per_round), "costly_price": 20, "cheap_price": 10,
              "costly_utility": 20, "cheap_utility": 15}
    history = []
    for j, orders in enumerate(orders_per_round, start=1):
        total = sum(20 if o == "costly" else 10 for o in orders)
        history.append({"round": j, "orders": list(orders), "n_costly": orders.count("costly"),
                        "total_cost": total, "bill_share": total / n,
                        "utilities": [(20 if o == "costly" else 15) - total / n for o in orders]})
    return params, history


def sealed_bid(valuations_per_round, bid_rule, mode="first"):
    n = len(valuations_per_round[0])
    params = {"n_players": n, "n_rounds": len(valuations_per_round), "valuation_min": 0,
              "valuation_max": 200, "interval": 10, "mode": mode}
    history = []
    for j, vals in enumerate(valuations_per_round, start=1):
        bids = [bid_rule(v) for v in vals]
        winner = max(range(n), key=lambda i: bids[i])
        price = bids[winner] if mode == "first" else sorted(bids)[-2]
        history.append({"round": j, "valuations": list(vals), "bids": bids, "winner": winner,
                        "winning_bid": bids[winner], "price": price,
                        "utilities": [vals[i] - price if i == winner else 0 for i in range(n)], "mode": mode})
    return params, history


def battle_royale(turns, n=10):
    """``turns``: (shooter, target or None, hit) triples; alive sets are derived."""
    params = {"n_players": n, "hit_rates": [35 + 5 * i for i in range(n)], "max_turns": 20}
    alive = list(range(n))
    history = []
    for j, (shooter, target, hit) in enumerate(turns, start=1):
        after = [i for i in alive if not (hit and i == target)]
        history.append({"round": j, "shooter": shooter, "target": target, "hit": hit,
                        "alive_before": alive, "alive_after": after})
        alive = after
    return params, history


def pirate_round(j, n_players, offer, votes):
    """``offer``/``votes``: per survivor in rank order (proposer first; proposer's vote ignored)."""
    start = n_players - len(offer)
    proposal = [None] * start + list(offer)
    vote_list = [None] * start + [True] + [v == "accept" for v in votes[1:]]
    accepts = sum(v is True for v in vote_list)
    return {"round": j, "proposer": start, "proposal": proposal, "votes": vote_list,
            "n_accepts": accepts, "accepted": accepts >= len(offer) / 2}


def pirate_params(n=10, golds=100):
    return {"n_players": n, "golds": golds}


def sba_valuations():
    import random
    rounds = []
    for j in range(1, K + 1):
        random.seed(42 + j - 1)
        rounds.append(random.sample(range(0, 210, 10), N))
    return rounds


# --- schema -------------------------------------------------------------------------------------

def test_helpers_produce_schema_conforming_histories():
    cases = {
        "guess_two_thirds_v0": guess([[50] * N]),
        "el_farol_v0": el_farol([[True] * N]),
        "divide_dollar_v0": divide([[10] * N]),
        "public_goods_v0": public_goods([[0] * N]),
        "diners_dilemma_v0": diners([["cheap"] * N]),
        "sealed_bid_auction_v0": sealed_bid([list(range(0, 100, 10))], lambda v: v),
        "battle_royale_v0": battle_royale([(0, 9, False)]),
        "pirate_game_v0": (pirate_params(), [pirate_round(1, 10, [96, 0, 1, 0, 1, 0, 1, 0, 1, 0], ["accept"] * 10)]),
    }
    assert set(cases) == set(GAMES)
    for game, (params, history) in cases.items():
        assert missing_keys(game, params, history) == [], game
    assert "params.golds" in missing_keys("pirate_game_v0", {"n_players": 3}, [])
    with pytest.raises(ValueError, match="game must be one of"):
        missing_keys("chess", {}, [])


def test_score_of_raw_is_the_score_without_a_second_pass():
    """An environment reports raw_score and score with one computation of the statistic."""
    cases = {
        "guess_two_thirds_v0": guess([[50] * N, [10, 90] * 5]),
        "el_farol_v0": el_farol([[True] * N, [True, False] * 5]),
        "divide_dollar_v0": divide([[10] * N, [30] * N]),
        "public_goods_v0": public_goods([[0] * N, [5] * N]),
        "diners_dilemma_v0": diners([["cheap"] * N, ["costly", "cheap"] * 5]),
        "sealed_bid_auction_v0": sealed_bid([list(range(0, 100, 10))], lambda v: v // 2),
        "battle_royale_v0": battle_royale([(0, 9, False), (1, 9, True), (2, 0, False)]),
        "pirate_game_v0": (pirate_params(), [pirate_round(1, 10, [98, 0, 1, 0, 1, 0, 0, 0, 0, 0], ["reject"] * 10),
                                             pirate_round(2, 10, [97, 0, 1, 0, 1, 0, 1, 0, 0], ["accept"] * 9)]),
    }
    for game, (params, history) in cases.items():
        for variant in scoring.VARIANTS[game]:
            if variant == "second_price_diagnostic":
                continue
            raw = scoring.raw_score(game, params, history, variant)
            assert scoring.score_of_raw(game, params, history, raw, variant) == score(game, params, history, variant)
    params, history = cases["pirate_game_v0"]
    for variant in scoring.VARIANTS["pirate_game_v0"]:
        stats = [scoring.pirate_round_stats(params, r, variant) for r in history]
        assert scoring.pirate_raw_of_stats(stats, variant) == scoring.pirate_raw(params, history, variant)


# --- 1. Guess ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "expected"), [(0, 100.0), (50, 50.0), (100, 0.0)])
def test_guess_constant_play(value, expected):
    params, history = guess([[value] * N] * K)
    assert score("guess_two_thirds_v0", params, history) == pytest.approx(expected)


def test_guess_raw_is_mean_choice_minus_min():
    params, history = guess([[0, 10, 20, 30, 40, 50, 60, 70, 80, 90], [10] * N], min_value=0)
    assert scoring.guess_raw(params, history) == pytest.approx((45 + 10) / 2)


def test_guess_ratio_above_and_equal_one():
    assert score("guess_two_thirds_v0", *guess([[100] * N] * 3, ratio=4 / 3)) == pytest.approx(100)
    assert score("guess_two_thirds_v0", *guess([[0] * N] * 3, ratio=4 / 3)) == pytest.approx(0)
    for extreme in (0, 100):
        assert score("guess_two_thirds_v0", *guess([[extreme] * N] * 3, ratio=1.0)) == pytest.approx(100)
    assert score("guess_two_thirds_v0", *guess([[50] * N] * 3, ratio=1.0)) == pytest.approx(0)
    # R = 1, mean choice 25: |2*25 - 100| / 100 = 50; the repo code reports 100 minus that.
    params, history = guess([[25] * N], ratio=1.0)
    assert score("guess_two_thirds_v0", params, history) == pytest.approx(50)
    params, history = guess([[10] * N], ratio=1.0)
    assert score("guess_two_thirds_v0", params, history) == pytest.approx(80)
    assert score("guess_two_thirds_v0", params, history, variant="repo") == pytest.approx(20)


def test_guess_offset_range_uses_distance_to_min():
    params, history = guess([[100] * N] * 2, min_value=100, max_value=200)
    assert score("guess_two_thirds_v0", params, history) == pytest.approx(100)
    params, history = guess([[150] * N] * 2, min_value=100, max_value=200)
    assert score("guess_two_thirds_v0", params, history) == pytest.approx(50)
    # The repo's (MAX - S1)/D form exceeds 100 off a zero minimum (spec §13 #2).
    assert score("guess_two_thirds_v0", params, history, variant="repo") == pytest.approx(150)


def test_guess_score_ignores_undecided_players():
    params, history = guess([[30] * N])
    history[0]["choices"][3] = None
    assert scoring.guess_raw(params, history) == pytest.approx(30)


# --- 2. El Farol --------------------------------------------------------------------------------

def test_el_farol_score_facts():
    six = [True] * 6 + [False] * 4
    assert score("el_farol_v0", *el_farol([six] * K)) == pytest.approx(100)
    assert score("el_farol_v0", *el_farol([[True] * N] * K)) == pytest.approx(100 / 3)
    assert score("el_farol_v0", *el_farol([[False] * N] * K)) == pytest.approx(0)
    alternating = [[True] * N if j % 2 else [False] * N for j in range(K)]
    params, history = el_farol(alternating)
    assert scoring.el_farol_raw(params, history) == pytest.approx(0.5)
    assert score("el_farol_v0", params, history) == pytest.approx(100 / 6)


def test_el_farol_expected_score_of_mixed_play():
    """E|Bin(10,p)/10 - 0.6| gives the expected score of everyone going with probability p."""
    def expected(p):
        dev = sum(math.comb(N, g) * p**g * (1 - p) ** (N - g) * abs(g / N - 0.6) for g in range(N + 1))
        return (0.6 - dev) / 0.6 * 100
    # Score of a history holding every attendance in proportion to its probability equals the
    # expectation; build it with exact binomial weights on 10**4 rounds.
    for p, target in ((0.6, 79.93), (0.5, 75.39)):
        rounds = []
        for g in range(N + 1):
            count = round(math.comb(N, g) * p**g * (1 - p) ** (N - g) * 10_000)
            rounds += [[True] * g + [False] * (N - g)] * count
        assert expected(p) == pytest.approx(target, abs=0.01)
        assert score("el_farol_v0", *el_farol(rounds)) == pytest.approx(target, abs=0.02)


def test_el_farol_zero_capacity_normaliser_is_one():
    params, history = el_farol([[True] * 3 + [False] * 7] * 4, ratio=0.0)
    assert score("el_farol_v0", params, history) == pytest.approx(70)


# --- 3. Divide the Dollar -----------------------------------------------------------------------

def test_divide_dollar_score_facts():
    assert score("divide_dollar_v0", *divide([[10] * N] * K)) == pytest.approx(100)
    assert score("divide_dollar_v0", *divide([[91] + [1] * 9] * K)) == pytest.approx(100)
    assert score("divide_dollar_v0", *divide([[11] * N] * K)) == pytest.approx(90)
    assert score("divide_dollar_v0", *divide([[0] * N] * K)) == pytest.approx(0)


def test_divide_dollar_clips_at_zero():
    params, history = divide([[30] * N] * K)
    assert scoring.divide_dollar_raw(params, history) == pytest.approx(200)
    assert score("divide_dollar_v0", params, history) == 0.0
    assert score("divide_dollar_v0", params, history, variant="unclipped") == pytest.approx(-100)


# --- 4. Public Goods -----------------------------------------------------------------------------

@pytest.mark.parametrize(("contribs", "expected"), [([0] * N, 100), ([20] * N, 0), ([10] * N, 50),
                                                     ([20] + [0] * 9, 90)])
def test_public_goods_score_facts(contribs, expected):
    assert score("public_goods_v0", *public_goods([contribs] * K)) == pytest.approx(expected)


# --- 5. Diner's Dilemma --------------------------------------------------------------------------

@pytest.mark.parametrize(("orders", "expected"), [(["cheap"] * N, 0), (["costly"] * N, 100),
                                                   (["costly"] + ["cheap"] * 9, 10)])
def test_diners_score_facts(orders, expected):
    assert score("diners_dilemma_v0", *diners([orders] * K)) == pytest.approx(expected)


# --- 6. Sealed-Bid Auction -----------------------------------------------------------------------

def test_sealed_bid_paper_valuations_statistics():
    vals = sba_valuations()
    assert vals[0] == [200, 30, 0, 80, 70, 160, 20, 110, 10, 100]
    flat = [v for r in vals for v in r]
    assert sum(flat) / len(flat) == pytest.approx(96.65)
    assert max(flat) == 200


@pytest.mark.parametrize(("rule", "paper", "repo_v2"), [
    (lambda v: v, 0.0, 0.0),
    (lambda v: 0, 48.325, None),
    (lambda v: math.floor(0.9 * v), 4.83, 9.45),
])
def test_sealed_bid_score_facts(rule, paper, repo_v2):
    params, history = sealed_bid(sba_valuations(), rule)
    assert score("sealed_bid_auction_v0", params, history) == pytest.approx(paper, abs=0.005)
    if repo_v2 is not None:
        assert score("sealed_bid_auction_v0", params, history, variant="repo_v2") == pytest.approx(repo_v2, abs=0.005)


def test_sealed_bid_repo_v2_clips_overbids_and_guards_zero_valuation():
    params, history = sealed_bid([[0, 10, 20, 30, 40, 50, 60, 70, 80, 100]], lambda v: v + 10)
    assert score("sealed_bid_auction_v0", params, history, variant="repo_v2") == 0.0
    # Paper form is not clipped: overbidding by 10 everywhere gives -10 / 100.
    assert score("sealed_bid_auction_v0", params, history) == pytest.approx(-10)


def test_sealed_bid_second_price_is_not_a_gamma_score():
    params, history = sealed_bid(sba_valuations(), lambda v: v, mode="second")
    with pytest.raises(ValueError, match="mode='first'"):
        score("sealed_bid_auction_v0", params, history)
    assert score("sealed_bid_auction_v0", params, history, variant="second_price_diagnostic") == pytest.approx(100)


# --- 7. Battle Royale ---------------------------------------------------------------------------

def test_battle_royale_spec_example():
    params, history = battle_royale([(0, 9, False), (1, None, False), (2, 5, False)])
    assert scoring.battle_royale_raw(params, history) == pytest.approx(1 / 3)
    assert score("battle_royale_v0", params, history) == pytest.approx(100 / 3)
    assert score("battle_royale_v0", params, history, variant="per_player") == pytest.approx(100 / 30)


def test_battle_royale_strongest_alive_opponent():
    rates = [35 + 5 * i for i in range(10)]
    alive_without_9 = list(range(9))
    assert scoring.strongest_opponents(rates, alive_without_9, 3) == [8]
    assert scoring.strongest_opponents(rates, list(range(10)), 9) == [8]
    assert scoring.strongest_opponents([50, 70, 70], [0, 1, 2], 0) == [1, 2]
    assert scoring.strongest_opponents(rates, [4], 4) == []
    # player_9 eliminated in turn 1; then player_1 shooting player_8 counts as correct.
    params, history = battle_royale([(0, 9, True), (1, 8, False), (2, 9, False)])
    assert [h["alive_before"] for h in history][1] == alive_without_9
    assert scoring.battle_royale_raw(params, history) == pytest.approx(2 / 3)


def test_battle_royale_always_strongest_scores_100():
    turns, alive = [], list(range(10))
    shooter = 0
    while len(turns) < 20 and len(alive) > 1:
        target = max((i for i in alive if i != shooter), key=lambda i: i)
        hit = len(turns) % 2 == 0
        turns.append((shooter, target, hit))
        if hit:
            alive.remove(target)
        later = [i for i in alive if i > shooter]
        shooter = later[0] if later else alive[0]
    assert score("battle_royale_v0", *battle_royale(turns)) == pytest.approx(100)


# --- 8. Pirate Game ----------------------------------------------------------------------------

@pytest.mark.parametrize(("n", "golds", "expected"), [
    (10, 100, [96, 0, 1, 0, 1, 0, 1, 0, 1, 0]), (9, 100, [96, 0, 1, 0, 1, 0, 1, 0, 1]),
    (8, 100, [97, 0, 1, 0, 1, 0, 1, 0]), (7, 100, [97, 0, 1, 0, 1, 0, 1]), (5, 100, [98, 0, 1, 0, 1]),
    (3, 100, [99, 0, 1]), (2, 100, [100, 0]), (1, 100, [100]),
    (10, 4, [0, 0, 1, 0, 1, 0, 1, 0, 1, 0]), (10, 5, [1, 0, 1, 0, 1, 0, 1, 0, 1, 0]),
])
def test_pirate_ne_proposals(n, golds, expected):
    assert scoring.pirate_ne_proposal(n, golds) == expected


def test_pirate_ne_proposal_rejects_too_few_coins():
    with pytest.raises(ValueError, match="golds"):
        scoring.pirate_ne_proposal(10, 3)


@pytest.mark.parametrize(("position", "offered", "accept", "text", "code"), [
    (1, 2, True, True, True), (1, 2, False, False, False),
    (2, 0, False, True, True), (2, 0, True, False, False),
    (2, 1, True, True, True), (2, 1, False, False, False),
    (1, 1, False, True, False), (1, 1, True, False, False),
    (3, 1, False, True, False), (3, 1, True, False, False),
])
def test_pirate_vote_rule(position, offered, accept, text, code):
    """Default: the original code's rule (a 1-coin offer at odd position credits neither vote,
    spec §13 #22 revised); ``paper_text``: the paper text's rule (rejecting it is correct)."""
    assert scoring.pirate_vote_is_correct(position, offered, accept) is code
    for variant in ("paper", "repo", "per_round_votes"):
        assert scoring.pirate_vote_is_correct(position, offered, accept, variant) is code
    assert scoring.pirate_vote_is_correct(position, offered, accept, "paper_text") is text


def test_pirate_default_counts_a_rejected_one_coin_odd_offer_as_wrong():
    # O(4) = [99, 0, 1, 0]; position 1 rejects 1 coin (right by the text only), 2 rejects 0 (right),
    # 3 accepts 1 coin at an odd position (wrong by both rules).
    record = pirate_round(1, 4, [98, 1, 0, 1], ["accept", "reject", "reject", "accept"])
    assert scoring.pirate_round_stats(pirate_params(4, 100), record) == (4, 1, 3)
    assert scoring.pirate_round_stats(pirate_params(4, 100), record, "paper_text") == (4, 2, 3)
    assert score("pirate_game_v0", pirate_params(4, 100), [record]) == pytest.approx(196 / 200 * 50 + 1 / 3 * 50)


def test_pirate_all_nash_scores_100():
    record = pirate_round(1, 10, scoring.pirate_ne_proposal(10, 100),
                          ["accept", "reject"] * 5)
    assert record["n_accepts"] == 5 and record["accepted"]
    assert scoring.pirate_raw(pirate_params(), [record]) == (0, 1.0)
    assert score("pirate_game_v0", pirate_params(), [record]) == pytest.approx(100)


def test_pirate_paper_table_2_game():
    history = [
        pirate_round(1, 10, [100] + [0] * 9, ["accept"] + ["reject"] * 9),
        pirate_round(2, 10, [99, 0, 1, 0, 0, 0, 0, 0, 0],
                     ["accept", "reject", "accept", "accept", "reject", "reject", "reject", "reject", "accept"]),
        pirate_round(3, 10, [50, 1, 1, 1, 1, 1, 1, 44], ["accept"] * 8),
    ]
    stats = [scoring.pirate_round_stats(pirate_params(), r) for r in history]
    assert stats == [(8, 9, 9), (6, 6, 8), (94, 4, 7)]
    s8p, s8v = scoring.pirate_raw(pirate_params(), history)
    assert (s8p, s8v) == (36, pytest.approx(19 / 24))
    assert score("pirate_game_v0", pirate_params(), history) == pytest.approx(41.0 + 39.583, abs=0.01)
    assert round(score("pirate_game_v0", pirate_params(), history), 1) == 80.6
    per_round = (1 + 6 / 8 + 4 / 7) / 3
    assert score("pirate_game_v0", pirate_params(), history, variant="per_round_votes") == \
        pytest.approx(41 + per_round * 50)


def test_pirate_repo_variant_rescales_to_100_coins():
    params = pirate_params(10, 4)
    ne = pirate_round(1, 10, scoring.pirate_ne_proposal(10, 4), ["accept", "reject"] * 5)
    assert score("pirate_game_v0", params, [ne]) == pytest.approx(100)
    # Rescaled to 100 coins, the 4-coin NE [0,0,25,0,25,...] is 192 away from O(10,100) (spec §13 #21).
    assert scoring.pirate_raw(params, [ne], "repo")[0] == pytest.approx(192)


def test_pirate_lone_pirate_round_has_no_votes():
    """A lone pirate's round is recorded as [G] with no voters: L1 0 and nothing wrong (S8V 1)."""
    lone = {"round": 1, "proposer": 0, "proposal": [100], "votes": [True], "n_accepts": 1, "accepted": True}
    assert scoring.pirate_round_stats(pirate_params(1, 100), lone) == (0, 0, 0)
    assert score("pirate_game_v0", pirate_params(1, 100), [lone]) == pytest.approx(100)


def test_pirate_two_survivors_proposer_alone_passes():
    record = pirate_round(1, 2, [0, 100], ["accept", "reject"])
    assert record["accepted"]
    # [0,100] is 200 coins from O(2)=[100,0]; rejecting an offer of 100 is a wrong vote.
    assert scoring.pirate_raw(pirate_params(2, 100), [record]) == (200, 0.0)
    assert score("pirate_game_v0", pirate_params(2, 100), [record]) == 0.0


# --- dispatch and row ---------------------------------------------------------------------------

def test_unknown_game_and_variant_are_clear_errors():
    params, history = divide([[10] * N])
    with pytest.raises(ValueError, match="game must be one of"):
        score("chess_v0", params, history)
    with pytest.raises(ValueError, match="variant for divide_dollar_v0 must be one of paper, unclipped"):
        score("divide_dollar_v0", params, history, variant="repo")


def test_empty_history_is_a_clear_error():
    with pytest.raises(ValueError, match="history is empty"):
        score("public_goods_v0", {"tokens": 20}, [])


def test_default_variant_is_listed_first():
    for game in GAMES:
        assert scoring.VARIANTS[game][0] == "paper"


def test_table_row_mean_std_and_overall():
    runs = [{g: float(10 * i + k) for k, g in enumerate(GAMES)} for i in range(5)]
    row = table_row(runs)
    assert row["guess_two_thirds_v0"]["mean"] == pytest.approx(20)
    assert row["guess_two_thirds_v0"]["std"] == pytest.approx(math.sqrt(250))  # ddof=1
    assert row["overall"]["mean"] == pytest.approx(sum(row[g]["mean"] for g in GAMES) / 8)
    assert row["overall"]["n"] == 5
    single = table_row(runs[:1])
    assert single["overall"]["std"] == 0.0
    with pytest.raises(ValueError, match="runs is empty"):
        table_row([])


def test_gamma_t1_overall_from_published_game_scores():
    """Spec §1.1: T1 game scores average to the published overall 44.9."""
    t1 = dict(zip(GAMES, (65.4, 73.3, 68.1, 41.3, 4.0, 6.5, 20.0, 80.6)))
    assert round(table_row([t1])["overall"]["mean"], 1) == 44.9
