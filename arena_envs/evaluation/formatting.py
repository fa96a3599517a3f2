"""How the report card and the comparison write their figures, so that a test can read them back."""
from __future__ import annotations

import math

from arena_envs.evaluation.card import SubjectResult
from arena_envs.runner.validity import Validity, note, percent

CI = "95 % CI"


def number(value: float | None) -> str:
    """A recomputed figure: two decimals; ``–`` when there is none."""
    return "–" if value is None or math.isnan(value) else f"{value:.2f}"


def paper_number(value: float, digits: int, spread: float | None = None) -> str:
    """A published figure with the paper's ``digits`` decimals (``91.6±0.6``, ``8712.5``)."""
    text = f"{value:.{digits}f}"
    return text if spread is None else f"{text}±{spread:.{digits}f}"


def headline_cell(result: SubjectResult) -> str:
    """``"12.34 [10.00, 14.50]"``, or why there is none yet."""
    if result.headline is None:
        return f"missing ({', '.join(result.missing)} not played)"
    return result.headline.format()


def point_cell(result: SubjectResult | None) -> str:
    """The headline's point alone (the overview's random and rule columns)."""
    if result is None:
        return "–"
    if result.headline is None:
        return "missing"
    return number(result.headline.point)


#: The mark of a figure that is mostly not the subject's own play.
FLAG = "⚑"
VALIDITY_HEADER = ["valid", "re-asked", "fallback"]
#: The sentence under every table with validity columns.
VALIDITY_NOTE = note("subject", FLAG)


def validity_cells(validity: Validity) -> list[str]:
    """The three shares as table cells; the fallback cell carries the flag."""
    flag = f" {FLAG}" if validity.flagged else ""
    return [percent(validity.valid_share), percent(validity.retry_share), percent(validity.fallback_share) + flag]


def validity_cell(validity: Validity) -> str:
    """One cell: ``"97 % · 5 % · 3 %"`` (valid · re-asked · fallback), flagged where it must be."""
    return " · ".join(validity_cells(validity))
