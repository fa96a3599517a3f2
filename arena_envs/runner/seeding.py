"""Seeds and seats of a run, derived from one run seed so that they never depend on scheduling.

Episode ``k`` of a run with seed ``S`` draws everything from ``SeedSequence(S, spawn_key=(k,))``
(child ``k`` of ``SeedSequence(S).spawn``): the environment seed from its child ``0``, the policy
seed of seat ``j`` from its child ``1 + j``. Seeds are unsigned 32-bit integers, which every seeding
API accepts. Seats rotate: in episode ``k`` player ``i`` plays seat ``(i + k) mod n`` (unless a run
fixes them).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class EpisodeSeeds:
    """The environment seed and one policy seed per seat (in ``possible_agents`` order)."""

    env: int
    seats: tuple[int, ...]


def _draw(run_seed: int, *key: int) -> int:
    return int(np.random.SeedSequence(run_seed, spawn_key=key).generate_state(1, dtype=np.uint32)[0])


def episode_seeds(run_seed: int, episode: int, n_seats: int) -> EpisodeSeeds:
    """The seeds of episode ``episode`` (0-based) of a run seeded with ``run_seed``."""
    if run_seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {run_seed}")
    return EpisodeSeeds(_draw(run_seed, episode, 0), tuple(_draw(run_seed, episode, 1 + j) for j in range(n_seats)))


def seat_players(n_seats: int, episode: int, rotate: bool = True) -> tuple[int, ...]:
    """For each seat, the index of the player (position in the players list) who plays it.

    Episode ``k`` shifts the players by ``k``: player ``i`` plays seat ``(i + k) mod n``, so over
    ``n`` consecutive episodes every player plays every seat once. ``rotate=False``: player ``i``
    plays seat ``i`` in every episode (a game whose seats differ on purpose, e.g. a fixed role).
    """
    shift = episode if rotate else 0
    return tuple((seat - shift) % n_seats for seat in range(n_seats))
