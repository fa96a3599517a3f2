"""The pure rules of Who is Spy (WiS paper): text normalisation, the keyword and foul judge,
truncation, vote parsing (:func:`read_ballot`), the tally, speaking order and the end conditions.

Every function takes plain values (strings, seats, counts) and never raises on arbitrary Unicode
text, but for the invalid ballot that :func:`read_ballot` reports as an ``InvalidAnswer``; the
stateful game is :mod:`arena_envs.who_is_spy.game`.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Container, Iterable, Sequence
from functools import lru_cache
from numbers import Integral
from typing import TypeVar

from arena_envs.core.answers import InvalidAnswer, InvalidKind
from arena_envs.core.arguments import check_choice

LANGUAGES = ("en", "zh")

T = TypeVar("T")

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
    check_choice("language", language, LANGUAGES)
    return language


def norm(s: str | None) -> str:
    """The normal form used for the ``empty`` and ``repeat`` checks: NFKC, casefold, one
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
    """Whether ``text`` contains ``word`` under the game's matching rules.

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


# ---- descriptions ---------------------------------------------------------------------------------

#: Default truncation limits in characters (Unicode code points) per language.
DESCRIPTION_LIMITS = {"en": 400, "zh": 120}

#: The foul codes in their precedence order.
VIOLATIONS = ("empty", "keyword", "repeat")

_ANALYSIS_MARKER = re.compile(r"^[ \t]*analysis:", re.IGNORECASE | re.MULTILINE)


def truncate(text: str | None, language: str, limit: int | None = None) -> str:
    """``text`` stripped of outer whitespace and cut to ``limit`` characters (default 400 for
    English, 120 for Chinese); ``None`` gives ``""``. Nothing is stripped after the cut, so a long
    clue is published at exactly ``limit`` characters."""
    check_language(language)
    if limit is None:
        limit = DESCRIPTION_LIMITS[language]
    elif limit < 1:
        raise ValueError(f"truncation limit must be >= 1, got {limit}")
    return "" if text is None else text.strip()[:limit]


def is_empty(text: str | None) -> bool:
    """The ``empty`` foul: nothing left after :func:`norm`, or only punctuation, whitespace and
    invisible control or format characters (so ``"---"``, ``"( )"`` or a zero-width space is no
    answer either: an utterance of whitespace only or punctuation only is empty)."""
    return all(c.isspace() or unicodedata.category(c)[0] == "P" or unicodedata.category(c) in ("Cc", "Cf")
               for c in norm(text))


def judge_utterance(
    text: str | None, own_word: str, earlier_norms: Container[str], language: str
) -> str | None:
    """The foul of an utterance (already truncated), or None when it is legal.

    Checked in the order ``empty``, ``keyword`` (the speaker's own word only), ``repeat``
    (``norm(text)`` equals the normal form of an earlier non-empty utterance of the game, fouls
    included). ``earlier_norms`` is a set of those normal forms, so the check is O(1).
    """
    if is_empty(text):
        return "empty"
    if contains_keyword(text, own_word, language):
        return "keyword"
    if norm(text) in earlier_norms:
        return "repeat"
    return None


def split_analysis(text: str) -> tuple[str, str | None]:
    """Split a describe answer at its first line starting with ``ANALYSIS:`` (any case):
    ``(description, analysis)``; ``(text, None)`` when there is no such line."""
    m = _ANALYSIS_MARKER.search(text)
    if m is None:
        return text, None
    return text[: m.start()], text[m.end():]


# ---- votes ----------------------------------------------------------------------------------------

VOTE_MODES = ("lenient", "strict")

#: Ballots that mean "abstain" after :func:`canon`.
ABSTAIN_WORDS = frozenset({"abstain", "pass", "none", "skip", "novote", "弃权"})

_CANON_DROP = re.compile(r"[\s_\-]+")
_SEAT_NUMBER = re.compile(r"^\s*#?(\d+)\s*\.?\s*$")
_DEFAULT_NAME = re.compile(r"player_(\d+)")
#: A note never echoes a seat number of more digits, nor more of a type's name, so that its length
#: does not grow with what a caller passes (:func:`max_vote_note_chars`).
_SEAT_DIGITS = 9
_TYPE_NAME_CHARS = 32


def canon(s: str) -> str:
    """The name key of a ballot: casefold with whitespace, ``_`` and ``-`` removed (after NFKC, so
    full-width forms read as their plain letters). ``canon("Player_3") == "player3"``."""
    return _CANON_DROP.sub("", unicodedata.normalize("NFKC", s).casefold())


class _NameIndex:
    """Everything vote parsing needs about one list of player names, built once per list."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.by_canon: dict[str, int] = {}
        self.ambiguous: set[str] = set()
        for seat, name in enumerate(names):
            key = canon(name)
            if key in self.by_canon:
                self.ambiguous.add(key)
            self.by_canon[key] = seat
        self.mention: list[re.Pattern[str]] = []
        self.vote: list[re.Pattern[str]] = []
        for name in names:
            m = _DEFAULT_NAME.fullmatch(name)
            pat = rf"player[\s_\-]*{m.group(1)}(?!\d)" if m else rf"(?<!\w){re.escape(name)}(?!\w)"
            self.mention.append(re.compile(pat, re.IGNORECASE))
            self.vote.append(re.compile(rf"vote\s*(?:for|:)?\s*(?:{pat})", re.IGNORECASE))

    def mentioned(self, text: str) -> list[int]:
        return [seat for seat, pat in enumerate(self.mention) if pat.search(text)]

    def last_vote_pattern(self, text: str) -> int | None:
        best: tuple[int, int] | None = None
        for seat, pat in enumerate(self.vote):
            for m in pat.finditer(text):
                if best is None or m.start() > best[0]:
                    best = (m.start(), seat)
        return None if best is None else best[1]


@lru_cache(maxsize=64)
def _name_index(names: tuple[str, ...]) -> _NameIndex:
    return _NameIndex(names)


def _read_vote_text(s: str, index: _NameIndex, mode: str) -> tuple[int | None, str | None]:
    """A target seat (not yet checked for legality) or None with the reason for abstaining."""
    if not s.strip():
        return None, "empty ballot"
    key = canon(s)
    if key in ABSTAIN_WORDS:
        return None, None
    if key in index.by_canon and key not in index.ambiguous:
        return index.by_canon[key], None
    m = _SEAT_NUMBER.match(s)
    if m:
        digits = m.group(1)
        if len(digits) > _SEAT_DIGITS:
            return None, "seat number out of range"
        return int(digits), None
    if mode == "strict":
        return None, "not a candidate name"
    text = unicodedata.normalize("NFKC", s)
    voted = index.last_vote_pattern(text)
    if voted is not None:
        return voted, None
    mentioned = index.mentioned(text)
    if len(mentioned) == 1:
        return mentioned[0], None
    if mentioned:
        lines = [line for line in text.splitlines() if line.strip()]
        in_last = index.mentioned(lines[-1]) if lines else []
        if len(in_last) == 1:
            return in_last[0], None
        return None, "several players named"
    return None, "no candidate name"


def read_ballot(action: object, names: Sequence[str], voter: int, alive: Container[int], allow_self_vote: bool = False,
                mode: str = "lenient") -> int | None:
    """The seat a vote action names, or None for an explicit abstention; the game's parser.

    ``None`` abstains; an int (numpy ints too) is a seat index, ``len(names)`` being the discrete
    abstain action; a string is parsed by the strict steps and, in ``lenient`` mode, the name
    search steps; any other value is read as ``str(action)``. A ballot that names no seat in range
    raises :class:`InvalidAnswer` ``unparseable``, one that names the voter (unless
    ``allow_self_vote``) or an eliminated player ``illegal``; the reason is the note
    :func:`parse_vote` records. Raises nothing else on any string.
    """
    target, kind, note = _read_ballot(action, names, voter, alive, allow_self_vote, mode)
    if kind is not None:
        raise InvalidAnswer(kind, note or "")
    return target


def parse_vote(action: object, names: Sequence[str], voter: int, alive: Container[int], allow_self_vote: bool = False,
               mode: str = "lenient") -> tuple[int | None, str | None]:
    """A ballot as the game records it, ``(target seat or None for abstain, note)``: the seat of
    :func:`read_ballot`, an invalid ballot read as an abstention. ``note`` says why a ballot was
    read as an abstention or coerced, and is None for a clean vote or explicit abstain."""
    target, _, note = _read_ballot(action, names, voter, alive, allow_self_vote, mode)
    return target, note


def _read_ballot(action: object, names: Sequence[str], voter: int, alive: Container[int], allow_self_vote: bool,
                 mode: str) -> tuple[int | None, InvalidKind | None, str | None]:
    """``(seat or None, None, note)`` for a valid ballot, ``(None, kind, note)`` for an invalid one."""
    check_choice("vote_parsing", mode, VOTE_MODES)
    n = len(names)
    coerced = None
    if action is None:
        return None, None, None
    if isinstance(action, Integral) and not isinstance(action, bool):
        target: int | None = int(action)
        if target == n:
            return None, None, None
        reason = None
    else:
        if not isinstance(action, str):
            coerced = f"vote action of type {type(action).__name__[:_TYPE_NAME_CHARS]} read as text"
            action = str(action)
        target, reason = _read_vote_text(action, _name_index(tuple(names)), mode)
    kind: InvalidKind = "unparseable"
    if target is not None:
        if abs(target) >= 10**_SEAT_DIGITS:
            reason = "seat number out of range"
        elif not 0 <= target < n:
            reason = f"seat {target} is out of range"
        elif target == voter and not allow_self_vote:
            kind, reason = "illegal", "self-vote not allowed"
        elif target not in alive:
            kind, reason = "illegal", f"{names[target]} is eliminated"
    if reason is None:
        return target, None, coerced
    notes = [x for x in (coerced, f"vote parsed as abstain: {reason}") if x]
    return None, kind, "; ".join(notes)


def max_vote_note_chars(names: Sequence[str]) -> int:
    """The most characters of a note of :func:`parse_vote` for a table of ``names``."""
    reasons = ("seat number out of range",  # the longest reason that quotes nothing
               f"seat -{'9' * _SEAT_DIGITS} is out of range", f"{max(names, key=len)} is eliminated")
    coerced = f"vote action of type {'x' * _TYPE_NAME_CHARS} read as text"
    return len(coerced) + len("; vote parsed as abstain: ") + max(map(len, reasons))


def vote_counts(targets: Iterable[T | None]) -> dict[T, int]:
    """Valid votes per target, abstentions (None) left out, in order of first vote."""
    return dict(Counter(t for t in targets if t is not None))


def tally(targets: Iterable[T | None]) -> T | None:
    """The plurality winner of a voting phase: the single target with the most valid votes;
    None on a tie for the top or when there is no valid vote."""
    counts = vote_counts(targets)
    if not counts:
        return None
    top = max(counts.values())
    leaders = [t for t, c in counts.items() if c == top]
    return leaders[0] if len(leaders) == 1 else None


# ---- order and end --------------------------------------------------------------------------------

#: The team that wins under each end condition.
WINNERS = {"E1": "civilians", "E2": "spy", "E3": "spy"}


def speaking_order(first_speaker: int, alive: Container[int], n: int) -> list[int]:
    """The alive seats in cyclic seat order starting at ``first_speaker`` (or the next alive seat
    after it when it is eliminated)."""
    return [s for s in ((first_speaker + i) % n for i in range(n)) if s in alive]


def check_end(
    spies_alive: int,
    n_alive: int,
    round_no: int,
    max_rounds: int,
    end_alive_threshold: int,
    after_vote: bool,
) -> str | None:
    """The end condition that holds now, checked in the order E1, E2, E3, or None.

    E1: no spy alive. E2: a spy alive and ``n_alive <= end_alive_threshold``. E3 (after the vote
    only, check B): a spy alive and round ``max_rounds`` tallied. :data:`WINNERS` maps each to
    the winning team.
    """
    if spies_alive == 0:
        return "E1"
    if n_alive <= end_alive_threshold:
        return "E2"
    if after_vote and round_no >= max_rounds:
        return "E3"
    return None
