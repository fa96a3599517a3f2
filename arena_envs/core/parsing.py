"""Lenient text helpers shared by the environments' parsers. None of them raises on odd input."""
from __future__ import annotations

import json
import re
import unicodedata
from decimal import Decimal, InvalidOperation
from typing import Any

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u2032": "'", "\u201c": '"',
                         "\u201d": '"', "\u201f": '"', "\u2033": '"', "`": "'"})
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_SPACES = re.compile(r"\s+")

#: A dollar amount: an optional minus sign (before or after an optional ``$``), digits with
#: optional decimals, optional ``k``/``thousand``. Its four groups go to :func:`amount_from_match`.
AMOUNT_PATTERN = r"(-?)\s*\$?\s*(-?)\s*(\d+(?:\.\d+)?|\.\d+)\s*(k\b|thousand\b)?"


def normalize_text(text: str) -> str:
    """NFKC, lower case, straight quotes, no thousands separators, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).lower()
    text = _THOUSANDS.sub("", text)
    return _SPACES.sub(" ", text).strip()


def amount_from_match(sign: str, inner_sign: str, digits: str, suffix: str | None) -> int | None:
    """Whole dollars (floored) from the groups of :data:`AMOUNT_PATTERN`; ``None`` if absurd."""
    try:
        value = Decimal(digits)
    except InvalidOperation:
        return None
    if suffix:
        value *= 1000
    if sign or inner_sign:  # "-$5" and "$-5" alike
        value = -value
    if abs(value) > Decimal(10) ** 15:
        return None
    return int(value.to_integral_value(rounding="ROUND_FLOOR"))


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every balanced ``{...}`` substring of ``text`` that parses as a JSON object, in order.

    Markdown fences and backslash-escaped quotes are tolerated. Nested objects are returned once
    (the outermost that parses).
    """
    text = text.replace("```json", "```").replace("```", " ").replace('\\"', '"')
    found: list[dict[str, Any]] = []
    i = 0
    n = len(text)
    while i < n:
        start = text.find("{", i)
        if start < 0:
            break
        end = _matching_brace(text, start)
        if end < 0:
            i = start + 1
            continue
        try:
            value = json.loads(text[start : end + 1])
        except (ValueError, RecursionError):
            i = start + 1
            continue
        if isinstance(value, dict):
            found.append(value)
            i = end + 1
        else:
            i = start + 1
    return found


def _matching_brace(text: str, start: int) -> int:
    depth = 0
    in_string = False
    escaped = False
    for pos in range(start, len(text)):
        ch = text[pos]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return pos
    return -1


def last_json_object(text: str, required_key: str | None = None) -> dict[str, Any] | None:
    """The last JSON object in ``text`` (that has ``required_key``, if given), else ``None``."""
    for obj in json_objects(text)[::-1]:
        if required_key is None or required_key in obj:
            return dict(obj)
    return None
