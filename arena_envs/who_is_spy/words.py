"""Word pairs and the attribute lexicon of Who is Spy: the packaged English and Chinese files, user
files (``.json`` or ``.csv``, the packaged files' layout) and tuple lists, their validation, and the
two vocabularies the numeric observation and the discrete actions index.

The packaged files are read, parsed and validated once per process and shared by every
environment; a caller gets its own dict for a lexicon and an immutable tuple of pairs.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Union

from arena_envs.core.answers import excerpt
from arena_envs.core.package_data import read_text
from arena_envs.who_is_spy.rules import check_language, contains_keyword, norm

DIFFICULTIES = ("easy", "medium", "hard")
CSV_COLUMNS = ("id", "civilian", "spy", "category", "difficulty", "language")
MAX_EN_TOKENS = 3
MAX_ZH_CHARS = 6
#: Most characters of any word, whitespace included (it bounds the observation text).
MAX_WORD_CHARS = 64
_PACKAGE = "arena_envs.who_is_spy"
_TOKEN_SPLIT = re.compile(r"[\s\-\u2010\u2011]+")  # the tokens of contains_keyword

PairsSource = Union[str, "os.PathLike[str]", Iterable[Any], None]
LexiconSource = Union[str, "os.PathLike[str]", Mapping[str, Sequence[str]], None]


@dataclass(frozen=True)
class WordPair:
    """One dataset row: the civilians' word, the spy's word and their labels."""

    id: str
    civilian: str
    spy: str
    category: str | None = None
    difficulty: str | None = None  # "easy" | "medium" | "hard", or None when not given
    language: str = "en"


def load_pairs(source: PairsSource = None, language: str = "en") -> tuple[WordPair, ...]:
    """The validated word pairs of ``source``: None (the packaged file of ``language``), a path to a
    ``.json`` (the packaged files' layout) or ``.csv`` file (header ``id,civilian,spy,category,difficulty,language``;
    only ``civilian`` and ``spy`` are required), or a list of ``(civilian, spy)`` /
    ``(civilian, spy, category)`` tuples or ``WordPair`` objects. Missing ids become
    ``<language>-0001``, ``<language>-0002``, … by position."""
    check_language(language)
    if source is None:
        return _packaged_pairs(language)
    if isinstance(source, (str, os.PathLike)):
        pairs = _pairs_from_file(Path(source), language)
    else:
        pairs = _pairs_from_tuples(source, language)
    validate_pairs(pairs, language)
    return pairs


def load_lexicon(source: LexiconSource = None, language: str = "en") -> dict[str, tuple[str, ...]]:
    """The validated attribute lexicon of ``source``: None (the packaged file of ``language``), a
    path to a ``.json`` file (the packaged files' layout) or a mapping ``word -> [attribute, ...]`` (generic first)."""
    check_language(language)
    if source is None:
        return dict(_packaged_lexicon(language))
    if isinstance(source, (str, os.PathLike)):
        lexicon = _lexicon_from_file(Path(source), language)
    elif isinstance(source, Mapping):
        lexicon = _lexicon_from_mapping(source, "the lexicon mapping")
    else:
        raise ValueError(f"lexicon source must be None, a path to a .json file or a mapping word -> attributes, "
                         f"got {type(source).__name__}")
    validate_lexicon(lexicon, language)
    return lexicon


def validate_pairs(pairs: Sequence[WordPair], language: str) -> None:
    """Raise a one-line ValueError at the first pair that breaks a rule: the list is not empty; ids
    are non-empty and unique; every pair is in ``language`` with a known difficulty or none; both
    words are valid, differ after normalisation and neither contains the other; each unordered pair
    appears once."""
    check_language(language)
    if not pairs:
        raise ValueError("the word pairs are empty; give at least one (civilian, spy) pair")
    seen_ids: set[str] = set()
    seen_pairs: dict[frozenset[str], str] = {}
    for pair in pairs:
        where = f"word pair {pair.id!r}"
        if not pair.id.strip():
            raise ValueError(f"word pair ({excerpt(pair.civilian)}, {excerpt(pair.spy)}) has an empty id; ids "
                             "are non-empty strings")
        if pair.id in seen_ids:
            raise ValueError(f"{where}: the id appears twice; ids must be unique")
        seen_ids.add(pair.id)
        if pair.language != language:
            raise ValueError(f"{where}: language {excerpt(pair.language)} in a {excerpt(language)} dataset; "
                             f"every pair must be {language!r}")
        if pair.difficulty is not None and pair.difficulty not in DIFFICULTIES:
            raise ValueError(f"{where}: difficulty {excerpt(pair.difficulty)}; accepted: "
                             f"{', '.join(DIFFICULTIES)} or none")
        for role in ("civilian", "spy"):
            _check_word(getattr(pair, role), f"{where}: {role} word", language)
        if norm(pair.civilian) == norm(pair.spy):
            raise ValueError(f"{where}: the civilian and spy words are the same ({excerpt(pair.civilian)}); "
                             f"the two words must differ after normalisation")
        for outer, inner in ((pair.civilian, pair.spy), (pair.spy, pair.civilian)):
            if contains_keyword(outer, inner, language):
                raise ValueError(f"{where}: {excerpt(outer)} contains {excerpt(inner)}; neither word may "
                                 "contain the other "
                                 f"(the own-word foul rule)")
        key = frozenset((norm(pair.civilian), norm(pair.spy)))
        if key in seen_pairs:
            raise ValueError(f"{where}: ({excerpt(pair.civilian)}, {excerpt(pair.spy)}) duplicates pair "
                             f"{seen_pairs[key]!r} "
                             f"(in either order); each unordered pair appears once")
        seen_pairs[key] = pair.id


def validate_lexicon(lexicon: Mapping[str, Sequence[str]], language: str) -> None:
    """Raise a one-line ValueError at the first entry that breaks a rule: every
    headword is a valid word, appears once, and has at least one attribute; every attribute is
    non-empty and does not contain its headword."""
    check_language(language)
    seen: dict[str, str] = {}
    for word, attributes in lexicon.items():
        _check_word(word, "lexicon headword", language)
        key = norm(word)
        if key in seen:
            raise ValueError(f"lexicon headword {excerpt(word)} duplicates {seen[key]!r}; each word has one entry")
        seen[key] = word
        if isinstance(attributes, str) or not attributes:
            raise ValueError(f"lexicon entry {excerpt(word)}: {excerpt(attributes)} is not a non-empty list of "
                             "attributes; "
                             f"give a list of short phrases")
        for attribute in attributes:
            if not isinstance(attribute, str) or not norm(attribute):
                raise ValueError(f"lexicon entry {excerpt(word)}: attribute {excerpt(attribute)} is empty or "
                                 "not a string; "
                                 f"attributes are non-empty phrases")
            if contains_keyword(attribute, word, language):
                raise ValueError(f"lexicon entry {excerpt(word)}: attribute {excerpt(attribute)} contains the "
                                 "headword; "
                                 f"an attribute must not contain its own word")


def word_vocabulary(pairs: Iterable[WordPair]) -> list[str]:
    """Every civilian and spy word of ``pairs``, sorted and de-duplicated."""
    return sorted({word for pair in pairs for word in (pair.civilian, pair.spy)})


def clue_vocabulary(lexicon: Mapping[str, Sequence[str]]) -> list[str]:
    """Every attribute of ``lexicon``, casefolded, de-duplicated and sorted."""
    return sorted({attribute.casefold() for attributes in lexicon.values() for attribute in attributes})


# -- packaged files ------------------------------------------------------------------------------

@cache
def _packaged_pairs(language: str) -> tuple[WordPair, ...]:
    name = f"data/word_pairs_{language}.json"
    pairs = _pairs_from_json(read_text(_PACKAGE, name), name, language)
    validate_pairs(pairs, language)
    return pairs


@cache
def _packaged_lexicon(language: str) -> dict[str, tuple[str, ...]]:
    name = f"data/lexicon_{language}.json"
    lexicon = _lexicon_from_json(read_text(_PACKAGE, name), name, language)
    validate_lexicon(lexicon, language)
    return lexicon


# -- parsing -------------------------------------------------------------------------------------

def _check_word(word: object, what: str, language: str) -> None:
    if not isinstance(word, str) or not norm(word):
        raise ValueError(f"{what} {excerpt(word)} is empty or not a string; words are non-empty strings")
    if len(word) > MAX_WORD_CHARS:
        raise ValueError(f"{what} {word[:MAX_WORD_CHARS]!r}... has {len(word)} characters; words have at most "
                         f"{MAX_WORD_CHARS}")
    if language == "en":
        count = len([token for token in _TOKEN_SPLIT.split(word) if token])
        if count > MAX_EN_TOKENS:
            raise ValueError(f"{what} {excerpt(word)} has {count} tokens; English words have 1-{MAX_EN_TOKENS} tokens")
    else:
        count = len(re.sub(r"\s+", "", word))
        if count > MAX_ZH_CHARS:
            raise ValueError(f"{what} {excerpt(word)} has {count} characters; Chinese words have 1-{MAX_ZH_CHARS} "
                             f"characters")


def _read_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"no word file {excerpt(str(path))}") from None
    except UnicodeDecodeError as err:
        raise ValueError(f"{excerpt(str(path))} is not UTF-8 text ({err.reason} at byte {err.start})") from None


