"""What the rules of the six simultaneous γ-Bench games share: player and round counts, and the
limits of the sizes they take."""
from __future__ import annotations

from dataclasses import dataclass

from arena_envs.core.arguments import check_int

#: The most players of a simultaneous game (the paper plays 10).
MAX_PLAYERS = 1_000
#: The most rounds (or turns) of a γ-Bench game (the paper plays 20).
MAX_ROUNDS = 10_000
#: The largest number a γ-Bench answer ranges over: a guess, golds, tokens, a valuation (the
#: paper's largest is 800); an answer space of Discrete(MAX_VALUE + 1) masks in 10 kB.
MAX_VALUE = 10_000


@dataclass(frozen=True)
class SimultaneousRules:
    """N players (2..MAX_PLAYERS) over K rounds (1..MAX_ROUNDS); game rules subclass it and add their
    parameters."""

    n_players: int = 10
    n_rounds: int = 20

    def __post_init__(self) -> None:
        check_int("n_players", self.n_players, 2, MAX_PLAYERS)
        check_int("n_rounds", self.n_rounds, 1, MAX_ROUNDS)
