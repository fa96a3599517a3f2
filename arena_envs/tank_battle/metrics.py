"""The paper's metrics: forward distance FDis, format accuracy FAcc, move accuracy MAcc and the
Score, per tank and per run.

* FDis (stages 1-2): ``D(start) - D(end)``, where ``D(p)`` counts the tiles of a shortest
  4-connected tile path from the tile of ``p`` to the base tile, both ends included, steel and
  water impassable, bricks ignored (the reference's definition; tile L1 + 1 on the official
  maps); ``D(end) = 0`` when no base is left (the goal was shot). Unit: tiles.
* FAcc: format-valid decisions / decisions. An answer is format-valid when it holds an operation,
  in stages 3-7 a target that is -1, 200, a listed enemy tank or an enemy base, and in cooperative
  stages a cooperation operation.
* MAcc: correct moves / scored moves, shots excluded; 0 when no move was scored. As BattleAgentBench's
  metric script counts (``battle_city/examples/compute_metric.py``), a move is scored when its answer
  was format-valid and its target (200: the previous one; navigation: the goal base) is a living
  enemy tank or base when the tank decides (the env's ``macc="all_moves"`` scores every applied
  move); it is correct when it brings the tank's top-left corner closer to the target's on one axis.
* Score (stages 3-7): ``tank_hit_score`` per hit on an enemy agent + ``npc_kill_score`` per NPC
  destroyed + ``base_score`` per base destroyed (1, 1, 5: the paper's).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from arena_envs.tank_battle.records import TILE, Events

UNREACHABLE = -1


def tile_distances(steel: np.ndarray, water: np.ndarray, goal: tuple[int, int]) -> np.ndarray:
    """``(16, 16)`` int array: the tiles on a shortest path from each tile to the tile of pixel
    position ``goal``, both ends counted (``UNREACHABLE`` where there is none)."""
    blocked = steel | water
    dist = np.full(blocked.shape, UNREACHABLE, dtype=np.int32)
    start = (goal[1] // TILE, goal[0] // TILE)  # (row, col)
    dist[start] = 1
    queue = deque([start])
    rows, cols = blocked.shape
    while queue:
        r, c = queue.popleft()
        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= nr < rows and 0 <= nc < cols and dist[nr, nc] == UNREACHABLE and not blocked[nr, nc]:
                dist[nr, nc] = dist[r, c] + 1
                queue.append((nr, nc))
    return dist


def distance_at(distances: np.ndarray, x: int, y: int) -> int:
    """``D`` of the tank whose top-left corner is ``(x, y)``."""
    return int(distances[y // TILE, x // TILE])


def correct_directions(x: int, y: int, tx: int, ty: int) -> frozenset[str]:
    """The moves that bring top-left ``(x, y)`` closer to ``(tx, ty)``."""
    dx, dy = x - tx, y - ty
    right_left = ("right",) if dx < 0 else ("left",) if dx > 0 else ()
    down_up = ("down",) if dy < 0 else ("up",) if dy > 0 else ()
    return frozenset(right_left + down_up)


@dataclass
class DecisionCounts:
    """One tank's decisions, for FAcc and MAcc."""

    decisions: int = 0
    format_ok: int = 0
    moves: int = 0  # moves toward an existing target
    correct_moves: int = 0

    @property
    def facc(self) -> float:
        return self.format_ok / self.decisions if self.decisions else 0.0

    @property
    def macc(self) -> float:
        return self.correct_moves / self.moves if self.moves else 0.0


@dataclass(frozen=True)
class ScoreWeights:
    tank_hit: float = 1.0
    npc_kill: float = 1.0
    base: float = 5.0

    def score(self, events: Events) -> float:
        return self.tank_hit * events.agent_hits + self.npc_kill * events.npc_kills + self.base * events.base_kills


def event_count_score(events: Events) -> int:
    """The reference metric script's count: every hit, kill and base destruction counts 1."""
    return events.agent_hits + events.npc_kills + events.base_kills
