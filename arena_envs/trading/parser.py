"""The trading action grammar: the lenient text parser, the instructions every observation and
system prompt shows, the guided-decoding constraint and the canonical text.

An answer is read as JSON first, then as ``SYM: <token>`` pairs, a decision line
(``Decision: BUY``), or the one word BUY, SELL or HOLD (:func:`parse_action` gives the order).

A *span* (a decision line's rest, a JSON value, what follows ``SYM:``) takes its first token,
synonyms included (LONG/ACCUMULATE/OVERWEIGHT = BUY, SHORT/REDUCE/UNDERWEIGHT = SELL,
NEUTRAL/WAIT/KEEP/STAY = HOLD, FLAT/CLOSE/EXIT = TARGET 0, ``TARGET x``); the whole-text mode
ignores synonyms because they are common words ("long-term", "the close").

A decision line's ``-`` separator must be followed by a space, so "Trade-offs: ..." or
"Action-oriented: ..." are not decision lines.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

from arena_envs.core.answers import AnswerConstraint, InvalidAnswer, excerpt
from arena_envs.core.arguments import check_choice
from arena_envs.core.json_answer import answer_candidates, key_values
from arena_envs.trading.accounting import HOLD, POSITION_RULES, Order, OrderLike
from arena_envs.trading.news import ascii_fold

#: Warnings a parse may report (``ParsedAction.warnings``).
WARNINGS: tuple[str, ...] = ("size_clipped", "size_ignored", "applied_to_all_assets", "missing_asset_default_hold")
#: Codes of :class:`ParseError`.
ERROR_CODES: tuple[str, ...] = ("empty", "ambiguous", "no_action", "bad_target", "unknown_asset")

ACTION_KEYS: tuple[str, ...] = ("action", "decision", "signal", "trade")  #: JSON keys of an action, in priority order
SIZE_KEYS: tuple[str, ...] = ("size", "position_size", "fraction", "weight")  #: JSON keys of a size, in priority order
SYMBOL_KEYS: tuple[str, ...] = ("symbol", "asset", "ticker")  #: JSON keys naming the asset of a list entry

# A number: optional sign, digits (thousands commas allowed) with optional decimals. It must not run
# on into a word or into more digits ("0,5", "1e-3", "10x" are not numbers here).
_NUM = r"[-+]?(?:(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?|\.[0-9]+)(?![A-Za-z0-9_]|[.,][0-9])"
_PCT = r"(?P<pct>[ \t]*(?:%|percent\b|pct\b))?"
_TOKEN_PATTERN = (
    r"\b(?:(?P<BUY>buy|long|accumulate|overweight)|(?P<SELL>sell|short|reduce|underweight)"
    r"|(?P<HOLD>hold|neutral|wait|keep|stay)|(?P<FLAT>flat|close|exit))\b"
    r"|\btarget[ \t]*(?:[:=][ \t]*)?(?P<target>" + _NUM + r")" + _PCT
)
_TOKEN = re.compile(_TOKEN_PATTERN, re.IGNORECASE)
_SIZE = re.compile(r"[ \t,(]*(?:size\b[ \t]*)?(?:[:=][ \t]*)?(?P<num>" + _NUM + r")" + _PCT, re.IGNORECASE)
_SIZE_VALUE = re.compile(r"[ \t]*(?P<num>" + _NUM + r")" + _PCT + r"[ \t]*$", re.IGNORECASE)
_PLAIN_WORD = re.compile(r"\b(buy|sell|hold)\b", re.IGNORECASE)
_DECISION_LINE = re.compile(
    r"^[ \t#>*_-]*(?:[0-9]+[.)][ \t*_]*)?"
    r"(?:final[ \t]+answer|final[ \t]+decision|decision|action|trade|recommendation)"
    r"[ \t*_]*(?:[:=]|-+(?=[ \t]))[ \t*_]*(?P<span>.+)$",
    re.IGNORECASE | re.MULTILINE,
)
_MARKDOWN = re.compile(r"[*`]")
_SYMBOL_SEPARATOR = r"[ \t]*[:=-]+>?[ \t]*"
#: Decimal places the guided-decoding regex allows in a size or target.
CONSTRAINT_DECIMALS = 4


class ParseError(InvalidAnswer):
    """An answer with no readable decision: an ``unparseable`` :class:`InvalidAnswer` whose ``code``
    is one of :data:`ERROR_CODES`; the reason is one line that says what was wrong and what is
    accepted (the env shows it when it re-asks)."""

    code: str

    def __init__(self, code: str, message: str):
        super().__init__("unparseable", message, code)

    def __reduce__(self) -> tuple[type[ParseError], tuple[str, str]]:
        return ParseError, (self.code, str(self))


@dataclass(frozen=True)
class ParsedAction:
    """One order per asset, in the order of ``assets`` (a BUY/SELL size of None means the
    environment's default size), and the warnings of :data:`WARNINGS` the parse raised."""

    orders: tuple[Order, ...]
    warnings: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------- parse


def parse_action(raw: str, assets: Sequence[str]) -> ParsedAction:
    """Read a decision for ``assets`` from an agent's text, trying in order:

    1. JSON: the answer's top-level objects and lists (never one quoted inside a string; last to
       first, each before the objects nested in it; a ``[...]`` list of ``{"symbol": ...}`` entries
       counts as ``{"actions": [...]}``); when none parses (broken JSON), the object of the action,
       size and asset ``"key": value`` pairs that stand outside quoted objects. The first object with
       an ``action``/``decision``/``signal``/``trade`` key, an ``actions`` key or an asset's name as a
       key wins, unless its single action value holds no action (``{"signal": "bullish"}``, a quoted
       sub-role output): then the search goes on.
    2. Several assets: ``SYM: <token> [size]`` anywhere in the text (last one per asset wins).
    3. The last decision line ``Decision|Action|Trade|Recommendation|Final answer|Final decision :|=|-
       <span>`` whose span holds an action token (optional markdown ``**``, ``#``, ``>``, ``-``).
    4. One asset: ``SYM: <token>`` as in 2.
    5. The whole text: the words BUY, SELL, HOLD only; exactly one of them may occur.

    No decision: :class:`ParseError`, the parser contract's :class:`InvalidAnswer` with a code.
    """
    names = _check_assets(assets)
    if not isinstance(raw, str):
        raise TypeError(f"the answer must be a str, got {type(raw).__name__}")
    if not raw.strip():
        raise ParseError("empty", f"empty answer; {_expected(names)}")
    # fold line by line: ascii_fold collapses whitespace, and decision lines need the line breaks
    text = "\n".join(ascii_fold(line) for line in raw.splitlines())
    warnings: list[str] = []
    read, unreadable = _from_json_text(text, names, warnings)
    if read is None:
        plain = _MARKDOWN.sub("", text)
        if len(names) > 1:
            read = _from_symbol_lines(plain, names, warnings) or _from_decision_lines(text, warnings)
        else:
            read = _from_decision_lines(text, warnings) or _from_symbol_lines(plain, names, warnings)
        if read is None:
            try:
                read = _from_whole_text(text, names, warnings)
            except ParseError as error:
                # a JSON action value that is no action says more than "no action found"
                raise (unreadable if unreadable is not None and error.code == "no_action" else error) from None
    if isinstance(read, dict):
        orders = tuple(read.get(name, HOLD) for name in names)
        if len(read) < len(names):
            warnings.append("missing_asset_default_hold")
    else:
        orders = (read,) * len(names)
        if len(names) > 1:
            warnings.append("applied_to_all_assets")
    return ParsedAction(orders, tuple(dict.fromkeys(warnings)))


def _check_assets(assets: Sequence[str]) -> tuple[str, ...]:
    names = (assets,) if isinstance(assets, str) else tuple(assets)
    if not names or not all(isinstance(a, str) and a.strip() for a in names):
        raise ValueError(f"assets must be a non-empty sequence of non-empty names, got {excerpt(assets)}")
    if len({_key(a) for a in names}) != len(names):
        raise ValueError(f"asset names must differ (ignoring case), got {list(names)}")
    return names


def _key(name: str) -> str:
    return ascii_fold(name).lower()


def _expected(names: tuple[str, ...]) -> str:
    if len(names) == 1:
        return "end with one line 'DECISION: BUY|SELL|HOLD [size 0..1]' (or 'DECISION: TARGET x', x in -1..1)"
    return (f"end with a line 'DECISION:' and then one line 'SYM: BUY|SELL|HOLD [size 0..1]' per asset "
            f"({', '.join(names)})")


def _dumps(value: object) -> str:
    """A JSON value as text; one nested near the recursion limit (it parsed, one level up) as a mark."""
    try:
        return json.dumps(value)
    except RecursionError:
        return "[deeply nested JSON]"


def _show(value: object, limit: int = 40) -> str:
    text = value if isinstance(value, str) else _dumps(value)
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _size_value(number: str, percent: bool, warnings: list[str]) -> float | None:
    """A size from a number token: ``x%`` -> x/100 (clipped to 1); a bare number in [0, 1]; else
    None with ``size_ignored``."""
    value = float(number.replace(",", ""))
    if percent:
        if value < 0:
            warnings.append("size_ignored")
            return None
        value /= 100.0
        if value > 1.0:
            warnings.append("size_clipped")
            return 1.0
        return value + 0.0
    if 0.0 <= value <= 1.0:
        return value + 0.0  # no -0.0
    warnings.append("size_ignored")
    return None


def _order_at(match: re.Match[str], text: str, warnings: list[str], read_size: bool = True) -> Order:
    """The order of a token match; a BUY/SELL size is read from the text right after it."""
    if match["target"] is not None:
        value = float(match["target"].replace(",", ""))
        if match["pct"]:
            value /= 100.0
        if not -1.0 <= value <= 1.0:
            written = _show(match["target"] + ("%" if match["pct"] else ""), 20)
            raise ParseError("bad_target", f"TARGET {written} is out of range; TARGET takes a number in [-1, 1] "
                                           "(or -100%..100%), e.g. 'TARGET -0.5'")
        return Order("TARGET", target=value + 0.0)
    if match["FLAT"]:
        return Order("TARGET", target=0.0)
    if match["HOLD"]:
        return HOLD
    kind = "BUY" if match["BUY"] else "SELL"
    if not read_size:
        return Order(kind)
    size_match = _SIZE.match(text, match.end())
    if size_match is None:
        return Order(kind)
    return Order(kind, size=_size_value(size_match["num"], bool(size_match["pct"]), warnings))


def _span_order(span: str, warnings: list[str], read_size: bool = True) -> Order | None:
    """The first action token of a decision span (synonyms count), or None."""
    span = _MARKDOWN.sub("", span)
    match = _TOKEN.search(span)
    return None if match is None else _order_at(match, span, warnings, read_size)


# -- JSON


class _UnreadableAction(ParseError):
    """A JSON object whose single action value holds no action (e.g. ``{"signal": "bullish"}``, a
    sub-role's output quoted in the answer): the parse goes on to the next object and the text."""


def _from_json_text(text: str, names: tuple[str, ...],
                    warnings: list[str]) -> tuple[Order | dict[str, Order] | None, ParseError | None]:
    """The first JSON object that reads as a decision, and the first one skipped as unreadable."""
    symbols = {_key(n): n for n in names}
    unreadable: ParseError | None = None
    objects = _json_objects(text)
    if not objects:  # broken JSON: its action, size and asset pairs where they stand
        pairs = {key: found[-1] for key in (*ACTION_KEYS, *SIZE_KEYS, "actions", *names)
                 if (found := key_values(text, key))}
        objects = [pairs] if pairs else []
    for obj in objects:
        if _is_decision_object(obj, symbols):
            try:
                return _from_json_object(obj, symbols, warnings), unreadable
            except _UnreadableAction as error:
                unreadable = unreadable or ParseError(error.code, str(error))
    return None, unreadable


def _json_objects(text: str) -> list[dict[str, Any]]:
    """The answer's JSON values in the order they are tried (:func:`~arena_envs.core.json_answer.answer_candidates`
    with ``nested``: the last top-level one first, each followed by the objects and lists nested in it).
    A list of per-asset entries (``[{"symbol": ..., "action": ...}]``) stands for ``{"actions": [...]}``."""
    found: list[dict[str, Any]] = []
    for part in answer_candidates(text, openings="{[", nested=True):
        obj = _as_object(part)
        if obj is not None:
            found.append(obj)
    return found


def _as_object(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if isinstance(value, list) and any(isinstance(v, dict) and _lower_keys(v).keys() & set(SYMBOL_KEYS)
                                       for v in value):
        return {"actions": value}
    return None


def _lower_keys(obj: dict[str, Any]) -> dict[str, Any]:
    return {str(k).lower(): v for k, v in obj.items()}


def _from_json_object(obj: dict[str, Any], symbols: dict[str, str],
                      warnings: list[str]) -> Order | dict[str, Order]:
    """A winning JSON object: per-asset entries if it has any, else its single action."""
    fields = _lower_keys(obj)
    per_asset: dict[str, Order] = {}
    actions = fields.get("actions")
    if isinstance(actions, dict):
        for key, value in actions.items():
            name = _asset_named(key, symbols)
            per_asset[name] = _json_entry(value, {}, warnings, f"{name} entry")
    elif isinstance(actions, list):
        for entry in actions:
            entry_fields = _lower_keys(entry) if isinstance(entry, dict) else {}
            symbol = next((entry_fields[k] for k in SYMBOL_KEYS if k in entry_fields), None)
            if symbol is None:
                raise ParseError("no_action", f"JSON 'actions' entry {_show(entry)} names no asset; write entries "
                                              "such as {\"symbol\": \"BTC\", \"action\": \"BUY\", \"size\": 0.5}")
            name = _asset_named(str(symbol), symbols)
            per_asset[name] = _json_entry(entry, {}, warnings, f"{name} entry")
    for key, value in obj.items():
        symbol = symbols.get(_key(str(key)))
        if symbol is not None:
            per_asset[symbol] = _json_entry(value, {}, warnings, f"{symbol} entry")
    named = next((fields[k] for k in SYMBOL_KEYS if isinstance(fields.get(k), str)), None)
    if not per_asset and named is not None and _key(named) in symbols and _is_decision_object(obj, {}):
        # one entry {"symbol": "BTC", "action": "BUY"}; a symbol that is no asset is ignored here
        per_asset[symbols[_key(named)]] = _json_entry(obj, {}, warnings, f"{named} entry")
    if per_asset:
        return per_asset
    if "actions" in fields and not isinstance(actions, (dict, list)):
        return _json_entry(actions, fields, warnings, "'actions' value")
    key = next((k for k in ACTION_KEYS if k in fields), None)
    if key is None:
        raise ParseError("no_action", f"JSON 'actions' {_show(actions)} holds no action; write e.g. "
                                      "{\"actions\": {\"BTC\": \"BUY 0.5\"}}")
    value = fields[key]
    if isinstance(value, dict) and _is_decision_object(value, symbols):
        return _from_json_object(value, symbols, warnings)
    try:
        return _json_entry(value, {} if isinstance(value, dict) else fields, warnings, f"'{key}' value")
    except ParseError as error:
        if error.code == "no_action":
            raise _UnreadableAction(error.code, str(error)) from None
        raise


def _is_decision_object(obj: dict[str, Any], symbols: dict[str, str]) -> bool:
    keys = {str(k).lower() for k in obj}
    return bool(keys & {*ACTION_KEYS, "actions"} or keys & symbols.keys())


def _asset_named(key: str, symbols: dict[str, str]) -> str:
    name = symbols.get(_key(key))
    if name is None:
        raise ParseError("unknown_asset", f"unknown asset {_show(key)} in the JSON answer; "
                                          f"the assets are {', '.join(symbols.values())}")
    return name


def _json_entry(value: Any, fields: dict[str, Any], warnings: list[str], where: str) -> Order:
    """One action from a JSON value: a span (``"BUY 0.5"``) or an object with an action key; a
    size key of the object holding it (``fields``) overrides a size in the span."""
    if isinstance(value, dict):
        fields = _lower_keys(value)
        key = next((k for k in ACTION_KEYS if k in fields), None)
        if key is None:
            raise ParseError("no_action", f"JSON {where} {_show(value)} has no action key; "
                                          "write e.g. {\"action\": \"BUY\", \"size\": 0.5}")
        value = fields[key]
    span = value if isinstance(value, str) else _dumps(value)
    if span.strip().lower() == "target" and "target" in fields:
        target = fields["target"]
        span = f"TARGET {_plain(target) if isinstance(target, float) and math.isfinite(target) else target}"
    size_key = next((k for k in SIZE_KEYS if fields.get(k) is not None), None)
    order = _span_order(span, warnings, read_size=size_key is None)
    if order is None:
        raise ParseError("no_action", f"JSON {where} {_show(value)} is not an action; "
                                      "accepted: BUY, SELL, HOLD (with synonyms), FLAT, TARGET x")
    if size_key is not None and order.kind in ("BUY", "SELL"):
        order = Order(order.kind, size=_json_size(fields[size_key], warnings))
    return order


def _json_size(value: Any, warnings: list[str]) -> float | None:
    if isinstance(value, bool):
        pass
    elif isinstance(value, int):  # any size: compared as an int, never converted when huge
        if 0 <= value <= 1:
            return float(value)
    elif isinstance(value, float):
        if math.isfinite(value):
            return _size_value(repr(value), False, warnings)
    elif isinstance(value, str):
        match = _SIZE_VALUE.match(value)
        if match is not None:
            return _size_value(match["num"], bool(match["pct"]), warnings)
    warnings.append("size_ignored")
    return None


# -- text


@lru_cache(maxsize=64)
def _symbol_patterns(names: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(r"(?<![A-Za-z0-9_])" + re.escape(ascii_fold(name)) + r"(?![A-Za-z0-9_])"
                            + _SYMBOL_SEPARATOR + r"(?:" + _TOKEN_PATTERN + r")", re.IGNORECASE)
                 for name in names)


def _from_symbol_lines(plain: str, names: tuple[str, ...], warnings: list[str]) -> dict[str, Order] | None:
    """``SYM: <token> [size]`` per asset, the last one in the text winning."""
    found: dict[str, Order] = {}
    for name, pattern in zip(names, _symbol_patterns(names)):
        matches = list(pattern.finditer(plain))
        if matches:
            found[name] = _order_at(matches[-1], plain, warnings)
    return found or None


def _from_decision_lines(text: str, warnings: list[str]) -> Order | None:
    """The last decision line whose span holds an action token."""
    for line in reversed(_DECISION_LINE.findall(text)):
        order = _span_order(line, warnings)
        if order is not None:
            return order
    return None


def _from_whole_text(text: str, names: tuple[str, ...], warnings: list[str]) -> Order:
    matches = list(_PLAIN_WORD.finditer(text))
    words = sorted({m.group(1).upper() for m in matches})
    if not words:
        raise ParseError("no_action", f"no action found (no decision line, no BUY, SELL or HOLD); {_expected(names)}")
    if len(words) > 1:
        raise ParseError("ambiguous", f"ambiguous answer: it says {' and '.join(words)} and has no decision line; "
                                      f"{_expected(names)}")
    match = _TOKEN.match(text, matches[-1].start())
    assert match is not None  # a BUY/SELL/HOLD word is a token
    return _order_at(match, text, warnings)


# ------------------------------------------------------------------------------ instructions


def action_instructions(assets: Sequence[str], *, position_rule: str = "target", allow_short: bool = True,
                        max_exposure: float = 1.0, default_size: float = 1.0) -> str:
    """The action grammar (ASCII) shown in every observation and every LLM agent's system prompt:
    the final-line format and what each action does under ``position_rule``."""
    names = _check_assets(assets)
    check_choice("position_rule", position_rule, POSITION_RULES)
    if not 0.0 < max_exposure <= 1.0:
        raise ValueError(f"max_exposure must be in (0, 1], got {excerpt(max_exposure)}")
    if not 0.0 < default_size <= 1.0:
        raise ValueError(f"default_size must be in (0, 1], got {excerpt(default_size)}")
    size = f"s in 0..1, default {default_size:g}"
    hi = f"{max_exposure:g}"
    lo = f"-{hi}" if allow_short else "0"
    where = "the asset" if len(names) == 1 else "an asset"
    lines = [
        f"ACTIONS (once a day, filled at today's close). Position = exposure to {where} as a signed fraction "
        f"of equity (+1 all long, -1 all short, 0 flat), kept within [{lo}, {hi}]"
        + ("" if allow_short else "; short selling is off") + ".",
    ]
    if position_rule == "ladder":
        lines += [f"- BUY [s]: raise the position by s ({size}), at most {hi}.",
                  f"- SELL [s]: lower the position by s, at least {lo}.",
                  "- HOLD: keep the position."]
    else:
        sell = f"go short s (position -s, at least {lo})" if allow_short else "sell out (position 0; no shorting)"
        lines += [f"- BUY [s]: go long s (position +s, {size}, at most {hi}).",
                  f"- SELL [s]: {sell}."]
        lines.append("- HOLD: keep the position." if position_rule == "target"
                     else "- HOLD: no position for the next day (position 0).")
    lines += [f"- TARGET x: set the position to x (x in -1..1, kept within [{lo}, {hi}]).",
              "- FLAT (or CLOSE, EXIT): TARGET 0."]
    if len(names) == 1:
        lines.append("End your answer with one line: DECISION: BUY|SELL|HOLD [size 0..1]  (or DECISION: TARGET x)")
    else:
        lines += ["End your answer with a line 'DECISION:' and then one line per asset:",
                  *(f"{name}: BUY|SELL|HOLD [size 0..1]  (or TARGET x)" for name in names),
                  "An asset you leave out is HOLD."]
    return "\n".join(lines)


# -------------------------------------------------------------------- constraint and canonical text


def _regex_literal(text: str) -> str:
    """``text`` as a regex of plain escapes only (what every guided-decoding engine reads)."""
    return "".join("\\" + ch if ch in ".^$*+?{}[]\\|()" else ch for ch in text)


def decision_constraint(assets: Sequence[str]) -> AnswerConstraint:
    """A full-match regex for guided decoding: ``DECISION: BUY|SELL|HOLD[ size]`` (or ``TARGET x``)
    for one asset; for several, ``DECISION:`` and then one ``SYM: ...`` line per asset in order.
    Sizes and targets have at most :data:`CONSTRAINT_DECIMALS` decimals. Every accepted string
    parses (:func:`parse_action`) to the orders it spells."""
    names = _check_assets(assets)
    unit = rf"(0(\.[0-9]{{1,{CONSTRAINT_DECIMALS}}})?|1(\.0{{1,{CONSTRAINT_DECIMALS}}})?)"
    action = rf"((BUY|SELL)( {unit})?|HOLD|TARGET -?{unit})"
    if len(names) == 1:
        return AnswerConstraint("regex", "DECISION: BUY|SELL|HOLD [size 0..1], or DECISION: TARGET x (x in -1..1)",
                                pattern=f"DECISION: {action}")
    lines = ["DECISION:", *(f"{_regex_literal(name)}: {action}" for name in names)]
    return AnswerConstraint("regex", "DECISION: then one line per asset: "
                            + "; ".join(f"{name}: BUY|SELL|HOLD [size 0..1] or TARGET x" for name in names),
                            pattern="\n".join(lines))


def _plain(value: float) -> str:
    """The shortest decimal that reads back as ``value``, without an exponent."""
    text = format(Decimal(repr(float(value))), "f")
    return "0" if text in ("-0", "-0.0") else text


def _order_text(order: OrderLike) -> str:
    if order.kind == "TARGET":
        target = order.target
        if target is None or not -1.0 <= target <= 1.0:
            raise ValueError(f"a TARGET order is written with a target in [-1, 1], got {excerpt(target)}")
        return f"TARGET {_plain(target)}"
    if order.kind in ("BUY", "SELL"):
        return order.kind if order.size is None else f"{order.kind} {_plain(order.size)}"
    if order.kind == "HOLD":
        return "HOLD"
    raise ValueError(f"order kind must be BUY, SELL, HOLD or TARGET, got {excerpt(order.kind)}")


def format_decision(orders: Sequence[OrderLike], assets: Sequence[str]) -> str:
    """The canonical answer for ``orders`` (one per asset): ``DECISION: BUY 0.5`` for one asset;
    ``DECISION:`` then ``SYM: ...`` lines for several. :func:`parse_action` reads it back exactly."""
    names = _check_assets(assets)
    if len(orders) != len(names):
        raise ValueError(f"need one order per asset ({len(names)}), got {len(orders)}")
    if len(names) == 1:
        return f"DECISION: {_order_text(orders[0])}"
    return "\n".join(["DECISION:", *(f"{name}: {_order_text(o)}" for name, o in zip(names, orders))])
