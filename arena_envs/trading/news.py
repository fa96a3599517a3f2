"""News items, their visibility dates and the MIS-lite digest (a small version of the Agent Market
Arena paper's market intelligence stream: verified items, near-duplicates merged, ranked).

Pure: standard library and numpy only. Times are UTC; a day's decision cut-off is 16:00
America/New_York for stocks (DST-aware) and 24:00 UTC for crypto.
"""
from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from arena_envs.core.answers import excerpt

ASSET_CLASSES = ("stock", "crypto")
MARKET_WIDE = "*"
DEDUP_DAYS = 3  #: items whose visibility dates are at most this many days apart can be duplicates
JACCARD_DUPLICATE = 0.8
STALE_DAYS = 4  #: a long weekend: older items are not shown on an asset's first day of data
LOADED_WORDS = ("guaranteed", "skyrocket", "to the moon", "collapse imminent", "can't lose", "cannot lose",
                "sure thing", "risk-free", "once in a lifetime")
STOP_WORDS = frozenset(("a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is",
                        "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "will", "with"))
_REQUIRED = ("id", "symbol", "headline")
_ASCII_MAP = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"',
                            "–": "-", "—": "-", "―": "-", "−": "-", "…": "...", "\u00a0": " "})


class DataError(ValueError):
    """Bad input data: one line naming what, the value and what is accepted."""


@dataclass(frozen=True)
class NewsItem:
    """One news item. ``date`` is the visibility date the file claims (ISO); ``published_at``
    an ISO-8601 UTC instant or None."""

    id: str
    symbol: str  #: an asset name, or "*" for market-wide
    date: str | None
    published_at: str | None
    headline: str
    summary: str = ""
    source: str = ""
    url: str | None = None
    sentiment: float | None = None
    kind: str = "raw"  #: "raw" items are de-duplicated; "digest" items pass through
    synthetic: bool = False


@dataclass(frozen=True)
class DigestItem:
    """A de-duplicated item of a day's digest: ``sources`` merged, ``bias_flags`` found."""

    id: str
    symbol: str
    date: str  #: the visibility date on the asset's calendar
    headline: str
    sources: tuple[str, ...]
    sentiment: float | None
    bias_flags: tuple[str, ...]
    synthetic: bool

    @property
    def n_sources(self) -> int:
        return len(self.sources)

    @property
    def verified(self) -> bool:
        return not self.bias_flags

    def render(self) -> str:
        """``- [unverified] headline [sources: n]`` as the text observation shows it."""
        return f"- {'' if self.verified else '[unverified] '}{self.headline} [sources: {self.n_sources}]"


def ascii_fold(text: str) -> str:
    """NFKC, collapsed whitespace, then ASCII only: accents dropped, typographic quotes and dashes
    mapped, anything else replaced by ``?``."""
    text = " ".join(unicodedata.normalize("NFKC", text).translate(_ASCII_MAP).split())
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return "".join(c if 32 <= ord(c) < 127 else "?" for c in text)


def parse_instant(value: str) -> np.datetime64:
    """An ISO-8601 instant (``Z`` or an offset; naive means UTC) -> UTC ``datetime64[s]``."""
    try:
        t = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        raise DataError(f"bad published_at {excerpt(value)}: expected an ISO-8601 time such as "
                        "2025-08-13T14:05:00Z") from None
    if t.tzinfo is not None:
        t = t.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return np.datetime64(t, "s")


@cache
def _new_york() -> dt.tzinfo:
    from zoneinfo import ZoneInfo
    return ZoneInfo("America/New_York")


def cutoffs(days: np.ndarray, asset_class: str) -> np.ndarray:
    """UTC decision cut-off instants (``datetime64[s]``) of ``days`` (``datetime64[D]``)."""
    if asset_class == "crypto":
        return (days + np.timedelta64(1, "D")).astype("datetime64[s]")
    ny = _new_york()
    out = [dt.datetime.combine(d.item(), dt.time(16), ny).astimezone(dt.timezone.utc).replace(tzinfo=None)
           for d in days]
    return np.array(out, dtype="datetime64[s]")


def _leak_cutoff(day: np.datetime64, asset_class: str) -> np.datetime64:
    """The cut-off of a claimed date; market-wide items use the latest one (24:00 UTC)."""
    cutoff: np.datetime64 = cutoffs(np.array([day]), "crypto" if asset_class == MARKET_WIDE else asset_class)[0]
    return cutoff


def visibility(items: Sequence[NewsItem], symbol: str, asset_class: str, days: np.ndarray) -> np.ndarray:
    """Visibility date (``datetime64[D]``, NaT when never visible on ``days``) of each item for the
    asset ``symbol`` whose trading days are ``days``: the first day whose cut-off is at or after
    ``published_at``, or later when the file's ``date`` is later (a late arrival). Items of other
    symbols get NaT, and so do items from more than ``STALE_DAYS`` before the first day; market-wide
    items are mapped on this asset's calendar."""
    out = np.full(len(items), np.datetime64("NaT"), dtype="datetime64[D]")
    mine = np.array([item.symbol in (symbol, MARKET_WIDE) for item in items], dtype=bool)
    if not len(days) or not mine.any():
        return out
    chosen = [item for item, m in zip(items, mine) if m]
    published = np.array([np.datetime64("NaT") if i.published_at is None else parse_instant(i.published_at)
                          for i in chosen], dtype="datetime64[s]")
    claimed = np.array([i.date or "NaT" for i in chosen], dtype="datetime64[D]")
    k = np.where(np.isnat(published), 0, np.searchsorted(cutoffs(days, asset_class), published, side="left"))
    k = np.maximum(k, np.where(np.isnat(claimed), 0, np.searchsorted(days, claimed, side="left")))
    # an item from before the asset's data (more than STALE_DAYS before its first day) is not news on day 1
    stale = np.where(np.isnat(published), claimed.astype("datetime64[s]"), published) \
        < (days[0] - np.timedelta64(STALE_DAYS, "D")).astype("datetime64[s]")
    k[stale] = len(days)
    vis = np.full(len(chosen), np.datetime64("NaT"), dtype="datetime64[D]")
    vis[k < len(days)] = days[k[k < len(days)]]
    out[mine] = vis
    return out


