"""The AucArena bidder's prompts (the paper's planning, bidding, belief and replanning steps, in our
own wording) and the JSON schemas of its answers.

The system message and the objectives are the environment's (``prompt="paper"`` shows the same
system message), so the two never drift apart.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from arena_envs.auction import text as auction_text

DESIRE_DESC = auction_text.OBJECTIVES
SYSTEM = auction_text.PAPER_SYSTEM

PRIORITY_SCALE = (
    "Priority scale: 1 = least important, give it up if needed to save money for later items; "
    "2 = has value but is not a top priority, bid if your budget allows; 3 = utmost importance, a top priority."
)

PLAN = (
    "{name}, you have a budget of ${budget} for {count} items, auctioned in this order:\n{items}\n"
    "Your objective: {desire}. Work out a strategy that spends your budget well across these items: "
    "which to fight for, which to let go. Reason briefly, then give a JSON object that maps EVERY item "
    "name to its priority (1, 2 or 3).\n" + PRIORITY_SCALE
)

REPLAN = (
    "The auction goes on. Your current status:\n{status}\nItems still to come, in order:\n{items}\n"
    "Keeping your objective in mind ({desire}), decide whether your priorities should change. Reason "
    "briefly, then give a JSON object that maps every remaining item name to its priority (1, 2 or 3).\n"
    + PRIORITY_SCALE
)

BID = (
    "{status}The auctioneer is speaking to you. Here is the full state of the auction as you see it:\n"
    "---\n{observation}\n---\n"
    "Decide, following your plan, whether to bid or to withdraw, and why. Common practice: show "
    "interest by opening at or slightly above the starting price and raise gradually; think about the "
    "consequences, such as the budget you keep for later items. Give your reasons first, then your "
    "decision as \"I bid $X!\" or \"I'm out!\"."
)

BID_GUIDED = (
    "{status}The auctioneer is speaking to you. Here is the full state of the auction as you see it:\n"
    "---\n{observation}\n---\n"
    "Following your plan, reply with your decision only: \"I bid $X!\" or \"I'm out!\"."
)

STATUS_NOTE = "Your current status (JSON): {status}\n"

#: prompt="paper", plan static or none: the status put before an item's first turn (the reference
#: bidder otherwise sees its status only in the replan prompt).
PAPER_STATUS_NOTE = "Your status in this auction so far (JSON):\n{status}\n\n"

BELIEF = (
    "Item {item} has just been auctioned. Its bidding rounds:\n{history}\n{hammer} {win_lose}\n"
    "Your status before this item:\n{status}\n"
    "Summarize briefly what the bidders did, then update your status as a JSON object with: "
    "\"remaining_budget\" (your own remaining budget, a number), \"total_profits\" (every bidder's total "
    "profit so far, plain numbers, no formulas), \"winning_bids\" (for every bidder, the items it has won "
    "mapped to the winning bid; an empty object if none). Example: {example}"
)

BELIEF_CORRECTION = (
    "The auctioneer checked your status and found errors:\n{errors}\n"
    "Revise the status JSON. No apologies: reply with the JSON only."
)


def items_list(names: Sequence[str], prices: Sequence[int], estimates: Sequence[int], start: int = 1) -> str:
    return "\n".join(f"{k}. {name}, starting price is ${p}. Your estimated value for this item is ${e}."
                     for k, (name, p, e) in enumerate(zip(names, prices, estimates), start=start))


def status_text(status: dict[str, Any]) -> str:
    """The status JSON as sentences (the belief and replan prompts show it this way). A status that
    is not well formed (the agent keeps its last reply's JSON, as the reference code does) shows
    what it has, "unknown" for the rest."""
    profits_of = status.get("total_profits")
    wins_of = status.get("winning_bids")
    profits = "; ".join(f"{b}: ${p}" for b, p in profits_of.items()) if isinstance(profits_of, dict) else ""
    wins = ""
    if isinstance(wins_of, dict):
        wins = "; ".join(f"{b}: " + (", ".join(f"{i} at ${p}" for i, p in bids.items()) if isinstance(bids, dict)
                                     and bids else "nothing") for b, bids in wins_of.items())
    return (f"Remaining budget: ${status.get('remaining_budget', 'unknown')}.\nTotal profits: {profits or 'unknown'}.\n"
            f"Winning bids: {wins or 'unknown'}.")


def belief_example(bidders: Sequence[str], item: str) -> str:
    example = {"remaining_budget": 8000, "total_profits": {b: 0 for b in bidders},
               "winning_bids": {b: ({item: 2000} if k == 0 else {}) for k, b in enumerate(bidders)}}
    return json.dumps(example)


def priorities_schema(names: Sequence[str]) -> dict[str, Any]:
    return {"type": "object", "properties": {n: {"type": "integer", "enum": [1, 2, 3]} for n in names},
            "required": list(names), "additionalProperties": False}


def belief_schema(bidders: Sequence[str], items: Sequence[str]) -> dict[str, Any]:
    """Every bidder's profit; per bidder, won items (known names only, each at most once)."""
    numbers = {"type": "object", "properties": {b: {"type": "integer"} for b in bidders},
               "required": list(bidders), "additionalProperties": False}
    bids = {"type": "object", "properties": {i: {"type": "integer"} for i in items}, "additionalProperties": False}
    wins = {"type": "object", "properties": {b: bids for b in bidders}, "required": list(bidders),
            "additionalProperties": False}
    return {"type": "object", "properties": {"remaining_budget": {"type": "integer"}, "total_profits": numbers,
                                             "winning_bids": wins},
            "required": ["remaining_budget", "total_profits", "winning_bids"], "additionalProperties": False}