def _load_json(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{excerpt(name)} is not valid JSON: {err.msg} (line {err.lineno}, column "
                         f"{err.colno})") from None


def _file_language(data: Mapping[str, Any], name: str, language: str) -> None:
    declared = data.get("language", language)
    if declared != language:
        raise ValueError(f"{excerpt(name)} declares language {excerpt(declared)} but {excerpt(language)} was "
                         "asked for; "
                         f"pass language={declared!r} or a {language!r} file")


def _text_field(value: object, what: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"{what} is {excerpt(value)}; accepted: a string")
    return value.strip()


def _pair(index: int, language: str, name: str, fields: Mapping[str, Any]) -> WordPair:
    where = f"{name}: pair {index + 1}"
    civilian, spy = (_text_field(fields.get(key), f"{where} {key}") for key in ("civilian", "spy"))
    if civilian is None or spy is None:
        raise ValueError(f"{where} lacks a civilian or spy word ({dict(fields)!r}); both are required")
    row_language = _text_field(fields.get("language"), f"{where} language") or language
    return WordPair(id=_text_field(fields.get("id"), f"{where} id") or f"{language}-{index + 1:04d}",
                    civilian=civilian, spy=spy,
                    category=_text_field(fields.get("category"), f"{where} category"),
                    difficulty=_text_field(fields.get("difficulty"), f"{where} difficulty"),
                    language=row_language)


def _pairs_from_json(text: str, name: str, language: str) -> tuple[WordPair, ...]:
    data = _load_json(text, name)
    if not isinstance(data, dict) or not isinstance(data.get("pairs"), list):
        raise ValueError(f"{excerpt(name)} is not a word-pairs file; accepted: "
                         f'{{"version": 1, "language": "{language}", "pairs": [{{"civilian": ..., "spy": ...}}, ...]}}')
    _file_language(data, name, language)
    pairs = []
    for index, row in enumerate(data["pairs"]):
        if not isinstance(row, dict):
            raise ValueError(f"{name}: pair {index + 1} is {excerpt(row)}; accepted: an object with civilian and spy")
        unknown = set(row) - set(CSV_COLUMNS)
        if unknown:
            raise ValueError(f"{name}: pair {index + 1} has unknown keys {sorted(unknown)}; "
                             f"accepted: {', '.join(CSV_COLUMNS)}")
        pairs.append(_pair(index, language, name, row))
    return tuple(pairs)


def _pairs_from_csv(text: str, name: str, language: str) -> tuple[WordPair, ...]:
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    header = [column.strip() for column in reader.fieldnames or ()]
    if "civilian" not in header or "spy" not in header or set(header) - set(CSV_COLUMNS):
        raise ValueError(f"{excerpt(name)} has the header {','.join(header)!r}; accepted: {','.join(CSV_COLUMNS)} "
                         f"(civilian and spy required)")
    reader.fieldnames = header
    pairs = []
    for index, row in enumerate(reader):
        if None in row:
            raise ValueError(f"{name}: row {index + 2} has more cells than the header")
        pairs.append(_pair(index, language, name, row))
    return tuple(pairs)


def _pairs_from_file(path: Path, language: str) -> tuple[WordPair, ...]:
    suffix = path.suffix.lower()
    if suffix not in (".json", ".csv"):
        raise ValueError(f"word pairs file {excerpt(str(path))} has the suffix {excerpt(suffix)}; accepted: "
                         ".json, .csv")
    text = _read_file(path)
    reader = _pairs_from_json if suffix == ".json" else _pairs_from_csv
    return reader(text, str(path), language)


def _pairs_from_tuples(rows: Iterable[Any], language: str) -> tuple[WordPair, ...]:
    pairs = []
    for index, row in enumerate(rows):
        if isinstance(row, WordPair):
            pairs.append(row)
            continue
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence) or len(row) not in (2, 3):
            raise ValueError(f"word pair {index + 1} is {excerpt(row)}; accepted: (civilian, spy), (civilian, "
                             "spy, category) "
                             f"or a WordPair")
        fields = dict(zip(("civilian", "spy", "category"), row))
        pairs.append(_pair(index, language, "the pair list", fields))
    return tuple(pairs)


