"""``trading_v0``: the Agent Market Arena replay as a PettingZoo AEC environment (spec §7).

Every agent (``trader_0`` ...) trades the same replayed market on its own account. A decision day
is one cycle: each live agent decides once, in order; the decisions stay buffered (no one sees
another's) until the last one is in, then they are applied at once: exposures set at the day's
close, costs paid, the market advances to the next trading day and every agent gets its step
return as reward (§4.3, §7.5). ``n`` trading days in ``[trade_start, end]`` give ``n - 1`` cycles.

What an agent sees for day ``d`` comes from bars dated ``<= d`` and news visible by ``d``'s
cut-off only (the prefix ``Market.until(d)`` would give): the market part of the day (asset
blocks, features, mask, snapshot views) is built once per day and shared by every agent; only the
account part is per agent.

Actions: a ``str`` (the lenient parser of :mod:`arena_envs.trading.parser`), the native action
(``discrete``: ``Discrete(3)`` / ``MultiDiscrete([3]*N)``, 0 HOLD, 1 BUY, 2 SELL; ``weights``: a
``Box`` of target exposures), an :class:`~arena_envs.trading.accounting.Order` (for every asset),
a ``{symbol: Order | str}`` dict or a JSON-form dict. An unreadable answer is asked again up to
``max_retries`` times, then the fallback applies (HOLD everywhere, or TARGET 0 with
``invalid_action="flat"``) and the decision counts as INVALID.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import numpy as np
from gymnasium import spaces

from arena_envs.core import AnswerConstraint, InvalidAnswer, SimultaneousPhase, TextAECEnv
from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_choice, check_int, check_real
from arena_envs.trading import text as tx
from arena_envs.trading.accounting import (
    BOOK_MODES,
    HOLD,
    REWARD_TYPES,
    Account,
    Advance,
    Order,
    PositionRules,
    impact_rates,
    is_noop,
    price_returns,
    step_reward,
)
from arena_envs.trading.data import ArchSource, CryptoDatabaseSource, CsvSource, DataSource, Market, as_day
from arena_envs.trading.features import FEATURE_BOUND, AssetHistory, feature_names
from arena_envs.trading.metrics import Decision, behaviour_stats, five_metrics, window_returns
from arena_envs.trading.metrics import periods_per_year as resolve_periods
from arena_envs.trading.parser import ParseError, action_instructions, decision_constraint, parse_action
from arena_envs.trading.snapshot import MarketDay, Snapshot
from arena_envs.trading.synthetic import SyntheticSource, trading_days

ACTION_MODES = ("discrete", "weights")
INVALID_ACTIONS = ("hold", "flat")
#: Discrete index -> order kind (spec §7.4).
DISCRETE_KINDS = ("HOLD", "BUY", "SELL")
NAMED_DATA = ("arch", "crypto", "synthetic")
RECENT_DECISIONS = 5
RAW_CHARS = 2000
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
#: The limits of the sizes a trading environment takes (defaults: 4 agents, 1 asset, 60 bars of
#: history, a 20-bar price table, 5 news items, 20,000 characters, five months of data).
MAX_AGENTS = 100
MAX_ASSETS = 20
MAX_WINDOW = 1_000  # bars: history_window, text_price_window
MAX_NEWS_ITEMS = 100
MAX_OBS_CHARS = 1_000_000
MAX_CALENDAR_DAYS = 36_600  # from the history start to the end: 100 years
#: A synthetic market is generated day by day: at most this many asset-days (assets x calendar days
#: from the history start to the end; ten years of one asset build in about a second).
MAX_SYNTHETIC_ASSET_DAYS = 3_660


class Move(NamedTuple):
    """One agent's decision: an order per asset (``assets`` order) and the parser's warnings."""

    orders: tuple[Order, ...]
    warnings: tuple[str, ...] = ()


@lru_cache(maxsize=4)
def _named_source(name: str) -> DataSource:
    """The shipped real-data sources, read once per process (their markets are read-only)."""
    return ArchSource() if name == "arch" else CryptoDatabaseSource()


@lru_cache(maxsize=16)
def _synthetic_source(seed: int, classes: tuple[tuple[str, str], ...], start: str, end: str) -> DataSource:
    return SyntheticSource(seed=seed, assets=dict(classes), start=start, end=end)


def _is_file(path: Path) -> bool:
    """Whether ``path`` names a file (a name the file system refuses, e.g. too long, names none)."""
    try:
        return path.is_file()
    except OSError:
        return False


def resolve_source(data: Any, assets: Sequence[str] | Mapping[str, str] | None, news: str | Path | None,
                   synthetic_seed: int, start: str, end: str) -> DataSource:
    """The data source named by the ``data`` option (module docstring of :mod:`arena_envs.trading_v0`)."""
    if hasattr(data, "load") and hasattr(data, "asset_names"):
        return data  # type: ignore[no-any-return]
    if data in ("arch", "crypto"):
        return _named_source(data)
    if data == "synthetic":
        names = assets or ("SYN",)
        classes = dict(names) if isinstance(names, Mapping) else {str(a): "stock" for a in names}
        return _synthetic_source(int(synthetic_seed), tuple((k.upper(), v) for k, v in classes.items()), start, end)
    if isinstance(data, (str, Path)) and _is_file(Path(data)):
        return CsvSource(data, news)
    raise ValueError(f"data {excerpt(data)}: accepted: 'arch', 'crypto', 'synthetic', the path of a CSV file "
                     f"or a DataSource")


def bars_before(market: Market, day: np.datetime64, count: int) -> np.datetime64:
    """The latest date from which every asset of ``market`` has ``count`` bars before ``day`` (its
    first date where an asset has fewer)."""
    starts = []
    for j in range(len(market.assets)):
        own = market.dates[~np.isnan(market.close[:, j]) & (market.dates < day)]
        starts.append(own[-count] if own.size >= count else market.dates[0])
    return min(starts, default=day)


def synthetic_history_start(assets: Sequence[str] | Mapping[str, str] | None, day: np.datetime64,
                            count: int) -> np.datetime64:
    """The history start of a named synthetic market: ``count`` trading days of each asset class
    before ``day`` (on the calendars :func:`~arena_envs.trading.synthetic.trading_days` generates)."""
    classes = set(assets.values()) if isinstance(assets, Mapping) else {"stock"}
    span = np.timedelta64(2 * count + 14, "D")  # more calendar days than ``count`` trading days need
    return min(trading_days(day - span, day - np.timedelta64(1, "D"), c)[-count] for c in classes)


def _span(order: Order) -> str:
    """An order as the text of a decision (``BUY 0.5``, ``TARGET -0.3``, ``HOLD``)."""
    if order.kind == "TARGET":
        return f"TARGET {order.target:+.4g}"
    return order.kind if order.size is None else f"{order.kind} {order.size:.4g}"


def _jsonable_number(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


class TradingEnv(TextAECEnv):
    """The AMA trading arena (spec §7); keyword options as in :mod:`arena_envs.trading_v0`.

    ``history_start=None`` (the default) loads the bars from the latest date that still gives every
    asset ``history_window`` trading days before ``trade_start`` (from the data's first day when it
    has fewer); an explicit date is used as given.
    """

    metadata: ClassVar[dict[str, Any]] = {"name": "trading_v0", "render_modes": ["ansi", "human"],
                                          "is_parallelizable": True}

    def __init__(self, *, data: Any = "arch", assets: Sequence[str] | Mapping[str, str] | None = None,
                 news: str | Path | None = None, synthetic_seed: int = 0, n_agents: int = 4,
                 history_start: str | None = None, trade_start: str = "2018-05-01",
                 eval_start: str = "2018-08-01", end: str = "2018-09-28", initial_capital: float = 100000.0,
                 position_rule: str = "target", allow_short: bool = True, max_exposure: float = 1.0,
                 default_size: float = 1.0, exposure_drift: bool = False, book_mode: str = "per_asset",
                 max_gross_exposure: float = 1.0, cost_bps: float = 0.0, price_impact: float = 0.0,
                 reward_type: str = "return", reward_during_warmup: bool = True, action_mode: str = "discrete",
                 text_price_window: int = 20, history_window: int = 60, max_news_items: int = 5,
                 include_instructions: bool = True, show_leaderboard: bool = False, max_obs_chars: int = 20000,
                 invalid_action: str = "hold", periods_per_year: int | str = 252, max_cycles: int | None = None,
                 random_window: int | None = None, max_retries: int = 3, render_mode: str | None = None):
        self._check_options(n_agents=n_agents, book_mode=book_mode, reward_type=reward_type,
                            action_mode=action_mode, invalid_action=invalid_action, text_price_window=text_price_window,
                            history_window=history_window, max_news_items=max_news_items,
                            max_obs_chars=max_obs_chars, price_impact=price_impact)
        if assets is not None:
            check_int("the number of assets", len(assets), 1, MAX_ASSETS)
        days = [as_day(d) for d in (trade_start if history_start is None else history_start, trade_start,
                                    eval_start, end)]
        if not days[0] <= days[1] <= days[2] <= days[3]:
            raise ValueError(f"dates must satisfy history_start <= trade_start <= eval_start <= end, got "
                             f"{history_start}, {trade_start}, {eval_start}, {end}")
        self.trade_start, self.eval_start, self.end = (str(d) for d in days[1:])
        self.rules = PositionRules(position_rule, bool(allow_short), float(max_exposure), float(default_size))
        if history_start is None and data == "synthetic":  # its bars are generated from the history start
            days[0] = synthetic_history_start(assets, days[1], int(history_window))
        source = resolve_source(data, assets, news, synthetic_seed, str(days[0]), self.end)
        if data == "synthetic":
            names = None  # the synthetic market is made of the assets asked for
        else:
            names = [source.asset_names()[0]] if assets is None else [str(a).upper() for a in assets]
            if history_start is None:
                days[0] = bars_before(source.load(names, None, days[1]), days[1], int(history_window))
        self.history_start = str(days[0])
        span = int((days[3] - days[0]) / np.timedelta64(1, "D"))
        if span > MAX_CALENDAR_DAYS:
            raise ValueError(f"the data window {self.history_start}..{self.end} spans {span} days; at most "
                             f"{MAX_CALENDAR_DAYS} (history_start, or trade_start less history_window bars, to end)")
        generated = span * (len(assets) if assets else 1)
        if data == "synthetic" and generated > MAX_SYNTHETIC_ASSET_DAYS:
            raise ValueError(f"a synthetic market over {self.history_start}..{self.end} is {generated} asset-days "
                             f"(assets x days); at most {MAX_SYNTHETIC_ASSET_DAYS}: fewer assets or a shorter window")
        self.market: Market = source.load(names, self.history_start, self.end)
        self.assets: tuple[str, ...] = self.market.assets
        self._data_label = data if isinstance(data, str) else source.label
        self.n_assets = len(self.assets)
        dates = self.market.dates
        self._first_row = int(np.searchsorted(dates, days[1]))
        self.n_days = len(dates) - self._first_row  # trading days in [trade_start, end]
        if self.n_days < 2:
            raise ValueError(f"the window {self.trade_start}..{self.end} has {self.n_days} trading day(s) of "
                             f"{', '.join(self.assets)}; it needs at least 2 (one decision)")
        if random_window is not None and (isinstance(random_window, bool) or not isinstance(random_window, int)
                                          or not 2 <= random_window <= self.n_days):
            raise ValueError(f"random_window must be None or an int in [2, {self.n_days}] (trading days), "
                             f"got {random_window!r}")
        self.options: dict[str, Any] = dict(
            n_agents=n_agents, initial_capital=float(initial_capital), exposure_drift=bool(exposure_drift),
            book_mode=book_mode, max_gross_exposure=float(max_gross_exposure), cost_bps=float(cost_bps),
            price_impact=float(price_impact), reward_type=reward_type, reward_during_warmup=bool(reward_during_warmup),
            action_mode=action_mode, text_price_window=int(text_price_window), history_window=int(history_window),
            max_news_items=int(max_news_items), include_instructions=bool(include_instructions),
            show_leaderboard=bool(show_leaderboard), max_obs_chars=int(max_obs_chars), invalid_action=invalid_action,
            periods_per_year=periods_per_year, random_window=random_window)
        Account(self.assets, float(initial_capital), cost_bps=float(cost_bps), book_mode=book_mode,
                max_gross_exposure=float(max_gross_exposure))  # checks the account options once, here
        self.periods = resolve_periods(periods_per_year, self.market.asset_class)
        self._asset_periods = [resolve_periods(periods_per_year, (c,)) for c in self.market.asset_class]
        self._prepare_market()
        self._instructions = action_instructions(self.assets, position_rule=position_rule,
                                                 allow_short=bool(allow_short), max_exposure=float(max_exposure),
                                                 default_size=float(default_size))
        self._constraint = decision_constraint(self.assets)
        agents = [f"trader_{i}" for i in range(n_agents)]
        if action_mode == "weights":
            lo, hi = self.rules.bounds
            action_space: spaces.Space[Any] = spaces.Box(lo, hi, shape=(self.n_assets,), dtype=np.float32)
        elif self.n_assets == 1:
            action_space = spaces.Discrete(3)
        else:
            action_space = spaces.MultiDiscrete([3] * self.n_assets)
        super().__init__(agents=agents, action_spaces={a: action_space for a in agents},
                         feature_names=feature_names(self.assets), feature_low=-FEATURE_BOUND,
                         feature_high=FEATURE_BOUND, max_retries=max_retries, render_mode=render_mode,
                         max_text_length=int(max_obs_chars), max_cycles=max_cycles)
        self._fallback_orders = (Order("TARGET", target=0.0) if invalid_action == "flat" else HOLD,) * self.n_assets

    @staticmethod
    def _check_options(*, n_agents: int, book_mode: str, reward_type: str, action_mode: str, invalid_action: str,
                       text_price_window: int, history_window: int, max_news_items: int, max_obs_chars: int,
                       price_impact: float) -> None:
        choices = {"book_mode": (book_mode, BOOK_MODES), "reward_type": (reward_type, REWARD_TYPES),
                   "action_mode": (action_mode, ACTION_MODES), "invalid_action": (invalid_action, INVALID_ACTIONS)}
        for name, (value, accepted) in choices.items():
            check_choice(name, value, accepted)
        check_int("n_agents", n_agents, 1, MAX_AGENTS)
        check_int("text_price_window", text_price_window, 1, MAX_WINDOW)
        check_int("history_window", history_window, 1, MAX_WINDOW)
        check_int("max_news_items", max_news_items, 0, MAX_NEWS_ITEMS)
        check_int("max_obs_chars", max_obs_chars, 1000, MAX_OBS_CHARS)
        check_real("price_impact", price_impact, 0)

    def _prepare_market(self) -> None:
        """Per-asset histories, formatted price rows and the returns each advance realises (once)."""
        m = self.market
        self._histories = tuple(AssetHistory.from_market(m, j) for j in range(self.n_assets))
        self._rows = tuple(tx.bar_rows(h) for h in self._histories)
        self._open = m.is_open
        own_end = np.stack([h.own_end for h in self._histories], axis=1)
        self._own_last = own_end - 1  # own index of each asset's latest bar per row (-1: none yet)
        last = np.stack([np.where(h.own_end > 0, h.close[np.maximum(h.own_end - 1, 0)], np.nan)
                         for h in self._histories], axis=1)  # last close at or before each row
        self._last_close = last
        ret = np.zeros_like(last)
        with np.errstate(invalid="ignore"):
            ret[1:] = np.where(self._open[1:] & (own_end[:-1] > 0), m.close[1:] / last[:-1] - 1.0, 0.0)
        self._asset_ret = np.nan_to_num(ret)
        self._date_str = [str(d) for d in m.dates]
        self._weekday = [_WEEKDAYS[int((d.astype("datetime64[D]").astype(np.int64) + 3) % 7)] for d in m.dates]
        self._has_news = bool(m.news)
        self._data_line = f"DATA: {tx.ascii_text(m.label)}"
        self._masks: dict[tuple[bool, ...], Any] = {}
        self._asset_set = frozenset(self.assets)

    # ------------------------------------------------------------------ public helpers

    def action_instructions(self) -> str:
        """The action grammar every policy's prompt includes verbatim (spec §2.4)."""
        return self._instructions

    def answer_constraint(self, agent: str | None = None) -> AnswerConstraint | None:
        return self._constraint

    def config(self) -> dict[str, Any]:
        return {"data": self._data_label, "assets": list(self.assets), "history_start": self.history_start,
                "trade_start": self.trade_start, "eval_start": self.eval_start, "end": self.end,
                "position_rule": self.rules.rule, "allow_short": self.rules.allow_short,
                "max_exposure": self.rules.max_exposure, "default_size": self.rules.default_size,
                **self.options}

    # ------------------------------------------------------------------ episode

    def _start_game(self, options: dict[str, Any]) -> None:
        first, last = self._first_row, len(self.market.dates) - 1
        window = self.options["random_window"]
        if window is not None:
            first = first + int(self.np_random.integers(0, self.n_days - window + 1))
            last = first + window - 1
        self._start, self._stop = first, last
        self._row = first
        opened = self._open[first:last + 1]
        # an asset's last open day in the window takes no order: no later close would realise its cost
        last_open = np.array([first + int(np.flatnonzero(opened[:, j])[-1]) if opened[:, j].any() else first
                              for j in range(self.n_assets)])
        self._last_open = last_open
        rows = np.arange(len(self.market.dates))[:, None]
        self._tradable_rows = self._open & (rows < last_open)  # what takes orders, per row and asset
        # the first evaluation decision is the one whose return is realised after eval_start: the
        # decision of the last day <= eval_start (window_returns' rule)
        self._eval_row = max(int(np.searchsorted(self.market.dates, as_day(self.eval_start), side="right")) - 1, 0)
        o = self.options
        self.accounts = {a: Account(self.assets, o["initial_capital"], cost_bps=o["cost_bps"], book_mode=o["book_mode"],
                                    max_gross_exposure=o["max_gross_exposure"], exposure_drift=o["exposure_drift"])
                         for a in self.possible_agents}
        #: per agent, one entry per decision it took: (market row, order kind applied per asset,
        #: exposures before, exposures after, no-op per asset, invalid); the metrics read it
        self._log: dict[str, list[tuple[int, tuple[str, ...], list[float], list[float], tuple[bool, ...], bool]]] = {
            a: [] for a in self.possible_agents}
        self._recent: dict[str, list[tuple[str, str, float | None]]] = {a: [] for a in self.possible_agents}
        self._recent_text: dict[str, list[str]] = {a: [] for a in self.possible_agents}
        self._results: dict[str, dict[str, Any]] = {a: {} for a in self.possible_agents}
        #: per agent that decided today: (its parse info, shown in its info until the day resolves;
        #: the raw answer; whether it fell back)
        self._pending: dict[str, tuple[dict[str, Any], str | None, bool]] = {}
        self._errors: dict[str, str] = {}
        #: what each agent's info was last built from (see _refresh_info)
        self._info_keys: dict[str, tuple[int, bool, int, bool] | None] = {}
        self._phase: SimultaneousPhase[str, Move] = SimultaneousPhase(self.possible_agents)
        self._clear_day()
        closes0 = [_jsonable_number(float(c)) for c in self._last_close[first]]
        assert self.record is not None
        self.record.add("start", dates=self._date_str[first:last + 1], assets=list(self.assets), closes0=closes0,
                        initial_capital=o["initial_capital"], label=self.market.label, synthetic=self.market.synthetic)

    def _clear_day(self) -> None:
        self._day: MarketDay | None = None
        self._day_parts: tuple[str, list[float], Any, str | None] | None = None
        self._texts: dict[str, str] = {}
        self._feats: dict[str, np.ndarray] = {}
        self._snaps: dict[str, Snapshot] = {}
        self._infos: dict[str, dict[str, Any]] = {}
        self._acct_values: dict[str, tuple[Any, ...]] = {}

    @property
    def step_index(self) -> int:
        """Decision cycles completed in this episode (the current day's position in the window)."""
        return self._row - self._start

    @property
    def n_cycles(self) -> int:
        return self._stop - self._start

    @property
    def phase_name(self) -> str:
        return "eval" if self._row >= self._eval_row else "warmup"

    # ------------------------------------------------------------------ the market part of a day

    def market_day(self) -> MarketDay:
        """The current day's market view (built once per day)."""
        if self._day is None:
            row, m = self._row, self.market
            date = self._date_str[row]
            news: list[tuple[Any, ...]] = []
            market_news: list[tuple[Any, ...]] = []
            for sym in self.assets:
                if self._has_news:  # the digest reads items visible by the day's cut-off only
                    k = self.options["max_news_items"]
                    news.append(tuple(m.digest(sym, m.dates[row], k)))
                    market_news.append(tuple(m.digest(sym, m.dates[row], k, market_wide=True)))
                else:
                    news.append(())
                    market_news.append(())
            self._day = MarketDay(date, row, self.assets, self._histories, tuple(self._own_last[row].tolist()),
                                  tuple(self._open[row].tolist()), tuple(news), tuple(market_news),
                                  self.options["history_window"])
        return self._day

    def _market_parts(self) -> tuple[str, list[float], Any, str | None]:
        """(market text block, market features with the per-agent slots zero, action mask,
        leaderboard line) of the current day."""
        if self._day_parts is None:
            day = self.market_day()
            o = self.options
            blocks = [tx.asset_block(h, self._rows[j], day.own_last[j], day.is_open[j], day.date,
                                     o["text_price_window"], self._asset_periods[j], day.news[j], day.market_news[j])
                      for j, h in enumerate(self._histories)]
            self._blocks = blocks
            block_text = "\n".join([line for b in blocks for line in b.lines()])
            feats: list[float] = []  # the per-agent slots are 0.0 here, filled in (and clipped) per agent
            for j, h in enumerate(self._histories):
                feats += h.stat_features(day.own_last[j])
                feats += (0.0, float(day.is_open[j]), min(len(day.news[j]), 10) / 10)
            feats += (0.0, 0.0, 0.0)
            mask = self._mask(tuple(self._tradable_rows[self._row].tolist()))
            board = None
            if o["show_leaderboard"]:
                board = "Leaderboard (previous day): " + ", ".join(
                    f"{a} {tx.pct(self.accounts[a].cumulative_return)}" for a in self.possible_agents)
            self._day_parts = (block_text, feats, mask, board)
        return self._day_parts

    def _mask(self, tradable: tuple[bool, ...]) -> Any:
        """The action mask of a day with these tradable assets (read-only, shared by the days alike)."""
        mask = self._masks.get(tradable)
        if mask is None:
            masks = [np.array([1, t, t], dtype=np.int8) for t in tradable]
            for m in masks:
                m.setflags(write=False)
            mask = self._masks[tradable] = masks[0] if self.n_assets == 1 else tuple(masks)
        return mask

    # ------------------------------------------------------------------ the account part

    def _account_values(self, agent: str) -> tuple[Any, ...]:
        """(equity, initial capital, exposures, units, cum. return, cum. return since eval start,
        recent decisions, notional per asset) of ``agent`` today (computed once per day)."""
        values = self._acct_values.get(agent)
        if values is None:
            values = self._acct_values[agent] = self._compute_account_values(agent)
        return values

    def _compute_account_values(self, agent: str) -> tuple[Any, ...]:
        acct = self.accounts[agent]
        equity = acct.equity_curve[-1]  # observations come after an advance: the curve's last point
        exposure = acct.exposures
        notional = [e * w for e, w in zip(exposure, acct.book_values())]
        units = [x / p if p > 0 else 0.0 for x, p in zip(notional, self._last_close[self._row].tolist())]
        k_eval = max(self._eval_row - self._start, 0)  # a random window may start inside evaluation
        cum_eval = equity / acct.equity_curve[k_eval] - 1.0 if k_eval <= self.step_index else None
        capital = acct.total_initial
        return (equity, capital, tuple(exposure), tuple(units), equity / capital - 1.0, cum_eval,
                tuple(self._recent[agent]), notional)

    def _account_text(self, agent: str) -> tuple[list[str], str | None]:
        equity, capital, exposure, units, cum, cum_eval, recent, notional = self._account_values(agent)
        acct = self.accounts[agent]
        curve = acct.equity_curve
        view = tx.AccountView(
            agent=agent, equity=equity, initial_capital=capital, cash=equity - sum(notional),
            day_pnl=curve[-1] - curve[-2] if len(curve) > 1 else 0.0,
            day_return=acct.step_returns[-1] if acct.step_returns else 0.0,
            positions=tuple(zip(self.assets, exposure, units, notional)),
            cum_return=cum, cum_return_eval=cum_eval, previous=recent[-1] if recent else None,
            recent=tuple(self._recent_text[agent]))
        return tx.account_lines(view)

    def _header(self, agent: str) -> str:
        day = self.market_day()
        done = self._row >= self._stop
        step = "END" if done else f"{self.step_index + 1}/{self.n_cycles}"
        return tx.header(day.date, self._weekday[self._row], step, self.phase_name.upper(), agent)

    # ------------------------------------------------------------------ observation hooks

    def _text(self, agent: str, note: str | None) -> str:
        text = self._texts.get(agent) if note is None else None
        if text is not None:
            return text
        block, _, _, board = self._market_parts()
        account, recent = self._account_text(agent)
        top = [self._header(agent), self._data_line]
        tail = [board] if board else []
        if self.options["include_instructions"]:
            tail += ["== INSTRUCTIONS ==", self._instructions]
        if note is not None:
            tail.append(f"Your previous answer could not be used: {tx.ascii_text(note)[:500]}. Answer again.")
        own = [*account, recent] if recent is not None else account
        text = "\n".join([*top, block, *own, *tail])
        limit = self.options["max_obs_chars"]
        if len(text) > limit:
            text = tx.fit_text(top, self._blocks, account, recent, tail, limit)
        if note is None:
            self._texts[agent] = text
        return text

    def _features(self, agent: str) -> np.ndarray:
        vec = self._feats.get(agent)
        if vec is None:
            _, market, _, _ = self._market_parts()
            acct = self.accounts[agent]
            values = list(market)
            equity, bound = acct.equity_curve[-1], FEATURE_BOUND
            values[5: 8 * self.n_assets: 8] = [min(max(e, -bound), bound) for e in acct.exposures]
            values[-3:] = [min(max(x, -bound), bound) for x in (
                equity / acct.total_initial - 1.0, 1.0 - equity / acct.peak_equity, self.step_index / self.n_cycles)]
            vec = np.array(values, dtype=np.float32)
            self._feats[agent] = vec
        return vec

    def _action_mask(self, agent: str) -> Any:
        return self._market_parts()[2]

    def snapshot(self, agent: str) -> Snapshot:
        """``agent``'s structured view of the current day (``info["snapshot"]``)."""
        snap = self._snaps.get(agent)
        if snap is None:
            values = self._account_values(agent)[:7]
            snap = Snapshot(self.market_day(), self.step_index, self.phase_name, values)
            self._snaps[agent] = snap
        return snap

    def _refresh_info(self, agent: str, invalid: InvalidAnswer | None, fell_back: bool = False) -> None:
        """As the base class's, but an agent whose info would come out the same keeps its dict (the
        base class refreshes the next agent after every step, mostly unchanged)."""
        key = (self._row, agent in self._pending, self._retries[agent], fell_back)
        if invalid is None and self._info_keys.get(agent) == key and agent in self.infos:
            return
        super()._refresh_info(agent, invalid, fell_back)
        self._info_keys[agent] = key if invalid is None else None

    def _agent_info(self, agent: str) -> dict[str, Any]:
        base = self._infos.get(agent)
        if base is None:
            day = self.market_day()
            base = {"date": day.date, "step": self.step_index, "phase": self.phase_name, "assets": self.assets,
                    "asset_class": self.market.asset_class, "snapshot": self.snapshot(agent),
                    "action_instructions": self._instructions, **self._results[agent]}
            if self.options["action_mode"] == "discrete":  # PettingZoo's tests sample under an info mask
                base["action_mask"] = self._market_parts()[2]
            self._infos[agent] = base
        info = dict(base)
        pending = self._pending.get(agent)
        if pending is not None:
            info.update(pending[0])
        return info

    # ------------------------------------------------------------------ actions

    def _parse_text(self, agent: str, text: str) -> Move:
        try:
            parsed = parse_action(text, self.assets)
        except ParseError as err:
            self._errors[agent] = err.code
            raise InvalidAnswer("unparseable", str(err)) from None
        return Move(tuple(parsed.orders), tuple(parsed.warnings))

    def _invalid(self, agent: str, code: str, reason: str, kind: str = "illegal") -> InvalidAnswer:
        self._errors[agent] = code
        return InvalidAnswer("illegal" if kind == "illegal" else "unparseable", reason)

    def _from_native(self, agent: str, action: Any) -> Move:
        n = self.n_assets
        if isinstance(action, Order):
            return Move((action,) * n)
        if isinstance(action, Mapping):
            return self._from_mapping(agent, action)
        if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
            i = int(action)
            if not 0 <= i < 3 * n:
                raise self._invalid(agent, "bad_index", f"action index {excerpt(i)} is outside 0..{3 * n - 1}")
            orders = [HOLD] * n
            orders[i // 3] = Order(DISCRETE_KINDS[i % 3])
            return Move(tuple(orders))
        if isinstance(action, (np.ndarray, list, tuple)):
            try:
                values = np.asarray(action, dtype=np.float64).reshape(-1)
            except (TypeError, ValueError, OverflowError, RecursionError):  # not numbers, 10**400, deep nesting
                raise self._invalid(agent, "bad_array", f"cannot read the action {excerpt(action)} as numbers",
                                    "unparseable") from None
            if values.size != n:
                raise self._invalid(agent, "bad_array", f"need one value per asset ({n}), got {values.size}")
            if self.options["action_mode"] == "weights":
                if not np.all(np.isfinite(values)):
                    raise self._invalid(agent, "bad_target", f"target exposures must be finite, got {values.tolist()}")
                return Move(tuple(Order("TARGET", target=float(v)) for v in values))
            if not np.all(np.isin(values, (0, 1, 2))):
                raise self._invalid(agent, "bad_index", f"action indices must be 0 (HOLD), 1 (BUY) or 2 (SELL), "
                                                        f"got {values.tolist()}")
            return Move(tuple(Order(DISCRETE_KINDS[int(v)]) for v in values))
        if action is None:
            raise self._invalid(agent, "empty", "no action given; answer BUY, SELL or HOLD", "unparseable")
        raise self._invalid(agent, "bad_type", f"cannot read an action of type {type(action).__name__}; accepted: "
                                               f"text, an action index, target exposures, an Order or a dict",
                            "unparseable")

    def _from_mapping(self, agent: str, action: Mapping[Any, Any]) -> Move:
        """``{symbol: Order}`` (missing assets HOLD); anything else is read as the JSON form."""
        if action and action.keys() <= self._asset_set and all(type(v) is Order for v in action.values()):
            return Move(tuple(action.get(sym, HOLD) for sym in self.assets))  # the common case, as below
        upper = {str(k).upper(): v for k, v in action.items()}
        if upper and all(isinstance(v, Order) for v in upper.values()):
            unknown = sorted(set(upper) - set(self.assets))
            if unknown:
                raise self._invalid(agent, "unknown_asset", f"unknown asset {excerpt(unknown[0])}; assets: "
                                                            f"{', '.join(self.assets)}", "unparseable")
            return Move(tuple(upper.get(sym, HOLD) for sym in self.assets))
        try:
            text = json.dumps({str(k): (_span(v) if isinstance(v, Order) else v) for k, v in action.items()})
        except (TypeError, ValueError, RecursionError):
            raise self._invalid(agent, "bad_json", f"cannot read the dict {excerpt(action)} as a JSON answer",
                                "unparseable") from None
        return self._parse_text(agent, text)

    def _fallback(self, agent: str) -> Move:
        return Move(self._fallback_orders)

    def _apply(self, agent: str, move: Move, fell_back: bool) -> None:
        raw = self._answer if isinstance(self._answer, str) else None
        error = self._errors.pop(agent, None) if fell_back else None
        self._errors.pop(agent, None)
        parse = {"parsed": {sym: {"kind": o.kind, "size": o.size, "target": o.target}
                            for sym, o in zip(self.assets, move.orders)},
                 "parse_error": error, "parse_warnings": list(move.warnings)}
        self._pending[agent] = (parse, None if raw is None else raw[:RAW_CHARS], fell_back)
        if self._phase.submit(agent, move):
            self._resolve_day()

    def _next_agent(self) -> str | None:
        return self._phase.current

    # ------------------------------------------------------------------ the day's resolution (§4.3)

    def _resolve_day(self) -> None:
        row, o = self._row, self.options
        date = self._date_str[row]
        tradable = self._tradable_rows[row].tolist()
        moves = self._phase.moves
        agents = list(moves)
        apply = self.rules.apply
        targets = {a: [apply(x, e) if ok else e
                       for x, e, ok in zip(moves[a].orders, self.accounts[a].exposures, tradable)] for a in agents}
        rates = None
        if o["price_impact"] > 0:  # the crowd's flows: every target first
            day = self.market_day()
            flows = np.array([[(t - e) * w for t, e, w in zip(targets[a], acct.exposures, acct.book_values())]
                              for a in agents for acct in (self.accounts[a],)])
            adv = np.array([h.adv(t) for h, t in zip(self._histories, day.own_last)])
            rates = (impact_rates(flows, adv, o["price_impact"]) * self._tradable_rows[row]).tolist()
        returns, opened = self._asset_ret[row + 1], self._open[row + 1]
        returns_list, open_list = returns.tolist(), opened.tolist()
        warm = row < self._eval_row and not o["reward_during_warmup"]
        reward_type = o["reward_type"]
        assets, several = self.assets, self.n_assets > 1
        decisions, equity, step_returns = {}, {}, {}
        asset_returns = dict(zip(assets, returns_list))
        for a in agents:
            acct, move = self.accounts[a], moves[a]
            parse, raw, invalid = self._pending.pop(a)
            e0 = acct.exposures
            e1, cost, step, pnl, wealth = acct.trade_day(targets[a], tradable, returns_list, open_list, rates)
            if warm:
                self.rewards[a] = 0.0
            elif reward_type == "return":
                self.rewards[a] = step
            else:  # the rewards read the step return and the P&L only, not the book returns
                self.rewards[a] = step_reward(reward_type, Advance(step, pnl, wealth, np.zeros(0), ()), returns, opened)
            noop, ignored, kinds, noops = False, [], [], []
            for j, order in enumerate(move.orders):
                kind, is_noop_j = order.kind, False
                if not tradable[j]:
                    if kind != "HOLD":
                        ignored.append(assets[j])
                    kind = "HOLD"
                else:
                    is_noop_j = is_noop(order, e0[j], e1[j])
                    noop = noop or is_noop_j
                kinds.append(kind)
                noops.append(is_noop_j)
            self._log[a].append((row, tuple(kinds), e0, e1, tuple(noops), invalid))
            action = ", ".join(f"{s} {_span(x)}" for s, x in zip(assets, move.orders)) if several \
                else _span(move.orders[0])
            if invalid:
                action += " (invalid answer, fallback)"
            recent, entries = self._recent[a], self._recent_text[a]
            recent.append((date, action, step))
            entries.append(tx.decision_entry(date, action, step))
            del recent[:-RECENT_DECISIONS], entries[:-RECENT_DECISIONS]
            self._results[a] = {
                **parse, "noop": noop, "ignored_closed": ignored,
                "exposure_before": dict(zip(assets, e0)), "exposure_after": dict(zip(assets, e1)),
                "cost": cost, "asset_returns": asset_returns.copy(),
                "step_return": step, "equity": wealth,
                "equity_by_asset": dict(zip(assets, acct.book_values()))}
            decisions[a] = {"raw": raw,
                            "parsed": [[x.kind, x.target if x.kind == "TARGET" else x.size] for x in move.orders],
                            "exposure": e1}
            equity[a], step_returns[a] = wealth, step
            if wealth <= 0.0:
                self.terminations[a] = True
        assert self.record is not None
        self.record.add("day", date=date, next_date=self._date_str[row + 1],
                        phase="eval" if row >= self._eval_row else "warmup", decisions=decisions, equity=equity,
                        step_return=step_returns, asset_returns=returns_list,
                        closes=[_jsonable_number(c) for c in self.market.close[row + 1].tolist()])
        self._row += 1
        self._clear_day()
        if self._row >= self._stop:
            for a in self.agents:
                self.terminations[a] = True
            self._phase.start(())
        else:
            self._phase.start([a for a in self.agents if not self.terminations[a] and not self.truncations[a]])
        # the deciding agent and the next one are refreshed by step() right after this
        skip = (self.agent_selection, self._phase.current)
        for a in self.agents:
            if a not in skip:
                self._refresh_info(a, None)

    # ------------------------------------------------------------------ metrics (§5)

    def _metrics(self) -> dict[str, Any]:
        dates = self._date_str[self._start:self._row + 1]
        agents = {}
        for a in self.possible_agents:
            acct = self.accounts[a]
            r = np.asarray(acct.step_returns)
            days = dates[:r.size + 1]
            windows = {"eval": window_returns(days, r, self.eval_start, self.end),
                       "warmup": window_returns(days, r, self.trade_start, self.eval_start), "full": r}
            five = {k: _five(v, self.periods) for k, v in windows.items()}
            flat, held = self._decisions(a)
            stats = behaviour_stats(flat, held)
            entry = {"score": five["eval"]["cr"], **five["eval"], "warmup": five["warmup"], "full": five["full"],
                     "per_asset": self._per_asset(acct), **_behaviour(stats)}
            agents[a] = entry
        reference = self.buy_and_hold()
        return {"agents": agents, "game": {
            "data": self.market.label, "synthetic": self.market.synthetic, "assets": list(self.assets),
            "position_rule": self.rules.rule, "periods_per_year": self.periods, "trade_start": self.trade_start,
            "eval_start": self.eval_start, "end": self.end, "buy_and_hold": reference,
            # the reference rows' CR as flat numbers, so the leaderboard's game line shows them (§5.5)
            **{f"buy_and_hold_{sym}_cr": row["cr"] for sym, row in reference.items()}}}

    def _decisions(self, agent: str) -> tuple[list[Decision], list[float]]:
        """``agent``'s decisions book by book (§5.4), and the return each held exposure realised."""
        log, ret = self._log[agent], self._asset_ret
        flat = [Decision(kinds[j], e0[j], e1[j], invalid, noops[j], invalid)
                for j in range(self.n_assets) for _, kinds, e0, e1, noops, invalid in log]
        held = [e1[j] * float(ret[row + 1, j]) for j in range(self.n_assets) for row, _, _, e1, _, _ in log]
        return flat, held

    def _per_asset(self, acct: Account) -> dict[str, Any]:
        """Five metrics per book on its own calendar, eval window (per_asset books only, §7.8)."""
        if self.options["book_mode"] != "per_asset":
            return {}
        out = {}
        for j, sym in enumerate(self.assets):
            start = acct.book_start_day[j]
            if start is None:
                out[sym] = _five(np.zeros(0), self._asset_periods[j])
                continue
            days = [self._date_str[self._start + p] for p in (start, *acct.book_return_days[j])]
            out[sym] = _five(window_returns(days, acct.book_returns[j], self.eval_start, self.end),
                             self._asset_periods[j])
        return out

    def buy_and_hold(self) -> dict[str, Any]:
        """The Buy&Hold reference row per asset (§5.5), eval window, from the episode's closes alone."""
        out = {}
        for j, h in enumerate(self._histories):
            inside = (h.rows >= self._start) & (h.rows <= self._stop)
            closes = h.close[inside]
            days = [str(d) for d in h.dates[inside]]
            r = price_returns(closes) if closes.size > 1 else np.zeros(0)
            out[self.assets[j]] = _five(window_returns(days, r, self.eval_start, self.end) if days else r,
                                        self._asset_periods[j])
        return out

    # ------------------------------------------------------------------ rendering

    def _render_text(self) -> str:
        day = self.market_day()
        lines = [f"{day.date} ({self.phase_name}) cycle {self.step_index}/{self.n_cycles}"]
        for a in self.possible_agents:
            acct = self.accounts[a]
            exposure = " ".join(f"{s} {e:+.2f}" for s, e in zip(self.assets, acct.exposure))
            lines.append(f"{a}: equity {acct.equity:.2f} ({tx.pct(acct.cumulative_return)}) exposure {exposure}")
        return "\n".join(lines)


def _five(returns: np.ndarray, periods: int) -> dict[str, Any]:
    m = five_metrics(returns, periods)
    return {"cr": _jsonable_number(m.cr), "ar": _jsonable_number(m.ar), "av": _jsonable_number(m.av),
            "sr": _jsonable_number(m.sr), "mdd": _jsonable_number(m.mdd), "n_returns": m.n_returns}


_STAT_NAMES = {"frac_long": "long_share", "frac_short": "short_share", "frac_flat": "flat_share",
               "n_exposure_changes": "n_changes"}


def _behaviour(stats: dict[str, Any]) -> dict[str, Any]:
    """§5.4 statistics under the metric names of the interface (NaN as None)."""
    out = {}
    for key, value in stats.items():
        name = _STAT_NAMES.get(key, key)
        out[name] = None if isinstance(value, float) and math.isnan(value) else value
    return out
