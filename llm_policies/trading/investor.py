"""InvestorAgent (Agent Market Arena's single-agent baseline): one agent with a layered memory; at
most 2 LLM calls per day (``investor_reflection`` once yesterday's decision has an outcome, then
``investor_decision``).

Memory writes per decision: today's news digest items of each asset go to ``short`` (importance
``min(1, sources/3)``: better-confirmed news matters more), every 5th decision a weekly price
summary goes to ``mid`` and every 21st a monthly one to ``long`` (importance
``min(1, |return| / 0.05)`` over the period, like a reflection's), and each reflection goes to
``reflection`` with importance ``min(1, |own return| / 0.05)``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from arena_envs.trading.accounting import HOLD
from llm_policies.trading import prompts as P
from llm_policies.trading.memory import LAYERS, TOP_K, LayeredMemory
from llm_policies.trading.roles import TradingAgent, format_orders

WEEK, MONTH = 5, 21
IMPORTANCE_SCALE = 0.05


def period_return(closes: np.ndarray, days: int) -> float | None:
    """Return over the last ``days`` bars (``None`` without enough history)."""
    if len(closes) <= days:
        return None
    return float(closes[-1] / closes[-1 - days] - 1.0)


class InvestorAgent(TradingAgent):
    name = "investor_agent"
    budget = 2

    def __init__(self, backend: Any, *, top_k: int = TOP_K, **options: Any):
        super().__init__(backend, **options)
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        self.top_k = top_k

    def reset(self, agent: str, seed: int | None = None) -> None:
        super().reset(agent, seed)
        self.memory = LayeredMemory()
        self.previous: dict[str, Any] | None = None  # last decision: date, text, equity, closes

    async def decide(self, brief: str, view: str, snapshot: Any) -> str:
        date, assets = snapshot.date, list(snapshot.assets)
        closes = {sym: np.asarray(snapshot.closes(sym), dtype=float) for sym in assets}
        equity = float(snapshot.account["equity"])
        self._write(snapshot, date, assets, closes)
        if self.previous is not None:
            await self._reflect(view, date, assets, closes, equity)
        query = " ".join(assets + [n["headline"] for sym in assets for n in snapshot.news(sym)])
        recalled = self.memory.retrieve(date, query, self.top_k)
        memories = "\n".join(f"[{item.id}] ({item.layer}, {item.date}) {item.text}"
                             for layer in LAYERS for item in recalled[layer]) or "(no memories yet)"
        self.day.notes["memory_ids"] = [item.id for layer in LAYERS for item in recalled[layer]]
        attitude = P.RISK_SEEKING if float(snapshot.account.get("cum_return", 0.0)) >= 0 else P.RISK_AVERSE
        user = f"{brief}\n\nRetrieved memories:\n{memories}\n\nGive your decision line now."
        final = await self.ask_final("investor_decision", P.INVESTOR_DECISION.format(attitude=attitude), user, assets)
        answer = final[0] if final is not None else format_orders([HOLD] * len(assets), assets)
        self.previous = {"date": date, "text": answer, "equity": equity,
                         "close": {sym: float(c[-1]) if len(c) else None for sym, c in closes.items()}}
        return answer

    def _write(self, snapshot: Any, date: str, assets: list[str], closes: dict[str, np.ndarray]) -> None:
        for sym in assets:
            for item in snapshot.news(sym):
                self.memory.add("short", date, f"{sym}: {item['headline']}", min(1.0, item.get("sources", 1) / 3))
            for layer, days, label in (("mid", WEEK, "week"), ("long", MONTH, "month")):
                change = period_return(closes[sym], days)
                if self.decisions % days == 0 and change is not None:
                    text = f"{sym} {label} to {date}: close {closes[sym][-1]:.2f}, change {change:+.2%}"
                    self.memory.add(layer, date, text, min(1.0, abs(change) / IMPORTANCE_SCALE))

    async def _reflect(self, view: str, date: str, assets: list[str], closes: dict[str, np.ndarray],
                       equity: float) -> None:
        prev = self.previous
        assert prev is not None
        own = equity / prev["equity"] - 1.0 if prev["equity"] else 0.0
        moves = ", ".join(f"{sym} {c[-1] / prev['close'][sym] - 1.0:+.2%}" for sym, c in closes.items()
                          if prev["close"].get(sym) and len(c))
        outcome = f"On {prev['date']} you decided: {prev['text'].strip()}. Asset moves since: {moves or 'n/a'}; " \
                  f"your own return: {own:+.2%}."
        lesson = (await self.ask_role(P.INVESTOR_REFLECTION, view, f"{outcome}\nWrite your lesson."))["lesson"]
        self.memory.add("reflection", date, f"{outcome} Lesson: {lesson}", min(1.0, abs(own) / IMPORTANCE_SCALE))
