"""Simultaneous moves on the sequential AEC API: one phase buffer that every game shares.

The seats of a phase decide one at a time in a fixed order, but their moves stay in the buffer
(no observation may show them) until the last one is in; then the game resolves them at once::

    phase = SimultaneousPhase(living_seats)      # or phase.start(...) for the next round
    seat = phase.current                         # who decides now (None: all are in)
    if phase.submit(seat, move):                 # True once the last move is in
        resolve(phase.moves)                     # {seat: move} in decision order

Seats may be any hashable (indices, agent names); a phase with no seats is complete at once.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

S = TypeVar("S", bound=Hashable)
M = TypeVar("M")


class SimultaneousPhase(Generic[S, M]):
    """The buffered moves of one phase (a round of bids, of votes, of tank orders)."""

    __slots__ = ("_position", "cursor", "moves", "order")

    def __init__(self, order: Iterable[S] = ()):
        self.order: list[S] = []
        self.cursor = 0
        self.moves: dict[S, M] = {}
        self._position: dict[S, int] = {}
        self.start(order)

    def start(self, order: Iterable[S]) -> None:
        """Begin a new phase in which the seats of ``order`` decide, in that order."""
        self.order = list(order)
        self._position = {seat: k for k, seat in enumerate(self.order)}
        if len(self._position) != len(self.order):
            raise ValueError(f"a phase lists every seat once, got {self.order!r}")
        self.cursor = 0
        self.moves = {}

    @property
    def current(self) -> S | None:
        """The seat that decides now, or ``None`` when every move is in."""
        return self.order[self.cursor] if self.cursor < len(self.order) else None

    @property
    def complete(self) -> bool:
        return self.cursor >= len(self.order)

    def awaits(self, seat: S) -> bool:
        """Whether ``seat`` takes part in this phase and has not decided yet."""
        return self._position.get(seat, -1) >= self.cursor

    def submit(self, seat: S, move: M) -> bool:
        """Buffer the current seat's move; returns True when it was the last one of the phase."""
        if seat != self.current:
            raise RuntimeError(f"{seat!r} is not the seat to decide now (that is {self.current!r})")
        self.moves[seat] = move
        self.cursor += 1
        return self.cursor >= len(self.order)
