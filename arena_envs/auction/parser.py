"""Deterministic lenient parser of a bidder's reply: "I bid $X!" or "I'm out!".

The reply is normalized (NFKC, lower case, straight quotes, no thousands separators). If it says
"final decision", only the part after the last occurrence is searched (unless that part holds no
decision). The decision marker that ends last wins, since models reason first and decide last.
A reply that is only a number is a bid (negative: withdraw). Anything else is unparseable.
"""
from __future__ import annotations

import re

from arena_envs.auction.rules import WITHDRAW
from arena_envs.core.answers import InvalidAnswer
from arena_envs.core.parsing import AMOUNT_PATTERN, amount_from_match, normalize_text

_BID = re.compile(
    r"(?:\bi(?:'ll| will| would like to|'d like to| want to| shall)? (?:bid|raise(?: my bid)? to|offer)"
    r"|\bmy (?:new |final )?bid (?:is|will be))"
    r"(?: of)?:?\s*" + AMOUNT_PATTERN
)
_WITHDRAW = re.compile(
    r"\b(?:i'm|im|i am) out\b(?! of)"
    r"|\bi(?:'ll| will)? withdraw\b"
    r"|\bi (?:pass|fold)\b"
    r"|\bi will not bid\b"
    r"|(?<![\w.$-])-1[\s!.\"')\]]*$"  # a lone -1 ends the reply ("my decision: -1."), not "fell by -1 %"
)
_ONLY_NUMBER = re.compile(r"^" + AMOUNT_PATTERN + r"\s*!?$")

UNPARSEABLE = 'state your decision clearly as either "I\'m out!" or "I bid $xxx!"'


def parse_reply(text: str) -> int:
    """The decision in ``text``: a bid amount (int >= 0) or ``WITHDRAW``.

    Raises :class:`InvalidAnswer` (kind ``unparseable``) when no decision can be read.
    """
    norm = normalize_text(text)
    cut = norm.rfind("final decision")
    if cut >= 0:
        decision = _last_decision(norm[cut:])
        if decision is not None:
            return decision
    decision = _last_decision(norm)
    if decision is not None:
        return decision
    only = _ONLY_NUMBER.match(norm)
    if only:
        amount = amount_from_match(*only.groups())
        if amount is not None:
            return WITHDRAW if amount < 0 else amount
    raise InvalidAnswer("unparseable", f"I could not read a decision in your reply; {UNPARSEABLE}")


def _last_decision(text: str) -> int | None:
    best_end, best = -1, None
    for match in _BID.finditer(text):
        amount = amount_from_match(*match.groups())
        if amount is not None and match.end() > best_end:
            best_end, best = match.end(), (WITHDRAW if amount < 0 else amount)
    for match in _WITHDRAW.finditer(text):
        if match.end() > best_end:
            best_end, best = match.end(), WITHDRAW
    return best
