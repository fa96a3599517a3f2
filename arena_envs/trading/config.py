"""The trading arena's options: :class:`TradingConfig` holds every argument of
:class:`~arena_envs.trading.env.TradingEnv` but the core's ``render_mode`` and ``max_cycles``, with
its default, checks them once when it is built (one-line ValueErrors), loads the market they
name, and gives the record of them the env's ``config()`` returns."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from arena_envs.core.arguments import MAX_RETRIES, check_choice, check_int, check_real
from arena_envs.trading.accounting import BOOK_MODES, REWARD_TYPES, Account, PositionRules
from arena_envs.trading.metrics import periods_per_year as resolve_periods
from arena_envs.trading.sources import MarketWindow, load_market, window_days

ACTION_MODES = ("discrete", "weights")
INVALID_ACTIONS = ("hold", "flat")
#: The limits of the sizes a trading environment takes (defaults: 4 agents, 1 asset, 60 bars of
#: history, a 20-bar price table, 5 news items, 20,000 characters, five months of data).
MAX_AGENTS = 100
MAX_ASSETS = 20
MAX_WINDOW = 1_000  # bars: history_window, text_price_window
MAX_NEWS_ITEMS = 100
MAX_OBS_CHARS = 1_000_000
#: the arguments ``config()`` records, in its order (``data`` and ``assets`` as loaded)
RECORDED = ("data", "assets", "history_start", "trade_start", "eval_start", "end", "position_rule", "allow_short",
            "max_exposure", "default_size", "n_agents", "initial_capital", "exposure_drift", "book_mode",
            "max_gross_exposure", "cost_bps", "price_impact", "reward_type", "reward_during_warmup", "action_mode",
            "text_price_window", "history_window", "max_news_items", "include_instructions", "show_leaderboard",
            "max_obs_chars", "invalid_action", "periods_per_year", "random_window")


@dataclass(frozen=True)
class TradingConfig:
    """The env's arguments (see ``docs/envs/trading.md``). Once checked, each field holds the value
    played: the dates as ISO days (``history_start`` the one loaded from), the numbers and flags as
    ints, floats and bools; ``data``, ``assets``, ``news``, ``periods_per_year`` and
    ``random_window`` as given. Derived: :attr:`window` the market loaded, :attr:`first_row` its
    row of ``trade_start``, :attr:`n_days` its trading days in ``[trade_start, end]``,
    :attr:`position_rules`, and :attr:`periods` (:attr:`asset_periods`) the periods per year of the
    whole book (of each asset's)."""

    data: Any = "arch"
    assets: Sequence[str] | Mapping[str, str] | None = None
    news: str | Path | None = None
    synthetic_seed: int = 0
    n_agents: int = 4
    history_start: str | None = None
    trade_start: str = "2018-05-01"
    eval_start: str = "2018-08-01"
    end: str = "2018-09-28"
    initial_capital: float = 100000.0
    position_rule: str = "target"
    allow_short: bool = True
    max_exposure: float = 1.0
    default_size: float = 1.0
    exposure_drift: bool = False
    book_mode: str = "per_asset"
    max_gross_exposure: float = 1.0
    cost_bps: float = 0.0
    price_impact: float = 0.0
    reward_type: str = "return"
    reward_during_warmup: bool = True
    action_mode: str = "discrete"
    text_price_window: int = 20
    history_window: int = 60
    max_news_items: int = 5
    include_instructions: bool = True
    show_leaderboard: bool = False
    max_obs_chars: int = 20000
    invalid_action: str = "hold"
    periods_per_year: int | str = 252
    random_window: int | None = None
    max_retries: int = 3
    window: MarketWindow = field(init=False, repr=False, compare=False)
    first_row: int = field(init=False, repr=False, compare=False)
    n_days: int = field(init=False, repr=False, compare=False)
    position_rules: PositionRules = field(init=False, repr=False, compare=False)
    periods: int = field(init=False, repr=False, compare=False)
    asset_periods: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        put = self._put
        for name, accepted in (("book_mode", BOOK_MODES), ("reward_type", REWARD_TYPES),
                               ("action_mode", ACTION_MODES), ("invalid_action", INVALID_ACTIONS)):
            check_choice(name, getattr(self, name), accepted)
        put("n_agents", check_int("n_agents", self.n_agents, 1, MAX_AGENTS))
        put("text_price_window", check_int("text_price_window", self.text_price_window, 1, MAX_WINDOW))
        put("history_window", check_int("history_window", self.history_window, 1, MAX_WINDOW))
        put("max_news_items", check_int("max_news_items", self.max_news_items, 0, MAX_NEWS_ITEMS))
        put("max_obs_chars", check_int("max_obs_chars", self.max_obs_chars, 1000, MAX_OBS_CHARS))
        put("price_impact", check_real("price_impact", self.price_impact, 0))
        if self.assets is not None:
            check_int("the number of assets", len(self.assets), 1, MAX_ASSETS)
        days = window_days(self.history_start, self.trade_start, self.eval_start, self.end)
        put("allow_short", bool(self.allow_short))
        put("max_exposure", float(self.max_exposure))
        put("default_size", float(self.default_size))
        put("position_rules", PositionRules(self.position_rule, self.allow_short, self.max_exposure,
                                            self.default_size))
        window = load_market(self.data, self.assets, self.news, self.synthetic_seed, days, self.history_window,
                             self.history_start is None)
        market = window.market
        put("window", window)
        put("history_start", window.history_start)
        for name, day in zip(("trade_start", "eval_start", "end"), days[1:]):
            put(name, str(day))
        put("first_row", int(np.searchsorted(market.dates, days[1])))
        put("n_days", len(market.dates) - self.first_row)
        if self.n_days < 2:
            raise ValueError(f"the window {self.trade_start}..{self.end} has {self.n_days} trading day(s) of "
                             f"{', '.join(market.assets)}; it needs at least 2 (one decision)")
        rows = self.random_window
        if rows is not None and (isinstance(rows, bool) or not isinstance(rows, int) or not 2 <= rows <= self.n_days):
            raise ValueError(f"random_window must be None or an int in [2, {self.n_days}] (trading days), "
                             f"got {rows!r}")
        put("initial_capital", float(self.initial_capital))
        put("exposure_drift", bool(self.exposure_drift))
        put("max_gross_exposure", float(self.max_gross_exposure))
        put("cost_bps", float(self.cost_bps))
        for name in ("reward_during_warmup", "include_instructions", "show_leaderboard"):
            put(name, bool(getattr(self, name)))
        Account(market.assets, self.initial_capital, cost_bps=self.cost_bps, book_mode=self.book_mode,
                max_gross_exposure=self.max_gross_exposure)  # checks the account options
        put("periods", resolve_periods(self.periods_per_year, market.asset_class))
        put("asset_periods", tuple(resolve_periods(self.periods_per_year, (c,)) for c in market.asset_class))
        put("max_retries", check_int("max_retries", self.max_retries, 0, MAX_RETRIES))

    def _put(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)

    def record(self) -> dict[str, Any]:
        """The arguments as a run records them (the env's ``config()``): those of :data:`RECORDED`,
        ``data`` as the data's label and ``assets`` as the symbols loaded."""
        record = {name: getattr(self, name) for name in RECORDED}
        record["data"], record["assets"] = self.window.label, list(self.window.market.assets)
        return record
