"""Seeded synthetic market: geometric Brownian motion with optional bull/bear regime switching and
optional informative news. Always labelled synthetic; the names and numbers are made up and
describe no real asset or period.

Randomness: ``SeedSequence(seed).spawn(2N + 1)`` gives, per asset, a prices and a news generator,
then one for market-wide news, so adding an asset does not change the others' series.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

import numpy as np

from arena_envs.core.answers import excerpt
from arena_envs.trading.data import CachedSource, DateLike, Market, Series, as_day, build_market
from arena_envs.trading.news import MARKET_WIDE, DataError, NewsItem, cutoffs

#: NYSE full-day holidays of 2025; other years use weekdays only.
NYSE_HOLIDAYS_2025 = tuple(np.datetime64(f"2025-{d}", "D") for d in (
    "01-01", "01-09", "01-20", "02-17", "04-18", "05-26", "06-19", "07-04", "09-01", "11-27", "12-25"))
KAPPA_GAP = {"stock": 0.3, "crypto": 0.05}
NEWS_RATE = {"stock": 2.0, "crypto": 3.0, MARKET_WIDE: 0.7}
DUPLICATE_P, LOADED_P = 0.2, 0.02
_TEMPLATES = {
    1: ("{s} beats forecasts as {org} lifts its outlook", "{org} upgrades {s} citing strong demand",
        "{s} wins a large contract from {org}", "Inflows into {s} climb for a {n}th straight session"),
    0: ("{s} trades sideways ahead of the {org} report", "{org} keeps its neutral view on {s}",
        "{s} holds its range as volumes thin", "Analysts at {org} see no change for {s}"),
    -1: ("{s} misses estimates and {org} trims its target", "{org} opens a review of {s}",
         "{s} faces delays flagged by {org}", "Outflows from {s} reach {n} million"),
}
_MARKET_TEMPLATES = {1: "Risk appetite improves as {org} eases policy", 0: "Markets wait for {org} data",
                     -1: "Risk-off mood as {org} warns on growth"}
_ORGS = ("Northwind Capital", "Ardent Research", "Bluefield Partners", "Crestmoor Bank", "Ionic Advisors")


def trading_days(start: np.datetime64, end: np.datetime64, asset_class: str) -> np.ndarray:
    """Every day for crypto; weekdays without the 2025 NYSE holidays for stocks."""
    days = np.arange(start, end + np.timedelta64(1, "D"), dtype="datetime64[D]")
    if asset_class == "crypto":
        return days
    return days[np.is_busday(days, holidays=list(NYSE_HOLIDAYS_2025))]


class SyntheticSource(CachedSource):
    """A seeded synthetic market of ``assets`` (names, or ``{name: "stock"|"crypto"}``).

    Close: ``log P_t = log P_{t-1} + mu/A - sigma_d**2/2 + sigma_d*z_t + beta*sigma_d*s_{t-1}``, with
    ``sigma_d = sigma/sqrt(A)`` (A = 252 stock, 365 crypto) and ``s`` the AR(1) news sentiment; with
    ``regime`` the drift switches between ``mu_bull`` and ``mu_bear`` (probability ``switch_prob`` a
    day). ``beta = 0`` makes the news uninformative. Same seed, same market.
    """

    synthetic = True

    def __init__(self, seed: int = 0, assets: Sequence[str] | Mapping[str, str] = ("SYN",),
                 start: DateLike = "2025-01-01", end: DateLike = "2025-12-31", *, sigma: float = 0.3,
                 mu: float = 0.05, regime: bool = False, mu_bull: float = 0.3, mu_bear: float = -0.3,
                 switch_prob: float = 0.02, beta: float = 0.0, start_price: float = 100.0,
                 mean_volume: float = 1e6, news: bool = True) -> None:
        super().__init__()
        classes = dict(assets) if isinstance(assets, Mapping) else {a: "stock" for a in assets}
        if not classes:
            raise DataError("SyntheticSource: no assets; give at least one name")
        for name, cls in classes.items():
            if cls not in ("stock", "crypto"):
                raise DataError(f"SyntheticSource: asset class {excerpt(cls)} of {excerpt(name)}; accepted: "
                                "stock, crypto")
        if not (sigma > 0 and start_price > 0 and mean_volume > 0 and 0 <= switch_prob <= 1):
            raise DataError(f"SyntheticSource: sigma={sigma}, start_price={start_price}, mean_volume={mean_volume}, "
                            f"switch_prob={switch_prob}; need positive values and switch_prob in [0, 1]")
        self.seed, self.classes = int(seed), {k.upper(): v for k, v in classes.items()}
        self.start, self.end = as_day(start), as_day(end)
        if self.end < self.start:
            raise DataError(f"SyntheticSource: end {self.end} before start {self.start}")
        self.sigma, self.mu, self.regime = float(sigma), float(mu), bool(regime)
        self.mu_bull, self.mu_bear, self.switch_prob = float(mu_bull), float(mu_bear), float(switch_prob)
        self.beta, self.start_price, self.mean_volume, self.with_news = float(beta), start_price, mean_volume, news
        self.label = f"SYNTHETIC (seed={self.seed}{', regimes' if regime else ''}{f', beta={beta}' if beta else ''})"

    def _read(self) -> Market:
        children = np.random.SeedSequence(self.seed).spawn(2 * len(self.classes) + 1)
        series, news = [], []
        for k, (name, cls) in enumerate(self.classes.items()):
            prices_rng, news_rng = (np.random.Generator(np.random.PCG64(c)) for c in children[2 * k: 2 * k + 2])
            days = trading_days(self.start, self.end, cls)
            if not len(days):
                raise DataError(f"SyntheticSource: no trading day of {excerpt(name)} in {self.start}..{self.end}")
            sentiment = self._sentiment(news_rng, len(days))
            series.append(self._bars(prices_rng, name, cls, days, sentiment))
            if self.with_news:
                news += self._news(news_rng, name, cls, days, sentiment)
        if self.with_news:
            market_rng = np.random.Generator(np.random.PCG64(children[-1]))
            news += self._news(market_rng, MARKET_WIDE, "crypto", trading_days(self.start, self.end, "crypto"), None)
        return build_market(series, news, synthetic=True, label=self.label)

    @staticmethod
    def _sentiment(rng: np.random.Generator, n: int) -> np.ndarray:
        eta, s = rng.standard_normal(n), np.empty(n)
        prev = 0.0
        for t in range(n):
            prev = s[t] = 0.5 * prev + np.sqrt(0.75) * eta[t]
        return s

    def _bars(self, rng: np.random.Generator, name: str, cls: str, days: np.ndarray, s: np.ndarray) -> Series:
        n, periods = len(days), 365 if cls == "crypto" else 252
        sd = self.sigma / np.sqrt(periods)
        z = rng.standard_normal(n)
        mu = np.full(n, self.mu)
        if self.regime:
            flips = rng.random(n) < self.switch_prob
            bull = (np.cumsum(flips) % 2) == 0
            mu = np.where(bull, self.mu_bull, self.mu_bear)
        lagged = np.concatenate([[0.0], s[:-1]])
        close = self.start_price * np.exp(np.cumsum(mu / periods - sd ** 2 / 2 + sd * z + self.beta * sd * lagged))
        prev = np.concatenate([[self.start_price], close[:-1]])
        opens = prev * np.exp(rng.normal(0.0, KAPPA_GAP[cls] * sd, n))
        high = np.maximum(opens, close) * np.exp(np.abs(rng.normal(0.0, 0.5 * sd, n)))
        low = np.minimum(opens, close) * np.exp(-np.abs(rng.normal(0.0, 0.5 * sd, n)))
        opens, high, low, close = (np.round(a, 2) for a in (opens, high, low, close))
        high, low = np.maximum.reduce([high, opens, close]), np.minimum.reduce([low, opens, close])
        volume = np.round(self.mean_volume * np.exp(0.3 * rng.standard_normal(n)
                                                    + 0.5 * np.abs(np.log(close / np.round(prev, 2))) / sd))
        return Series(name, cls, days, opens, high, low, close, close.copy(), volume)

    def _news(self, rng: np.random.Generator, name: str, cls: str, days: np.ndarray,
              s: np.ndarray | None) -> list[NewsItem]:
        """Headlines whose tone follows the sentiment ``s`` (none for market-wide: pure noise), each
        published in the 24 hours before its day's cut-off; some near-duplicates and loaded words."""
        out: list[NewsItem] = []
        cut = cutoffs(days, cls)
        for t, day in enumerate(days):
            for _ in range(rng.poisson(NEWS_RATE[name if name == MARKET_WIDE else cls])):
                level = 0.0 if s is None else s[t]
                x = level + 0.5 * rng.standard_normal()
                tone = -1 if x < -0.3 else (1 if x > 0.3 else 0)
                org = _ORGS[rng.integers(len(_ORGS))]
                template = _MARKET_TEMPLATES[tone] if s is None else \
                    _TEMPLATES[tone][rng.integers(len(_TEMPLATES[tone]))]
                headline = template.format(s=name, org=org, n=int(rng.integers(2, 9)))
                duplicate, loaded = rng.random() < DUPLICATE_P, rng.random() < LOADED_P
                if loaded:
                    headline += ": gains guaranteed, say bulls" if tone >= 0 else ": collapse imminent, say bears"
                published = cut[t] - np.timedelta64(int(rng.integers(1, 86400)), "s")
                wire = int(rng.integers(1, 4))
                base = NewsItem(
                    id=f"SYN-{name if name != MARKET_WIDE else 'MKT'}-{day}-{len(out):05d}", symbol=name, date=None,
                    published_at=_iso(published), headline=headline, source=f"synthetic-wire-{wire}",
                    sentiment=None if s is None else round(float(np.tanh(level)), 2), synthetic=True)
                out.append(base)
                if duplicate:  # the same words in another order, from another wire, a little later
                    words = headline.split()
                    out.append(NewsItem(
                        id=base.id + "-d", symbol=name, date=None,
                        published_at=_iso(min(published + np.timedelta64(600, "s"), cut[t])),
                        headline=" ".join(words[1:] + words[:1]), source=f"synthetic-wire-{wire % 3 + 1}",
                        sentiment=base.sentiment, synthetic=True))
        return out


def _iso(t: np.datetime64) -> str:
    return dt.datetime.fromisoformat(str(t)).strftime("%Y-%m-%dT%H:%M:%SZ")
