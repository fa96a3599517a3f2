"""The tank battle world and its tick-by-tick simulation (spec §2): pure game logic, no PettingZoo,
no pygame.

Coordinates are pixels, origin top-left, x right, y down; every object is an axis-aligned
rectangle given by its top-left corner. Bricks are kept as a ``(64, 64)`` boolean array of 8 x 8 px
pieces (``bricks[row, col]`` covers x in [8 col, 8 col + 8), y in [8 row, 8 row + 8)); steel and
water as ``(16, 16)`` boolean arrays of 32 x 32 px tiles (``steel[row, col]``).

One :meth:`World.play_round` call is one round of the benchmark: the players' operations are
applied at once, then ticks run until the next round starts or the game ends.

INTERFACE CONTRACT (shared by the text, the renderer, the baselines and the env; keep the names):
``World.tanks`` (every living tank, players then NPCs in spawn order), ``World.players`` (every
player tank ever, by id, dead ones with ``alive=False``), ``World.bullets``, ``World.bases``
(living bases by id), ``World.bricks``/``steel``/``water``, ``tick_mod``, ``time_left``,
``rounds_played``, ``npc_spawned``, ``over``, ``ended_by``, ``win_state``, ``events``; the
methods below.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from arena_envs.tank_battle.maps import GameMap
from arena_envs.tank_battle.stages import Stage

Direction = Literal["up", "down", "left", "right"]
DIRECTIONS: tuple[Direction, ...] = ("up", "down", "left", "right")
#: a player's operation for one round (``noop``: stop; the fallback of an invalid answer)
Operation = Literal["up", "down", "left", "right", "shoot", "noop"]
OPERATIONS: tuple[Operation, ...] = ("up", "down", "left", "right", "shoot", "noop")

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
    """A player's cumulative counts (spec §4.9)."""

    agent_hits: int = 0
    npc_kills: int = 0
    base_kills: int = 0
    hit_by_npc: int = 0
    hit_by_agent: int = 0


@dataclass
class RoundReport:
    """What happened during one :meth:`World.play_round`: per player, the events of this round
    (only players with at least one), the players eliminated in it, the bases destroyed, the ticks run."""

    events: dict[int, Events] = field(default_factory=dict)
    eliminated: list[int] = field(default_factory=list)
    bases_destroyed: list[int] = field(default_factory=list)
    ticks: int = 0


class World:
    """The whole game state of one episode and its rules.

    ``rng`` draws every random choice (NPC decisions and spawns); ``stage`` gives the mode, the team
    count, the round count and the NPC total (``npc_total``/``npc_max_alive``/``npc_spawn_base_prob``/
    ``npc_act_prob`` override the stage's NPC settings); ``full_last_round`` simulates the last
    round completely (spec §2.7).
    """

    def __init__(self, game_map: GameMap, stage: Stage, rng: np.random.Generator, *, npc_total: int | None = None,
                 npc_max_alive: int = 5, npc_spawn_base_prob: float = 0.6, npc_act_prob: float = 0.4,
                 full_last_round: bool = False):
        raise NotImplementedError

    # ---------------------------------------------------------------- sides
    def team_of(self, tank_id: int) -> int:
        """The team of a player (-1 for NPCs): 0 in navigation and co-op modes, the id in free-for-all,
        id mod team_count in team battle."""
        raise NotImplementedError

    def base_owner_team(self, base_id: int) -> int | None:
        """The team owning a base (None: the navigation goal; -1: the NPC faction in co-op mode)."""
        raise NotImplementedError

    def is_enemy_tank(self, player: int, other: int) -> bool:
        """NPCs are every player's enemies; players of other teams too."""
        raise NotImplementedError

    def enemy_tanks(self, player: int) -> list[Tank]:
        """Living enemy tanks of ``player``: NPCs in spawn order, then enemy players by id."""
        raise NotImplementedError

    def teammates(self, player: int) -> list[Tank]:
        """Living player tanks of ``player``'s team other than itself, by id (none in ffa/navigation)."""
        raise NotImplementedError

    def own_bases(self, player: int) -> list[Base]:
        """Living bases of ``player``'s side (none in navigation mode)."""
        raise NotImplementedError

    def enemy_bases(self, player: int) -> list[Base]:
        """Living bases that are not ``player``'s side's (navigation: the goal)."""
        raise NotImplementedError

    # ---------------------------------------------------------------- the rules
    def play_round(self, operations: dict[int, Operation],
                   on_tick: Callable[[World], None] | None = None) -> RoundReport:
        """Apply every living player's operation (missing ones: ``noop``), run the round's ticks
        (17, or 11 for the short round, fewer when the game ends), and report what happened.
        ``on_tick`` is called after every tick (animation)."""
        raise NotImplementedError

    def touching(self, tank: Tank, side: Direction) -> str:
        """What touches ``tank``'s ``side`` (spec §4.3 detection tests, first match wins):
        "border", "steel", "water", "brick" (touching or one 16-px gap away), "enemy_tank",
        "own_base", "enemy_base" or "nothing", from ``tank``'s side's point of view (a player's)."""
        raise NotImplementedError
