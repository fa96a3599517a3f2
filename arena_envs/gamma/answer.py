"""The γ-Bench JSON answer format and its lenient parser, shared by all eight games.

Every decision asks for one JSON object with a game-specific key (``{"chosen_number": "33"}``).
The parser reads that key from raw LLM text and never raises anything but
:class:`~arena_envs.core.InvalidAnswer`: the answer is the text's top-level JSON object, read by
:mod:`arena_envs.core.json_answer` (the last such object holding the key; escaped JSON and a bare
``"key": value`` pair only when no object parses), and its value is coerced by the field type
(:class:`IntField`, :class:`ChoiceField`, :func:`to_vote`).

Use by the simultaneous games: each holds one field, e.g. ``IntField("bid_amount", 0, 100)``, and
calls ``field.parse(text)`` / ``field.echo(value)`` / ``field.instruction()`` /
``field.constraint()``.

Use by sequential games (Battle Royale, Pirate): read several keys with :func:`answer_object`
(the object holding the main key, so sibling keys such as ``"target"`` come along) or
:func:`answer_value`; coerce with :func:`to_int`, :func:`to_choice`, :func:`to_vote`; build the
echo with :func:`canonical_json`, the request line with :func:`format_instruction` and the
guided-decoding schema with :func:`json_constraint`. All take ``cot=True`` for the CoT variant
(a leading ``"explanation"`` key: the model reasons before it answers).
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from arena_envs.core import AnswerConstraint, InvalidAnswer
from arena_envs.core.answers import excerpt
from arena_envs.core.json_answer import MAX_ANSWER_CHARS, answer_objects, key_values, last_holding
from arena_envs.core.parsing import plain_numbers

#: Key of the reasoning field that precedes the answer in the CoT variant.
EXPLANATION_KEY = "explanation"
_MAX_DIGITS = 18
_INT_TEXT = re.compile(r"[+-]?\$?\d{1,3}(?:,\d{3})+(?:\.0*)?|[+-]?\$?\d+(?:\.0*)?")
_NUMBER_TEXT = re.compile(r"[+-]?\$?(?:\d+\.\d*|\.\d+|\d+)(?:e[+-]?\d+)?", re.IGNORECASE)


def answer_object(text: str, key: str) -> dict[str, Any] | None:
    """The answer object of ``text`` (:mod:`arena_envs.core.json_answer`) that holds ``key``: the
    last such top-level object, ``key`` under its exact name so callers can index it; else ``None``."""
    return last_holding(answer_objects(text), key)


def answer_value(text: str, key: str) -> Any:
    """The raw value of ``key`` in the answer, or :class:`InvalidAnswer` ("unparseable"). When the
    text holds a top-level JSON object, the answer is in one (none holding ``key``: unparseable);
    only when none parses is the ``"key": value`` pair read where it stands."""
    objects = answer_objects(text)
    if objects:
        obj = last_holding(objects, key)
        value = None if obj is None else obj[key]
    else:
        values = key_values(text, key)
        value = values[-1] if values else None
    if value is None:
        raise InvalidAnswer("unparseable", f'no JSON object with a "{key}" value was found')
    return value


def plain_number(text: str, key: str) -> str:
    """The reading of ``plain_numbers=True`` (off by default: the paper's protocol asks for JSON),
    for a reply that holds no JSON answer at all: the one number it writes with digits (``"I pick
    33."`` -> ``"33"``); no number, several (``"between 0 and 100, I pick 33"``) or a JSON object
    without ``key`` are ``unparseable``."""
    numbers = [] if answer_objects(text) else plain_numbers(text[-MAX_ANSWER_CHARS:])
    if len(numbers) != 1:
        found = f"{len(numbers)} numbers ({excerpt(', '.join(numbers), 60)})" if numbers else "no number"
        raise InvalidAnswer("unparseable", f'no JSON object with a "{key}" value, and {found} in plain words; '
                                           "give one JSON object, or exactly one number")
    return numbers[0]


def to_int(value: Any, key: str, low: int, high: int) -> int:
    """An integer in ``[low, high]`` from a JSON int, an integral float or a numeric string.

    Non-integral numbers (``33.5``) and values out of range are ``illegal``; anything that is no
    number at all is ``unparseable``. Strings may carry ``$``, thousands commas and blanks.
    """
    number: int | None = None
    if isinstance(value, bool) or value is None:
        pass
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise InvalidAnswer("illegal", f'"{key}" must be a whole number, got {excerpt(value)}')
        number = int(value)
    elif isinstance(value, str):
        text = value.strip()
        if _INT_TEXT.fullmatch(text):
            digits = text.replace("$", "").replace(",", "").split(".")[0]
            if len(digits.lstrip("+-")) > _MAX_DIGITS:
                raise InvalidAnswer("illegal", f'"{key}" must be between {low} and {high}, got {excerpt(text, 40)}')
            number = int(digits)
        elif _NUMBER_TEXT.fullmatch(text):
            raise InvalidAnswer("illegal", f'"{key}" must be a whole number, got {excerpt(text)}')
    if number is None:
        raise InvalidAnswer("unparseable", f'"{key}" must be an integer, got {excerpt(value)}')
    if not low <= number <= high:
        raise InvalidAnswer("illegal", f'"{key}" must be between {low} and {high}, got {excerpt(number)}')
    return number


def to_choice(value: Any, key: str, synonyms: Mapping[str, str]) -> str:
    """The canonical choice for ``value`` (lower-cased, stripped; ``synonyms`` maps word -> choice)."""
    if isinstance(value, str):
        word = " ".join(value.strip().strip(".!\"'").lower().split())
        if word in synonyms:
            return synonyms[word]
    allowed = sorted(set(synonyms.values()))
    raise InvalidAnswer("illegal" if isinstance(value, str) else "unparseable",
                        f'"{key}" must be one of {", ".join(allowed)}, got {excerpt(value)}')


def to_vote(value: Any, key: str = "decision") -> str:
    """``"accept"`` if the value contains "accept", else ``"reject"`` if it contains "reject"."""
    word = str(value).lower() if isinstance(value, str) else ""
    if "accept" in word:
        return "accept"
    if "reject" in word:
        return "reject"
    raise InvalidAnswer("illegal", f'"{key}" must be accept or reject, got {excerpt(value)}')


def canonical_json(answer: Mapping[str, Any]) -> str:
    """The clean echo of a parsed answer, values written as strings: ``{"bid": "40"}``."""
    return json.dumps({k: v if isinstance(v, (dict, list)) or v is None else str(v) for k, v in answer.items()})


def format_instruction(template: Mapping[str, str], cot: bool = False) -> str:
    """The answer-format line: a JSON object whose values describe what to write there."""
    shape = {EXPLANATION_KEY: "your step-by-step reasoning"} if cot else {}
    shape.update(template)
    body = ", ".join(f'"{k}": "{v}"' for k, v in shape.items())
    return "Answer with one JSON object and nothing else, in this form: {" + body + "}"


def json_constraint(properties: Mapping[str, Any], description: str, cot: bool = False) -> AnswerConstraint:
    """A JSON-schema constraint requiring every key of ``properties`` (plus the CoT explanation)."""
    props = {EXPLANATION_KEY: {"type": "string"}} if cot else {}
    props.update(properties)
    schema = {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}
    return AnswerConstraint("json", description, schema=schema)


@dataclass(frozen=True)
class IntField:
    """An integer answer ``{key: n}`` with ``low <= n <= high``."""

    key: str
    low: int
    high: int

    def parse(self, text: str, plain_numbers: bool = False) -> int:
        """The answer of ``text``; with ``plain_numbers``, a reply without any JSON answer may be one
        number in plain words (:func:`plain_number`)."""
        try:
            value = answer_value(text, self.key)
        except InvalidAnswer:
            if not plain_numbers or answer_objects(text):
                raise
            value = plain_number(text, self.key)
        return to_int(value, self.key, self.low, self.high)

    def echo(self, value: int) -> str:
        return canonical_json({self.key: value})

    def instruction(self, cot: bool = False) -> str:
        return format_instruction({self.key: f"an integer from {self.low} to {self.high}"}, cot)

    def constraint(self, cot: bool = False) -> AnswerConstraint:
        prop = {"type": "integer", "minimum": self.low, "maximum": self.high}
        return json_constraint({self.key: prop}, f"{self.key}: integer in [{self.low}, {self.high}]", cot)


@dataclass(frozen=True)
class ChoiceField:
    """A categorical answer ``{key: word}``; ``synonyms`` maps accepted words to the choices."""

    key: str
    choices: tuple[str, ...]
    synonyms: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        table = {c: c for c in self.choices}
        table.update({k.lower(): v for k, v in self.synonyms.items()})
        object.__setattr__(self, "synonyms", table)

    def parse(self, text: str) -> str:
        return to_choice(answer_value(text, self.key), self.key, self.synonyms)

    def echo(self, value: str) -> str:
        return canonical_json({self.key: value})

    def instruction(self, cot: bool = False) -> str:
        return format_instruction({self.key: " or ".join(self.choices)}, cot)

    def constraint(self, cot: bool = False) -> AnswerConstraint:
        return json_constraint({self.key: {"enum": list(self.choices)}},
                               f"{self.key}: one of {', '.join(self.choices)}", cot)