def check_item(item: NewsItem, asset_class: str) -> None:
    """Raise ``DataError("news leak ...")`` when the claimed ``date`` is before the item could be seen."""
    if item.date is None or item.published_at is None:
        return
    if parse_instant(item.published_at) > _leak_cutoff(np.datetime64(item.date, "D"), asset_class):
        raise DataError(f"news leak: item {excerpt(item.id)} dated {item.date} was published at {item.published_at}, "
                        f"after that day's cut-off; its date must be the first decision day that may see it")


def parse_news_line(line: str, where: str = "news") -> NewsItem:
    """One JSONL line (``id``, ``symbol`` or ``*`` for market-wide, ``headline``, ``date`` and/or
    ``published_at``...) -> a normalised ``NewsItem``."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise DataError(f"{where}: not valid JSON ({e.msg}): {line[:80]!r}; expected one object per line") from None
    if not isinstance(obj, dict):
        raise DataError(f"{where}: {type(obj).__name__} is not a JSON object; expected one object per line")
    missing = [k for k in _REQUIRED if not obj.get(k)]
    if obj.get("date") is None and obj.get("published_at") is None:
        missing.append("date or published_at")
    if missing:
        raise DataError(f"{where}: news item lacks {', '.join(missing)}; required: id, symbol, headline "
                        f"and date or published_at")
    date = obj.get("date")
    if date is not None:
        try:
            date = dt.date.fromisoformat(str(date)).isoformat()
        except ValueError:
            raise DataError(f"{where}: bad news date {excerpt(date)}; expected YYYY-MM-DD") from None
    if obj.get("published_at") is not None:
        parse_instant(str(obj["published_at"]))
    sentiment = obj.get("sentiment")
    return NewsItem(
        id=str(obj["id"]), symbol=str(obj["symbol"]).upper(), date=date,
        published_at=None if obj.get("published_at") is None else str(obj["published_at"]),
        headline=ascii_fold(str(obj["headline"])), summary=ascii_fold(str(obj.get("summary") or "")),
        source=str(obj.get("source") or ""), url=obj.get("url"),
        sentiment=None if sentiment is None else float(sentiment),
        kind=str(obj.get("kind") or "raw"), synthetic=bool(obj.get("synthetic", False)))


def read_news(path: str | Path) -> list[NewsItem]:
    """Read a news JSONL file (blank lines skipped); ids must be unique."""
    items, seen = [], set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                item = parse_news_line(line, f"{path}:{n}")
                if item.id in seen:
                    raise DataError(f"{path}:{n}: duplicate news id {excerpt(item.id)}; ids must be unique")
                seen.add(item.id)
                items.append(item)
    return items


def news_to_json(item: NewsItem) -> str:
    """The JSONL line of an item (what :func:`parse_news_line` reads)."""
    return json.dumps({k: getattr(item, k) for k in NewsItem.__dataclass_fields__}, sort_keys=True)


def _words(headline: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z0-9]+", headline.lower()) if w not in STOP_WORDS)


def _duplicates(a: NewsItem, b: NewsItem) -> bool:
    if a.url and a.url == b.url:
        return True
    wa, wb = _words(a.headline), _words(b.headline)
    return bool(wa or wb) and len(wa & wb) / len(wa | wb) >= JACCARD_DUPLICATE


def bias_flags(text: str) -> tuple[str, ...]:
    low = text.lower()
    return tuple(w for w in LOADED_WORDS if w in low)


def digest(items: Iterable[tuple[np.datetime64, NewsItem]], day: np.datetime64,
           max_items: int = 5) -> list[DigestItem]:
    """MIS-lite digest of one asset for ``day`` from ``(visibility date, item)`` pairs.

    Pass the items visible in ``[day - 3, day]``: raw items are clustered in visibility order
    (duplicates: same URL, or headline word-set Jaccard >= 0.8, at most 3 days apart); a cluster
    keeps its earliest item with the union of the sources; the clusters that start on ``day`` are
    shown, most sources first, then by ``published_at`` and id.
    """
    ordered = sorted(items, key=lambda p: (p[0], p[1].published_at or "", p[1].id))
    clusters: list[tuple[np.datetime64, NewsItem, set[str]]] = []
    for vis, item in ordered:
        if item.kind == "raw":
            for first_vis, head, sources in clusters:
                if head.kind == "raw" and (vis - first_vis) <= np.timedelta64(DEDUP_DAYS, "D") \
                        and _duplicates(head, item):
                    sources.add(item.source)
                    break
            else:
                clusters.append((vis, item, {item.source}))
        else:
            clusters.append((vis, item, {item.source}))
    shown = [(head, tuple(sorted(s))) for vis, head, s in clusters if vis == day]
    shown.sort(key=lambda p: (-len(p[1]), p[0].published_at or "", p[0].id))
    return [DigestItem(id=h.id, symbol=h.symbol, date=str(day), headline=h.headline, sources=s,
                       sentiment=h.sentiment, bias_flags=bias_flags(f"{h.headline} {h.summary}"),
                       synthetic=h.synthetic)
            for h, s in shown[:max_items]]


