"""The trading agents without a model: memory scoring and eviction, the HedgeFund
risk manager and portfolio-manager rule, DeepFund's majority vote, prompt layout, budgets, the
retry-then-default path and spec strings. The only backend here is :class:`GarbageBackend`, a
fault that a real guided model cannot be made to produce (answers that are never valid JSON nor a
decision line), which drives every role to its neutral default and every final call to its
fallback."""
from __future__ import annotations

import asyncio
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from arena_envs.trading.accounting import HOLD, Order
from arena_envs.trading.parser import action_instructions, decision_constraint, parse_action
from llm_policies.specs import policy_from_spec
from llm_policies.trading import AGENTS, DeepFundAgent, HedgeFundAgent, InvestorAgent, TradeAgent
from llm_policies.trading import prompts as P
from llm_policies.trading.deep_fund import majority_vote
from llm_policies.trading.hedge_fund import fallback_order, position_limit, sentiment_signal, technical_signal
from llm_policies.trading.memory import EVICT_BELOW, LAYER_DECAY, LayeredMemory, jaccard, tokens
from llm_policies.trading.roles import brief_text, conform, schema_regex
from llm_policies.trading.views import market_view
from llm_policies.types import ChatRequest, ChatResponse

ASSETS = ("SPX",)


class GarbageBackend:
    """A broken model: every answer is neither JSON nor a decision line."""

    label = "garbage"

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def generate(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return ChatResponse("%%% ??? %%%", prompt_tokens=3, completion_tokens=2)

    def close(self) -> None:
        pass


@dataclass
class Snapshot:
    """The fields of ``info["snapshot"]`` the agents read."""

    date: str
    prices: np.ndarray
    equity: float = 100_000.0
    cum_return: float = 0.0
    headlines: list[dict[str, Any]] = field(default_factory=list)
    assets: tuple[str, ...] = ASSETS
    phase: str = "eval"

    def is_open(self, sym: str) -> bool:
        return True

    def closes(self, sym: str) -> np.ndarray:
        return self.prices

    def news(self, sym: str) -> list[dict[str, Any]]:
        return self.headlines

    def market_news(self) -> list[dict[str, Any]]:
        return []

    @property
    def account(self) -> dict[str, Any]:
        return {"equity": self.equity, "initial_capital": 100_000.0, "exposure": {"SPX": 0.0},
                "cum_return": self.cum_return}


class TradingEnvStub:
    """The two methods the agents call on the bound environment, from the real parser module."""

    def action_instructions(self) -> str:
        return action_instructions(list(ASSETS))

    def answer_constraint(self, agent: str):
        return decision_constraint(list(ASSETS))


OBSERVATION = "AMA DAILY BRIEF | date=2018-08-01\n== ASSET SPX ==\nclose 2800\n== INSTRUCTIONS ==\n" + \
              action_instructions(list(ASSETS))


def rising(n: int = 30, step: float = 0.01) -> np.ndarray:
    return 100.0 * (1 + step) ** np.arange(n)


def play(agent: Any, days: int = 2, prices: np.ndarray | None = None) -> list[tuple[str, dict[str, Any]]]:
    agent.bind(TradingEnvStub())
    agent.reset("trader_0", seed=5)
    out = []
    for k in range(days):
        snapshot = Snapshot(f"2018-08-{k + 1:02d}", rising() if prices is None else prices, 100_000.0 + k)
        answer = asyncio.run(agent.aact({"text": OBSERVATION}, {"snapshot": snapshot}))
        out.append((answer, agent.trace()))
    return out


# ---------------------------------------------------------------------- memory


def test_memory_recency_decays_per_layer_and_evicts_below_005():
    memory = LayeredMemory()
    short = memory.add("short", "2018-01-01", "SPX rallies on earnings", 0.5)
    long = memory.add("long", "2018-01-01", "SPX month to 2018-01-01", 0.5)
    assert memory.recency(short, "2018-01-15") == pytest.approx(math.exp(-14 / LAYER_DECAY["short"]))
    assert memory.recency(long, "2018-01-15") == pytest.approx(math.exp(-14 / 365))
    # short decays below 0.05 after 14 * ln(20) = 41.9 days: alive on day 41, gone on day 42
    assert memory.evict("2018-02-11") == [] and memory.recency(short, "2018-02-11") >= EVICT_BELOW
    assert memory.evict("2018-02-12") == [short]
    assert memory.items == [long]


def test_memory_score_is_recency_plus_jaccard_plus_importance_and_top_k_per_layer():
    memory = LayeredMemory()
    a = memory.add("short", "2018-08-01", "SPX rallies on strong earnings", 0.2)
    b = memory.add("short", "2018-08-01", "oil prices fall", 0.2)
    for k in range(7):
        memory.add("mid", "2018-08-01", f"week {k}", k / 10)
    query = "SPX earnings"
    expected = 1.0 + jaccard(tokens(a.text), tokens(query)) + 0.2
    assert memory.score(a, "2018-08-01", tokens(query)) == pytest.approx(expected)
    assert jaccard(tokens(a.text), tokens(query)) == pytest.approx(2 / 4)  # on dropped as a stop word
    got = memory.retrieve("2018-08-01", query, k=5)
    assert got["short"] == [a, b]
    assert [i.text for i in got["mid"]] == ["week 6", "week 5", "week 4", "week 3", "week 2"]
    assert got["long"] == [] and got["reflection"] == []


def test_memory_rejects_bad_layers_and_importance():
    memory = LayeredMemory()
    with pytest.raises(ValueError, match="memory layer must be one of"):
        memory.add("huge", "2018-08-01", "x", 0.5)
    with pytest.raises(ValueError, match=r"importance must be in \[0, 1\], got 1.5"):
        memory.add("short", "2018-08-01", "x", 1.5)


# ---------------------------------------------------------------------- HedgeFund rules


def test_risk_manager_limit_is_clip_040_over_sigma20():
    closes = rising(25) * (1 + 0.02 * np.sin(np.arange(25)))
    r = closes[-21:][1:] / closes[-21:][:-1] - 1
    sigma = np.std(r, ddof=1) * math.sqrt(252)
    got_sigma, limit = position_limit(closes)
    assert got_sigma == pytest.approx(sigma)
    assert limit == pytest.approx(min(max(0.40 / sigma, 0.1), 1.0))
    assert position_limit(np.full(25, 100.0))[1] == 1.0  # no volatility: the cap
    wild = 100 * np.cumprod(1 + 0.3 * np.tile([1, -1], 13))
    assert position_limit(wild)[1] == 0.1  # huge volatility: the floor
    assert position_limit([100.0, 101.0])[1] == 1.0  # fewer than 2 returns


def test_portfolio_manager_fallback_rule():
    bull = {"signal": "bullish", "confidence": 80}
    bear = {"signal": "bearish", "confidence": 20}
    neutral = {"signal": "neutral", "confidence": 100}
    # score = (80 - 20) / 100 = 0.6 -> BUY, size L * 0.6
    assert fallback_order([bull, bear], 0.5) == Order("BUY", size=0.3)
    # score = (80 - 20) / 200 = 0.3
    assert fallback_order([bull, bear, neutral], 1.0) == Order("BUY", size=0.3)
    # score = -20 / 120 = -0.167: inside the band
    assert fallback_order([bear, neutral], 1.0) == HOLD
    assert fallback_order([{"signal": "bearish", "confidence": 50}], 0.4) == Order("SELL", size=0.4)
    assert fallback_order([{"signal": "bullish", "confidence": 0}], 1.0) == HOLD  # no confidence at all


def test_rule_functionals():
    up = technical_signal(rising(30) * (1 + 0.001 * np.sin(np.arange(30))))
    assert up["signal"] == "bullish" and 0 < up["confidence"] <= 100
    assert technical_signal(rising(30)[::-1] * (1 + 0.001 * np.sin(np.arange(30))))["signal"] == "bearish"
    assert technical_signal(rising(10))["signal"] == "neutral"  # not enough history
    assert sentiment_signal([{"headline": "x", "sentiment": 0.5}, {"headline": "y", "sentiment": -0.1}]) == \
        {"signal": "bullish", "confidence": 20, "reasoning": "tone +0.20"}
    assert sentiment_signal([{"headline": "Shares plunge after profit miss", "sentiment": None}])["signal"] == "bearish"
    assert sentiment_signal([])["signal"] == "neutral"


# ---------------------------------------------------------------------- DeepFund vote


def test_deepfund_majority_vote():
    assert majority_vote(["bullish", "bullish", "bearish"], 0.25) == Order("BUY", size=0.25)
    assert majority_vote(["bearish", "neutral", "bearish"], 1.0) == Order("SELL", size=1.0)
    assert majority_vote(["bullish", "bearish", "neutral"], 1.0) == HOLD  # a three-way tie
    assert majority_vote(["neutral", "neutral", "bullish"], 1.0) == HOLD


# ---------------------------------------------------------------------- prompts, budgets, faults


def test_role_schema_check_clips_numbers_and_rejects_bad_values():
    schema = P.SIGNAL_100
    assert conform({"signal": "bullish", "confidence": 140, "reasoning": "x" * 99}, schema) == \
        {"signal": "bullish", "confidence": 100, "reasoning": "x" * 60}
    assert conform({"signal": "up", "confidence": 1, "reasoning": ""}, schema) is None
    assert conform({"signal": "bullish", "confidence": "high", "reasoning": ""}, schema) is None
    assert conform({"signal": "bullish", "reasoning": ""}, schema) is None


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_garbage_answers_retry_then_default_and_fallback(name):
    """Every role asked 1 + max_retries times, then its neutral default; the final call likewise,
    then the architecture's fallback, flagged; the role calls are exactly the architecture's budget
    (Investor 2, TradeAgent 12, HedgeFund 13, DeepFund 4)."""
    backend = GarbageBackend()
    agent = AGENTS[name](backend, max_retries=2)
    (_, first), (answer, trace) = play(agent, days=2, prices=np.full(30, 100.0))
    budget = {"investor": 2, "tradeagent": 12, "hedgefund": 13, "deepfund": 4}[name]
    assert trace["budget"] == budget
    assert trace["role_calls"] == budget and first["role_calls"] == (1 if name == "investor" else budget)
    free = {"ta_bull_researcher", "ta_bear_researcher"}  # plain-text debate turns: any words are an argument
    assert trace["calls_by_role"] == {role: 1 if role in free else 3 for role in trace["calls_by_role"]}
    assert trace["retries"] == 2 * (budget - len(free & set(trace["calls_by_role"]))) and trace["fallback"] is True
    assert len(trace["calls"]) == budget + trace["retries"]
    assert parse_action(answer, ASSETS).orders == (HOLD,)  # flat prices: the rule functionals are neutral too
    finals = {"investor": "investor_decision", "tradeagent": "ta_portfolio_manager",
              "hedgefund": "hf_portfolio_manager", "deepfund": "df_portfolio_manager"}
    assert set(trace["defaults"]) == set(trace["calls_by_role"]) - {finals[name]} - free


def test_hedgefund_fallback_uses_the_rule_functionals_and_the_limit():
    """Garbage from every persona and the manager: the rule technicals (bullish on rising prices)
    decide alone, sized by the risk manager's limit."""
    prices = rising(30, 0.01) * (1 + 0.004 * np.sin(np.arange(30)))
    (_, trace), = play(HedgeFundAgent(GarbageBackend(), max_retries=0), days=1, prices=prices)
    limit = position_limit(prices)[1]
    tech = technical_signal(prices)
    assert tech["signal"] == "bullish" and tech["confidence"] > 0
    assert trace["fallback"] and trace["risk"]["SPX"]["limit"] == pytest.approx(limit)
    assert parse_action(trace["final"], ASSETS).orders == (Order("BUY", size=round(limit, 4)),)


def test_prompt_layout_role_line_instructions_then_observation():
    backend = GarbageBackend()
    play(TradeAgent(backend, max_retries=0), days=1)
    instructions = action_instructions(list(ASSETS))
    roles = []
    for request in backend.requests:
        system, user = request.messages
        first, _, _ = system["content"].partition("\n")
        assert first.startswith("ROLE: ")
        roles.append(first[6:])
        assert system["content"].endswith(instructions)  # verbatim
        assert "== INSTRUCTIONS ==" not in user["content"]  # the observation's copy is dropped
        assert request.sampling.temperature == 0.5
    view = market_view(Snapshot("2018-08-01", rising()))
    assert all(r.messages[1]["content"].startswith(view + "\n\n") for r in backend.requests)
    assert "SPX: close 133.45, 1d +1.00%, 5d +5.10%, 20d +22.02%, vol20 0.0%" in view
    assert roles[:4] == [r.id for r in P.TA_ANALYSTS]  # gathered in order
    assert roles[4:] == ["ta_bull_researcher", "ta_bear_researcher", "ta_research_manager", "ta_trader",
                         "ta_risk_aggressive", "ta_risk_neutral", "ta_risk_conservative", "ta_portfolio_manager"]
    final = backend.requests[-1]
    assert final.constraint == decision_constraint(list(ASSETS))
    assert all(r.constraint is not None and r.constraint.kind == "regex" for r in backend.requests[:4])


def test_investor_decision_reads_the_observation_without_its_instructions():
    backend = GarbageBackend()
    play(InvestorAgent(backend, max_retries=0), days=1)
    (request,) = backend.requests
    assert request.messages[0]["content"].startswith("ROLE: investor_decision\n")
    assert request.messages[1]["content"].startswith(brief_text(OBSERVATION) + "\n\nRetrieved memories:")


def test_role_regex_is_the_schemas_compact_json():
    pattern = re.compile(schema_regex(P.SIGNAL_100))
    good = {"signal": "bearish", "confidence": 40, "reasoning": "falling 5d"}
    assert pattern.fullmatch(json.dumps(good, separators=(",", ":")))
    assert P.HF_PERSONAS[0].conform(json.dumps(good)) == good
    for bad in ('{"signal":"up","confidence":40,"reasoning":""}', '{"confidence":40,"signal":"bearish","reasoning":""}',
                '{"signal":"bearish","confidence":40,"reasoning":"' + "x" * 61 + '"}',
                '{"signal":"bearish", "confidence":40,"reasoning":""}'):
        assert not pattern.fullmatch(bad), bad
    unit = re.compile(schema_regex(P.PROPOSAL))
    assert unit.fullmatch('{"decision":"SELL","size":0.25,"rationale":"r"}')
    assert not unit.fullmatch('{"decision":"SELL","size":1.5,"rationale":"r"}')


def test_role_seeds_do_not_depend_on_answer_order():
    a, b = GarbageBackend(), GarbageBackend()
    play(HedgeFundAgent(a, max_retries=1), days=2)
    play(HedgeFundAgent(b, max_retries=1), days=2)
    seeds = [r.sampling.seed for r in a.requests]
    assert seeds == [r.sampling.seed for r in b.requests] and len(set(seeds)) == len(seeds)
    unseeded = GarbageBackend()
    play(DeepFundAgent(unseeded, seeded=False), days=1)
    assert {r.sampling.seed for r in unseeded.requests} == {None}


def test_budget_is_enforced():
    agent = DeepFundAgent(GarbageBackend())
    agent.budget = 3
    with pytest.raises(RuntimeError, match="exceeded its budget of 3 LLM calls per day"):
        play(agent, days=1)


def test_options_change_the_budget_and_are_checked():
    assert TradeAgent(GarbageBackend(), debate_rounds=2, risk_rounds=2).budget == 4 + 4 + 2 + 6 + 1
    assert HedgeFundAgent(GarbageBackend(), functional_mode="llm").budget == 17
    with pytest.raises(ValueError, match="functional_mode must be one of"):
        HedgeFundAgent(GarbageBackend(), functional_mode="magic")
    with pytest.raises(ValueError, match=r"max_position_ratio must be in \(0, 1\], got 2"):
        DeepFundAgent(GarbageBackend(), max_position_ratio=2)
    with pytest.raises(ValueError, match=r"debate_rounds must be an integer in 1\.\.3, got 0"):
        TradeAgent(GarbageBackend(), debate_rounds=0)


def test_investor_memory_fills_and_risk_attitude_follows_cumulative_return():
    backend = GarbageBackend()
    agent = InvestorAgent(backend, max_retries=0)
    agent.bind(TradingEnvStub())
    agent.reset("trader_0", seed=1)
    news = [{"id": "n1", "headline": "SPX rallies", "sources": 3, "sentiment": None}]
    for k in range(5):
        snap = Snapshot(f"2018-08-{k + 1:02d}", rising(30), 100_000.0 + 1000 * k, -0.01 * k, news)
        asyncio.run(agent.aact({"text": OBSERVATION}, {"snapshot": snap}))
    layers = [item.layer for item in agent.memory.items]
    assert layers.count("short") == 5 and layers.count("mid") == 1 and layers.count("reflection") == 4
    assert layers.count("long") == 0
    reflection = next(i for i in agent.memory.items if i.layer == "reflection")
    assert reflection.importance == pytest.approx(0.01 / 0.05)  # own return +1.00%
    systems = [r.messages[0]["content"] for r in backend.requests if r.messages[0]["content"].startswith(
        "ROLE: investor_decision")]
    assert P.RISK_SEEKING in systems[0] and P.RISK_AVERSE in systems[-1]


# ---------------------------------------------------------------------- spec strings


def test_spec_strings_build_the_trading_agents():
    hf = policy_from_spec("vllm:m@http://127.0.0.1:9/v1?agent=hedgefund&functional_mode=llm", "trading_v0")
    assert isinstance(hf, HedgeFundAgent) and hf.budget == 17 and hf.temperature == 0.5
    ta = policy_from_spec("vllm:m?agent=tradeagent&debate_rounds=2&max_retries=1&seeded=0", "trading_v0")
    assert isinstance(ta, TradeAgent) and ta.debate_rounds == 2 and ta.max_retries == 1 and not ta.seeded
    df = policy_from_spec("vllm:m?agent=deepfund&max_position_ratio=0.25")
    assert isinstance(df, DeepFundAgent) and df.max_position_ratio == 0.25
    assert isinstance(policy_from_spec("vllm:m?agent=investor&temperature=0", "trading_v0"), InvestorAgent)


def test_spec_strings_reject_other_games_and_misplaced_options():
    with pytest.raises(ValueError, match="agent=investor plays trading_v0 only, not auction_v0"):
        policy_from_spec("vllm:m?agent=investor", "auction_v0")
    with pytest.raises(ValueError, match=r"option\(s\) \['debate_rounds'\] do not apply to agent=deepfund"):
        policy_from_spec("vllm:m?agent=deepfund&debate_rounds=2", "trading_v0")
    with pytest.raises(ValueError, match=r"apply to the trading agents only, not agent=generic"):
        policy_from_spec("vllm:m?functional_mode=rule", "trading_v0")
    with pytest.raises(ValueError, match="agent must be one of generic, aucarena, investor"):
        policy_from_spec("vllm:m?agent=quant", "trading_v0")


def test_agents_need_a_trading_env():
    agent = DeepFundAgent(GarbageBackend())
    with pytest.raises(RuntimeError, match="plays trading_v0 only"):
        agent.bind(object())
    with pytest.raises(RuntimeError, match="must be bound"):
        agent.reset("trader_0")


def test_agents_play_the_real_env_with_two_assets():
    """Bound to trading_v0 on S&P 500 and NASDAQ: the sub-roles see both assets, a failed final
    call becomes a HOLD line for each asset that the environment's parser reads."""
    from arena_envs import trading_v0

    env = trading_v0.env(n_agents=1, assets=["SPX", "NDX"], trade_start="2018-08-01", eval_start="2018-08-01",
                         end="2018-08-06")
    backend = GarbageBackend()
    agent = DeepFundAgent(backend, max_retries=0)
    env.reset(seed=1)
    agent.bind(env.unwrapped)
    agent.reset("trader_0", seed=1)
    answers = []
    for _ in env.agent_iter():
        observation, _, terminated, truncated, info = env.last()
        action = None if terminated or truncated else agent.act(observation, info)
        if action is not None:
            answers.append(action)
            assert "SPX last closes" in backend.requests[-2].messages[1]["content"]
            assert "NDX last closes" in backend.requests[-2].messages[1]["content"]
        env.step(action)
    assert len(answers) == 3
    assert all(parse_action(a, ["SPX", "NDX"]).orders == (HOLD, HOLD) for a in answers)
    assert len(agent.ledger) == 3 and agent.ledger[0]["realised"] is not None
