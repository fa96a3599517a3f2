"""How much of a score is the policy's own play: its decisions, those re-asked, those that fell back.

Every ``episodes.jsonl`` entry holds, per seat, ``validity: {"decisions": D, "retried": R,
"fallback": F}``: the seat's decisions (a decision ends with an answer the game took, or with the
game's fallback action after the last re-ask), those with at least one invalid answer re-asked
before they ended, and those that ended in a fallback: the game's, or the policy's own (a policy
whose ``trace()`` says ``"fallback": true``, as the trading agents do when their model gave no
usable answer and their default decided). Over any set of seats and episodes:

* ``valid_share`` = (D - F) / D: decisions that were the policy's own valid answer (first try or
  after a re-ask);
* ``retry_share`` = R / D: decisions that needed a re-ask;
* ``fallback_share`` = F / D: decisions the game made for the policy.

A figure with ``fallback_share`` above :data:`FLAG_FALLBACK_SHARE` is *flagged*: it is mostly not
the policy's play. Shares are ``None`` without decisions (and for entries written before the
counts existed: they are unknown, never guessed).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: A figure whose decisions fell back more often than this is flagged as not the policy's play.
FLAG_FALLBACK_SHARE = 0.10
KEYS = ("decisions", "retried", "fallback")


@dataclass
class Validity:
    """Counts summed over seats and episodes; ``known`` is False once a counted entry lacked them."""

    decisions: int = 0
    retried: int = 0
    fallback: int = 0
    known: bool = True

    def add(self, counts: Mapping[str, Any] | None) -> None:
        if counts is None:
            self.known = False
            return
        self.decisions += int(counts.get("decisions", 0))
        self.retried += int(counts.get("retried", 0))
        self.fallback += int(counts.get("fallback", 0))

    def __add__(self, other: Validity) -> Validity:
        return Validity(self.decisions + other.decisions, self.retried + other.retried,
                        self.fallback + other.fallback, self.known and other.known)

    def _share(self, part: int) -> float | None:
        return part / self.decisions if self.known and self.decisions else None

    @property
    def valid_share(self) -> float | None:
        return self._share(self.decisions - self.fallback)

    @property
    def retry_share(self) -> float | None:
        return self._share(self.retried)

    @property
    def fallback_share(self) -> float | None:
        return self._share(self.fallback)

    @property
    def flagged(self) -> bool:
        share = self.fallback_share
        return share is not None and share > FLAG_FALLBACK_SHARE

    def shares(self) -> dict[str, Any]:
        """The JSON form: the three shares (``None`` when unknown) and ``flagged``."""
        return {"valid_share": self.valid_share, "retry_share": self.retry_share,
                "fallback_share": self.fallback_share, "flagged": self.flagged}


def of_seats(entries: Iterable[Mapping[str, Any]], agents: Iterable[str] | None = None) -> Validity:
    """The validity of ``entries`` over the seats ``agents`` (every seat when ``None``)."""
    total = Validity()
    wanted = None if agents is None else set(agents)
    for entry in entries:
        counts = entry.get("validity")
        for agent in entry["seats"]:
            if wanted is None or agent in wanted:
                total.add(None if counts is None else counts.get(agent))
    return total


def percent(share: float | None) -> str:
    """``"97 %"``, ``"0.4 %"`` below 1 %, ``"–"`` when unknown."""
    if share is None:
        return "–"
    value = share * 100
    return f"{value:.1f} %" if 0 < value < 1 else f"{value:.0f} %"


def note(who: str, mark: str) -> str:
    """The sentence under a table with validity columns: ``who`` decides, ``mark`` flags."""
    return (f"valid: the {who}'s decisions that were its own valid answer; re-asked: those that needed another "
            f"try; fallback: those the game made for it after the last try. {mark}: more than "
            f"{percent(FLAG_FALLBACK_SHARE)} fell back, so the figure is not the {who}'s own play.")