def _lexicon_from_mapping(entries: Mapping[Any, Any], name: str) -> dict[str, tuple[str, ...]]:
    lexicon = {}
    for word, attributes in entries.items():
        if not isinstance(word, str):
            raise ValueError(f"{name}: headword {excerpt(word)} is not a string")
        if isinstance(attributes, str) or not isinstance(attributes, Sequence):
            raise ValueError(f"{name}: entry {excerpt(word)} is {excerpt(attributes)}; accepted: a list of "
                             "attribute strings")
        lexicon[word.strip()] = tuple(a.strip() if isinstance(a, str) else a for a in attributes)
    return lexicon


def _lexicon_from_json(text: str, name: str, language: str) -> dict[str, tuple[str, ...]]:
    data = _load_json(text, name)
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
        raise ValueError(f"{excerpt(name)} is not a lexicon file; accepted: "
                         f'{{"version": 1, "language": "{language}", "entries": {{"word": ["attribute", ...]}}}}')
    _file_language(data, name, language)
    return _lexicon_from_mapping(data["entries"], name)


def _lexicon_from_file(path: Path, language: str) -> dict[str, tuple[str, ...]]:
    if path.suffix.lower() != ".json":
        raise ValueError(f"lexicon file {excerpt(str(path))} has the suffix {path.suffix.lower()!r}; accepted: .json")
    return _lexicon_from_json(_read_file(path), str(path), language)
