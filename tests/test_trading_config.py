"""The trading arena's arguments as one frozen TradingConfig: its fields are the env's arguments,
checked once (the market they name loaded) with one-line errors, and config() is its record."""
from __future__ import annotations

import json
from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from arena_envs.trading.config import TradingConfig
from arena_envs.trading.env import TradingEnv

SYNTHETIC = {"data": "synthetic", "history_start": "2025-04-01", "trade_start": "2025-05-01",
             "eval_start": "2025-06-02", "end": "2025-06-30"}



def test_config_records_the_values_played():
    """config() (run.json's record) in order: the data's label, the assets loaded, the dates as ISO
    days, the numbers and flags as plain floats, ints and bools."""
    env = TradingEnv(**SYNTHETIC, assets={"syb": "stock", "syc": "crypto"}, n_agents=np.int64(2), allow_short=0,
                     max_exposure=1, cost_bps=3, periods_per_year="calendar", random_window=5,
                     show_leaderboard=np.bool_(True))
    expected = {
        "data": "synthetic", "assets": ["SYB", "SYC"], "history_start": "2025-04-01", "trade_start": "2025-05-01",
        "eval_start": "2025-06-02", "end": "2025-06-30", "position_rule": "target", "allow_short": False,
        "max_exposure": 1.0, "default_size": 1.0, "n_agents": 2, "initial_capital": 100000.0, "exposure_drift": False,
        "book_mode": "per_asset", "max_gross_exposure": 1.0, "cost_bps": 3.0, "price_impact": 0.0,
        "reward_type": "return", "reward_during_warmup": True, "action_mode": "discrete", "text_price_window": 20,
        "history_window": 60, "max_news_items": 5, "include_instructions": True, "show_leaderboard": True,
        "max_obs_chars": 20000, "invalid_action": "hold", "periods_per_year": "calendar", "random_window": 5}
    config = env.config()
    assert list(config.items()) == list(expected.items())
    assert [type(v) for v in config.values()] == [type(v) for v in json.loads(json.dumps(config)).values()]
    settings = env.settings
    assert settings.periods == 365 and settings.asset_periods == (252, 365)
    assert settings.n_days == len(env.market.dates) - settings.first_row
    with pytest.raises(FrozenInstanceError):
        settings.n_agents = 3  # type: ignore[misc]


@pytest.mark.parametrize("kwargs, message", [
    ({"book_mode": "pooled"}, "book_mode must be one of per_asset, shared, got 'pooled'"),
    ({"n_agents": 0}, "n_agents must be an integer in 1..100, got 0"),
    ({"max_obs_chars": 999}, "max_obs_chars must be an integer in 1000..1000000, got 999"),
    ({"trade_start": "2025-06-10", "eval_start": "2025-06-02"},
     "dates must satisfy history_start <= trade_start <= eval_start <= end, got 2025-04-01, 2025-06-10, "
     "2025-06-02, 2025-06-30"),
    ({"random_window": 1}, "random_window must be None or an int in [2, 41] (trading days), got 1"),
    ({"initial_capital": 0}, "initial_capital must be a finite number > 0, got 0.0"),
    ({"periods_per_year": 0}, "periods_per_year must be an int > 0 or 'calendar', got 0"),
    ({"max_retries": 101}, "max_retries must be an integer in 0..100, got 101"),
])
def test_a_bad_argument_is_one_line_naming_it(kwargs, message):
    with pytest.raises(ValueError) as err:
        TradingConfig(**{**SYNTHETIC, **kwargs})
    assert str(err.value) == message
    with pytest.raises(ValueError) as err:
        TradingEnv(**{**SYNTHETIC, **kwargs})
    assert str(err.value) == message
