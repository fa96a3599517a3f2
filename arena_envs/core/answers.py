"""What a decision accepts: the invalid-answer exception, the answer a game's hooks receive and the
guided-decoding constraint.

An environment raises :class:`InvalidAnswer` from its parser or validator; the base class turns it
into a recorded invalid attempt, a correction note in the agent's next text and a retry, and hands
the game an :class:`Answered` (the answer, the move read from it or the fallback, the invalid
answer behind a fallback). The :class:`AnswerConstraint` of the current decision lets an LLM
backend restrict decoding (vLLM structured outputs: ``choice``, ``regex`` or ``json``) so that the
answer always parses.

Any value may arrive as an answer (any Unicode, deep nesting, huge or non-finite numbers, the wrong
type): :func:`native_index` reads a discrete action, :func:`excerpt` quotes an answer in a message
(at most :data:`EXCERPT_CHARS` characters), :func:`encodable` makes text that reaches a prompt
encodable as UTF-8.
"""
from __future__ import annotations

import builtins
import json
import math
import re
import reprlib
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np

#: Kinds of invalid answers. ``unparseable``: no decision could be read from the text;
#: ``illegal``: a decision was read but the rules forbid it (a failed bid, a masked action).
InvalidKind = Literal["unparseable", "illegal"]


class InvalidAnswer(Exception):
    """Raised by an environment's parser or validator; never escapes ``step()``. The ``reason`` is
    shown to the agent and printed: it quotes what it was given with :func:`excerpt`, and is kept
    :func:`encodable` here. ``code``: the game's own name for the problem, if it logs one (the
    trading arena's ``parse_error``)."""

    def __init__(self, kind: InvalidKind, reason: str, code: str | None = None):
        reason = encodable(reason)
        super().__init__(reason)
        self.kind: InvalidKind = kind
        self.reason = reason
        self.code = code


class Answered(NamedTuple):
    """``agent``'s answer as the base class hands it to the game's hooks (``_apply``, ``_rejected``);
    a frozen value (a named tuple: one is built at every step).

    ``answer`` is what ``step()`` was given (a text or a native action); ``move`` what the game
    applies: the move read from the answer or, after the last re-ask, the game's fallback (``None``
    for an answer asked again); ``invalid`` the invalid answer asked again or, for a fallback, the
    last one, which caused it (``None`` for a valid answer); ``note`` the correction the agent's
    text showed when it answered (why its previous answer was rejected; ``None`` at a first try);
    ``asked_again``: the answer was rejected and the agent is asked again.
    """

    agent: str
    answer: Any
    move: Any = None
    invalid: InvalidAnswer | None = None
    note: str | None = None
    asked_again: bool = False

    @property
    def fell_back(self) -> bool:
        """Whether ``move`` is the game's fallback for an invalid answer."""
        return self.invalid is not None and not self.asked_again

    @property
    def text(self) -> str | None:
        """The answer when it is a text (what a game logs as the raw reply), else ``None``."""
        return self.answer if isinstance(self.answer, str) else None


#: The most characters of a given value that a message quotes.
EXCERPT_CHARS = 200
_SURROGATES = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """``text`` with every surrogate code point (half of a UTF-16 pair, which no UTF-8 encoder
    takes) replaced by U+FFFD; ASCII text is returned as it is, at the cost of one flag test."""
    return text if text.isascii() else _SURROGATES.sub("\ufffd", text)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


class _Quoter(reprlib.Repr):
    """``reprlib``'s bounded ``repr``: big integers are described, a failing ``repr`` names the type,
    memory addresses are left out (a quote is the same in every run)."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxstring, self.maxother, self.maxlong = 4, EXCERPT_CHARS, EXCERPT_CHARS, 60

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 640:  # its decimal digits would cost time, or exceed Python's digit limit
            return f"<an integer of about {int(x.bit_length() * math.log10(2)) + 1} digits>"
        return super().repr_int(x, level)

    def repr_instance(self, x: Any, level: int) -> str:
        try:
            text = builtins.repr(x)
        except Exception:  # e.g. RecursionError in a deeply nested object array
            return f"<{type(x).__name__}>"
        text = _ADDRESS.sub("", text)
        return text if len(text) <= self.maxother else text[:self.maxother - 3] + "..."


_QUOTER = _Quoter()


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str:
    """A quote of ``value`` for a message: its ``repr``, at most ``limit`` characters, encodable.

    Its cost is bounded whatever the value (a long text, deep nesting, a 10**400); never raises.
    """
    text = _QUOTER.repr(value)
    return encodable(text if len(text) <= limit else text[:limit - 3] + "...")


def native_index(action: Any, n: int, start: int = 0, what: str = "action") -> int:
    """``action`` as an index in ``start..start + n - 1``: a Python or NumPy integer or a 0-d integer
    array. Anything else (a bool, a float, a list...) is an :class:`InvalidAnswer` (``unparseable``);
    an integer out of range is ``illegal``."""
    if type(action) is int and start <= action < start + n:  # the usual case, before the other checks
        return action
    if isinstance(action, np.ndarray) and action.shape == ():
        action = action.item()
    last = start + n - 1
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise InvalidAnswer("unparseable", f"expected an integer {what} in {start}..{last} or a text answer, "
                                           f"got {excerpt(action)}")
    if not start <= action <= last:
        raise InvalidAnswer("illegal", f"{what} {excerpt(action)} is outside {start}..{last}")
    return int(action)


@dataclass(frozen=True)
class AnswerConstraint:
    """The answers valid for one decision, in a form guided decoding understands.

    ``kind`` is ``"choice"`` (``choices`` lists every allowed string), ``"regex"`` (``pattern`` is a
    full-match regular expression) or ``"json"`` (``schema`` is a JSON schema). ``description``
    tells a human or a prompt what is expected.
    """

    kind: Literal["choice", "regex", "json"]
    description: str
    choices: tuple[str, ...] = ()
    pattern: str = ""
    schema: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind == "choice" and not self.choices:
            raise ValueError("a choice constraint needs at least one choice")
        if self.kind == "regex":
            re.compile(self.pattern)
        if self.kind == "json" and not self.schema:
            raise ValueError("a json constraint needs a schema")
        if self.kind not in ("choice", "regex", "json"):
            raise ValueError(f"unknown constraint kind {self.kind!r}")

    def structured_outputs(self) -> dict[str, Any]:
        """The ``structured_outputs`` payload of a vLLM request (OpenAI ``extra_body``)."""
        if self.kind == "choice":
            return {"choice": list(self.choices)}
        if self.kind == "regex":
            return {"regex": self.pattern}
        return {"json": self.schema}

    def accepts(self, text: str) -> bool:
        """Whether ``text`` satisfies the constraint (JSON: parses and has the required keys)."""
        if self.kind == "choice":
            return text in self.choices
        if self.kind == "regex":
            return re.fullmatch(self.pattern, text) is not None
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than Python's stack
            return False
        required = self.schema.get("required", [])
        return isinstance(value, dict) and all(key in value for key in required)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "description": self.description, **self.structured_outputs()}
