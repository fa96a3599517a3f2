"""The four trading agent designs of the Agent Market Arena paper as LLM policies for
``trading_v0``: :class:`InvestorAgent` (memory), :class:`TradeAgent` (trading firm),
:class:`HedgeFundAgent` (persona analysts and managers) and :class:`DeepFundAgent` (ledger memory),
each with a fixed budget of LLM calls per day. Spec strings: ``vllm:MODEL?agent=investor`` and
``agent=tradeagent|hedgefund|deepfund``."""
from llm_policies.trading.deep_fund import DeepFundAgent
from llm_policies.trading.hedge_fund import HedgeFundAgent
from llm_policies.trading.investor import InvestorAgent
from llm_policies.trading.roles import TradingAgent
from llm_policies.trading.trade_agent import TradeAgent

#: The ``agent=`` names of the spec strings.
AGENTS: dict[str, type[TradingAgent]] = {"investor": InvestorAgent, "tradeagent": TradeAgent,
                                         "hedgefund": HedgeFundAgent, "deepfund": DeepFundAgent}

__all__ = ["AGENTS", "DeepFundAgent", "HedgeFundAgent", "InvestorAgent", "TradeAgent", "TradingAgent"]
