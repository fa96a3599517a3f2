"""The reader of every JSON answer: the model's top-level object, never one it quoted.

``{"explanation": "I could say {\\"chosen_number\\": 99}", "chosen_number": 5}`` means 5: an object
inside a string value, or (unless a caller asks for nested ones) nested in another object, is what
the model wrote about, not its answer. The readings, in order; the first that finds an object is the answer:

1. **as written**: the top-level JSON objects of the text, left to right (a ``{`` at brace depth 0
   whose JSON parses; the scan goes on after its end). A ``{`` that opens no object opens a brace
   span whose objects are not top-level either. Fences, bold lines and prose need nothing special.
2. **escaped**: JSON written with escaped quotes (``{\\"chosen_number\\": \\"5\\"}``) is read as in 1
   once ``\\"`` is ``"``;
3. **by key** (:func:`key_values`): when no object parses at all, a ``"key": value`` pair at brace
   depth 0 or 1, so a pair inside a quoted object (depth 2) is not read.

Precedence, when several values parse: the last wins (a draft may come first). A caller that reads
one key takes the last object holding it (:func:`last_holding`, :func:`last_json_object`); a grammar
whose decision may sit in a wrapper object (``{"decision": {"action": "BUY"}}``) tries the values of
:func:`answer_candidates` with ``nested=True``: each top-level value, last first, then the values
nested in it. An object inside a string value is never read.

Every reading looks at the last :data:`MAX_ANSWER_CHARS` characters in linear time (the decoder
stops after :data:`SCAN_BUDGET` times the text's length or :data:`MAX_FAILED_TRIES` failures;
``benchmarks/bench_json_answer.py``). Nothing here raises on any input.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

#: Longest text read, its tail kept (answers come last).
MAX_ANSWER_CHARS = 20_000
#: The decoder's characters examined per character of the text before the scan stops trying.
SCAN_BUDGET = 8
#: Failed tries of the decoder before the scan stops trying.
MAX_FAILED_TRIES = 256
_DECODER = json.JSONDecoder()
#: What may follow an opening for a JSON value to start there (a cheap test before the decoder's).
_STARTS = {"{": re.compile(r'\{\s*["}]'), "[": re.compile(r'\[\s*["{\[\]\-0-9tfn]')}
_ANY = re.compile("")
_SCALAR = re.compile(r"""(?i:"(?:[^"\\]|\\.)*"|'[^']*'|-?\d{1,30}(?:\.\d{1,30})?(?![\d.])|null|true|false)""")
_BRACES = re.compile(r"[{}]")


def answer_objects(text: str) -> list[dict[str, Any]]:
    """The top-level JSON objects of ``text`` by the first of readings 1 and 2 that finds any."""
    return answer_values(text)


def answer_values(text: str, openings: str = "{") -> list[Any]:
    """The top-level JSON values of ``text`` that start at one of ``openings`` (``"{["`` for lists
    too), by the first of readings 1 and 2 that finds any."""
    tail = text[-MAX_ANSWER_CHARS:]
    found = top_level_values(tail, openings)
    if not found and '\\"' in tail:
        found = top_level_values(tail.replace('\\"', '"'), openings)
    return found


def answer_candidates(text: str, openings: str = "{", nested: bool = False) -> list[Any]:
    """The values of :func:`answer_values` in the order a caller tries them: the last first. With
    ``nested``, each is followed by the objects and lists nested in it, depth first, outer before
    inner (strings are never looked into)."""
    values = answer_values(text, openings)[::-1]
    return [part for value in values for part in _nested(value)] if nested else values


def _nested(value: Any) -> Iterator[Any]:
    """``value`` and every object or list inside it, depth first."""
    pending = [value]
    while pending:
        item = pending.pop()
        yield item
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        pending.extend(reversed([child for child in children if isinstance(child, (dict, list))]))


def top_level_values(text: str, openings: str = "{") -> list[Any]:
    """Reading 1: the values that start at an opening (``{``, or ``[`` when in ``openings``) outside
    every brace span, in order. A ``[`` that opens no value opens no span."""
    found: list[Any] = []
    budget, failures = SCAN_BUDGET * len(text), 0
    marks = re.compile("[{}" + ("[" if "[" in openings else "") + "]")
    depth = 0
    position = 0
    while (mark := marks.search(text, position)) is not None:
        at, char = mark.start(), mark.group()
        position = at + 1
        if char == "}":
            depth = max(0, depth - 1)
            continue
        if depth == 0 and budget > 0 and failures < MAX_FAILED_TRIES and _STARTS[char].match(text, at):
            try:
                value, end = _DECODER.raw_decode(text, at)
            except (ValueError, RecursionError) as error:  # a number past int's digit limit: ValueError
                examined = error.pos - at + 1 if isinstance(error, json.JSONDecodeError) else len(text) - at
                budget, failures = budget - examined, failures + 1
            else:
                budget -= end - at
                found.append(value)
                position = end
                continue
        if char == "{":
            depth += 1
    return found


def find_key(obj: Mapping[str, Any], key: str) -> str | None:
    """The key of ``obj`` equal to ``key`` up to case and surrounding blanks."""
    if key in obj:
        return key
    wanted = key.lower()
    return next((k for k in obj if isinstance(k, str) and k.strip().lower() == wanted), None)


def last_holding(objects: list[dict[str, Any]], key: str) -> dict[str, Any] | None:
    """The last of ``objects`` that holds ``key`` (up to case), with ``key`` under its exact name."""
    for obj in reversed(objects):
        found = find_key(obj, key)
        if found is not None:
            return obj if found == key else {**obj, key: obj[found]}
    return None


def last_json_object(text: str, required_key: str | None = None) -> dict[str, Any] | None:
    """The answer object of ``text``: its last top-level object (holding ``required_key``, if
    given, matched exactly), else ``None``."""
    for obj in reversed(answer_objects(text)):
        if required_key is None or required_key in obj:
            return dict(obj)
    return None


def key_values(text: str, key: str) -> list[Any]:
    """Reading 3: the values of ``"key": value`` (or ``'key': ...``, any case) at brace depth 0 or 1,
    in order. A value is the JSON value there (an object or list too), else a lenient scalar: a
    double- or single-quoted string (without its quotes), a number, ``null`` (``None``), a boolean."""
    tail = text[-MAX_ANSWER_CHARS:].replace('\\"', '"')
    pattern = re.compile(r"""["']""" + re.escape(key) + r"""["']\s*:\s*""", re.IGNORECASE)
    values: list[Any] = []
    budget = SCAN_BUDGET * len(tail)
    depth, counted = 0, 0
    for match in pattern.finditer(tail):
        for char in _BRACES.findall(tail, counted, match.start()):
            depth = depth + 1 if char == "{" else max(0, depth - 1)
        counted = match.start()
        if depth > 1:
            continue
        at = match.end()
        if budget > 0 and _STARTS.get(tail[at:at + 1], _ANY).match(tail, at):
            try:
                value, end = _DECODER.raw_decode(tail, at)
            except (ValueError, RecursionError) as error:
                budget -= error.pos - at + 1 if isinstance(error, json.JSONDecodeError) else len(tail) - at
            else:
                budget -= end - at
                values.append(value)
                continue
        scalar = _SCALAR.match(tail, at)
        if scalar is not None:
            values.append(_scalar(scalar.group()))
    return values


def _scalar(raw: str) -> Any:
    if raw[0] in "\"'":
        return raw[1:-1]
    words: dict[str, Any] = {"null": None, "true": True, "false": False}
    if raw.lower() in words:
        return words[raw.lower()]
    return float(raw) if "." in raw else int(raw)
