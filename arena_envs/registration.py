"""The suite's environments, registered in PettingZoo's registry as ``arena_envs/<name>-v<N>``.

``ENVIRONMENTS`` maps the versioned module name (``auction_v0``) to its :class:`EnvEntry` (entry
module, parallel or not, documented variants); it is the one list the CLI, the docs, the registry
and the conformance suite read: one line there gives a new environment all of them.
``make("auction_v0", **kwargs)`` builds an AEC env.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, NamedTuple

import pettingzoo
from pettingzoo import AECEnv

from arena_envs.core.answers import excerpt


class EnvEntry(NamedTuple):
    """One registered environment: its entry module (``env()``, ``raw_env()``), whether it offers
    ``parallel_env()``, and its documented variants (label -> constructor keyword arguments), each
    of which the conformance suite (``tests/test_conformance.py``) runs next to the defaults."""

    module: str
    parallel: bool
    variants: dict[str, dict[str, Any]] = {}


#: versioned name -> its entry; the one list the CLI, the docs, the registry and the tests read.
ENVIRONMENTS: dict[str, EnvEntry] = {
    "auction_v0": EnvEntry("arena_envs.auction_v0", False, {
        "amount": {"action_mode": "amount", "budgets": 3000, "item_order": "ascending"},
        "discount": {"enable_discount": True, "auto_withdraw_unaffordable": True, "tie_break": "lowest_seat",
                     "reward_mode": "items", "reveal_status": False},
        "paper_prompt": {"prompt": "paper", "tie_break": "repo"},
    }),
    "guess_two_thirds_v0": EnvEntry("arena_envs.guess_two_thirds_v0", True, {
        "ratio_one": {"ratio": 1, "min_value": 10, "max_value": 30, "tie_rule": "first_in_index_order",
                      "score_variant": "repo"},
    }),
    "el_farol_v0": EnvEntry("arena_envs.el_farol_v0", True, {
        "explicit": {"mode": "explicit"},
        "cot_window": {"cot": True, "history_window": 2, "persona": "You are a cautious player.",
                       "reveal_own_id": True},
    }),
    "divide_dollar_v0": EnvEntry("arena_envs.divide_dollar_v0", True, {
        "golds": {"golds": 7, "n_players": 3, "score_variant": "unclipped"},
    }),
    "public_goods_v0": EnvEntry("arena_envs.public_goods_v0", True, {
        "accumulating": {"reset": False, "token_init": "random", "n_players": 4},
    }),
    "diners_dilemma_v0": EnvEntry("arena_envs.diners_dilemma_v0", True, {
        "prices": {"costly_price": 18, "costly_utility": 19, "n_players": 3},
    }),
    "sealed_bid_auction_v0": EnvEntry("arena_envs.sealed_bid_auction_v0", True, {
        "second_price": {"mode": "second", "score_variant": "second_price_diagnostic"},
        "no_overbid": {"allow_overbid": False, "valuation_rng": "env"},
    }),
    "battle_royale_v0": EnvEntry("arena_envs.battle_royale_v0", False, {
        "three_capped": {"n_players": 3, "max_turns": 6},
        "given_rates": {"hit_rates": [30, 60, 90, 95], "max_turns": None, "score_variant": "per_player"},
    }),
    "tank_battle_v0": EnvEntry("arena_envs.tank_battle_v0", True, {
        **{f"stage{k}": {"stage": k} for k in range(2, 8)},
        "stage5_no_coop": {"stage": 5, "variant": "no_coop"},
        "stage6_no_coop_zh": {"stage": 6, "variant": "no_coop", "lang": "zh"},
        "stage7_8p": {"stage": 7, "variant": "8p", "layout_seed": 6},
        "stage3_discrete_grid": {"stage": 3, "action_mode": "discrete", "obs_mode": "grid", "layout_seed": 1},
        "stage4_text_strict": {"stage": 4, "obs_mode": "text", "parser": "strict", "layout_seed": 7},
    }),
    "trading_v0": EnvEntry("arena_envs.trading_v0", True, {
        "two_assets_weights": {"data": "synthetic", "assets": {"SYS": "stock", "SYC": "crypto"},
                               "history_start": "2025-04-01", "trade_start": "2025-05-01",
                               "eval_start": "2025-06-02", "end": "2025-06-30", "action_mode": "weights",
                               "periods_per_year": "calendar", "n_agents": 3},
        "signal_costs_long_only": {"data": "synthetic", "synthetic_seed": 3, "history_start": "2025-04-01",
                                   "trade_start": "2025-05-01", "eval_start": "2025-06-02", "end": "2025-06-30",
                                   "position_rule": "signal", "cost_bps": 10.0, "allow_short": False,
                                   "invalid_action": "flat", "max_news_items": 2},
        "shared_book": {"data": "synthetic", "assets": ["SYA", "SYB"], "history_start": "2025-04-01",
                        "trade_start": "2025-05-01", "eval_start": "2025-06-02", "end": "2025-06-30",
                        "book_mode": "shared", "price_impact": 0.1, "show_leaderboard": True,
                        "position_rule": "ladder", "default_size": 0.5},
        "log_random_window": {"reward_type": "log_return", "random_window": 30, "reward_during_warmup": False,
                              "n_agents": 2, "exposure_drift": True, "text_price_window": 5},
    }),
    "who_is_spy_v0": EnvEntry("arena_envs.who_is_spy_v0", False, {
        "discrete": {"action_mode": "discrete", "reward_mode": "centered"},
        "zh_strict": {"language": "zh", "vote_parsing": "strict", "pair_order": "random"},
        "eight_two_spies": {"n_players": 8, "n_spies": 2, "max_rounds": 4, "allow_self_vote": True,
                            "allow_public_analysis": True, "reward_mode": "win_loss"},
    }),
    "pirate_game_v0": EnvEntry("arena_envs.pirate_game_v0", False, {
        "small": {"n_players": 4, "golds": 5, "death_reward": -5, "score_variant": "repo"},
        "three_cot": {"n_players": 3, "golds": 1, "cot": True, "history_window": 1},
    }),
}

NAMESPACE = "arena_envs"


def registry_id(name: str) -> str:
    """``auction_v0`` -> ``arena_envs/auction-v0``."""
    base, _, version = name.rpartition("_v")
    return f"{NAMESPACE}/{base}-v{version}"


def env_module(name: str) -> ModuleType:
    """The entry module of a versioned environment name, with a clear error for unknown names."""
    if name not in ENVIRONMENTS:
        known = ", ".join(sorted(ENVIRONMENTS))
        raise KeyError(f"unknown environment {excerpt(name)}; known: {known}")
    return importlib.import_module(ENVIRONMENTS[name].module)


def make(name: str, **kwargs: Any) -> AECEnv:
    """Build the wrapped AEC environment ``name`` (``auction_v0`` or ``arena_envs/auction-v0``)."""
    for short in ENVIRONMENTS:
        if name == registry_id(short):
            name = short
    return env_module(name).env(**kwargs)


def register_all() -> None:
    """Register every environment in PettingZoo's AEC (and, where offered, parallel) registry."""
    for name, entry in ENVIRONMENTS.items():
        env_id = registry_id(name)
        if env_id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", env_id, entry_point=f"{entry.module}:env")
        if entry.parallel and env_id not in pettingzoo.parallel_registry:
            pettingzoo.register("parallel", env_id, entry_point=f"{entry.module}:parallel_env")
