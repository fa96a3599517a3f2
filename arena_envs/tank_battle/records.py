"""The tank battle's measures (pixels, ticks, health, ids, points), its four directions, and the
records a world is made of: tanks, bullets, bases and a player's event counts.

Coordinates are pixels, origin top-left, x right, y down; every object is an axis-aligned square
given by its top-left corner. The rules that move these records are
:mod:`arena_envs.tank_battle.world`'s; its speed shortcuts, :mod:`arena_envs.tank_battle.shortcuts`,
read the same records.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Direction = Literal["up", "down", "left", "right"]
DIRECTIONS: tuple[Direction, ...] = ("up", "down", "left", "right")
#: whether a facing moves along the y axis
VERTICAL = {"up": True, "down": True, "left": False, "right": False}

FIELD = 512
TILE = 32
TANK = 32
BULLET = 4
PIECE = 8
PLAYER_HEALTH = 5
NPC_HEALTH = 1
ROUND_TICKS = 17
TICK_WRAP = 300
FIRST_NPC_ID = 10
BULLET_SPEED = 8
MAX_XY = FIELD - TANK  # a tank's x and y stay in [0, MAX_XY]
#: the internal points the reference server credits (a base, an NPC, a hit on another side's player)
BASE_POINTS, NPC_POINTS, AGENT_HIT_POINTS = 200, 5, 10


@dataclass
class Tank:
    id: int  # players 0..N-1, NPCs 10, 11, ... in spawn order
    x: int
    y: int
    facing: Direction
    health: int
    speed: int = 0  # px per tick: 0 or 1
    frozen: bool = False
    alive: bool = True
    prev_x: int = 0
    prev_y: int = 0
    shoot: bool = False  # a bullet requested for the next first tick of a round

    @property
    def is_npc(self) -> bool:
        return self.id >= FIRST_NPC_ID


@dataclass
class Bullet:
    owner: int  # the shooter's tank id (credited even after it died)
    x: int
    y: int
    facing: Direction
    prev_x: int = 0
    prev_y: int = 0


@dataclass
class Base:
    id: int  # 100..103 (A..D)
    x: int
    y: int


@dataclass
class Events:
    """A player's cumulative counts of the events the benchmark scores."""

    agent_hits: int = 0
    npc_kills: int = 0
    base_kills: int = 0
    hit_by_npc: int = 0
    hit_by_agent: int = 0
