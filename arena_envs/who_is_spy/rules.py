"""The pure rules of Who is Spy (spec §2): text normalisation, the keyword and foul judge,
truncation, vote parsing, the tally, speaking order and the end conditions.

Every function takes plain values (strings, seats, counts) and never raises on arbitrary Unicode
text; the stateful game is :mod:`arena_envs.who_is_spy.game`.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

LANGUAGES = ("en", "zh")

_QUOTES = "\"'“”‘’「」『』"
_TRAILING_PUNCT = ".!?。！？,，;；:：…~"
_WHITESPACE_RUN = re.compile(r"\s+")
# CJK unified ideographs (basic, extension A, compatibility, extensions B..H).
_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
# Between the tokens of a multi-word keyword: any run of whitespace or hyphens, including none.
_JOIN = r"[\s\-\u2010\u2011]*"
_TOKEN_SPLIT = re.compile(r"[\s\-\u2010\u2011]+")


def check_language(language: str) -> str:
    """``language`` itself if it is one of :data:`LANGUAGES`, else a one-line ValueError."""
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {language!r}")
    return language


def norm(s: str | None) -> str:
    """The §2.6 normal form used for the ``empty`` and ``repeat`` checks: NFKC, casefold, one
    space per whitespace run, outer whitespace and quotes stripped, trailing punctuation stripped.
    ``None`` normalises to ``""``."""
    if s is None:
        return ""
    t = _WHITESPACE_RUN.sub(" ", unicodedata.normalize("NFKC", s).casefold()).strip()
    return t.strip(_QUOTES).rstrip(_TRAILING_PUNCT).strip()


def _fold(s: str) -> str:
    return unicodedata.normalize("NFKC", s).casefold()


def is_chinese_mode(word: str, language: str) -> bool:
    """Whether ``word`` is matched as a Chinese substring (``language="zh"`` or any CJK ideograph)."""
    return language == "zh" or _CJK.search(word) is not None


@lru_cache(maxsize=4096)
def _keyword_matcher(word: str, language: str) -> Callable[[str], bool]:
    """A predicate over casefolded text; cached because an env judges many texts per word."""
    folded = _fold(word)
    if is_chinese_mode(folded, language):
        needle = "".join(folded.split())
        if not needle:
            return lambda _text: False
        return lambda text: needle in "".join(text.split())
    tokens = [t for t in _TOKEN_SPLIT.split(folded) if t]
    if not tokens:
        return lambda _text: False
    *head, last = (re.escape(t) for t in tokens)
    endings = [last + r"(?:s|es|['’]s)?"]
    if tokens[-1].endswith("y") and len(tokens[-1]) > 1:
        endings.append(re.escape(tokens[-1][:-1]) + "ies")
    body = "".join(h + _JOIN for h in head) + "(?:" + "|".join(endings) + ")"
    search = re.compile(r"(?<!\w)" + body + r"(?!\w)").search
    return lambda text: search(text) is not None


def contains_keyword(text: str | None, word: str, language: str) -> bool:
    """Whether ``text`` contains ``word`` under the §2.6 matching rules.

    Both are NFKC-normalised and casefolded. Chinese mode (``language="zh"`` or a word with a CJK
    ideograph): substring test with all whitespace removed. English mode: a whole-word/phrase match
    whose tokens may be joined by any run of whitespace or hyphens (or none), whose last token may
    take ``s``, ``es`` or ``'s`` (``…y`` also ``…ies``), and which touches no word character on
    either side. An empty word is contained nowhere.
    """
    check_language(language)
    if not text:
        return False
    return _keyword_matcher(word, language)(_fold(text))
