"""HedgeFundAgent (Agent Market Arena): 12 persona analysts (LLM, concurrently), 4 functional analysts
(deterministic rules by default, ``functional_mode="llm"`` asks them too), a deterministic risk
manager and an LLM portfolio manager: 13 LLM calls per day (17 with LLM functionals).

* Risk manager: ``sigma20 = sqrt(252) * std(last 20 daily returns, ddof=1)`` per asset,
  ``L = clip(0.40 / sigma20, 0.1, 1.0)`` (1.0 with fewer than 2 returns).
* The portfolio manager's decision line is capped at ``L`` per asset; if every attempt fails, the
  deterministic rule decides: ``score = sum(conf*s) / sum(conf)``, BUY above 0.2, SELL below
  -0.2, else HOLD, size ``L * min(1, |score|)``.
"""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from arena_envs.core.arguments import check_choice
from arena_envs.trading.accounting import HOLD, Order
from llm_policies.trading import prompts as P
from llm_policies.trading.roles import SIGNAL_SIGN, TradingAgent, capped, format_orders

FUNCTIONAL_MODES = ("rule", "llm")
SIGMA_TARGET = 0.40
LIMIT_RANGE = (0.1, 1.0)
THRESHOLD = 0.2
TRADING_DAYS = 252
VOL_WINDOW = 20
POSITIVE_WORDS = frozenset(("beat", "beats", "gain", "gains", "growth", "rally", "rallies", "rise", "rises",
                            "record", "strong", "surge", "surges", "upgrade", "profit", "higher", "optimism"))
NEGATIVE_WORDS = frozenset(("miss", "misses", "loss", "losses", "fall", "falls", "drop", "drops", "weak",
                            "plunge", "plunges", "downgrade", "lawsuit", "lower", "fear", "fears", "slump"))


def daily_returns(closes: Sequence[float] | np.ndarray, window: int = VOL_WINDOW) -> np.ndarray:
    c = np.asarray(closes, dtype=float)[-(window + 1):]
    return c[1:] / c[:-1] - 1.0


def annual_vol(closes: Sequence[float] | np.ndarray) -> float:
    """Annualised volatility of the last 20 daily returns (NaN with fewer than 2)."""
    r = daily_returns(closes)
    return float(np.std(r, ddof=1) * math.sqrt(TRADING_DAYS)) if len(r) >= 2 else math.nan


