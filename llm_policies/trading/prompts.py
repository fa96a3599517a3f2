"""The roles and prompt texts of the four trading agents (our own wording). Answers are
small JSON objects (a few short fields) so a small model on a CPU answers them quickly."""
from __future__ import annotations

from llm_policies.trading.roles import SIGNALS, Role, enum_field, number_field, object_schema, text_field

NEUTRAL_NOTE = "Reason only from the daily brief you are given; you have no other data."
STANCE = object_schema(stance=enum_field(SIGNALS), confidence=number_field(0, 1),
                       key_point=text_field(60))
SIGNAL_100 = object_schema(signal=enum_field(SIGNALS), confidence=number_field(0, 100, integer=True),
                           reasoning=text_field(60))
SIGNAL_JUSTIFIED = object_schema(signal=enum_field(SIGNALS), justification=text_field(60))
PROPOSAL = object_schema(decision=enum_field(("BUY", "SELL", "HOLD")), size=number_field(0, 1),
                         rationale=text_field(60))
ADJUSTMENT = object_schema(adjustment=enum_field(("increase", "keep", "decrease", "veto")),
                           rationale=text_field(60))

# ---------------------------------------------------------------------- InvestorAgent

INVESTOR_REFLECTION = Role(
    "investor_reflection",
    "You are the reflection module of a trading agent with memory. Given yesterday's decision and its "
    "realised outcome, write one short lesson for future decisions.",
    object_schema(lesson=text_field(60)), {"lesson": "no lesson"})
INVESTOR_DECISION = (
    "You are an investor agent with a layered memory of news, price summaries and lessons from your own "
    "past trades. Profile: {attitude} Use the memories that matter, then give your decision.")
RISK_SEEKING = "risk seeking (your cumulative return is not negative): act on clear trends."
RISK_AVERSE = "risk averse (your cumulative return is negative): prefer smaller positions and caution."

# ---------------------------------------------------------------------- TradeAgent

_TA_ANALYST = ("You are the {what} analyst of a trading firm. {focus} " + NEUTRAL_NOTE
               + " Give your stance, its confidence (0 to 1) and your key point.")
TA_ANALYSTS = tuple(
    Role(f"ta_{slug}_analyst", _TA_ANALYST.format(what=what, focus=focus), STANCE,
         {"stance": "neutral", "confidence": 0.0, "key_point": "no view"})
    for slug, what, focus in (
        ("fundamentals", "fundamentals", "Judge the company or asset fundamentals from the news digest; "
                                         "for crypto, fundamentals are not available, so stay neutral."),
        ("sentiment", "sentiment", "Judge the tone of the news digest."),
        ("news", "news", "Judge the events and macro news of the digest."),
        ("technical", "technical", "Read the raw price table and judge the price action."),
    ))
TA_BULL = Role("ta_bull_researcher", "You are the bullish researcher of a trading firm. Argue the case for "
               "buying from the analyst reports, answering the bearish points so far.", None, {"text": ""},
               max_tokens=48)
TA_BEAR = Role("ta_bear_researcher", "You are the bearish researcher of a trading firm. Argue the case for "
               "selling from the analyst reports, answering the bullish points so far.", None, {"text": ""},
               max_tokens=48)
TA_RESEARCH_MANAGER = Role(
    "ta_research_manager", "You are the research manager of a trading firm. Weigh the debate and give the "
    "firm's stance and a one-sentence plan.",
    object_schema(stance=enum_field(SIGNALS), plan=text_field(60)), {"stance": "neutral", "plan": "no plan"})
TA_TRADER = Role("ta_trader", "You are the trader of a trading firm. Turn the research plan into a proposal: "
                 "decision, size (0 to 1) and rationale.", PROPOSAL,
                 {"decision": "HOLD", "size": 0.0, "rationale": "no proposal"})
TA_RISK = tuple(
    Role(f"ta_risk_{style}", f"You are the {style} member of a trading firm's risk team. {view} Review the "
         "trader's proposal: increase, keep, decrease or veto it.", ADJUSTMENT,
         {"adjustment": "keep", "rationale": "no view"})
    for style, view in (("aggressive", "You favour larger positions when the upside is clear."),
                        ("neutral", "You balance upside and risk."),
                        ("conservative", "You protect capital first.")))
