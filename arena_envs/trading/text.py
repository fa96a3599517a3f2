"""The text observation: a header, the asset blocks and news digests (the market part, rendered
once per day and shared by every agent), the agent's own account, the instructions.

ASCII only; no thousands separators; prices with 2 decimals, percentages and exposures signed
with 2 decimals; ``n/a`` where a figure cannot be computed. Too long a text loses, in this order,
the lowest-ranked news lines, the oldest price rows (at least 5 stay) and the "Recent decisions"
line (:func:`fit_text`); the header, the account and the instructions always stay.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from arena_envs.trading.accounting import OrderLike
from arena_envs.trading.features import AssetHistory
from arena_envs.trading.news import DigestItem, ascii_fold

MIN_PRICE_ROWS = 5
NO_NEWS = "- No verified news for this date."
TABLE_HEAD = "date | open | high | low | close | volume"


def pct(x: float | None) -> str:
    """``+1.23%``; ``n/a`` for None or NaN."""
    return "n/a" if x is None or x != x else f"{x * 100:+.2f}%"  # x != x: NaN


def bar_rows(h: AssetHistory) -> tuple[str, ...]:
    """One table row per own day of ``h`` (formatted once per loaded market)."""
    return tuple(f"{d} | {o:.2f} | {hi:.2f} | {lo:.2f} | {c:.2f} | {v:.0f}"
                 for d, o, hi, lo, c, v in zip(h.dates, h.open, h.high, h.low, h.close, h.volume))


class AssetBlock(NamedTuple):
    """The lines of one asset's block on one day, kept apart so that :func:`fit_text` can drop some."""

    head: tuple[str, ...]  #: title, market state
    rows: tuple[str, ...]  #: price rows, oldest first
    summary: str
    news: tuple[str, ...]  #: digest lines, best ranked first ("No verified news" when none)
    market_news: tuple[str, ...]
    date: str

    def lines(self, max_rows: int | None = None, max_news: int | None = None) -> list[str]:
        rows = self.rows if max_rows is None else self.rows[len(self.rows) - min(max_rows, len(self.rows)):]
        news, market = self.news, self.market_news
        if max_news is not None:
            news, market = news[:max_news], market[:max_news]
        return [*self.head, f"Price history (last {len(rows)} daily bars, oldest first):", TABLE_HEAD, *rows,
                self.summary, f"News digest ({self.date}, verified and de-duplicated):", *news,
                "Market-wide news:", *market]


def asset_block(h: AssetHistory, rows: Sequence[str], t: int, is_open: bool, date: str, window: int,
                periods_per_year: int, news: Sequence[DigestItem], market_news: Sequence[DigestItem]) -> AssetBlock:
    """Asset ``h``'s block for a day whose latest own bar is ``t``."""
    head = (f"== ASSET {h.symbol} ({h.asset_class}, USD) ==", f"Market: {'OPEN' if is_open else 'CLOSED'} today")
    if t < 0:
        summary = "Summary: no bars yet"
    else:
        ret_1d, ret_5d, ret_20d, vol, _ = h.stats(t)
        ann = "n/a" if math.isnan(vol) else f"{vol * math.sqrt(periods_per_year) * 100:.1f}%"
        summary = (f"Summary: close {h.close_values[t]:.2f} | 1d {pct(ret_1d)} | 5d {pct(ret_5d)} "
                   f"| 20d {pct(ret_20d)} | vol20 (ann.) {ann}")
    return AssetBlock(head, tuple(rows[max(0, t + 1 - window):t + 1]), summary,
                      tuple(n.render() for n in news) or (NO_NEWS,),
                      tuple(n.render() for n in market_news) or ("- None.",), date)


def header(date: str, weekday: str, step: str, phase: str, agent: str) -> str:
    return f"AMA DAILY BRIEF | date={date} ({weekday}) | step={step} | phase={phase} | agent={agent}"


def order_text(order: OrderLike) -> str:
    """An order as the text of a decision (``BUY 0.5``, ``TARGET -0.3``, ``HOLD``)."""
    if order.kind == "TARGET":
        return f"TARGET {order.target:+.4g}"
    return order.kind if order.size is None else f"{order.kind} {order.size:.4g}"


