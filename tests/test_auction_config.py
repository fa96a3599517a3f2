"""The auction's arguments as one frozen AuctionConfig: its fields are the env's arguments, checked
once with one-line errors, and config() is its record."""
from __future__ import annotations

import json
from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from arena_envs import auction_v0
from arena_envs.auction.config import AuctionConfig
from arena_envs.auction.items import TABLE1_ITEMS


def test_config_records_the_values_played():
    """config() (run.json's record) in order: the items as dicts, one entry per bidder, plain values."""
    env = auction_v0.env(n_bidders=np.int64(2), budgets=[500, 600], desires="maximize_items",
                         tie_break=("bidder_2", "bidder_1"), max_steps=np.int64(40))
    expected = {
        "items": [item.to_dict() for item in TABLE1_ITEMS], "item_order": "random", "n_bidders": 2,
        "budgets": [500, 600], "desires": ["maximize_items", "maximize_items"], "overestimate_percent": [10, 10],
        "min_markup_pct": 10, "action_mode": "discrete", "max_retries": 3, "reveal_status": True, "prompt": "full",
        "belief_match": "exact", "tie_break": ["bidder_2", "bidder_1"], "enable_discount": False,
        "auto_withdraw_unaffordable": False, "reward_mode": "by_desire", "invalid_action_penalty": 0.0,
        "discrete_levels": 21, "max_steps": 40}
    config = env.unwrapped.config()
    assert list(config.items()) == list(expected.items())
    assert [type(v) for v in config.values()] == [type(v) for v in json.loads(json.dumps(config)).values()]
    assert auction_v0.env(tie_break=lambda tied, context: tied[0]).unwrapped.config()["tie_break"] == "callable"


def test_the_settings_are_checked_once_and_frozen():
    settings = auction_v0.env(budgets=[1, 2, 3]).unwrapped.settings
    assert settings.budgets == (1, 2, 3) and settings.desires == ("maximize_profit",) * 3
    assert settings.agents == ["bidder_1", "bidder_2", "bidder_3"]
    with pytest.raises(FrozenInstanceError):
        settings.prompt = "paper"  # type: ignore[misc]


@pytest.mark.parametrize("kwargs, message", [
    ({"n_bidders": 1}, "n_bidders must be an integer in 2..100, got 1"),
    ({"item_order": "shuffled"}, "item_order must be one of ('random', 'ascending', 'descending', 'given'), "
                                 "got 'shuffled'"),
    ({"tie_break": ["bidder_4"]}, "a scripted tie_break lists agents bidder_1..bidder_3, got ['bidder_4']"),
    ({"tie_break": "coin"}, "tie_break must be one of ('random', 'repo', 'lowest_seat'), a list of agents or a "
                            "callable, got 'coin'"),
    ({"budgets": [1, 2]}, "budgets needs 3 entries (one per bidder), got 2"),
    ({"desires": "greed"}, "desires must be among ('maximize_profit', 'maximize_items'), got ['greed', 'greed', "
                           "'greed']"),
    ({"overestimate_percent": 101}, "overestimate_percent must be an integer in -100..100, got 101"),
    ({"max_retries": -1}, "max_retries must be an integer in 0..100, got -1"),
])
def test_a_bad_argument_is_one_line_naming_it(kwargs, message):
    with pytest.raises(ValueError) as err:
        AuctionConfig(**kwargs)
    assert str(err.value) == message
    with pytest.raises(ValueError) as err:
        auction_v0.env(**kwargs)
    assert str(err.value) == message
