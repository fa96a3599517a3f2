"""Which market a trading environment plays: the ``data`` option resolved to a source, and the
bars loaded from the history start to the end.

``data``: ``"arch"`` (S&P 500 and NASDAQ daily bars), ``"crypto"`` (BTC/ETH/LTC), ``"synthetic"``
(a seeded market of the ``assets`` asked for, ``{name: "stock" | "crypto"}`` or names), the path of
a daily OHLCV CSV file (with ``news`` a JSONL file), or any :class:`DataSource`. Without an
explicit ``history_start``, the bars start early enough for ``history_window`` trading days of
every asset before the trade start (from the data's first day when it has fewer).
:func:`load_market` checks the dates and the sizes and returns a :class:`MarketWindow`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from arena_envs.core.answers import excerpt
from arena_envs.trading.data import ArchSource, CryptoDatabaseSource, CsvSource, DataSource, Market, as_day
from arena_envs.trading.synthetic import SyntheticSource, trading_days

MAX_CALENDAR_DAYS = 36_600  # from the history start to the end: 100 years
#: A synthetic market is generated day by day: at most this many asset-days (assets x calendar days
#: from the history start to the end; ten years of one asset build in about a second).
MAX_SYNTHETIC_ASSET_DAYS = 3_660


class MarketWindow(NamedTuple):
    """The loaded market, the data's label (the ``data`` name, or the source's label) and the
    history start used (ISO date)."""

    market: Market
    label: str
    history_start: str


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
    """The data source named by the ``data`` option (module docstring)."""
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


def window_days(history_start: str | None, trade_start: str, eval_start: str, end: str) -> list[np.datetime64]:
    """``[history_start, trade_start, eval_start, end]`` as days (the trade start for a history start
    not given); ``ValueError`` unless they are in order."""
    days = [as_day(d) for d in (trade_start if history_start is None else history_start, trade_start,
                                eval_start, end)]
    if not days[0] <= days[1] <= days[2] <= days[3]:
        raise ValueError(f"dates must satisfy history_start <= trade_start <= eval_start <= end, got "
                         f"{history_start}, {trade_start}, {eval_start}, {end}")
    return days


def load_market(data: Any, assets: Sequence[str] | Mapping[str, str] | None, news: str | Path | None,
                synthetic_seed: int, days: Sequence[np.datetime64], history_window: int,
                find_history_start: bool) -> MarketWindow:
    """The market of the ``data`` option over ``days`` (:func:`window_days`); with
    ``find_history_start``, the history start is the one ``history_window`` bars before the trade
    start (module docstring)."""
    first, trade_start, end = days[0], days[1], str(days[3])
    if find_history_start and data == "synthetic":  # its bars are generated from the history start
        first = synthetic_history_start(assets, trade_start, history_window)
    source = resolve_source(data, assets, news, synthetic_seed, str(first), end)
    if data == "synthetic":
        names = None  # the synthetic market is made of the assets asked for
    else:
        names = [source.asset_names()[0]] if assets is None else [str(a).upper() for a in assets]
        if find_history_start:
            first = bars_before(source.load(names, None, trade_start), trade_start, history_window)
    history_start = str(first)
    span = int((days[3] - first) / np.timedelta64(1, "D"))
    if span > MAX_CALENDAR_DAYS:
        raise ValueError(f"the data window {history_start}..{end} spans {span} days; at most "
                         f"{MAX_CALENDAR_DAYS} (history_start, or trade_start less history_window bars, to end)")
    generated = span * (len(assets) if assets else 1)
    if data == "synthetic" and generated > MAX_SYNTHETIC_ASSET_DAYS:
        raise ValueError(f"a synthetic market over {history_start}..{end} is {generated} asset-days "
                         f"(assets x days); at most {MAX_SYNTHETIC_ASSET_DAYS}: fewer assets or a shorter window")
    market = source.load(names, history_start, end)
    return MarketWindow(market, data if isinstance(data, str) else source.label, history_start)
