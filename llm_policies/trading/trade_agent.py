"""TradeAgent (Agent Market Arena): a trading firm. Four analysts (concurrently), a bull/bear debate of
``debate_rounds`` rounds, the research manager, the trader, a risk team of three (concurrently,
``risk_rounds`` rounds) and the portfolio manager, whose answer is the decision line; with one
debate and one risk round that is 12 LLM calls per day. A failed final call is HOLD."""
from __future__ import annotations

import json
from typing import Any

from arena_envs.core.answers import excerpt
from arena_envs.trading.accounting import HOLD
from llm_policies.trading import prompts as P
from llm_policies.trading.roles import Role, TradingAgent, format_orders


def _dump(value: dict[str, Any]) -> str:
    return json.dumps(value, separators=(",", ":"))


class TradeAgent(TradingAgent):
    name = "trade_agent"

    def __init__(self, backend: Any, *, debate_rounds: int = 1, risk_rounds: int = 1, **options: Any):
        super().__init__(backend, **options)
        for key, value in (("debate_rounds", debate_rounds), ("risk_rounds", risk_rounds)):
            if not isinstance(value, int) or not 1 <= value <= 3:
                raise ValueError(f"{key} must be an integer in 1..3, got {excerpt(value)}")
        self.debate_rounds = debate_rounds
        self.risk_rounds = risk_rounds
        self.budget = len(P.TA_ANALYSTS) + 2 * debate_rounds + 2 + len(P.TA_RISK) * risk_rounds + 1
        # one role object per round: a role id is asked once per day
        self.bulls = [_round(P.TA_BULL, k) for k in range(debate_rounds)]
        self.bears = [_round(P.TA_BEAR, k) for k in range(debate_rounds)]
        self.risks = [[_round(role, k) for role in P.TA_RISK] for k in range(risk_rounds)]

    async def decide(self, brief: str, view: str, snapshot: Any) -> str:
        assets = list(snapshot.assets)
        reports = await self.ask_roles([(role, "Give your report.") for role in P.TA_ANALYSTS], view)
        report_text = "\n".join(f"{role.id}: {_dump(r)}" for role, r in zip(P.TA_ANALYSTS, reports))
        debate: list[str] = []
        for bull, bear in zip(self.bulls, self.bears):
            for role in (bull, bear):
                turns = "\n".join(debate) or "(none yet)"
                said = await self.ask_role(role, view, f"Analyst reports:\n{report_text}\nDebate so far:\n{turns}\n"
                                                        "Give your argument.")
                debate.append(f"{role.id}: {said['text']}")
        debate_text = "\n".join(debate)
        plan = await self.ask_role(P.TA_RESEARCH_MANAGER, view,
                                   f"Analyst reports:\n{report_text}\nDebate:\n{debate_text}\nGive stance and plan.")
        proposal = await self.ask_role(P.TA_TRADER, view, f"Research plan: {_dump(plan)}\nGive your proposal.")
        reviews: list[str] = []
        for team in self.risks:
            earlier = "\n".join(reviews) or "(none yet)"
            answers = await self.ask_roles([(role, f"Trader's proposal: {_dump(proposal)}\nEarlier reviews:\n"
                                                   f"{earlier}\nGive your adjustment.") for role in team], view)
            reviews += [f"{role.id}: {_dump(a)}" for role, a in zip(team, answers)]
        self.day.notes["proposal"] = proposal
        user = (f"{view}\n\nResearch plan: {_dump(plan)}\nTrader's proposal: {_dump(proposal)}\n"
                f"Risk reviews:\n" + "\n".join(reviews) + "\n\nGive your final decision line now.")
        final = await self.ask_final("ta_portfolio_manager", P.TA_PORTFOLIO_MANAGER, user, assets)
        return final[0] if final is not None else format_orders([HOLD] * len(assets), assets)


def _round(role: Role, k: int) -> Role:
    """``role`` for debate/risk round ``k`` (round 1 keeps the role's id, later rounds add ``_rK``)."""
    if k == 0:
        return role
    return Role(f"{role.id}_r{k + 1}", role.brief, role.schema, role.default, role.max_tokens)
