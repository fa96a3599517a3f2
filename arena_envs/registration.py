"""The suite's environments: one frozen :class:`EnvSpec` each, registered in PettingZoo's registry
as ``arena_envs/<name>-v<N>``.

``ENVIRONMENTS`` maps the versioned name (``auction_v0``) to its spec; it is the one list the
package's attributes, the registry, ``arena list``, the docs, the conformance suite, the runner and
its leaderboard read: one spec there gives a new environment all of them. Reading a spec imports no
game. ``make("auction_v0", **kwargs)`` builds an AEC env.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import pettingzoo
from pettingzoo import AECEnv

from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_choice

TRUESKILL = "trueskill"
WIS = "wis"
#: How a run's leaderboard may rate an environment's players; None: by its mean score and metrics.
RATINGS = (TRUESKILL, WIS, None)


@dataclass(frozen=True)
class EnvSpec:
    """One environment's facts.

    ``name``: the versioned name (``auction_v0``), also its entry module ``arena_envs.<name>``
    (``env()``, ``raw_env()``, and ``parallel_env()`` when ``parallel``); ``game``: the class the
    entry module builds, as ``"package.module:Class"`` (imported only by :meth:`game_class`);
    ``variants``: its documented variants (label -> constructor keyword arguments), each of which
    the conformance suite runs next to the defaults; ``rating``: how the run's leaderboard rates
    players (one of :data:`RATINGS`; the paper's own scoring); ``leaderboard_metrics``: the metrics
    the leaderboard's table shows beside ``score`` (None: all of them; every metric stays in
    ``leaderboard.json``); ``extras``: the pip extras its play needs beyond the base install.
    """

    name: str
    game: str
    parallel: bool
    variants: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    rating: str | None = None
    leaderboard_metrics: tuple[str, ...] | None = None
    extras: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.rating is not None:
            check_choice(f"{self.name} rating", self.rating, [TRUESKILL, WIS])

    @property
    def module(self) -> str:
        """The entry module's import path."""
        return f"arena_envs.{self.name}"

    def entry_module(self) -> ModuleType:
        return importlib.import_module(self.module)

    def game_class(self) -> type[AECEnv]:
        module, _, attribute = self.game.partition(":")
        cls: type[AECEnv] = getattr(importlib.import_module(module), attribute)
        return cls


