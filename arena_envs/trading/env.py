"""``trading_v0``: the Agent Market Arena (AMA, 2025) replay as a PettingZoo AEC environment.

Every agent (``trader_0`` ...) trades the same replayed market on its own account. A decision day
is one cycle: each live agent decides once, in order, unseen by the others; then
:func:`arena_envs.trading.day.resolve_day` applies the day and every agent gets its step reward
(``reward_type``; 0 in the warm-up with ``reward_during_warmup=False``). ``n`` trading days in
``[trade_start, end]`` give ``n - 1`` cycles; a ruined agent is terminated. An agent sees for day
``d`` only bars dated ``<= d`` and news visible by ``d``'s cut-off (what ``Market.until(d)`` holds).

Observations: ``text``, ``observation`` (``8·N + 3`` features, :mod:`arena_envs.trading.features`),
``action_mask`` in discrete mode; ``infos[agent]["snapshot"]`` for rule policies. Actions: a
``str`` (:mod:`arena_envs.trading.parser`), the native action (``discrete``: ``Discrete(3)`` /
``MultiDiscrete([3]*N)``, 0 HOLD, 1 BUY, 2 SELL; ``weights``: a ``Box`` of target exposures), an
:class:`~arena_envs.trading.accounting.Order` (for every asset), a ``{symbol: Order | str}`` dict, an
order as its fields (``{"kind": "BUY", "size": 0.5, "target": null}``, alone or per symbol: how a step
log and an agent service write an Order) or a JSON-form dict. An unreadable answer is asked again up
to ``max_retries`` times, then the fallback applies (HOLD everywhere, or TARGET 0 with
``invalid_action="flat"``) and counts as INVALID.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import numpy as np
from gymnasium import spaces

from arena_envs.core import AnswerConstraint, Answered, InvalidAnswer, SimultaneousPhase, TextAECEnv
from arena_envs.core.answers import excerpt
from arena_envs.trading import text as tx
from arena_envs.trading.accounting import HOLD, Account, Order, price_returns
from arena_envs.trading.config import TradingConfig
from arena_envs.trading.data import Market, as_day
from arena_envs.trading.day import DayRules, MarketMove, Taken, book_decisions, resolve_day
from arena_envs.trading.features import FEATURE_BOUND, AssetHistory, feature_names
from arena_envs.trading.metrics import behaviour_stats, finite_or_none, five_metrics, nan_as_none, window_returns
from arena_envs.trading.parser import ParseError, action_instructions, decision_constraint, parse_action
from arena_envs.trading.snapshot import AccountValues, MarketDay, Snapshot, account_values

#: Discrete index -> order kind.
DISCRETE_KINDS = ("HOLD", "BUY", "SELL")
RECENT_DECISIONS = 5
RAW_CHARS = 2000
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


class Move(NamedTuple):
    """One agent's decision: an order per asset (``assets`` order) and the parser's warnings."""

    orders: tuple[Order, ...]
    warnings: tuple[str, ...] = ()


class Pending(NamedTuple):
    """A decision of the day not resolved yet: its parse info (shown in the agent's info until the
    day resolves), the raw answer, and whether it is the fallback of an invalid answer."""

    parse: dict[str, Any]
    raw: str | None
    fell_back: bool


class MarketParts(NamedTuple):
    """The market part of a day's observations, shared by every agent: the asset blocks' text, the
    market features (the per-agent slots 0), the action mask and the leaderboard line."""

    text: str
    features: list[float]
    mask: Any
    board: str | None


class TradingEnv(TextAECEnv):
    """The AMA trading arena; keyword options as in :mod:`arena_envs.trading_v0`, checked and kept as a
    :class:`~.config.TradingConfig` (``settings``, which holds the market loaded).

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
        settings = self.settings = TradingConfig(
            data=data, assets=assets, news=news, synthetic_seed=synthetic_seed, n_agents=n_agents,
            history_start=history_start, trade_start=trade_start, eval_start=eval_start, end=end,
            initial_capital=initial_capital, position_rule=position_rule, allow_short=allow_short,
            max_exposure=max_exposure, default_size=default_size, exposure_drift=exposure_drift, book_mode=book_mode,
            max_gross_exposure=max_gross_exposure, cost_bps=cost_bps, price_impact=price_impact,
            reward_type=reward_type, reward_during_warmup=reward_during_warmup, action_mode=action_mode,
            text_price_window=text_price_window, history_window=history_window, max_news_items=max_news_items,
            include_instructions=include_instructions, show_leaderboard=show_leaderboard,
            max_obs_chars=max_obs_chars, invalid_action=invalid_action, periods_per_year=periods_per_year,
            random_window=random_window, max_retries=max_retries)
        self.market: Market = settings.window.market
        self.assets: tuple[str, ...] = self.market.assets
        self.n_assets = len(self.assets)
        self._prepare_market()
        self._instructions = action_instructions(self.assets, position_rule=settings.position_rule,
                                                 allow_short=settings.allow_short, max_exposure=settings.max_exposure,
                                                 default_size=settings.default_size)
        self._constraint = decision_constraint(self.assets)
        agents = [f"trader_{i}" for i in range(settings.n_agents)]
        if settings.action_mode == "weights":
            lo, hi = settings.position_rules.bounds
            action_space: spaces.Space[Any] = spaces.Box(lo, hi, shape=(self.n_assets,), dtype=np.float32)
        elif self.n_assets == 1:
            action_space = spaces.Discrete(3)
        else:
            action_space = spaces.MultiDiscrete([3] * self.n_assets)
        super().__init__(agents=agents, action_spaces={a: action_space for a in agents},
                         feature_names=feature_names(self.assets), feature_low=-FEATURE_BOUND,
                         feature_high=FEATURE_BOUND, max_retries=settings.max_retries, render_mode=render_mode,
                         max_text_length=settings.max_obs_chars, max_cycles=max_cycles)
        self._day_rules = DayRules(settings.position_rules, settings.reward_type, settings.price_impact)
        fallback = Order("TARGET", target=0.0) if settings.invalid_action == "flat" else HOLD
        self._fallback_orders = (fallback,) * self.n_assets

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
        """The action grammar every policy's prompt includes verbatim."""
        return self._instructions

    def answer_constraint(self, agent: str | None = None) -> AnswerConstraint | None:
        return self._constraint

    def config(self) -> dict[str, Any]:
        return self.settings.record()

    # ------------------------------------------------------------------ episode

    def _start_game(self, options: dict[str, Any]) -> None:
        settings = self.settings
        first, last = settings.first_row, len(self.market.dates) - 1
        window = settings.random_window
        if window is not None:
            first = first + int(self.np_random.integers(0, settings.n_days - window + 1))
            last = first + window - 1
        self._start, self._stop = first, last
        self._row = first
        opened = self._open[first:last + 1]
        # an asset's last open day in the window takes no order: no later close would realise its cost
        last_open = np.array([first + int(np.flatnonzero(opened[:, j])[-1]) if opened[:, j].any() else first
                              for j in range(self.n_assets)])
        rows = np.arange(len(self.market.dates))[:, None]
        self._tradable_rows = self._open & (rows < last_open)  # what takes orders, per row and asset
        # the first evaluation decision is the one whose return is realised after eval_start: the
        # decision of the last day <= eval_start (window_returns' rule)
        self._eval_row = max(int(np.searchsorted(self.market.dates, as_day(settings.eval_start), side="right")) - 1, 0)
        self.accounts = {a: Account(self.assets, settings.initial_capital, cost_bps=settings.cost_bps,
                                    book_mode=settings.book_mode, max_gross_exposure=settings.max_gross_exposure,
                                    exposure_drift=settings.exposure_drift)
                         for a in self.possible_agents}
        #: per agent, the days it decided; the metrics read it
        self._log: dict[str, list[Taken]] = {a: [] for a in self.possible_agents}
        self._recent: dict[str, list[tx.PastDecision]] = {a: [] for a in self.possible_agents}
        self._recent_text: dict[str, list[str]] = {a: [] for a in self.possible_agents}
        self._results: dict[str, dict[str, Any]] = {a: {} for a in self.possible_agents}
        self._pending: dict[str, Pending] = {}  # the agents that decided today
        self._phase: SimultaneousPhase[str, Move] = SimultaneousPhase(self.possible_agents)
        self._clear_day()
        closes0 = [finite_or_none(float(c)) for c in self._last_close[first]]
        assert self.record is not None
        self.record.add("start", dates=self._date_str[first:last + 1], assets=list(self.assets), closes0=closes0,
                        initial_capital=settings.initial_capital, label=self.market.label,
                        synthetic=self.market.synthetic)

    def _clear_day(self) -> None:
        self._day: MarketDay | None = None
        self._day_parts: MarketParts | None = None
        self._texts: dict[str, str] = {}
        self._feats: dict[str, np.ndarray] = {}
        self._snaps: dict[str, Snapshot] = {}
        self._infos: dict[str, dict[str, Any]] = {}
        self._acct_values: dict[str, AccountValues] = {}

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
                    k = self.settings.max_news_items
                    news.append(tuple(m.digest(sym, m.dates[row], k)))
                    market_news.append(tuple(m.digest(sym, m.dates[row], k, market_wide=True)))
                else:
                    news.append(())
                    market_news.append(())
            self._day = MarketDay(date, row, self.assets, self._histories, tuple(self._own_last[row].tolist()),
                                  tuple(self._open[row].tolist()), tuple(news), tuple(market_news),
                                  self.settings.history_window)
        return self._day

    def _market_parts(self) -> MarketParts:
        """The :class:`MarketParts` of the current day (built once per day)."""
        if self._day_parts is None:
            day = self.market_day()
            settings = self.settings
            blocks = [tx.asset_block(h, self._rows[j], day.own_last[j], day.is_open[j], day.date,
                                     settings.text_price_window, settings.asset_periods[j], day.news[j],
                                     day.market_news[j])
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
            if settings.show_leaderboard:
                board = "Leaderboard (previous day): " + ", ".join(
                    f"{a} {tx.pct(self.accounts[a].cumulative_return)}" for a in self.possible_agents)
            self._day_parts = MarketParts(block_text, feats, mask, board)
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

    def _account_values(self, agent: str) -> AccountValues:
        """``agent``'s account today (computed once per day)."""
        values = self._acct_values.get(agent)
        if values is None:
            k_eval = max(self._eval_row - self._start, 0)  # a random window may start inside evaluation
            values = self._acct_values[agent] = account_values(
                self.accounts[agent], self._last_close[self._row].tolist(), k_eval, self.step_index,
                self._recent[agent])
        return values

    def _account_text(self, agent: str) -> tuple[list[str], str | None]:
        values = self._account_values(agent)
        acct = self.accounts[agent]
        curve = acct.equity_curve
        view = tx.AccountView(
            agent=agent, equity=values.equity, initial_capital=values.initial_capital, cash=values.cash,
            day_pnl=curve[-1] - curve[-2] if len(curve) > 1 else 0.0,
            day_return=acct.step_returns[-1] if acct.step_returns else 0.0,
            positions=tuple(zip(self.assets, values.exposure, values.units, values.notional)),
            cum_return=values.cum_return, cum_return_eval=values.cum_return_eval,
            previous=values.recent[-1] if values.recent else None, recent=tuple(self._recent_text[agent]))
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
        parts = self._market_parts()
        block, board = parts.text, parts.board
        account, recent = self._account_text(agent)
        top = [self._header(agent), self._data_line]
        tail = [board] if board else []
        if self.settings.include_instructions:
            tail += ["== INSTRUCTIONS ==", self._instructions]
        if note is not None:
            tail.append(f"Your previous answer could not be used: {tx.ascii_text(note)[:500]}. Answer again.")
        own = [*account, recent] if recent is not None else account
        text = "\n".join([*top, block, *own, *tail])
        limit = self.settings.max_obs_chars
        if len(text) > limit:
            text = tx.fit_text(top, self._blocks, account, recent, tail, limit)
        if note is None:
            self._texts[agent] = text
        return text

    def _features(self, agent: str) -> np.ndarray:
        vec = self._feats.get(agent)
        if vec is None:
            acct = self.accounts[agent]
            values = list(self._market_parts().features)
            equity, bound = acct.equity_curve[-1], FEATURE_BOUND
            values[5: 8 * self.n_assets: 8] = [min(max(e, -bound), bound) for e in acct.exposure]
            values[-3:] = [min(max(x, -bound), bound) for x in (
                equity / acct.total_initial - 1.0, 1.0 - equity / acct.peak_equity, self.step_index / self.n_cycles)]
            vec = np.array(values, dtype=np.float32)
            self._feats[agent] = vec
        return vec

    def _action_mask(self, agent: str) -> Any:
        return self._market_parts().mask

    def snapshot(self, agent: str) -> Snapshot:
        """``agent``'s structured view of the current day (``info["snapshot"]``)."""
        snap = self._snaps.get(agent)
        if snap is None:
            snap = Snapshot(self.market_day(), self.step_index, self.phase_name, self._account_values(agent))
            self._snaps[agent] = snap
        return snap

    def _agent_info(self, agent: str) -> dict[str, Any]:
        base = self._infos.get(agent)
        if base is None:
            day = self.market_day()
            base = {"date": day.date, "step": self.step_index, "phase": self.phase_name, "assets": self.assets,
                    "asset_class": self.market.asset_class, "snapshot": self.snapshot(agent),
                    "action_instructions": self._instructions, **self._results[agent]}
            if self.settings.action_mode == "discrete":  # PettingZoo's tests sample under an info mask
                base["action_mask"] = self._market_parts().mask
            self._infos[agent] = base
        info = dict(base)
        pending = self._pending.get(agent)
        if pending is not None:
            info.update(pending.parse)
        return info

    # ------------------------------------------------------------------ actions

    def _parse_text(self, agent: str, text: str) -> Move:
        try:
            parsed = parse_action(text, self.assets)
        except ParseError as err:
            raise InvalidAnswer("unparseable", str(err), err.code) from None
        return Move(tuple(parsed.orders), tuple(parsed.warnings))

    def _from_native(self, agent: str, action: Any) -> Move:
        n = self.n_assets
        if isinstance(action, Order):
            return Move((action,) * n)
        if isinstance(action, Mapping):
            return self._from_mapping(agent, action)
        if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
            i = int(action)
            if not 0 <= i < 3 * n:
                raise InvalidAnswer("illegal", f"action index {excerpt(i)} is outside 0..{3 * n - 1}", "bad_index")
            orders = [HOLD] * n
            orders[i // 3] = Order(DISCRETE_KINDS[i % 3])
            return Move(tuple(orders))
        if isinstance(action, (np.ndarray, list, tuple)):
            try:
                values = np.asarray(action, dtype=np.float64).reshape(-1)
            except (TypeError, ValueError, OverflowError, RecursionError):  # not numbers, 10**400, deep nesting
                raise InvalidAnswer("unparseable", f"cannot read the action {excerpt(action)} as numbers",
                                    "bad_array") from None
            if values.size != n:
                raise InvalidAnswer("illegal", f"need one value per asset ({n}), got {values.size}", "bad_array")
            if self.settings.action_mode == "weights":
                if not np.all(np.isfinite(values)):
                    raise InvalidAnswer("illegal", f"target exposures must be finite, got {values.tolist()}",
                                        "bad_target")
                return Move(tuple(Order("TARGET", target=float(v)) for v in values))
            if not np.all(np.isin(values, (0, 1, 2))):
                raise InvalidAnswer("illegal", f"action indices must be 0 (HOLD), 1 (BUY) or 2 (SELL), "
                                               f"got {values.tolist()}", "bad_index")
            return Move(tuple(Order(DISCRETE_KINDS[int(v)]) for v in values))
        if action is None:
            raise InvalidAnswer("unparseable", "no action given; answer BUY, SELL or HOLD", "empty")
        raise InvalidAnswer("unparseable", f"cannot read an action of type {type(action).__name__}; accepted: "
                                          f"text, an action index, target exposures, an Order or a dict", "bad_type")

    def _from_mapping(self, agent: str, action: Mapping[Any, Any]) -> Move:
        """``{symbol: Order}`` (missing assets HOLD), an order's fields ``{"kind", "size", "target"}`` in place
        of an Order (the JSON form of a native action: what a step log and an agent service carry);
        anything else is read as the JSON answer text."""
        if action and action.keys() <= self._asset_set and all(type(v) is Order for v in action.values()):
            return Move(tuple(action.get(sym, HOLD) for sym in self.assets))  # the common case, as below
        if _order_fields(action):
            return Move((_order(action),) * self.n_assets)
        if action and all(_order_fields(v) for v in action.values()):
            action = {sym: _order(v) for sym, v in action.items()}
        upper = {str(k).upper(): v for k, v in action.items()}
        if upper and all(isinstance(v, Order) for v in upper.values()):
            unknown = sorted(set(upper) - set(self.assets))
            if unknown:
                raise InvalidAnswer("unparseable", f"unknown asset {excerpt(unknown[0])}; assets: "
                                                   f"{', '.join(self.assets)}", "unknown_asset")
            return Move(tuple(upper.get(sym, HOLD) for sym in self.assets))
        try:
            text = json.dumps({str(k): (tx.order_text(v) if isinstance(v, Order) else v) for k, v in action.items()})
        except (TypeError, ValueError, RecursionError):
            raise InvalidAnswer("unparseable", f"cannot read the dict {excerpt(action)} as a JSON answer",
                                "bad_json") from None
        return self._parse_text(agent, text)

    def _fallback(self, agent: str) -> Move:
        return Move(self._fallback_orders)

    def _apply(self, answered: Answered) -> None:
        agent, move, raw, fell_back = answered.agent, answered.move, answered.text, answered.fell_back
        error = answered.invalid.code if answered.invalid is not None else None  # the cause of a fallback
        parse = {"parsed": {sym: {"kind": o.kind, "size": o.size, "target": o.target}
                            for sym, o in zip(self.assets, move.orders)},
                 "parse_error": error, "parse_warnings": list(move.warnings)}
        self._pending[agent] = Pending(parse, None if raw is None else raw[:RAW_CHARS], fell_back)
        if self._phase.submit(agent, move):
            self._resolve_day()

    def _next_agent(self) -> str | None:
        return self._phase.current

    # ------------------------------------------------------------------ the day's resolution

    def _resolve_day(self) -> None:
        row, settings = self._row, self.settings
        date = self._date_str[row]
        orders = {a: move.orders for a, move in self._phase.moves.items()}
        adv: tuple[float, ...] = ()
        if settings.price_impact > 0:
            adv = tuple(h.adv(t) for h, t in zip(self._histories, self.market_day().own_last))
        returns = self._asset_ret[row + 1].tolist()
        market = MarketMove(tuple(self._tradable_rows[row].tolist()), tuple(returns),
                            tuple(self._open[row + 1].tolist()), adv,
                            rewarded=row >= self._eval_row or settings.reward_during_warmup)
        fills = resolve_day(self.accounts, orders, market, self._day_rules)
        assets = self.assets
        decisions, equity, step_returns = {}, {}, {}
        asset_returns = dict(zip(assets, returns))
        for a, fill in fills.items():
            pending = self._pending.pop(a)
            self.rewards[a] = fill.reward
            self._log[a].append(Taken(row, fill, pending.fell_back))
            action = tx.action_text(assets, orders[a], pending.fell_back)
            recent, entries = self._recent[a], self._recent_text[a]
            recent.append(tx.PastDecision(date, action, fill.step_return))
            entries.append(tx.decision_entry(date, action, fill.step_return))
            del recent[:-RECENT_DECISIONS], entries[:-RECENT_DECISIONS]
            self._results[a] = {
                **pending.parse, "noop": fill.noop, "ignored_closed": list(fill.ignored),
                "exposure_before": dict(zip(assets, fill.before)), "exposure_after": dict(zip(assets, fill.after)),
                "cost": fill.cost, "asset_returns": asset_returns.copy(),
                "step_return": fill.step_return, "equity": fill.equity,
                "equity_by_asset": dict(zip(assets, self.accounts[a].equity_by_asset))}
            decisions[a] = {"raw": pending.raw,
                            "parsed": [[x.kind, x.target if x.kind == "TARGET" else x.size] for x in orders[a]],
                            "exposure": list(fill.after)}
            equity[a], step_returns[a] = fill.equity, fill.step_return
            if self.accounts[a].ruined:  # nothing left: the agent is done
                self.terminations[a] = True
        assert self.record is not None
        self.record.add("day", date=date, next_date=self._date_str[row + 1],
                        phase="eval" if row >= self._eval_row else "warmup", decisions=decisions, equity=equity,
                        step_return=step_returns, asset_returns=returns,
                        closes=[finite_or_none(c) for c in self.market.close[row + 1].tolist()])
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

    # ------------------------------------------------------------------ metrics

    def _metrics(self) -> dict[str, Any]:
        settings = self.settings
        dates = self._date_str[self._start:self._row + 1]
        agents = {}
        for a in self.possible_agents:
            acct = self.accounts[a]
            r = np.asarray(acct.step_returns)
            days = dates[:r.size + 1]
            windows = {"eval": window_returns(days, r, settings.eval_start, settings.end),
                       "warmup": window_returns(days, r, settings.trade_start, settings.eval_start), "full": r}
            five = {k: five_metrics(v, settings.periods).fields() for k, v in windows.items()}
            flat, held = book_decisions(self._log[a], self._asset_ret)
            stats = behaviour_stats(flat, held)
            entry = {"score": five["eval"]["cr"], **five["eval"], "warmup": five["warmup"], "full": five["full"],
                     "per_asset": self._per_asset(acct), **nan_as_none(stats)}
            agents[a] = entry
        reference = self.buy_and_hold()
        return {"agents": agents, "game": {
            "data": self.market.label, "synthetic": self.market.synthetic, "assets": list(self.assets),
            "position_rule": settings.position_rule, "periods_per_year": settings.periods,
            "trade_start": settings.trade_start, "eval_start": settings.eval_start, "end": settings.end,
            "buy_and_hold": reference,
            # the reference rows' CR as flat numbers, so the leaderboard's game line shows them
            **{f"buy_and_hold_{sym}_cr": row["cr"] for sym, row in reference.items()}}}

    def _per_asset(self, acct: Account) -> dict[str, Any]:
        """Five metrics per book on its own calendar, eval window (per_asset books only)."""
        settings = self.settings
        if settings.book_mode != "per_asset":
            return {}
        out = {}
        for j, sym in enumerate(self.assets):
            start = acct.book_start_day[j]
            if start is None:
                out[sym] = five_metrics(np.zeros(0), settings.asset_periods[j]).fields()
                continue
            days = [self._date_str[self._start + p] for p in (start, *acct.book_return_days[j])]
            out[sym] = five_metrics(window_returns(days, acct.book_returns[j], settings.eval_start, settings.end),
                                    settings.asset_periods[j]).fields()
        return out

    def buy_and_hold(self) -> dict[str, Any]:
        """The Buy&Hold reference row per asset, eval window, from the episode's closes alone."""
        settings, out = self.settings, {}
        for j, h in enumerate(self._histories):
            inside = (h.rows >= self._start) & (h.rows <= self._stop)
            closes = h.close[inside]
            days = [str(d) for d in h.dates[inside]]
            r = price_returns(closes) if closes.size > 1 else np.zeros(0)
            returns = window_returns(days, r, settings.eval_start, settings.end) if days else r
            out[self.assets[j]] = five_metrics(returns, settings.asset_periods[j]).fields()
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


_ORDER_FIELDS = frozenset({"kind", "size", "target"})


def _order_fields(value: Any) -> bool:
    """Whether ``value`` is an order written as its fields (a JSON object with ``kind``)."""
    return isinstance(value, Mapping) and "kind" in value and value.keys() <= _ORDER_FIELDS


def _order(fields: Mapping[str, Any]) -> Order:
    """The :class:`Order` of its fields; fields no order has are an illegal answer."""
    values = [fields.get(name) for name in ("kind", "size", "target")]
    if not isinstance(values[0], str) or not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                                                 for v in values[1:]):
        raise InvalidAnswer("illegal", f"an order's kind is a string and its size and target numbers, got "
                                       f"{excerpt(dict(fields))}", "bad_order")
    try:
        return Order(values[0], None if values[1] is None else float(values[1]),
                     None if values[2] is None else float(values[2]))
    except ValueError as err:
        raise InvalidAnswer("illegal", str(err), "bad_order") from None
