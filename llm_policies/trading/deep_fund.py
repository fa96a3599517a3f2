"""DeepFundAgent (Agent Market Arena): three analysts (concurrently) and a portfolio manager that reads a
ledger of its last 10 portfolio updates: 4 LLM calls per day (the planner is off).

Sizes are capped at ``max_position_ratio`` (1.0 in AMA; DeepFund's own limit was 0.25). If every
final attempt fails, the analysts' majority vote decides (a tie, or a neutral majority, is HOLD;
size ``max_position_ratio``)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from arena_envs.core.answers import excerpt
from arena_envs.trading.accounting import HOLD, Order
from llm_policies.trading import prompts as P
from llm_policies.trading.roles import TradingAgent, capped, format_orders

LEDGER_ROWS = 10


def majority_vote(signals: Sequence[str], size: float) -> Order:
    counts = Counter(signals).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]) or counts[0][0] == "neutral":
        return HOLD
    return Order("BUY" if counts[0][0] == "bullish" else "SELL", size=size)


class DeepFundAgent(TradingAgent):
    name = "deep_fund_agent"
    budget = 1 + len(P.DF_ANALYSTS)

    def __init__(self, backend: Any, *, max_position_ratio: float = 1.0, ledger_rows: int = LEDGER_ROWS,
                 **options: Any):
        super().__init__(backend, **options)
        if not 0 < max_position_ratio <= 1:
            raise ValueError(f"max_position_ratio must be in (0, 1], got {excerpt(max_position_ratio)}")
        if ledger_rows < 1:
            raise ValueError(f"ledger_rows must be >= 1, got {excerpt(ledger_rows)}")
        self.max_position_ratio = max_position_ratio
        self.ledger_rows = ledger_rows

    def reset(self, agent: str, seed: int | None = None) -> None:
        super().reset(agent, seed)
        self.ledger: list[dict[str, Any]] = []

    def ledger_text(self) -> str:
        rows = self.ledger[-self.ledger_rows:]
        if not rows:
            return "(no portfolio updates yet)"
        head = "date | action | exposure | equity | realised | justification"
        return "\n".join([head] + [
            f"{r['date']} | {r['action']} | {r['exposure']} | {r['equity']:.2f} | "
            f"{'pending' if r['realised'] is None else format(r['realised'], '+.2%')} | {r['justification']}"
            for r in rows])

    async def decide(self, brief: str, view: str, snapshot: Any) -> str:
        assets = list(snapshot.assets)
        account = snapshot.account
        equity = float(account["equity"])
        if self.ledger and self.ledger[-1]["realised"] is None and self.ledger[-1]["equity"]:
            self.ledger[-1]["realised"] = equity / self.ledger[-1]["equity"] - 1.0
        answers = await self.ask_roles([(role, "Give your signal.") for role in P.DF_ANALYSTS], view)
        signals = "\n".join(f"{role.id}: {a['signal']} - {a['justification']}"
                            for role, a in zip(P.DF_ANALYSTS, answers))
        user = (f"{view}\n\nAnalyst signals:\n{signals}\n\nYour ledger (last {self.ledger_rows} updates):\n"
                f"{self.ledger_text()}\n\nGive your final decision line now.")
        system = P.DF_PORTFOLIO_MANAGER.format(ratio=f"{self.max_position_ratio:.2f}")
        final = await self.ask_final("df_portfolio_manager", system, user, assets)
        limits = [self.max_position_ratio] * len(assets)
        if final is not None:
            text, orders = final
            kept = capped(orders, limits)
            answer = text if kept == orders else format_orders(kept, assets)
        else:
            vote = majority_vote([a["signal"] for a in answers], self.max_position_ratio)
            answer = format_orders([vote] * len(assets), assets)
        exposure = account.get("exposure", {})
        votes = Counter(a["signal"] for a in answers)
        self.ledger.append({"date": snapshot.date, "action": " ".join(answer.split()),
                            "exposure": " ".join(f"{sym} {float(exposure.get(sym, 0.0)):+.2f}" for sym in assets),
                            "equity": equity, "realised": None,
                            "justification": ", ".join(f"{n} {s}" for s, n in sorted(votes.items()))})
        return answer