_SPECS = (
    EnvSpec("auction_v0", "arena_envs.auction.env:AuctionEnv", False, variants={
        "amount": {"action_mode": "amount", "budgets": 3000, "item_order": "ascending"},
        "discount": {"enable_discount": True, "auto_withdraw_unaffordable": True, "tie_break": "lowest_seat",
                     "reward_mode": "items", "reveal_status": False},
        "paper_prompt": {"prompt": "paper", "tie_break": "repo"},
    }, rating=TRUESKILL,  # AucArena ranks its bidders with TrueSkill over the episodes
        leaderboard_metrics=("profit", "items_won", "money_left", "failed_bid_rate", "parse_failures",
                             "belief_error_rate")),
    EnvSpec("guess_two_thirds_v0", "arena_envs.gamma.guess:GuessTwoThirdsEnv", True, variants={
        "ratio_one": {"ratio": 1, "min_value": 10, "max_value": 30, "tie_rule": "first_in_index_order",
                      "score_variant": "repo"},
    }),
    EnvSpec("el_farol_v0", "arena_envs.gamma.el_farol:ElFarolEnv", True, variants={
        "explicit": {"mode": "explicit"},
        "cot_window": {"cot": True, "history_window": 2, "persona": "You are a cautious player.",
                       "reveal_own_id": True},
    }),
    EnvSpec("divide_dollar_v0", "arena_envs.gamma.divide_dollar:DivideDollarEnv", True, variants={
        "golds": {"golds": 7, "n_players": 3, "score_variant": "unclipped"},
    }),
    EnvSpec("public_goods_v0", "arena_envs.gamma.public_goods:PublicGoodsEnv", True, variants={
        "accumulating": {"reset": False, "token_init": "random", "n_players": 4},
    }),
    EnvSpec("diners_dilemma_v0", "arena_envs.gamma.diners_dilemma:DinersDilemmaEnv", True, variants={
        "prices": {"costly_price": 18, "costly_utility": 19, "n_players": 3},
    }),
    EnvSpec("sealed_bid_auction_v0", "arena_envs.gamma.sealed_bid_auction:SealedBidAuctionEnv", True, variants={
        "second_price": {"mode": "second", "score_variant": "second_price_diagnostic"},
        "no_overbid": {"allow_overbid": False, "valuation_rng": "env"},
    }),
    EnvSpec("battle_royale_v0", "arena_envs.gamma.battle_royale:BattleRoyaleEnv", False, variants={
        "three_capped": {"n_players": 3, "max_turns": 6},
        "given_rates": {"hit_rates": [30, 60, 90, 95], "max_turns": None, "score_variant": "per_player"},
    }),
    EnvSpec("tank_battle_v0", "arena_envs.tank_battle.env:TankBattleEnv", True, variants={
        **{f"stage{k}": {"stage": k} for k in range(2, 8)},
        "stage5_no_coop": {"stage": 5, "variant": "no_coop"},
        "stage6_no_coop_zh": {"stage": 6, "variant": "no_coop", "lang": "zh"},
        "stage7_8p": {"stage": 7, "variant": "8p", "layout_seed": 6},
        "stage3_discrete_grid": {"stage": 3, "action_mode": "discrete", "obs_mode": "grid", "layout_seed": 1},
        "stage4_text_strict": {"stage": 4, "obs_mode": "text", "parser": "strict", "layout_seed": 7},
    }),
    EnvSpec("trading_v0", "arena_envs.trading.env:TradingEnv", True, variants={
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
    }, leaderboard_metrics=("cr", "ar", "av", "sr", "mdd", "win_rate")),  # the paper's five, and the win rate
    EnvSpec("who_is_spy_v0", "arena_envs.who_is_spy.env:WhoIsSpyEnv", False, variants={
        "discrete": {"action_mode": "discrete", "reward_mode": "centered"},
        "zh_strict": {"language": "zh", "vote_parsing": "strict", "pair_order": "random"},
        "eight_two_spies": {"n_players": 8, "n_spies": 2, "max_rounds": 4, "allow_self_vote": True,
                            "allow_public_analysis": True, "reward_mode": "win_loss"},
    }, rating=WIS,  # WiS ranks its players by 100 + Σ score − games
        leaderboard_metrics=("won", "spy_win", "civilian_win", "vote_accuracy", "foul_rate", "survival_rounds")),
    EnvSpec("pirate_game_v0", "arena_envs.gamma.pirate_game:PirateGameEnv", False, variants={
        "small": {"n_players": 4, "golds": 5, "death_reward": -5, "score_variant": "repo"},
        "three_cot": {"n_players": 3, "golds": 1, "cot": True, "history_window": 1},
    }),
)

#: versioned name -> its spec; the one list every reader of the suite's environments reads.
ENVIRONMENTS: dict[str, EnvSpec] = {spec.name: spec for spec in _SPECS}

NAMESPACE = "arena_envs"


def registry_id(name: str) -> str:
    """``auction_v0`` -> ``arena_envs/auction-v0``."""
    base, _, version = name.rpartition("_v")
    return f"{NAMESPACE}/{base}-v{version}"


def unknown_environment(name: str) -> str:
    """The one-line message for a name that is not registered."""
    return f"unknown environment {excerpt(name)}; known: {', '.join(sorted(ENVIRONMENTS))}"


def env_spec(name: str) -> EnvSpec:
    """The spec of a versioned environment name, with a clear error (KeyError) for unknown names."""
    if name not in ENVIRONMENTS:
        raise KeyError(unknown_environment(name))
    return ENVIRONMENTS[name]


def env_module(name: str) -> ModuleType:
    """The entry module of a versioned environment name, with a clear error for unknown names."""
    return env_spec(name).entry_module()


def make(name: str, **kwargs: Any) -> AECEnv:
    """Build the wrapped AEC environment ``name`` (``auction_v0`` or ``arena_envs/auction-v0``)."""
    for short in ENVIRONMENTS:
        if name == registry_id(short):
            name = short
    return env_module(name).env(**kwargs)


def register_all() -> None:
    """Register every environment in PettingZoo's AEC (and, where offered, parallel) registry."""
    for name, spec in ENVIRONMENTS.items():
        env_id = registry_id(name)
        if env_id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", env_id, entry_point=f"{spec.module}:env")
        if spec.parallel and env_id not in pettingzoo.parallel_registry:
            pettingzoo.register("parallel", env_id, entry_point=f"{spec.module}:parallel_env")