def position_limit(closes: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """``(sigma20, L)`` of the risk manager."""
    sigma = annual_vol(closes)
    if math.isnan(sigma):
        return sigma, LIMIT_RANGE[1]
    limit = SIGMA_TARGET / sigma if sigma > 0 else math.inf
    return sigma, float(min(max(limit, LIMIT_RANGE[0]), LIMIT_RANGE[1]))


def technical_signal(closes: Sequence[float] | np.ndarray) -> dict[str, Any]:
    """Sign of (5-day momentum + close/SMA20 - 1); confidence ``min(100, 100 |c| / daily sigma20)``."""
    c = np.asarray(closes, dtype=float)
    r = daily_returns(c)
    if len(c) < VOL_WINDOW or len(r) < 2 or np.std(r, ddof=1) == 0:
        return {"signal": "neutral", "confidence": 0, "reasoning": "not enough history"}
    composite = (c[-1] / c[-6] - 1.0) + (c[-1] / c[-VOL_WINDOW:].mean() - 1.0)
    signal = "bullish" if composite > 0 else "bearish" if composite < 0 else "neutral"
    confidence = min(100.0, 100.0 * abs(composite) / float(np.std(r, ddof=1)))
    return {"signal": signal, "confidence": round(confidence), "reasoning": f"composite {composite:+.4f}"}


def sentiment_signal(news: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean digest sentiment where the items carry one, else keyword tone of the headlines."""
    scored = [float(n["sentiment"]) for n in news if n.get("sentiment") is not None]
    if scored:
        tone = float(np.mean(scored))
    else:
        words = [w.strip(".,;:!?'\"").lower() for n in news for w in n["headline"].split()]
        pos = sum(w in POSITIVE_WORDS for w in words)
        neg = sum(w in NEGATIVE_WORDS for w in words)
        tone = (pos - neg) / (pos + neg) if pos + neg else 0.0
    signal = "bullish" if tone > 0 else "bearish" if tone < 0 else "neutral"
    return {"signal": signal, "confidence": round(min(100.0, 100.0 * abs(tone))), "reasoning": f"tone {tone:+.2f}"}


def fallback_order(signals: Sequence[dict[str, Any]], limit: float) -> Order:
    """The portfolio manager's deterministic rule for one asset."""
    total = sum(float(s["confidence"]) for s in signals)
    score = sum(float(s["confidence"]) * SIGNAL_SIGN[s["signal"]] for s in signals) / total if total else 0.0
    if abs(score) <= THRESHOLD:
        return HOLD
    return Order("BUY" if score > 0 else "SELL", size=round(limit * min(1.0, abs(score)), 4))


class HedgeFundAgent(TradingAgent):
    name = "hedge_fund_agent"

    def __init__(self, backend: Any, *, functional_mode: str = "rule", **options: Any):
        super().__init__(backend, **options)
        check_choice("functional_mode", functional_mode, FUNCTIONAL_MODES)
        self.functional_mode = functional_mode
        self.budget = len(P.HF_PERSONAS) + (len(P.HF_FUNCTIONALS) if functional_mode == "llm" else 0) + 1

    async def decide(self, brief: str, view: str, snapshot: Any) -> str:
        assets = list(snapshot.assets)
        llm_roles = list(P.HF_PERSONAS) + (list(P.HF_FUNCTIONALS) if self.functional_mode == "llm" else [])
        answers = await self.ask_roles([(role, "Give your signal.") for role in llm_roles], view)
        shared = dict(zip((r.id for r in llm_roles), answers))
        risk = {sym: position_limit(snapshot.closes(sym)) for sym in assets}
        limits = [risk[sym][1] for sym in assets]
        per_asset = {sym: self._functionals(snapshot, sym) for sym in assets}
        self.day.notes["risk"] = {sym: {"sigma20": None if math.isnan(s) else s, "limit": lim}
                                  for sym, (s, lim) in risk.items()}
        self.day.notes["functionals"] = per_asset
        exposure = snapshot.account.get("exposure", {})
        lines = [f"{role}: {json.dumps(a, separators=(',', ':'))}" for role, a in shared.items()]
        for sym in assets:
            lines += [f"{role} ({sym}): {json.dumps(a, separators=(',', ':'))}" for role, a in per_asset[sym].items()]
        limits_text = ", ".join(f"{sym} L={risk[sym][1]:.2f} (vol20 {risk[sym][0]:.1%}), exposure "
                                f"{float(exposure.get(sym, 0.0)):+.2f}" for sym in assets)
        user = (f"{view}\n\nSpecialist signals:\n" + "\n".join(lines) + f"\nRisk manager: {limits_text}\n\n"
                "Give your final decision line now; keep every size within its limit L.")
        final = await self.ask_final("hf_portfolio_manager", P.HF_PORTFOLIO_MANAGER, user, assets)
        if final is not None:
            text, orders = final
            kept = capped(orders, limits)
            return text if kept == orders else format_orders(kept, assets)
        orders = [fallback_order(list(shared.values()) + list(per_asset[sym].values()), risk[sym][1])
                  for sym in assets]
        return format_orders(orders, assets)

    def _functionals(self, snapshot: Any, sym: str) -> dict[str, dict[str, Any]]:
        """The rule-mode functional analysts of one asset (empty in LLM mode)."""
        if self.functional_mode == "llm":
            return {}
        neutral = {"signal": "neutral", "confidence": 0, "reasoning": "no fundamentals in the inputs"}
        return {"hf_valuation": dict(neutral), "hf_sentiment": sentiment_signal(snapshot.news(sym)),
                "hf_fundamentals": dict(neutral), "hf_technicals": technical_signal(snapshot.closes(sym))}