def action_text(assets: Sequence[str], orders: Sequence[OrderLike], fell_back: bool) -> str:
    """A day's orders as one decision's text (``SPX BUY, NDX HOLD`` with several assets)."""
    if len(assets) > 1:
        text = ", ".join(f"{sym} {order_text(order)}" for sym, order in zip(assets, orders))
    else:
        text = order_text(orders[0])
    return text + " (invalid answer, fallback)" if fell_back else text


class PastDecision(NamedTuple):
    """A decision an agent took: its date, its :func:`action_text`, the step return it realised."""

    date: str
    action: str
    realised: float | None


class AccountView(NamedTuple):
    """One agent's account figures for the text."""

    agent: str
    equity: float
    initial_capital: float
    cash: float
    day_pnl: float
    day_return: float
    positions: tuple[tuple[str, float, float, float], ...]  #: (symbol, exposure, units, notional)
    cum_return: float
    cum_return_eval: float | None
    previous: PastDecision | None
    recent: tuple[str, ...]  #: :func:`decision_entry` of the last decisions, oldest first


def decision_entry(date: str, action: str, realised: float | None) -> str:
    """One entry of the "Recent decisions" line (formatted once, when the day is resolved)."""
    return f"{date} {action} ({pct(realised)})"


def account_lines(a: AccountView) -> tuple[list[str], str | None]:
    """The account section, and its "Recent decisions" line (the one line that may be dropped)."""
    lines = [f"== ACCOUNT {a.agent} ==",
             f"Equity: {a.equity:.2f} USD | Initial capital: {a.initial_capital:.2f} USD",
             f"Cash (implied): {a.cash:.2f} USD | Day P&L: {a.day_pnl:+.2f} USD ({pct(a.day_return)})"]
    for sym, e, units, notional in a.positions:
        side = "LONG" if e > 0 else ("SHORT" if e < 0 else "FLAT")
        lines.append(f"Position {sym}: {side} exposure {e:+.2f} ({units:.4f} units, notional {notional:.2f} USD)")
    lines.append(f"Cumulative return: since trading start {pct(a.cum_return)} "
                 f"| since eval start {pct(a.cum_return_eval)}")
    if a.previous is None:
        lines.append("Previous decision: none")
    else:
        d, action, realised = a.previous
        lines.append(f"Previous decision ({d}): {action} -> realised {pct(realised)}")
    recent = None
    if a.recent:
        recent = "Recent decisions: " + ", ".join(a.recent)
    return lines, recent


def fit_text(top: Sequence[str], blocks: Sequence[AssetBlock], account: Sequence[str], recent: str | None,
             tail: Sequence[str], max_chars: int) -> str:
    """The text of the parts, dropping lines (module docstring) until it has at most ``max_chars``
    characters; if even the kept parts are longer, it is cut at ``max_chars``."""
    def build(max_rows: int | None, max_news: int | None, with_recent: bool) -> str:
        market = [line for b in blocks for line in b.lines(max_rows, max_news)]
        own = [*account, recent] if with_recent and recent is not None else list(account)
        return "\n".join([*top, *market, *own, *tail])

    text = build(None, None, True)
    if len(text) <= max_chars:
        return text
    most_news = max((max(len(b.news), len(b.market_news)) for b in blocks), default=0)
    for n in range(most_news - 1, -1, -1):
        text = build(None, n, True)
        if len(text) <= max_chars:
            return text
    most_rows = max((len(b.rows) for b in blocks), default=0)
    for m in range(most_rows - 1, MIN_PRICE_ROWS - 1, -1):
        text = build(m, 0, True)
        if len(text) <= max_chars:
            return text
    text = build(MIN_PRICE_ROWS, 0, False)
    return text[:max_chars]


def ascii_text(text: str) -> str:
    """Anything shown that did not come from the data files' folded fields (labels, notes)."""
    return ascii_fold(text) if not text.isascii() or not text.isprintable() else text
