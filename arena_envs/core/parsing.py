"""The parser contract, and lenient text helpers shared by the environments' parsers.

Every game reads a text answer with a pure function beside its rules, ``parse…(text, <what the
decision depends on>)``: it returns what the answer decides, or raises
:class:`~arena_envs.core.answers.InvalidAnswer` (``unparseable``: no decision could be read;
``illegal``: one was read and the rules forbid it), and nothing else, on any text. A game whose
errors carry a code raises a subclass. The env's ``_parse_text`` calls it and wraps the value in its
move; judging the value against the live state is the env's. JSON in an answer is read only by
:mod:`arena_envs.core.json_answer`, whose parameters say a game's precedence.

None of the helpers below raises on odd input.
"""
from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u2032": "'", "\u201c": '"',
                         "\u201d": '"', "\u201f": '"', "\u2033": '"', "`": "'"})
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_SPACES = re.compile(r"\s+")

#: A dollar amount: an optional minus sign (before or after an optional ``$``), digits with
#: optional decimals, optional ``k``/``thousand``. Its four groups go to :func:`amount_from_match`.
AMOUNT_PATTERN = r"(-?)\s*\$?\s*(-?)\s*(\d+(?:\.\d+)?|\.\d+)\s*(k\b|thousand\b)?"
#: A number written with digits in prose: an optional sign and ``$``, digits (thousands commas
#: allowed), optional decimals; never part of a word or of a longer number (``v2``, ``1.2.3``).
_PLAIN_NUMBER = re.compile(r"(?<![\w.])(?:[+-](?=\$?\d))?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\w|[.,]\d)")


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


def plain_numbers(text: str) -> list[str]:
    """The numbers written with digits in ``text``, in order: ``"I pick 33."`` -> ``["33"]``,
    ``"from 0-100, $1,500"`` -> ``["0", "100", "$1,500"]``. Number words (``thirty``) are not read."""
    return _PLAIN_NUMBER.findall(text)
