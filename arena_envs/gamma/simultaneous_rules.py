"""What the rules of the six simultaneous γ-Bench games share: player and round counts."""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral


def check_int(name: str, value: object, low: int) -> int:
    """``value`` as an int >= ``low``, or a ValueError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class SimultaneousRules:
    """N players (>= 2) over K rounds (>= 1); game rules subclass it and add their parameters."""

    n_players: int = 10
    n_rounds: int = 20

    def __post_init__(self) -> None:
        check_int("n_players", self.n_players, 2)
        check_int("n_rounds", self.n_rounds, 1)
