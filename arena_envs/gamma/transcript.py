"""What a text game shows one seat: a stable prefix, the reports of finished rounds, the request.

Text blocks (game-independent):

* :func:`rules_block` - the stable prefix: optional persona, the game's intro, the numbered
  rules, optional identity line. Build it once per seat.
* :func:`report_block` - one finished round: public outcome, the seat's own answer echo, private
  outcome.
* :func:`request_block` - the current decision: title, the lines of the decision, the correction
  note of a rejected answer, the answer-format instruction. It is never stored; the next report
  replaces it.

:class:`Transcript` keeps one seat's prefix and its last ``window`` reports; use it when every
seat's reports are its own (a private outcome in every round). :class:`SharedTranscripts` keeps the
transcripts of all seats when most reports are public: a public block is stored once for everyone.
Adding a report costs the same whatever the history's length and the number of seats, and a text
is joined only when it is read, so a step costs nothing for the seats that are not observed and a
text never outgrows ``window`` reports. The full history belongs in the game's records, not here.
"""
from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Mapping, Sequence

from arena_envs.core.answers import excerpt

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
        raise ValueError(f"history_window must be None or an int >= 0, got {excerpt(window)}")
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


class SharedTranscripts:
    """The transcripts of all seats of a game whose reports are mostly public (Battle Royale's
    shots, Who is Spy's clues): each public block is stored once, and a seat reads the blocks
    posted while it took part, with its own block in place of the public one where it got one
    (its answer echo, its private outcome).

    ``post`` and ``leave`` cost the same however many seats there are; ``text(seat)`` joins the
    seat's last ``window`` blocks on the first read after a change, in a few slices.
    """

    __slots__ = ("_cache", "_own_at", "_own_blocks", "_public", "_stop", "prefixes", "window")

    def __init__(self, prefixes: Sequence[str], window: int | None):
        self.prefixes = list(prefixes)
        self.window = check_window(window)
        n = len(self.prefixes)
        self._public: list[str] = []
        self._own_at: list[list[int]] = [[] for _ in range(n)]  # per seat: entry indices, ascending
        self._own_blocks: list[list[str]] = [[] for _ in range(n)]  # per seat: its blocks there
        self._stop: list[int | None] = [None] * n  # entries a seat that left has received
        self._cache: list[tuple[int, str] | None] = [None] * n

    def post(self, public: str, own: Mapping[int, str] | None = None) -> None:
        """A report for every seat still taking part: ``public``, or ``own[seat]`` for the seats in ``own``."""
        k = len(self._public)
        self._public.append(public)
        for seat, block in (own or {}).items():
            if self._stop[seat] is not None:
                raise ValueError(f"seat {seat} has left and receives no reports")
            self._own_at[seat].append(k)
            self._own_blocks[seat].append(block)

    def leave(self, seat: int) -> None:
        """``seat`` receives no later report (eliminated); its text keeps what it received."""
        if self._stop[seat] is None:
            self._stop[seat] = len(self._public)

    def text(self, seat: int) -> str:
        """``seat``'s prefix and its last ``window`` reports."""
        stop = self._stop[seat]
        end = len(self._public) if stop is None else stop
        cached = self._cache[seat]
        if cached is not None and cached[0] == end:
            return cached[1]
        start = 0 if self.window is None else max(0, end - self.window)
        at, blocks = self._own_at[seat], self._own_blocks[seat]
        parts = [self.prefixes[seat]]
        pos = start
        for j in range(bisect_left(at, start), len(at)):
            parts.append("".join(self._public[pos:at[j]]))
            parts.append(blocks[j])
            pos = at[j] + 1
        parts.append("".join(self._public[pos:end]))
        text = "".join(parts)
        self._cache[seat] = (end, text)
        return text
