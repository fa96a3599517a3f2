"""Per-asset price history on the asset's own calendar, and the rolling statistics the observation
shows: 1/5/20-day returns, the 20-day volatility and the gap to the 20-day mean.

Everything is computed once per loaded market, vectorised; the value at an asset's own day ``t``
uses its bars ``0..t`` only (a window never reaches past its last row), so a day's features are
the same whether or not later rows exist (no look-ahead).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from arena_envs.trading.data import Market

#: Per-asset feature names, in order, then the three account features.
ASSET_FEATURES = ("ret_1d", "ret_5d", "ret_20d", "vol_20d", "close_sma20_gap", "exposure", "is_open", "news")
ACCOUNT_FEATURES = ("cum_return", "drawdown", "progress")
#: Bound of the numeric observation; features are clipped to ``[-FEATURE_BOUND, FEATURE_BOUND]``.
FEATURE_BOUND = 10.0
WINDOW = 20


def feature_names(assets: tuple[str, ...]) -> tuple[str, ...]:
    """``F = 8·N + 3`` names: ``{SYM}.{feature}`` per asset, then the account's."""
    return (*(f"{a}.{f}" for a in assets for f in ASSET_FEATURES), *ACCOUNT_FEATURES)


def _lagged_return(close: np.ndarray, lag: int) -> np.ndarray:
    out = np.full(close.size, np.nan)
    if close.size > lag:
        out[lag:] = close[lag:] / close[:-lag] - 1.0
    return out


@dataclass(frozen=True, eq=False)
class AssetHistory:
    """One asset's bars on its own trading days (oldest first) and, per own day, its statistics.

    ``own_end[i]`` is the number of the asset's own days at or before market row ``i``: its bars
    visible on that row are ``[:own_end[i]]``. Statistics are NaN where there is not enough history.
    """

    symbol: str
    asset_class: str
    rows: np.ndarray  #: market row of each own day
    own_end: np.ndarray
    dates: np.ndarray
    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    volume: np.ndarray
    ret_1d: np.ndarray
    ret_5d: np.ndarray
    ret_20d: np.ndarray
    vol_20d: np.ndarray  #: std (ddof 1) of the last 20 daily returns
    sma_gap: np.ndarray  #: close / mean(last 20 closes) - 1

    def __post_init__(self) -> None:
        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)  # snapshots hand out views: nobody may change them

    @classmethod
    def from_market(cls, market: Market, j: int) -> AssetHistory:
        opened = ~np.isnan(market.close[:, j])
        rows = np.flatnonzero(opened)
        close = market.close[rows, j]
        daily = _lagged_return(close, 1)
        vol = np.full(close.size, np.nan)
        sma = np.full(close.size, np.nan)
        if close.size > WINDOW:
            vol[WINDOW:] = np.std(sliding_window_view(daily[1:], WINDOW), axis=1, ddof=1)
        if close.size >= WINDOW:
            sma[WINDOW - 1:] = close[WINDOW - 1:] / sliding_window_view(close, WINDOW).mean(axis=1) - 1.0
        return cls(market.assets[j], market.asset_class[j], rows, np.cumsum(opened), market.dates[rows],
                   market.open[rows, j], market.high[rows, j], market.low[rows, j], close, market.volume[rows, j],
                   daily, _lagged_return(close, 5), _lagged_return(close, WINDOW), vol, sma)

    def last(self, row: int) -> int:
        """Own index of the latest bar at or before market row ``row`` (-1: none yet)."""
        return int(self.own_end[row]) - 1

    @cached_property
    def _stat_rows(self) -> list[tuple[float, float, float, float, float]]:
        return list(zip(self.ret_1d.tolist(), self.ret_5d.tolist(), self.ret_20d.tolist(), self.vol_20d.tolist(),
                        self.sma_gap.tolist()))

    @cached_property
    def _feature_rows(self) -> list[tuple[float, ...]]:
        stats = np.stack([self.ret_1d, self.ret_5d, self.ret_20d, self.vol_20d, self.sma_gap], axis=1)
        with np.errstate(invalid="ignore"):
            clipped = np.where(np.isfinite(stats), np.clip(stats, -FEATURE_BOUND, FEATURE_BOUND), 0.0)
        return [tuple(row) for row in clipped.tolist()]

    def stat_features(self, t: int) -> tuple[float, ...]:
        """:meth:`stats` as observation features: not computable 0.0, clipped to the bound."""
        return self._feature_rows[t] if t >= 0 else (0.0,) * 5

    @cached_property
    def close_values(self) -> list[float]:
        """The closes as Python floats (what the daily text and account read, one at a time)."""
        return self.close.tolist()  # type: ignore[no-any-return]

    def stats(self, t: int) -> tuple[float, float, float, float, float]:
        """(ret_1d, ret_5d, ret_20d, vol_20d, sma_gap) at own day ``t`` (NaN: not computable)."""
        if t < 0:
            return (np.nan,) * 5
        return self._stat_rows[t]

    def adv(self, t: int, window: int = WINDOW) -> float:
        """The average dollar volume (ADV) that scales price impact: mean ``close·volume`` of the
        last ``window`` bars up to own day ``t`` (0 before the first bar)."""
        lo = max(0, t + 1 - window)
        return float(np.mean(self.close[lo:t + 1] * self.volume[lo:t + 1])) if t >= 0 else 0.0
