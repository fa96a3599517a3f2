"""What a decision accepts: the invalid-answer exception and the guided-decoding constraint.

An environment raises :class:`InvalidAnswer` from its parser or validator; the base class turns it
into a recorded invalid attempt, a correction note in the agent's next text and a retry. The
:class:`AnswerConstraint` of the current decision lets an LLM backend restrict decoding (vLLM
structured outputs: ``choice``, ``regex`` or ``json``) so that the answer always parses.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

#: Kinds of invalid answers. ``unparseable``: no decision could be read from the text;
#: ``illegal``: a decision was read but the rules forbid it (a failed bid, a masked action).
InvalidKind = Literal["unparseable", "illegal"]


class InvalidAnswer(Exception):
    """Raised by an environment's parser or validator; never escapes ``step()``."""

    def __init__(self, kind: InvalidKind, reason: str):
        super().__init__(reason)
        self.kind: InvalidKind = kind
        self.reason = reason


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
        except ValueError:
            return False
        required = self.schema.get("required", [])
        return isinstance(value, dict) and all(key in value for key in required)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "description": self.description, **self.structured_outputs()}
