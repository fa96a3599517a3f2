"""The rule describer's clues: tokens, the lexicon's ranked attributes, templates.

They live beside the game because they are also its discrete describe actions: an RL seat picks
one of the ``k`` best-ranked clues of its own word (:func:`ranked_clues`), and the rule describer
of ``baselines`` always picks the first.

Ranking: the word's lexicon attributes in order, then a generic fallback list, each
rendered with the round's template; a clue that contains the speaker's word or repeats an
earlier clue is dropped; the rest are ordered by how many of their tokens appear in the other
players' clues so far (blending in), ties by lexicon order. Template words are stopwords, so only
the attribute counts.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping

from arena_envs.who_is_spy.rules import contains_keyword, norm

#: Templates cycled by round (round 1 uses the first), per language; ``{a}`` is the attribute.
TEMPLATES: Mapping[str, tuple[str, ...]] = {
    "en": ("It is related to {a}.", "Think of {a}.", "Something to do with {a}."),
    "zh": ("它和{a}有关。", "想一想{a}。", "跟{a}有点关系。"),
}

#: Attributes tried after the word's own lexicon entry (or alone, for a word without one).
FALLBACK: Mapping[str, tuple[str, ...]] = {
    "en": ("everyday life", "many homes", "most people", "a shop", "its shape", "its colour", "its size",
           "how it is used", "where it is found", "a common sight"),
    "zh": ("日常生活", "家庭", "大多数人", "商店", "形状", "颜色", "大小", "用途", "常见", "随处可见"),
}

#: The last resort when every candidate is used, per language.
LAST_RESORT: Mapping[str, str] = {
    "en": "Something many people know (round {round}, {name}).",
    "zh": "很多人都知道的东西（第{round}轮，{name}）。",
}

#: Small English stopword list (articles, pronouns, auxiliaries, prepositions) plus every word of
#: the templates and the last resort, so a clue's tokens are its attribute's.
_STOPWORD_TEXT = """
a an the and or but if of to in on at by for with from into onto about as than then so too very
it its it's is are was were be been being am do does did have has had can could will would shall
should may might must i me my we our you your he him his she her they them their this that these
those there here what which who whom whose when where why how not no yes all any some something
related think many people know round one own also just more most much such only
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

#: Chinese characters of the templates and common function characters: no token contains one.
ZH_STOPCHARS = frozenset("它和有关想一跟点系很多人都知道的东西第轮了是在我你这那个也就与")

_SPLIT = re.compile(r"[^\w]+|_")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def tokens(text: str, language: str) -> frozenset[str]:
    """The content tokens of ``text``: English words without stopwords and with a plural
    ``s`` stripped from words longer than three letters; Chinese character unigrams and bigrams
    without the characters of :data:`ZH_STOPCHARS`."""
    text = unicodedata.normalize("NFKC", text).casefold()
    if language == "zh":
        out: set[str] = set()
        for run in _CJK.findall(text):
            out.update(c for c in run if c not in ZH_STOPCHARS)
            out.update(run[i:i + 2] for i in range(len(run) - 1)
                       if run[i] not in ZH_STOPCHARS and run[i + 1] not in ZH_STOPCHARS)
        return frozenset(out)
    words = (w[:-1] if len(w) > 3 and w.endswith("s") else w for w in _SPLIT.split(text) if w)
    return frozenset(w for w in words if w not in STOPWORDS)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """``|A ∩ B| / |A ∪ B|``; 0 when both are empty."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def template(round_number: int, language: str) -> str:
    """The clue template of round ``round_number`` (1-based, cycled)."""
    options = TEMPLATES[language]
    return options[(round_number - 1) % len(options)]


def ranked_clues(word: str, attributes: tuple[str, ...], earlier_norms: frozenset[str] | set[str],
                 others_tokens: frozenset[str] | set[str], round_number: int, language: str, limit: int) -> list[str]:
    """The ``limit`` best clues for ``word`` this round, best first (module docstring); fewer when
    fewer candidates are left (the caller adds :func:`last_resort` when none is)."""
    scored = sorted((-len(attribute_tokens & others_tokens), position, clue)
                    for position, clue, key, attribute_tokens in candidates(word, attributes, template(
                        round_number, language), language) if key not in earlier_norms)
    return [clue for _, _, clue in scored[:limit]]


@functools.lru_cache(maxsize=4096)
def candidates(word: str, attributes: tuple[str, ...], form: str,
               language: str) -> tuple[tuple[int, str, str, frozenset[str]], ...]:
    """Every rendered clue of ``word`` with ``form`` that does not contain the word, once each:
    (position, clue, its norm, its attribute's tokens). Computed once per word and template."""
    out: list[tuple[int, str, str, frozenset[str]]] = []
    seen: set[str] = set()
    for position, attribute in enumerate((*attributes, *FALLBACK[language])):
        clue = form.format(a=attribute)
        key = norm(clue)
        if key not in seen and not contains_keyword(clue, word, language):
            seen.add(key)
            out.append((position, clue, key, tokens(attribute, language)))
    return tuple(out)


def last_resort(round_number: int, name: str, language: str) -> str:
    """The clue when no candidate is left."""
    return LAST_RESORT[language].format(round=round_number, name=name)
