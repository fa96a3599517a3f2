"""Each game's frozen config holds the env's arguments: the same names, in order, with the same
defaults (the core's render_mode and max_cycles aside), so the config is the one place they live."""
from __future__ import annotations

import inspect
from dataclasses import fields

import pytest

from arena_envs.auction.config import AuctionConfig
from arena_envs.auction.env import AuctionEnv
from arena_envs.tank_battle.config import TankConfig
from arena_envs.tank_battle.env import TankBattleEnv
from arena_envs.trading.config import TradingConfig
from arena_envs.trading.env import TradingEnv


@pytest.mark.parametrize(("env_class", "config_class"), [
    (AuctionEnv, AuctionConfig), (TankBattleEnv, TankConfig), (TradingEnv, TradingConfig)])
def test_the_config_holds_every_argument_with_the_envs_default(env_class, config_class):
    arguments = [p for p in inspect.signature(env_class.__init__).parameters.values()
                 if p.name not in ("self", "render_mode", "max_cycles")]
    config_fields = [f for f in fields(config_class) if f.init]
    assert [p.name for p in arguments] == [f.name for f in config_fields]
    assert [p.default for p in arguments] == [f.default for f in config_fields]
