"""The compact view of a day that the sub-roles read, built from ``info["snapshot"]``.

The final decision call reads the whole observation; the sub-roles (up to 16 per day) read this
summary of the same information (returns, the last closes, the news digest, the position), a few
times shorter, because prompt tokens are what a day costs on a small server."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

CLOSES_SHOWN = 5
TRADING_DAYS = 252


def market_view(snapshot: Any, closes_shown: int = CLOSES_SHOWN) -> str:
    account = snapshot.account
    exposure = account.get("exposure", {})
    lines = [f"Date {snapshot.date} ({snapshot.phase})."]
    for sym in snapshot.assets:
        closes = np.asarray(snapshot.closes(sym), dtype=float)
        if len(closes) == 0:
            lines.append(f"{sym}: no prices yet")
            continue
        parts = [f"close {closes[-1]:.2f}"]
        parts += [f"{label} {closes[-1] / closes[-1 - days] - 1:+.2%}" for label, days in (("1d", 1), ("5d", 5),
                                                                                        ("20d", 20))
                  if len(closes) > days]
        returns = closes[-21:][1:] / closes[-21:][:-1] - 1
        if len(returns) >= 2:
            parts.append(f"vol20 {np.std(returns, ddof=1) * math.sqrt(TRADING_DAYS):.1%}")
        lines.append(f"{sym}: " + ", ".join(parts) + ("" if snapshot.is_open(sym) else " (market closed today)"))
        lines.append(f"{sym} last closes: " + " ".join(f"{c:.2f}" for c in closes[-closes_shown:]))
        news = snapshot.news(sym)
        lines.append(f"{sym} news: " + ("; ".join(n["headline"] for n in news) if news else "none"))
        lines.append(f"{sym} position: exposure {float(exposure.get(sym, 0.0)):+.2f}")
    market = snapshot.market_news()
    lines.append("Market news: " + ("; ".join(n["headline"] for n in market) if market else "none"))
    lines.append(f"Cumulative return: {float(account.get('cum_return', 0.0)):+.2%}")
    return "\n".join(lines)
