"""What the rules of the six simultaneous γ-Bench games share: player and round counts."""
from __future__ import annotations

from dataclasses import dataclass

from arena_envs.core.arguments import check_int


@dataclass(frozen=True)
class SimultaneousRules:
    """N players (>= 2) over K rounds (>= 1); game rules subclass it and add their parameters."""

    n_players: int = 10
    n_rounds: int = 20

    def __post_init__(self) -> None:
        check_int("n_players", self.n_players, 2)
        check_int("n_rounds", self.n_rounds, 1)
