"""What a text game shows one seat: a stable prefix, the reports of finished rounds, the request.

Text blocks (game-independent):

* :func:`rules_block` - the stable prefix: optional persona, the game's intro, the numbered
  rules, optional identity line. Build it once per seat.
* :func:`report_block` - one finished round: public outcome, the seat's own answer echo, private
  outcome.
* :func:`request_block` - the current decision: title, the lines of the decision, the correction
  note of a rejected answer, the answer-format instruction. It is never stored; the next report
  replaces it.

:class:`Transcript` keeps one seat's prefix and its last ``window`` reports. Adding a report costs
the same whatever the history's length, and the text is joined only when it is read, so a step
costs nothing for the seats that are not observed and a text never outgrows ``window`` reports.
The full history belongs in the game's records, not here.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Sequence

#: Zero-shot chain-of-thought trigger added to a request when the prompt asks for it.
COT_TRIGGER = "Think it through step by step before you answer."


def rules_block(intro: str, rules: Sequence[str], persona: str | None = None, identity: str | None = None) -> str:
    """The stable prefix: persona sentence, intro, numbered rules, then the identity line."""
    parts = [persona.strip()] if persona else []
    parts.append(intro)
    parts.append("Rules:\n" + "\n".join(f"{n}. {rule}" for n, rule in enumerate(rules, 1)))
    if identity:
        parts.append(identity)
    return "\n\n".join(parts) + "\n"


def report_block(title: str, public: str, echo: str | None, private: str) -> str:
    """A finished round: public outcome, own answer echo (``None``: no answer), private outcome."""
    lines = [f"\n=== {title} results ===", public]
    if echo is not None:
        lines.append(f"Your answer: {echo}")
    if private:
        lines.append(private)
    return "\n".join(lines) + "\n"


def correction_note(reason: str) -> str:
    """The sentence that tells a seat why its last answer was rejected."""
    return f"Your previous answer could not be used: {reason}. Answer again in the required JSON format."


def request_block(title: str, lines: Sequence[str], instruction: str, note: str | None = None,
                  cot: bool = False) -> str:
    """The current decision (not kept in the transcript)."""
    parts = [f"\n=== {title} starts ===", *lines]
    if note:
        parts.append(correction_note(note))
    if cot:
        parts.append(COT_TRIGGER)
    parts.append(instruction)
    return "\n".join(parts) + "\n"


def check_window(window: int | None) -> int | None:
    """``window`` if it is a valid history window (``None`` or an int >= 0), else a ValueError."""
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 0):
        raise ValueError(f"history_window must be None or an int >= 0, got {window!r}")
    return window


class Transcript:
    """One seat's context: ``prefix`` plus its last ``window`` report blocks, newest last.

    ``window=None`` keeps every report (the text then grows with the game); ``0`` keeps none.
    ``add`` is O(1); ``text`` is joined on the first read after a change and then cached.
    """

    __slots__ = ("_reports", "_text", "prefix", "window")

    def __init__(self, prefix: str, window: int | None):
        self.prefix = prefix
        self.window = check_window(window)
        self._reports: deque[str] = deque(maxlen=window)
        self._text: str | None = prefix

    def add(self, report: str) -> None:
        self._reports.append(report)
        self._text = None

    @property
    def reports(self) -> tuple[str, ...]:
        """The report blocks shown now (at most ``window``), oldest first."""
        return tuple(self._reports)

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.prefix + "".join(self._reports)
        return self._text