TA_PORTFOLIO_MANAGER = (
    "You are the portfolio manager of a trading firm. Approve, resize or reject the trader's proposal after "
    "the risk team's review; a rejection is HOLD.")

# ---------------------------------------------------------------------- HedgeFundAgent

PERSONAS = (
    ("aswath_damodaran", "Aswath Damodaran", "values a business by its cash flows, growth and risk, and "
                                              "pays only below intrinsic value"),
    ("ben_graham", "Ben Graham", "demands a wide margin of safety and distrusts market moods"),
    ("bill_ackman", "Bill Ackman", "takes concentrated, high-conviction positions in quality businesses"),
    ("cathie_wood", "Cathie Wood", "backs disruptive innovation and accepts high volatility for growth"),
    ("charlie_munger", "Charlie Munger", "buys wonderful businesses at fair prices and avoids folly"),
    ("michael_burry", "Michael Burry", "hunts deep value and bets against bubbles, contrarian by nature"),
    ("mohnish_pabrai", "Mohnish Pabrai", "seeks low-risk, high-uncertainty bets with little downside"),
    ("peter_lynch", "Peter Lynch", "buys growth at a reasonable price in businesses he understands"),
    ("phil_fisher", "Phil Fisher", "holds outstanding growth companies for the long run"),
    ("rakesh_jhunjhunwala", "Rakesh Jhunjhunwala", "rides long growth stories with bold conviction"),
    ("stanley_druckenmiller", "Stanley Druckenmiller", "follows macro trends and momentum, cutting losses "
                                                        "fast"),
    ("warren_buffett", "Warren Buffett", "buys durable businesses with a moat and holds them patiently"),
)
_HF_SPECIALIST = ("You are an analyst of a hedge fund. {who} " + NEUTRAL_NOTE
                  + " Give your signal, confidence (0 to 100) and a short reasoning.")
HF_NEUTRAL = {"signal": "neutral", "confidence": 0, "reasoning": "no signal"}
HF_PERSONAS = tuple(Role(f"hf_persona_{slug}", _HF_SPECIALIST.format(
    who=f"Think like {name}, who {philosophy}."), SIGNAL_100, HF_NEUTRAL) for slug, name, philosophy in PERSONAS)
HF_FUNCTIONALS = tuple(Role(f"hf_{slug}", _HF_SPECIALIST.format(who=who), SIGNAL_100, HF_NEUTRAL)
                       for slug, who in (
                           ("valuation", "You judge valuation; without fundamentals in the brief, stay neutral."),
                           ("sentiment", "You judge the tone of the news digest."),
                           ("fundamentals", "You judge fundamentals; for crypto or without fundamentals in "
                                            "the brief, stay neutral."),
                           ("technicals", "You judge momentum and trend from the price table.")))
HF_PORTFOLIO_MANAGER = (
    "You are the portfolio manager of a hedge fund. Aggregate your 16 specialists' signals into one decision. "
    "The risk manager's position limit caps the size of any position.")

# ---------------------------------------------------------------------- DeepFundAgent

DF_NEUTRAL = {"signal": "neutral", "justification": "no signal"}
DF_ANALYSTS = tuple(
    Role(f"df_{slug}", f"You are the {what} of a fund. {focus} " + NEUTRAL_NOTE
         + " Give your signal and a short justification.", SIGNAL_JUSTIFIED, DF_NEUTRAL)
    for slug, what, focus in (
        ("technical_analyst", "technical analyst", "Judge trend and momentum from the price table."),
        ("company_news_analyst", "company news analyst", "Judge the asset's own news digest."),
        ("macro_policy_analyst", "macro and policy analyst", "Judge the market-wide news."),
    ))
DF_PORTFOLIO_MANAGER = (
    "You are the portfolio manager of a fund that adapts to a changing market. Use your analysts' signals and "
    "your ledger of past portfolio updates (what you did and how it turned out). The largest position you may "
    "hold is {ratio} of the portfolio.")
