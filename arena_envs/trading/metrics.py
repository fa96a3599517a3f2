"""The paper's five metrics with their edge cases, the warm-up and evaluation windows, the
behavioural statistics of each book's decisions and the spread of a metric across a group.

Every metric takes the simple returns ``r_1 … r_T`` of one window and returns a fraction (NaN
where the metric is undefined):

* CR  = ∏(1 + r) − 1
* AR  = (1 + CR)^(A/T) − 1, and −1 once wealth is gone (1 + CR ≤ 0)
* AV  = √A·std(r) with ``ddof`` (1), 0.0 when std < ``eps``
* SR  = (A·mean(r) − r_f)/AV, r_f an annual rate (0 by default); NaN when AV is 0 or NaN
* MDD = max_t (M_t − W_t)/M_t on wealth W_t = ∏_{i≤t}(1 + r_i), W_0 = 1 included, M the running peak

``A`` is ``periods_per_year``: 252 for every asset by default, as the paper writes;
:func:`periods_per_year` resolves the ``"calendar"`` setting (365 once crypto is involved).
"""
from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena_envs.core.answers import excerpt

#: The paper's annualisation factor for every asset.
TRADING_DAYS_PER_YEAR = 252
#: Crypto trades every calendar day; used by ``periods_per_year="calendar"``.
CALENDAR_DAYS_PER_YEAR = 365
#: Below this std a series counts as constant (floating point gives ~1e-18, not 0).
STD_EPS = 1e-12


def periods_per_year(setting: int | str = TRADING_DAYS_PER_YEAR, asset_classes: Iterable[str] = ("stock",)) -> int:
    """``A`` for a book holding ``asset_classes``: the number given, or under ``"calendar"`` 252
    for stocks only and 365 as soon as a crypto asset is in the book."""
    if setting == "calendar":
        classes = set(asset_classes)
        unknown = classes - {"stock", "crypto"}
        if unknown:
            raise ValueError(f"asset class must be 'stock' or 'crypto', got {sorted(unknown)!r}")
        return CALENDAR_DAYS_PER_YEAR if "crypto" in classes else TRADING_DAYS_PER_YEAR
    if isinstance(setting, bool) or not isinstance(setting, (int, np.integer)) or setting <= 0:
        raise ValueError(f"periods_per_year must be an int > 0 or 'calendar', got {excerpt(setting)}")
    return int(setting)


def as_returns(returns: Sequence[float] | np.ndarray) -> np.ndarray:
    """A window's returns as a float64 array; non-finite values or returns below −1 are errors."""
    r = np.asarray(returns, dtype=float)
    if r.ndim != 1:
        raise ValueError(f"returns must be a 1-D series, got shape {r.shape}")
    if not np.all(np.isfinite(r)):
        raise ValueError(f"returns must be finite, got {r[~np.isfinite(r)][0]!r}")
    if np.any(r < -1.0):
        raise ValueError(f"a simple return cannot be below -1 (wealth below 0), got {r.min()!r}")
    return r


def cumulative_return(returns: Sequence[float] | np.ndarray) -> float:
    r = as_returns(returns)
    return float(np.prod(1.0 + r) - 1.0) if r.size else math.nan


def annualised_return(returns: Sequence[float] | np.ndarray, periods_per_year: int = TRADING_DAYS_PER_YEAR) -> float:
    r = as_returns(returns)
    if r.size == 0:
        return math.nan
    growth = float(np.prod(1.0 + r))
    return growth ** (periods_per_year / r.size) - 1.0 if growth > 0 else -1.0


def annualised_volatility(returns: Sequence[float] | np.ndarray, periods_per_year: int = TRADING_DAYS_PER_YEAR,
                          ddof: int = 1, eps: float = STD_EPS) -> float:
    r = as_returns(returns)
    if r.size == 0 or r.size <= ddof:
        return math.nan
    std = float(np.std(r, ddof=ddof))
    return 0.0 if std < eps else math.sqrt(periods_per_year) * std


def sharpe_ratio(returns: Sequence[float] | np.ndarray, periods_per_year: int = TRADING_DAYS_PER_YEAR,
                 ddof: int = 1, eps: float = STD_EPS, risk_free_rate: float = 0.0) -> float:
    r = as_returns(returns)
    av = annualised_volatility(r, periods_per_year, ddof, eps)
    if not av > 0:
        return math.nan
    return (periods_per_year * float(r.mean()) - risk_free_rate) / av


def wealth_curve(returns: Sequence[float] | np.ndarray) -> np.ndarray:
    """``W_0 = 1, W_t = ∏_{i≤t}(1 + r_i)``: T + 1 points (multiply by the capital for USD)."""
    return np.concatenate(([1.0], np.cumprod(1.0 + as_returns(returns))))


def drawdown_curve(returns: Sequence[float] | np.ndarray) -> np.ndarray:
    """``(M_t − W_t)/M_t`` at each of the T + 1 wealth points, ≥ 0 (the drawdown plot's series)."""
    w = wealth_curve(returns)
    peak = np.maximum.accumulate(w)
    drawdown: np.ndarray = (peak - w) / peak
    return drawdown


def max_drawdown(returns: Sequence[float] | np.ndarray) -> float:
    r = as_returns(returns)
    return float(drawdown_curve(r).max()) if r.size else math.nan


@dataclass(frozen=True)
class Metrics:
    """The five metrics of one window (fractions; NaN where undefined) and its length T."""

    cr: float
    ar: float
    av: float
    sr: float
    mdd: float
    n_returns: int

    def fields(self) -> dict[str, float | int | None]:
        """The episode metrics' form: ``cr``, ``ar``, ``av``, ``sr``, ``mdd`` (None where undefined)
        and ``n_returns``."""
        return {"cr": finite_or_none(self.cr), "ar": finite_or_none(self.ar), "av": finite_or_none(self.av),
                "sr": finite_or_none(self.sr), "mdd": finite_or_none(self.mdd), "n_returns": self.n_returns}


