"""Guess 2/3 of the Average (γ-Bench game 1) rules, free of PettingZoo.

Each round every player picks an integer in [MIN, MAX]; the target is R x the mean of all
choices; the player(s) closest to the target win. Distances are compared exactly (integers), so
ties are real ties: by default every closest player wins; ``tie_rule=
"first_in_index_order"`` reproduces the repo (only the choosers of the first closest number found
in player order win).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_choice, check_int
from arena_envs.gamma.simultaneous_rules import MAX_VALUE, SimultaneousRules

TIE_RULES = ("all", "first_in_index_order")
#: The largest ratio R and the largest denominator of R (the paper's R is 2/3; the repo's up to 4/3).
MAX_RATIO = 100
MAX_DENOMINATOR = 10_000


def as_fraction(name: str, value: Any) -> Fraction:
    """A ratio in [0, MAX_RATIO] with a denominator of at most MAX_DENOMINATOR, from a Fraction, int,
    float (to the nearest such fraction), ``"2/3"`` or ``"60%"``; ValueError naming ``name``."""
    try:
        if isinstance(value, str) and value.strip().endswith("%"):
            ratio = Fraction(value.strip()[:-1]) / 100
        elif isinstance(value, float):
            ratio = Fraction(value).limit_denominator(MAX_DENOMINATOR)
        else:
            ratio = Fraction(value)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        ratio = Fraction(-1)
    if not 0 <= ratio <= MAX_RATIO or ratio.denominator > MAX_DENOMINATOR:
        raise ValueError(f"{name} must be a number from 0 to {MAX_RATIO} with a denominator of at most "
                         f"{MAX_DENOMINATOR} (2/3, '2/3', '60%'), got {excerpt(value)}")
    return ratio


def ratio_text(ratio: Fraction) -> str:
    """``2/3``, ``1``, ``7/6``: how the ratio is shown to players."""
    return str(ratio.numerator) if ratio.denominator == 1 else f"{ratio.numerator}/{ratio.denominator}"


@dataclass(frozen=True)
class GuessRules(SimultaneousRules):
    min_value: int = 0
    max_value: int = 100
    ratio: Fraction = Fraction(2, 3)
    tie_rule: str = "all"

    def __post_init__(self) -> None:
        super().__post_init__()
        lo = check_int("min_value", self.min_value, -MAX_VALUE, MAX_VALUE)
        hi = check_int("max_value", self.max_value, -MAX_VALUE, MAX_VALUE)
        if lo >= hi:
            raise ValueError(f"min_value must be < max_value, got {lo} and {hi}")
        object.__setattr__(self, "min_value", lo)
        object.__setattr__(self, "max_value", hi)
        object.__setattr__(self, "ratio", as_fraction("ratio", self.ratio))
        check_choice("tie_rule", self.tie_rule, TIE_RULES)

    def nash_choice(self) -> int:
        """The equilibrium number: MIN if R < 1, MAX if R > 1, MIN for R = 1 (one of many)."""
        return self.max_value if self.ratio > 1 else self.min_value

    def resolve(self, round_no: int, choices: Sequence[int]) -> tuple[dict[str, Any], list[float]]:
        """The round record (history schema) and rewards (1 per winner)."""
        n, total = len(choices), sum(choices)
        p, q = self.ratio.numerator, self.ratio.denominator
        # |C - p*S/(q*n)| scaled by q*n stays an integer: exact comparisons.
        distance = [abs(c * q * n - p * total) for c in choices]
        best = min(distance)
        if self.tie_rule == "all":
            winners = [i for i, d in enumerate(distance) if d == best]
        else:
            number = choices[distance.index(best)]
            winners = [i for i, c in enumerate(choices) if c == number]
        record = {
            "round": round_no,
            "choices": list(choices),
            "average": total / n,
            "target": p * total / (q * n),
            "winners": winners,
            "winning_numbers": sorted({choices[i] for i in winners}),
        }
        won = set(winners)
        return record, [1.0 if i in won else 0.0 for i in range(n)]
