"""Reading the answer out of a reasoning ("chain of thought") reply, given the constraint."""
from __future__ import annotations

import json
import re

from arena_envs.core.answers import AnswerConstraint
from arena_envs.core.json_answer import last_json_object

#: Marker that the chain-of-thought prompt asks the model to put before its answer.
ANSWER_MARKER = "Answer:"
_MARKER = re.compile(r"(?:final\s+)?answer\s*:", re.IGNORECASE)


def after_marker(text: str) -> str:
    """The part of ``text`` after its last ``Answer:`` (or ``Final answer:``), else all of it."""
    matches = list(_MARKER.finditer(text))
    return text[matches[-1].end():] if matches else text


def extract_answer(text: str, constraint: AnswerConstraint | None) -> str | None:
    """The last answer in ``text`` that satisfies ``constraint``, preferring what follows the last
    ``Answer:`` marker; without a constraint, the stripped text after the marker. ``None`` when
    nothing in the text satisfies the constraint."""
    tail = after_marker(text)
    if constraint is None:
        return tail.strip() or None
    for part in (tail, text) if tail is not text else (text,):
        found = _last_match(part, constraint)
        if found is not None:
            return found
    return None


def _last_match(text: str, constraint: AnswerConstraint) -> str | None:
    stripped = text.strip().strip("*`\"' ")
    if constraint.accepts(stripped):
        return stripped
    if constraint.kind == "choice":
        return _last_choice(text, constraint.choices)
    if constraint.kind == "regex":
        hits = [m.group(0) for m in re.finditer(constraint.pattern, text) if m.group(0)]
        return hits[-1] if hits else None
    obj = last_json_object(text)
    if obj is None:
        return None
    dumped = json.dumps(obj)
    return dumped if constraint.accepts(dumped) else None


def _last_choice(text: str, choices: tuple[str, ...]) -> str | None:
    """The choice whose (case-insensitive) occurrence ends last; the longest one on ties."""
    lowered = text.lower()
    best: tuple[int, int, str] | None = None
    for choice in choices:
        pos = lowered.rfind(choice.lower())
        if pos >= 0:
            key = (pos + len(choice), len(choice), choice)
            if best is None or key[:2] > best[:2]:
                best = key
    return None if best is None else best[2]
