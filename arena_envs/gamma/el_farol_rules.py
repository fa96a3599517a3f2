"""El Farol Bar (γ-Bench game 2) rules, free of PettingZoo.

Each round every player goes to the bar or stays home. If at most the fraction R of the players
go (inclusive), every goer gets MAX; otherwise every goer gets MIN. Stayers always get HOME.
``mode="implicit"`` (the scored default) tells the attendance only to those who went;
``"explicit"`` tells everyone.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena_envs.core.arguments import check_choice, check_real
from arena_envs.gamma.simultaneous_rules import SimultaneousRules

MODES = ("implicit", "explicit")
DECISIONS = ("stay", "go")  # native action 0 = stay, 1 = go


@dataclass(frozen=True)
class ElFarolRules(SimultaneousRules):
    capacity_ratio: float = 0.6
    max_utility: float = 10
    min_utility: float = 0
    home_utility: float = 5
    mode: str = "implicit"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_real("capacity_ratio", self.capacity_ratio, 0, 1)
        for name in ("max_utility", "min_utility", "home_utility"):
            check_real(name, getattr(self, name))
        if not self.min_utility < self.home_utility < self.max_utility:
            raise ValueError("need min_utility < home_utility < max_utility, got "
                             f"{self.min_utility!r}, {self.home_utility!r}, {self.max_utility!r}")
        check_choice("mode", self.mode, MODES)

    def crowded(self, attendance: int, n: int) -> bool:
        """More than the fraction R went (a tiny tolerance keeps 6/10 <= 0.6 exact)."""
        return attendance > self.capacity_ratio * n + 1e-9

    def resolve(self, round_no: int, decisions: Sequence[str]) -> tuple[dict[str, Any], list[float]]:
        go = [d == "go" for d in decisions]
        n, attendance = len(go), sum(go)
        crowded = self.crowded(attendance, n)
        goer = self.min_utility if crowded else self.max_utility
        utilities = [float(goer if g else self.home_utility) for g in go]
        record = {"round": round_no, "go": go, "attendance": attendance, "go_rate": attendance / n,
                  "crowded": crowded, "utilities": utilities}
        return record, utilities