def finite_or_none(x: float | None) -> float | None:
    """``x`` as a JSON number: None where it is None, NaN or infinite."""
    return None if x is None or not math.isfinite(x) else float(x)


def nan_as_none(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with every NaN float replaced by None (e.g. :func:`behaviour_stats` for a record)."""
    return {key: None if isinstance(value, float) and math.isnan(value) else value for key, value in values.items()}


def five_metrics(returns: Sequence[float] | np.ndarray, periods_per_year: int = TRADING_DAYS_PER_YEAR,
                 ddof: int = 1, eps: float = STD_EPS, risk_free_rate: float = 0.0) -> Metrics:
    r = as_returns(returns)
    return Metrics(cr=cumulative_return(r), ar=annualised_return(r, periods_per_year),
                   av=annualised_volatility(r, periods_per_year, ddof, eps),
                   sr=sharpe_ratio(r, periods_per_year, ddof, eps, risk_free_rate),
                   mdd=max_drawdown(r), n_returns=int(r.size))


def window_bounds(days: Sequence[Any], start: Any, end: Any) -> tuple[int, int]:
    """Positions ``(i, j)`` in a sorted calendar ``days`` of the window ``[start, end]``: ``i`` the
    last day ≤ ``start`` (the close the window's wealth starts from; 0 when ``start`` precedes every
    day), ``j`` the last day ≤ ``end``. The window holds the returns realised on ``days[i+1 … j]``,
    the days ``d`` with ``start < d ≤ end``; when there is none, ``j ≤ i``. Days may be
    ``datetime.date``, ISO strings or anything ordered."""
    return max(bisect.bisect_right(days, start) - 1, 0), bisect.bisect_right(days, end) - 1


def window_returns(days: Sequence[Any], returns: Sequence[float] | np.ndarray, start: Any, end: Any) -> np.ndarray:
    """The returns of the window ``[start, end]`` from a series whose ``returns[k]`` is realised on
    ``days[k + 1]`` (``days[0]`` is the series' starting point, so ``len(days) = len(returns) + 1``).

    A return belongs to the day it is realised, as in the original code's calendar capital series
    (The-FinAI/Agent_Market_Arena, ``testbed/get_return.py``): the window holds those realised on
    days ``d`` with ``start < d ≤ end``. Consecutive windows therefore compose for any dates:
    ``[a, b]`` then ``[b, c]`` is ``[a, c]``, each return in exactly one of them; the warm-up is
    ``[trade_start, eval_start]`` in this sense (its positions carry into evaluation).
    """
    r = np.asarray(returns, dtype=float)
    if len(days) != r.size + 1:
        raise ValueError(f"need one more day than returns (the starting point), got {len(days)} and {r.size}")
    first, last = window_bounds(days, start, end)
    return r[first:last] if last > first else r[:0]


@dataclass(frozen=True)
class Decision:
    """One book's decision for the behavioural statistics: the order kind applied (an ignored
    order on a closed market is HOLD), whether it came from a parse error (counted as INVALID, not
    as its fallback kind), a no-op, or a policy's fallback, and the exposure before and after it."""

    kind: str
    exposure_before: float
    exposure_after: float
    invalid: bool = False
    noop: bool = False
    fallback: bool = False


def behaviour_stats(decisions: Sequence[Decision], returns: Sequence[float] | np.ndarray | None = None,
                    flat_tol: float = 0.0) -> dict[str, Any]:
    """Behavioural statistics of one book's decisions.

    ``returns[k]`` (optional) is the return realised while holding decision k's exposure; the
    win rate is the share of those > 0 among decisions with a non-zero exposure after them (NaN
    if none). Long/short/flat fractions read the exposure after each decision; ``|e| ≤ flat_tol``
    is flat.
    """
    n = len(decisions)
    counts = dict.fromkeys(("BUY", "SELL", "HOLD", "TARGET", "INVALID", "NOOP"), 0)
    for d in decisions:
        if not d.invalid and d.kind not in counts:
            raise ValueError(f"decision kind must be BUY, SELL, HOLD or TARGET, got {excerpt(d.kind)}")
        counts["INVALID" if d.invalid else d.kind] += 1
        counts["NOOP"] += d.noop
    before = np.array([d.exposure_before for d in decisions], dtype=float)
    after = np.array([d.exposure_after for d in decisions], dtype=float)
    change = np.abs(after - before)

    def share(mask: np.ndarray) -> float:
        return float(mask.mean()) if n else math.nan

    stats: dict[str, Any] = {f"n_{k.lower()}": v for k, v in counts.items()}
    stats.update(
        n_decisions=n,
        first_action=None if not n else ("INVALID" if decisions[0].invalid else decisions[0].kind),
        long_share=share(after > flat_tol),
        short_share=share(after < -flat_tol),
        flat_share=share(np.abs(after) <= flat_tol),
        turnover=float(change.sum()),
        n_changes=int(np.count_nonzero(change)),
        parse_error_rate=share(np.array([d.invalid for d in decisions], dtype=bool)),
        fallback_rate=share(np.array([d.fallback for d in decisions], dtype=bool)),
        win_rate=math.nan,
    )
    if returns is not None:
        r = np.asarray(returns, dtype=float)
        if r.size != n:
            raise ValueError(f"need one return per decision ({n}), got {r.size}")
        held = np.abs(after) > flat_tol
        if held.any():
            stats["win_rate"] = float((r[held] > 0).mean())
    return stats
