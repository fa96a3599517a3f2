"""Battle Royale (γ-Bench game 7) rules, free of PettingZoo.

N players with distinct hit rates shoot in a fixed cyclic order, ascending by hit rate (ties by
index); eliminated players are skipped. On its turn the shooter either shoots at another living
player, hitting with its own hit rate, or misses on purpose. A hit eliminates the target. The last
player standing wins; the game is cut off after ``max_turns`` turns (``None``: no cap).

Hit rates are percentages in (0, 100]. γ-Bench scores a turn as correct when the shooter aims at
the strongest living opponent (any of them when several share the top rate).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_int, check_real
from arena_envs.gamma.simultaneous_rules import MAX_ROUNDS

DEFAULT_PLAYERS = 10
#: The most players (the paper plays 10; every seat's rules list them all). Turns: at most MAX_ROUNDS.
MAX_PLAYERS = 100
DEFAULT_HIT_RATE_BASE = 35.0
DEFAULT_HIT_RATE_STEP = 5.0
DEFAULT_MAX_TURNS = 20


def linear_hit_rates(n_players: int, base: float = DEFAULT_HIT_RATE_BASE,
                     step: float = DEFAULT_HIT_RATE_STEP) -> list[float]:
    """``player_i`` gets ``base + i * step`` percent (the paper's grids: 35/5, 51/1, 10/10)."""
    return [float(base + i * step) for i in range(n_players)]


def check_hit_rates(hit_rates: Sequence[float]) -> list[float]:
    """The rates as floats (one per player, 2..MAX_PLAYERS of them, percentages in (0, 100]), or a
    ValueError naming what is wrong."""
    check_int("the number of hit_rates (n_players)", len(hit_rates), 2, MAX_PLAYERS)
    rates = [check_real("a hit_rates entry", rate, 0, 100) for rate in hit_rates]
    if 0 in rates:
        raise ValueError("hit_rates must be percentages in (0, 100], got 0")
    return rates


def shooting_order(hit_rates: Sequence[float]) -> list[int]:
    """Player indices by ascending hit rate, ties broken by index."""
    return sorted(range(len(hit_rates)), key=lambda i: (hit_rates[i], i))


def strongest_opponents(hit_rates: Sequence[float], alive: Sequence[int], shooter: int) -> list[int]:
    """The living opponents of ``shooter`` with the highest hit rate (ascending index)."""
    others = [p for p in alive if p != shooter]
    if not others:
        return []
    top = max(hit_rates[p] for p in others)
    return sorted(p for p in others if hit_rates[p] == top)


def aims_at_strongest(hit_rates: Sequence[float], alive: Sequence[int], shooter: int, target: int | None) -> bool:
    """Whether a turn counts for S7: a shot at a strongest living opponent (a miss never does)."""
    return target is not None and target in strongest_opponents(hit_rates, alive, shooter)


class BattleRoyale:
    """The state of one game: who is alive, whose turn it is, how many turns were played.

    The living players are kept in three orders (by index, shooting order, strength), each updated
    when a hit removes a player, so a turn costs the same however many players there are.
    """

    def __init__(self, hit_rates: Sequence[float], max_turns: int | None = DEFAULT_MAX_TURNS):
        if max_turns is not None:
            check_int("max_turns", max_turns, 1, MAX_ROUNDS)
        self.hit_rates = check_hit_rates(hit_rates)
        self.max_turns = max_turns
        self.order = shooting_order(self.hit_rates)
        self.alive: list[int] = sorted(self.order)  #: living players, ascending index
        self.living: list[int] = list(self.order)  #: living players in shooting order
        #: living players, strongest first (ties by index): the head answers "strongest opponent"
        self.by_strength = sorted(self.order, key=lambda p: (-self.hit_rates[p], p))
        self.turns_played = 0
        self.over = False  #: one player left, or the turn cap reached
        self.cut_off = False  #: the turn cap was reached with more than one player alive
        self.shooter = self.order[0]  #: the player whose turn it is

    @property
    def n_players(self) -> int:
        return len(self.hit_rates)

    def alive_in_order(self) -> list[int]:
        """Living players in shooting order."""
        return list(self.living)

    def strongest(self, shooter: int) -> list[int]:
        """``strongest_opponents(hit_rates, alive, shooter)``, read from the head of the strength order."""
        top: list[int] = []
        for p in self.by_strength:
            if p == shooter:
                continue
            if top and self.hit_rates[p] != self.hit_rates[top[0]]:
                break
            top.append(p)
        return sorted(top)

    def legal_targets(self, shooter: int) -> list[int]:
        return [p for p in self.alive if p != shooter]

    def target_problem(self, shooter: int, target: int | None) -> str | None:
        """Why ``target`` cannot be shot at by ``shooter`` (``None``: it can, or it is a miss)."""
        if target is None:
            return None
        if not 0 <= target < self.n_players:
            return f"there is no player_{excerpt(target)}; players are player_0 to player_{self.n_players - 1}"
        if target == shooter:
            return "you cannot shoot at yourself"
        if target not in self.alive:
            return f"player_{target} is already eliminated"
        return None

    def play(self, target: int | None, rng: np.random.Generator) -> dict[str, Any]:
        """Resolve the current shooter's turn and advance; returns the turn record (history schema).

        A shot draws one uniform number from ``rng`` and hits when it is below the hit rate; an
        intentional miss draws nothing.
        """
        if self.over:
            raise RuntimeError("the game is over")
        shooter = self.shooter
        problem = self.target_problem(shooter, target)
        if problem:
            raise ValueError(problem)
        alive_before = list(self.alive)
        correct = target is not None and target in self.strongest(shooter)
        hit = target is not None and float(rng.random()) * 100.0 < self.hit_rates[shooter]
        if target is not None and hit:
            self.alive.remove(target)
            self.living.remove(target)
            self.by_strength.remove(target)
        self.turns_played += 1
        self.cut_off = self.max_turns is not None and self.turns_played >= self.max_turns and len(self.alive) > 1
        self.over = len(self.alive) <= 1 or self.cut_off
        if len(self.living) > 1:  # the next living player after the shooter, in shooting order
            self.shooter = self.living[(self.living.index(shooter) + 1) % len(self.living)]
        return {
            "round": self.turns_played,
            "shooter": shooter,
            "target": target,
            "hit": bool(hit),
            "alive_before": alive_before,
            "alive_after": list(self.alive),
            "correct": correct,
        }
