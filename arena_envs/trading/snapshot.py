"""The structured view of one decision (``info["snapshot"]``) that rule policies read.

A :class:`MarketDay` is the market part of a day, built once per day and shared by every agent's
snapshot; a :class:`Snapshot` adds one agent's :class:`AccountValues`. Both are cheap: array views
of bars up to the day, no per-bar dicts until :meth:`Snapshot.bars` or :meth:`Snapshot.to_dict`
asks for them.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from arena_envs.trading.accounting import Account
from arena_envs.trading.features import AssetHistory
from arena_envs.trading.news import DigestItem
from arena_envs.trading.text import PastDecision


@dataclass(frozen=True, eq=False)
class MarketDay:
    """What every agent may see on market row ``row`` (date ``date``): bars up to it and the news
    digests that become visible on it (per asset, and the market-wide items on its calendar)."""

    date: str
    row: int
    assets: tuple[str, ...]
    histories: tuple[AssetHistory, ...]
    own_last: tuple[int, ...]  #: own index of each asset's latest bar <= date (-1: none yet)
    is_open: tuple[bool, ...]
    news: tuple[tuple[DigestItem, ...], ...]
    market_news: tuple[tuple[DigestItem, ...], ...]
    history_window: int

    def index(self, sym: str) -> int:
        try:
            return self.assets.index(sym)
        except ValueError:
            raise KeyError(f"unknown asset {sym!r}; assets: {', '.join(self.assets)}") from None

    def span(self, j: int, window: int) -> slice:
        """Own-day slice of asset ``j``'s last ``window`` bars up to the date."""
        t = self.own_last[j]
        return slice(max(0, t + 1 - window), t + 1)


class AccountValues(NamedTuple):
    """One agent's account as a day's observations show it (per asset: ``exposure``, ``units``,
    ``notional`` in USD); ``cum_return_eval`` is None before the evaluation starts."""

    equity: float
    initial_capital: float
    exposure: tuple[float, ...]
    units: tuple[float, ...]
    cum_return: float
    cum_return_eval: float | None
    recent: tuple[PastDecision, ...]  #: the last decisions, oldest first
    notional: tuple[float, ...]
    cash: float  #: implied: equity less the notional held


def account_values(account: Account, closes: Sequence[float], eval_day: int, today: int,
                   recent: Sequence[PastDecision]) -> AccountValues:
    """``account`` at the close of calendar position ``today`` (after its advance), at the latest
    ``closes`` (NaN where an asset has none yet); the evaluation starts at position ``eval_day``."""
    equity = account.equity_curve[-1]
    held = account.holdings(closes)
    cum_eval = equity / account.equity_curve[eval_day] - 1.0 if eval_day <= today else None
    capital = account.total_initial
    return AccountValues(equity, capital, account.exposure, held.units, equity / capital - 1.0, cum_eval,
                         tuple(recent), held.notional, held.cash)


def _news_dicts(items: Sequence[DigestItem]) -> list[dict[str, Any]]:
    return [{"id": n.id, "headline": n.headline, "sources": n.n_sources, "sentiment": n.sentiment,
             "verified": n.verified} for n in items]


class Snapshot:
    """One agent's decision view: ``date``, ``step``, ``phase``, ``assets``, the market accessors
    and ``account`` (equity, initial_capital, exposure, units, cum_return, cum_return_eval,
    last_decisions). Values are fixed when it is built; later steps do not change it."""

    __slots__ = ("_account", "_values", "day", "phase", "step")

    def __init__(self, day: MarketDay, step: int, phase: str, values: AccountValues):
        self.day = day
        self.step = step
        self.phase = phase
        self._values = values
        self._account: dict[str, Any] | None = None

    @property
    def date(self) -> str:
        return self.day.date

    @property
    def assets(self) -> tuple[str, ...]:
        return self.day.assets

    def closes(self, sym: str) -> np.ndarray:
        """Closes of ``sym``'s own trading days up to today, at most ``history_window``, oldest first
        (a read-only view)."""
        j = self.day.index(sym)
        return self.day.histories[j].close[self.day.span(j, self.day.history_window)]

    def bars(self, sym: str) -> list[dict[str, Any]]:
        """The same days as :meth:`closes` as dicts: date, open, high, low, close, volume."""
        j = self.day.index(sym)
        h, s = self.day.histories[j], self.day.span(j, self.day.history_window)
        return [{"date": str(d), "open": float(o), "high": float(hi), "low": float(lo), "close": float(c),
                 "volume": float(v)}
                for d, o, hi, lo, c, v in zip(h.dates[s], h.open[s], h.high[s], h.low[s], h.close[s], h.volume[s])]

    def is_open(self, sym: str) -> bool:
        return self.day.is_open[self.day.index(sym)]

    def news(self, sym: str) -> list[dict[str, Any]]:
        """Today's verified, de-duplicated digest of ``sym`` (what the text shows)."""
        return _news_dicts(self.day.news[self.day.index(sym)])

    def market_news(self, sym: str | None = None) -> list[dict[str, Any]]:
        """Today's market-wide digest, on ``sym``'s calendar (default: the first asset's)."""
        return _news_dicts(self.day.market_news[0 if sym is None else self.day.index(sym)])

    @property
    def account(self) -> dict[str, Any]:
        if self._account is None:
            v = self._values
            self._account = {
                "equity": v.equity, "initial_capital": v.initial_capital,
                "exposure": dict(zip(self.assets, v.exposure)), "units": dict(zip(self.assets, v.units)),
                "cum_return": v.cum_return, "cum_return_eval": v.cum_return_eval,
                "last_decisions": [{"date": d.date, "action": d.action, "realised": d.realised} for d in v.recent]}
        return self._account

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: date, step, phase, per asset its bars and news, the account."""
        return {"date": self.date, "step": self.step, "phase": self.phase,
                "assets": {sym: {"is_open": self.is_open(sym), "bars": self.bars(sym), "news": self.news(sym),
                                 "market_news": self.market_news(sym)} for sym in self.assets},
                "account": self.account}

    def __eq__(self, other: object) -> bool:
        """Equal views (same JSON form): what determinism checks compare."""
        return isinstance(other, Snapshot) and (self is other or self.to_dict() == other.to_dict())

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Snapshot(date={self.date!r}, step={self.step}, phase={self.phase!r}, assets={self.assets})"
