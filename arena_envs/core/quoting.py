"""Another player's text in a prompt (a Who is Spy speech, a tank's cooperation message).

:func:`quote` writes it as one JSON string literal (``"..."`` with ``\\"``, ``\\\\``, ``\\n`` and every
other line break escaped): it cannot end its quote early, cannot start a new line, and so cannot pass
itself off as the host; the characters a prompt's markup needs (``<`` and ``>`` of a ``</game>``
tag) can be escaped too.
"""
from __future__ import annotations

import json
from functools import cache

#: Line separators that JSON leaves unescaped but ``str.splitlines`` (and some readers) break on.
_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


@cache
def _escapes(escape: str) -> dict[int, str]:
    return str.maketrans({**_LINE_BREAKS, **{ch: f"\\u{ord(ch):04x}" for ch in escape}})


def quote(text: str, escape: str = "") -> str:
    """``text`` as one JSON string literal, with the characters of ``escape`` (printable ones that
    JSON leaves as they are, e.g. ``"<>"``) written as ``\\uXXXX`` escapes as well."""
    return json.dumps(text, ensure_ascii=False).translate(_escapes(escape))


def max_quoted_chars(chars: int) -> int:
    """The longest :func:`quote` of a text of ``chars`` characters: each becomes at most six
    (``\\u0001``), plus the two quotes."""
    return 6 * chars + 2
