"""γ-Bench's history-driven and extreme rule players (baselines/gamma/adaptive.py): best responses,
level-k, contrarian, greedy, conditional and tit-for-tat players that read the rounds so far."""
from __future__ import annotations

import pytest

from arena_envs.registration import env_module
from arena_envs.runner.policy_specs import make_policy
from baselines.gamma.adaptive import (
    DinersMajorityTFT,
    DivideAdaptive,
    DivideGreedy,
    ElFarolContrarian,
    GuessBestResponse,
    GuessLevelK,
    PublicGoodsConditional,
    PublicGoodsFull,
    SealedBidHalf,
)
from baselines.gamma.fixed import AlwaysCostly, FreeRider, ZeroBid
from tests.play_helpers import play


def played(name: str, policies, seed: int = 0, **kwargs):
    return play(env_module(name).env(**kwargs), policies, seed)


def column(raw, key: str, seat: int) -> list:
    return [record[key][seat] for record in raw.history]


@pytest.mark.parametrize("name, policy, score", [
    ("divide_dollar_v0", DivideGreedy, 0.0), ("public_goods_v0", PublicGoodsFull, 0.0),
    ("sealed_bid_auction_v0", ZeroBid, 48.325)])
def test_all_seats_score_what_the_spec_says(name, policy, score):
    assert played(name, [policy() for _ in range(10)]).compute_score() == pytest.approx(score)


def test_best_response_to_last_mean_walks_down_to_the_equilibrium():
    raw = played("guess_two_thirds_v0", [GuessBestResponse() for _ in range(10)], n_rounds=10)
    # 2/3 of 50, then 2/3 of each round's mean, rounded half up
    assert column(raw, "choices", 0) == [33, 22, 15, 10, 7, 5, 3, 2, 1, 1]


@pytest.mark.parametrize("k, choice", [(0, 50), (1, 33), (2, 22), (3, 15)])
def test_level_k_answers_mid_times_ratio_to_the_k(k, choice):
    raw = played("guess_two_thirds_v0", [GuessLevelK(k=k) for _ in range(10)], n_rounds=3)
    assert column(raw, "choices", 4) == [choice] * 3
    with pytest.raises(ValueError, match="k must"):
        GuessLevelK(k=-1)


def test_contrarians_go_when_the_bar_was_not_crowded():
    raw = played("el_farol_v0", [ElFarolContrarian() for _ in range(10)], seed=1, mode="explicit", n_rounds=8)
    attendance = [sum(record["go"]) for record in raw.history]
    expected = attendance[:1]
    for _ in range(7):  # everyone saw the same rate: all go after <= 60 %, all stay after more
        expected.append(10 if expected[-1] <= 6 else 0)
    assert attendance == expected


def test_contrarian_without_an_observed_rate_plays_the_mixed_strategy():
    # implicit mode: who stayed home does not learn the attendance and keeps mixing with p = R
    raw = played("el_farol_v0", [ElFarolContrarian() for _ in range(10)], seed=3, n_rounds=40)
    goes = [sum(record["go"]) for record in raw.history]
    assert any(0 < g < 10 for g in goes[1:])


def test_adaptive_divider_steps_up_after_success_and_down_after_failure():
    raw = played("divide_dollar_v0", [DivideAdaptive() for _ in range(10)], n_rounds=7)
    assert column(raw, "bids", 3) == [10, 11, 9, 10, 11, 9, 10]  # totals 100 ok, 110 over, 90 ok...


def test_conditional_contributor_follows_the_last_mean():
    raw = played("public_goods_v0", [FreeRider()] + [PublicGoodsConditional() for _ in range(9)], n_rounds=8)
    # T/2 first; then round(9 x c / 10) half up, which settles at 5 (4.5 rounds up)
    assert column(raw, "contributions", 1) == [10, 9, 8, 7, 6, 5, 5, 5]


@pytest.mark.parametrize("n_costly, later", [(6, "costly"), (5, "costly"), (4, "cheap")])
def test_majority_tit_for_tat(n_costly, later):
    policies = [AlwaysCostly() for _ in range(n_costly)] + [DinersMajorityTFT() for _ in range(10 - n_costly)]
    raw = played("diners_dilemma_v0", policies, n_rounds=4)
    assert column(raw, "orders", 9) == ["cheap"] + [later] * 3  # a 5-5 tie is not a cheap majority


def test_half_bidder_bids_half_its_valuation():
    raw = played("sealed_bid_auction_v0", [SealedBidHalf() for _ in range(10)], n_rounds=5)
    assert all(b == v // 2 for record in raw.history for b, v in zip(record["bids"], record["valuations"]))


@pytest.mark.parametrize("env, spec, cls", [
    ("guess_two_thirds_v0", "level_k:k=2", GuessLevelK),
    ("guess_two_thirds_v0", "best_response_last", GuessBestResponse),
    ("el_farol_v0", "contrarian", ElFarolContrarian), ("divide_dollar_v0", "adaptive", DivideAdaptive),
    ("divide_dollar_v0", "greedy", DivideGreedy), ("public_goods_v0", "full", PublicGoodsFull),
    ("public_goods_v0", "conditional", PublicGoodsConditional),
    ("diners_dilemma_v0", "majority_tft", DinersMajorityTFT),
    ("sealed_bid_auction_v0", "half", SealedBidHalf), ("sealed_bid_auction_v0", "zero", ZeroBid)])
def test_spec_names_resolve(env, spec, cls):
    assert isinstance(make_policy(spec, env), cls)
