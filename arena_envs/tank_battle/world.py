"""The tank battle of BattleAgentBench: its world and the rules of its server, tick by tick; pure
game logic (no PettingZoo, no pygame).

Coordinates are pixels, origin top-left, x right, y down; every object is an axis-aligned square
given by its top-left corner. Bricks are a ``(64, 64)`` boolean array of 8 x 8 px pieces
(``bricks[row, col]`` covers x in [8 col, 8 col + 8), y in [8 row, 8 row + 8)); steel and water
``(16, 16)`` boolean arrays of 32 x 32 px tiles (``steel[row, col]``). The collision tests read the
same field as bit masks, Python ints per row (:meth:`World._build_masks`).

One :meth:`World.play_round` is one round of the benchmark: the players' operations are applied at
once, then :meth:`World._tick` runs the server's tick (moves, round bookkeeping, collisions, spawns,
end) until the next round starts or the game ends.

Read by the text, the renderer, the baselines and the env (keep the names): ``tanks`` (living; players,
then NPCs in spawn order), ``players`` (every player tank by id, dead ones ``alive=False``), ``bullets``,
``bases`` (living, by id), ``bricks``/``steel``/``water``, ``tick_mod``, ``time_left``, ``rounds_played``,
``npc_spawned``, ``over``, ``ended_by``, ``win_state``, ``events``, ``points``, ``touched_base``, the public
methods and :meth:`World.state`. The measures and the records (tanks, bullets, bases, events) live
in :mod:`arena_envs.tank_battle.records`; exact shortcuts that skip work of this procedure, for speed
only, in :mod:`arena_envs.tank_battle.shortcuts` (``World.shortcuts = False``: none are taken).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from arena_envs.core.arguments import check_choice
from arena_envs.tank_battle.maps import GameMap
from arena_envs.tank_battle.records import (
    AGENT_HIT_POINTS,
    BASE_POINTS,
    BULLET,
    BULLET_SPEED,
    DIRECTIONS,
    FIELD,
    FIRST_NPC_ID,
    MAX_XY,
    NPC_HEALTH,
    NPC_POINTS,
    PIECE,
    PLAYER_HEALTH,
    ROUND_TICKS,
    TANK,
    TICK_WRAP,
    TILE,
    VERTICAL,
    Base,
    Bullet,
    Direction,
    Events,
    Tank,
)
from arena_envs.tank_battle.shortcuts import Shortcuts
from arena_envs.tank_battle.stages import Stage

#: a player's operation for one round (``noop``: stop; the fallback of an invalid answer)
Operation = Literal["up", "down", "left", "right", "shoot", "noop"]
OPERATIONS: tuple[Operation, ...] = ("up", "down", "left", "right", "shoot", "noop")
#: why a game ended (``World.ended_by``)
EndReason = Literal["timeout", "no_players", "no_bases", "touch", "last_base"]

_STEP: dict[str, tuple[int, int]] = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


@dataclass
class RoundReport:
    """What happened during one :meth:`World.play_round`: per player, the events of this round
    (only players with at least one), the players eliminated in it, the bases destroyed, the ticks run."""

    events: dict[int, Events] = field(default_factory=dict)
    eliminated: list[int] = field(default_factory=list)
    bases_destroyed: list[int] = field(default_factory=list)
    ticks: int = 0


def _overlap(ax: int, ay: int, asize: int, bx: int, by: int, bsize: int) -> bool:
    """pygame's ``colliderect`` for two squares: sharing an edge is not overlapping."""
    return ax < bx + bsize and bx < ax + asize and ay < by + bsize and by < ay + asize


def _hits(bullet: Bullet, tank: Tank) -> bool:
    """Whether ``bullet`` hits ``tank`` (never its shooter): its top-left lies inside the tank's box
    grown by the bullet's size to the left and to the top."""
    return bullet.owner != tank.id and tank.x - BULLET < bullet.x < tank.x + TANK \
        and tank.y - BULLET < bullet.y < tank.y + TANK


def _bits(mask: int) -> list[int]:
    """The indices of the set bits of ``mask``, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _row_masks(grid: np.ndarray) -> list[int]:
    """One int per row of a boolean grid, bit c set where ``grid[row, c]``."""
    packed = np.zeros((grid.shape[0], 8), dtype=np.uint8)  # grids are at most 64 wide
    packed[:, :(grid.shape[1] + 7) // 8] = np.packbits(grid, axis=1, bitorder="little")
    return packed.view("<u8").ravel().tolist()


def npc_choice(act_draw: float, choice_draw: float, act_prob: float = 0.4) -> Direction | Literal["shoot"] | None:
    """An NPC's decision of a round, as the reference server's NPCs decide, from two uniform draws in
    [0, 1): None (it acts with probability ``act_prob``; otherwise it keeps going), else with
    probability 1/2 a direction to turn to (uniform over the four) or ``"shoot"``."""
    if act_draw >= act_prob:
        return None
    return DIRECTIONS[int(choice_draw * 8)] if choice_draw < 0.5 else "shoot"


def touches_side(tank: Tank, x: int, y: int, side: Direction) -> bool:
    """Whether a 32-px object with top-left ``(x, y)`` touches ``tank``'s ``side``: flush on that
    side, overlapping along it; :meth:`World.touching` applies it to the tanks and bases of the world."""
    if side == "left":
        return x + TANK == tank.x and abs(y - tank.y) < TANK
    if side == "right":
        return x == tank.x + TANK and abs(y - tank.y) < TANK
    if side == "up":
        return y + TANK == tank.y and abs(x - tank.x) < TANK
    return y == tank.y + TANK and abs(x - tank.x) < TANK


def _snap16(v: int) -> int:
    return round(v / 16) * 16  # Python's round, as the reference server's: half to even


class World:
    """The whole game state of one episode and its rules.

    ``rng`` draws every random choice (NPC decisions and spawns); ``stage`` gives the mode, the team
    count, the round count and the NPC total (``npc_total``/``npc_max_alive``/``npc_spawn_base_prob``/
    ``npc_act_prob`` override the stage's NPC settings). The reference server ends the game on the
    first tick of the last round; ``full_last_round`` plays that round's ticks to its end.

    ``removal_skip`` reproduces a quirk of the reference server: it removes bullets, players and
    NPCs from the very lists it is iterating, so in each such pass the element after a removed one
    is not checked that tick (:meth:`_bullets_vs_tanks`, :meth:`_bullets_vs_field`). Off (the
    default), every element is checked, the rule as the paper states it.
    """

    #: take the exact :class:`~arena_envs.tank_battle.shortcuts.Shortcuts` (off: the reference
    #: procedure alone, every tick; the tests compare both)
    shortcuts = True

    def __init__(self, game_map: GameMap, stage: Stage, rng: np.random.Generator, *, npc_total: int | None = None,
                 npc_max_alive: int = 5, npc_spawn_base_prob: float = 0.6, npc_act_prob: float = 0.4,
                 full_last_round: bool = False, removal_skip: bool = False):
        missing = [p for p in range(stage.n_players) if p not in game_map.players]
        if missing:
            raise ValueError(f"map {game_map.name!r} has no spawn for player(s) {missing}; "
                             f"it spawns players {sorted(game_map.players)}")
        self.map = game_map
        self.stage = stage
        self.mode = stage.mode
        self.team_count = stage.team_count
        self._teams = tuple(self._team_rule(i) for i in range(FIRST_NPC_ID))  # team_of of every player id
        self.rng = rng
        self.npc_total = stage.npc_total if npc_total is None else npc_total
        self.npc_max_alive = npc_max_alive
        self.npc_spawn_base_prob = npc_spawn_base_prob
        self.npc_act_prob = npc_act_prob
        self.full_last_round = full_last_round
        self.removal_skip = removal_skip
        self.bricks = game_map.bricks.copy()
        self.steel = game_map.steel.copy()
        self.water = game_map.water.copy()
        self.players: dict[int, Tank] = {
            p: Tank(p, x, y, "up", PLAYER_HEALTH, prev_x=x, prev_y=y)
            for p, (x, y) in sorted(game_map.players.items()) if p < stage.n_players}
        self.tanks: list[Tank] = list(self.players.values())
        self.bullets: list[Bullet] = []
        self.bases: dict[int, Base] = {b: Base(b, x, y) for b, (x, y) in game_map.bases.items()}
        self._owners = {b: self.base_owner_team(b) for b in self.bases}  # bases never change hands
        self.npc_spawns: tuple[tuple[int, int], ...] = game_map.npc_spawns
        self.tick_mod = 0
        self.time_left = stage.rounds
        self.rounds_played = 0
        self.npc_spawned = 0
        self.over = False
        self.ended_by: EndReason | None = None
        self.win_state: dict[int, int | None] = dict.fromkeys(self.players)
        self.events: dict[int, Events] = {p: Events() for p in self.players}
        self.points: dict[int, int] = dict.fromkeys(self.players, 0)  # the server's internal points
        self.touched_base = False  # navigation: a player touched the goal
        self._report = RoundReport()
        self._build_masks()
        self._fast = Shortcuts(self) if self.shortcuts else None

    # ---------------------------------------------------------------- the field as bit masks
    def _build_masks(self) -> None:
        """One int per row of brick pieces and per column of brick pieces (the 8-px tests of bullets
        and of :meth:`touching`), per row of 16-px cells for walls, for bases and for both (a tank's
        obstacle box is aligned to 16 px, so one cell test per row finds whether it overlaps
        anything), and per tile row for steel and for water; bit c stands for column c."""
        self._piece_rows = _row_masks(self.bricks)
        self._piece_cols = _row_masks(self.bricks.T)
        self._steel_rows = _row_masks(self.steel)
        self._water_rows = _row_masks(self.water)
        self._has_tiles = bool(self.steel.any() or self.water.any())
        # 16-px cells, two padding rows below the field (tank boxes may reach row 32 before clamping)
        brick_cells = np.asarray(self.bricks.reshape(32, 2, 32, 2).any(axis=(1, 3)))
        solid_cells = (self.steel | self.water).repeat(2, axis=0).repeat(2, axis=1)
        padding = [0, 0]
        self._brick_cells = _row_masks(brick_cells) + padding
        self._wall_cells = _row_masks(brick_cells | solid_cells) + padding
        self._base_cells = [0] * 34
        self._blocked_cells = list(self._wall_cells)  # walls or bases: what stops a tank
        self._removals = 0  # obstacles removed so far (none ever comes back): what the shortcuts know is stale
        for base in self.bases.values():
            self._mark_base(base, True)

    def _mark_base(self, base: Base, present: bool) -> None:
        bits = 3 << (base.x >> 4)
        for cr in (base.y >> 4, (base.y >> 4) + 1):
            if present:
                self._base_cells[cr] |= bits
            else:
                self._base_cells[cr] &= ~bits
            self._blocked_cells[cr] = self._wall_cells[cr] | self._base_cells[cr]
        self._removals += 1

    def _remove_piece(self, pr: int, pc: int) -> None:
        self.bricks[pr, pc] = False
        self._piece_rows[pr] &= ~(1 << pc)
        self._piece_cols[pc] &= ~(1 << pr)
        cr, cc = pr >> 1, pc >> 1
        if not (self._piece_rows[2 * cr] | self._piece_rows[2 * cr + 1]) >> (2 * cc) & 3:
            self._brick_cells[cr] &= ~(1 << cc)
            self._wall_cells[cr] &= ~(1 << cc)
            self._blocked_cells[cr] = self._wall_cells[cr] | self._base_cells[cr]
        self._removals += 1

    # ---------------------------------------------------------------- sides
    def team_of(self, tank_id: int) -> int:
        """The team of a player (-1 for NPCs): 0 in navigation and co-op modes, the id in free-for-all,
        id mod team_count in team battle."""
        if 0 <= tank_id < FIRST_NPC_ID:
            return self._teams[tank_id]
        return self._team_rule(tank_id)

    def _team_rule(self, tank_id: int) -> int:
        if tank_id >= FIRST_NPC_ID:
            return -1
        if self.mode == "ffa":
            return tank_id
        if self.mode == "teams":
            return tank_id % self.team_count
        return 0

    def base_owner_team(self, base_id: int) -> int | None:
        """The team owning a base (None: the navigation goal; -1: the NPC faction in co-op mode)."""
        index = base_id - 100
        if self.mode == "navigation":
            return None
        if self.mode == "coop_vs_npc":
            return 0 if index == 0 else -1
        if self.mode == "ffa":
            return index
        return index % self.team_count

    def is_enemy_tank(self, player: int, other: int) -> bool:
        """NPCs are every player's enemies; players of other teams too (an NPC's enemies: the players)."""
        if other >= FIRST_NPC_ID:
            return player < FIRST_NPC_ID
        if player >= FIRST_NPC_ID:
            return True
        return other != player and self.team_of(other) != self.team_of(player)

    def enemy_tanks(self, player: int) -> list[Tank]:
        """Living enemy tanks of ``player``: NPCs in spawn order, then enemy players by id."""
        npcs = [t for t in self.tanks if t.id >= FIRST_NPC_ID]
        if player >= FIRST_NPC_ID:
            return npcs + [t for t in self.tanks if t.id < FIRST_NPC_ID]
        team, teams = self.team_of(player), self._teams
        return npcs + [t for t in self.tanks if t.id < FIRST_NPC_ID and t.id != player and teams[t.id] != team]

    def teammates(self, player: int) -> list[Tank]:
        """Living player tanks of ``player``'s team other than itself, by id (none in ffa/navigation)."""
        if self.mode in ("ffa", "navigation"):
            return []
        team, teams = self.team_of(player), self._teams
        return [t for t in self.tanks if t.id < FIRST_NPC_ID and t.id != player and teams[t.id] == team]

    def own_bases(self, player: int) -> list[Base]:
        """Living bases of ``player``'s side (none in navigation mode)."""
        team, owners = self.team_of(player), self._owners
        return [b for b in self.bases.values() if owners[b.id] == team]

    def enemy_bases(self, player: int) -> list[Base]:
        """Living bases that are not ``player``'s side's (navigation: the goal)."""
        team, owners = self.team_of(player), self._owners
        return [b for b in self.bases.values() if owners[b.id] != team]

    def _player_may_destroy(self, shooter: int, base_id: int) -> bool:
        return self.base_owner_team(base_id) != self.team_of(shooter)

    def _npc_may_destroy(self, base_id: int) -> bool:
        owner = self.base_owner_team(base_id)
        return owner is not None and owner != -1

    # ---------------------------------------------------------------- the rules
    def play_round(self, operations: dict[int, Operation],
                   on_tick: Callable[[World], None] | None = None) -> RoundReport:
        """Apply every living player's operation (missing ones: ``noop``), run the round's ticks
        (17, or 11 for the short round, fewer when the game ends), and report what happened.
        ``on_tick`` is called after every tick (animation)."""
        if self.over:
            raise RuntimeError(f"the game is over (ended by {self.ended_by}); no more rounds can be played")
        for player, op in operations.items():
            check_choice(f"operation of player {player}", op, OPERATIONS)
        for tank in self.tanks:
            if tank.id >= FIRST_NPC_ID:
                break
            op = operations.get(tank.id, "noop")
            if op in _STEP:
                self._turn(tank, op)  # type: ignore[arg-type]
                tank.speed = 1
            else:
                tank.speed = 0
                tank.shoot = op == "shoot"
        self._report = report = RoundReport()
        fast = self._fast if on_tick is None else None  # animated: every tick on its own
        while True:
            stretch = fast.quiet_stretch() if fast is not None else 0  # shortcut: several ticks at once
            if stretch:
                report.ticks += stretch
            else:
                self._tick()
                report.ticks += 1
                if on_tick is not None:
                    on_tick(self)
            if self.over or self.tick_mod % ROUND_TICKS == 0:
                break
        self.rounds_played += 1
        return report

    @staticmethod
    def _turn(tank: Tank, direction: Direction) -> None:
        """Face ``direction``, snapping the cross coordinate to 16 px on a change of axis."""
        vertical = VERTICAL[direction]
        if vertical != VERTICAL[tank.facing]:
            if vertical:
                tank.x = _snap16(tank.x)
            else:
                tank.y = _snap16(tank.y)
        tank.facing = direction

    def _tick(self) -> None:
        """One tick of the reference server, its steps in its order: 1. moves (a moving tank 1 px
        unless frozen, a bullet 8 px); 2. round bookkeeping (frozen tanks thaw as the tick counter
        wraps; a round's first tick: the NPCs decide, a round is used up); 3. collisions: bullets
        against tanks, bullets against the field, (3e) tanks against tanks, (3f) tanks against
        obstacles and the border, a player touching the navigation goal; 4. a round's first tick:
        the requested bullets and maybe an NPC spawn; 5. the tick counter; 6. every position is
        remembered as the previous one; then whether the game ended."""
        first = self.tick_mod % ROUND_TICKS == 0
        tanks = self.tanks
        # 1. moves
        for t in tanks:
            if t.speed and not t.frozen:
                dx, dy = _STEP[t.facing]
                t.x += dx
                t.y += dy
        for b in self.bullets:
            dx, dy = _STEP[b.facing]
            b.x += dx * BULLET_SPEED
            b.y += dy * BULLET_SPEED
        # 2. round bookkeeping
        if self.tick_mod >= TICK_WRAP - 1:
            for t in tanks:
                t.frozen = False
        if first:
            self._npc_decisions()
            self.time_left -= 1
        # 3. collisions
        if self.bullets:
            self._bullets_vs_tanks()
            self._bullets_vs_field()
        self._tanks_vs_tanks()
        self._tanks_vs_obstacles()
        if self.mode == "navigation" and len(self.bases) == 1:
            self._check_touch()
        # 4. spawning
        if first:
            self._spawn_bullets()
            self._spawn_npc()
        # 5. and 6.
        self.tick_mod = (self.tick_mod + 1) % TICK_WRAP
        for t in self.tanks:
            t.prev_x = t.x
            t.prev_y = t.y
        for b in self.bullets:
            b.prev_x = b.x
            b.prev_y = b.y
        self._check_end()

    # ---------------------------------------------------------------- NPCs
    def _npc_decisions(self) -> None:
        npcs = [t for t in self.tanks if t.id >= FIRST_NPC_ID]
        if not npcs:
            return
        draws = self.rng.random(2 * len(npcs)).tolist()
        for i, npc in enumerate(npcs):
            choice = npc_choice(draws[2 * i], draws[2 * i + 1], self.npc_act_prob)
            if choice == "shoot":
                npc.shoot = True
            elif choice is not None:
                self._turn(npc, choice)

    def _spawn_npc(self) -> None:
        if self.npc_spawned >= self.npc_total or not self.npc_spawns:
            return
        alive = sum(1 for t in self.tanks if t.id >= FIRST_NPC_ID)
        if alive >= self.npc_max_alive:
            return
        draw, pick = self.rng.random(2).tolist()
        if draw >= self.npc_spawn_base_prob / (alive + 1):
            return
        x, y = self.npc_spawns[int(pick * len(self.npc_spawns))]
        if any(_overlap(x, y, TANK, t.x, t.y, TANK) for t in self.tanks):
            return  # a choice of this suite, not a rule of the paper: no NPC on an occupied spawn point
        npc = Tank(FIRST_NPC_ID + self.npc_spawned, x, y, "down", NPC_HEALTH, speed=1, prev_x=x, prev_y=y)
        self.npc_spawned += 1
        self.tanks.append(npc)

    # ---------------------------------------------------------------- bullets
    def _spawn_bullets(self) -> None:
        for t in self.tanks:
            if not t.shoot:
                continue
            t.shoot = False
            facing = t.facing
            if facing == "up":
                x, y = t.x + 14, (t.y + 8) // 4 * 4
            elif facing == "down":
                x, y = t.x + 14, (t.y + 24) // 4 * 4
            elif facing == "left":
                x, y = (t.x + 8) // 4 * 4, t.y + 14
            else:
                x, y = (t.x + 24) // 4 * 4, t.y + 14
            self.bullets.append(Bullet(t.id, x, y, facing, x, y))

    def _round_events(self, player: int) -> Events:
        events = self._report.events.get(player)
        if events is None:
            events = self._report.events[player] = Events()
        return events

    def _eliminate(self, tank: Tank) -> None:
        if not tank.alive:
            return
        tank.alive = False
        tank.speed = 0
        tank.shoot = False
        self.tanks.remove(tank)
        if tank.id < FIRST_NPC_ID:
            self.win_state[tank.id] = -1
            self._report.eliminated.append(tank.id)

    def _bullets_vs_tanks(self) -> None:
        """Bullets against players, then against NPCs. With ``removal_skip`` as the reference iterates
        its live lists: a player or NPC removed makes its pass skip the next one of its list."""
        tanks = self.tanks
        if not self.removal_skip:
            for tank in list(tanks):
                self._take_hits(tank)
            return
        i = 0
        while i < len(tanks) and tanks[i].id < FIRST_NPC_ID:
            self._take_hits(tanks[i])
            i += 1
        i = sum(1 for t in tanks if t.id < FIRST_NPC_ID)  # the first NPC
        while i < len(tanks):
            self._take_hits(tanks[i])
            i += 1

    def _take_hits(self, tank: Tank) -> None:
        """Remove every bullet now hitting ``tank`` and apply its effect."""
        bullets = self.bullets
        for bullet in [b for b in bullets if _hits(b, tank)]:
            bullets.remove(bullet)
            shooter = bullet.owner
            if tank.id >= FIRST_NPC_ID:
                if shooter < FIRST_NPC_ID and tank.alive:
                    self._eliminate(tank)
                    self.events[shooter].npc_kills += 1
                    self._round_events(shooter).npc_kills += 1
                    self.points[shooter] += NPC_POINTS
            elif shooter >= FIRST_NPC_ID:
                self._damage(tank)
                self.events[tank.id].hit_by_npc += 1
                self._round_events(tank.id).hit_by_npc += 1
            elif self.team_of(shooter) == self.team_of(tank.id):
                tank.frozen = True  # friendly fire freezes instead of hurting
            else:
                self._damage(tank)
                self.events[shooter].agent_hits += 1
                self._round_events(shooter).agent_hits += 1
                self.points[shooter] += AGENT_HIT_POINTS
                self.events[tank.id].hit_by_agent += 1
                self._round_events(tank.id).hit_by_agent += 1

    def _damage(self, tank: Tank) -> None:
        tank.health = max(0, tank.health - 1)
        if tank.health == 0:
            self._eliminate(tank)

    def _bullets_vs_field(self) -> None:
        """Bullets leaving the field, meeting each other, then hitting walls and bases."""
        if self.removal_skip:
            self._bullets_vs_field_skipping()
            return
        bullets = self.bullets
        kept = [b for b in bullets if 0 <= b.x <= FIELD - BULLET and 0 <= b.y <= FIELD - BULLET]
        if len(kept) > 1:  # bullet-bullet: 32-px bullet boxes at the 16-px grid
            boxes = [(b.x >> 4, b.y >> 4) for b in kept]
            gone = set()
            for i in range(len(kept)):
                bx, by = boxes[i]
                for j in range(i + 1, len(kept)):
                    ox, oy = boxes[j]
                    if -2 < ox - bx < 2 and -2 < oy - by < 2:
                        gone.add(i)
                        gone.add(j)
            if gone:
                kept = [b for i, b in enumerate(kept) if i not in gone]
        bullets[:] = kept
        if not kept:
            return
        walls, bases = self._wall_cells, self._base_cells
        for bullet in list(kept):
            cr, cc = bullet.y >> 4, bullet.x >> 4
            mask = 3 << cc
            if (walls[cr] | walls[cr + 1] | bases[cr] | bases[cr + 1]) & mask:
                self._bullet_hits_obstacles(bullet)

    def _bullets_vs_field_skipping(self) -> None:
        """:meth:`_bullets_vs_field` as the reference runs it, each pass iterating the live bullet list:
        a bullet removed makes the pass skip the next one (so a bullet can stay outside the field
        until a pass checks it; it can still meet bullets and walls there). Bullets meet when their
        32-px boxes at the 16-px grid overlap; a bullet meeting several removes them all."""
        bullets = self.bullets
        i = 0
        while i < len(bullets):
            b = bullets[i]
            if not (0 <= b.x <= FIELD - BULLET and 0 <= b.y <= FIELD - BULLET):
                del bullets[i]
            i += 1
        i = 0
        while i < len(bullets):
            a = bullets[i]
            ax, ay = a.x >> 4, a.y >> 4
            for b in [b for b in bullets if -2 < (b.x >> 4) - ax < 2 and -2 < (b.y >> 4) - ay < 2]:
                if b is not a:
                    for gone in (a, b):
                        k = next((k for k, o in enumerate(bullets) if o is gone), None)
                        if k is not None:
                            del bullets[k]
            i += 1
        walls, bases = self._wall_cells, self._base_cells
        i = 0
        while i < len(bullets):
            bullet = bullets[i]
            cr, cc = bullet.y >> 4, bullet.x >> 4
            mask = 3 << cc if cc >= 0 else 1 >> (-1 - cc)  # the box's cell columns inside the field
            if any((walls[r] | bases[r]) & mask for r in (cr, cr + 1) if 0 <= r < len(walls)):
                self._bullet_hits_obstacles(bullet)
            i += 1

    def _bullet_hits_obstacles(self, bullet: Bullet) -> None:
        """What a bullet hits: everything under its 32-px box at the 16-px grid is found; the bullet
        stops unless only water is there; the front line (the nearest row or column of pieces, in
        its direction) of the bricks and bases found is hit."""
        x0, y0 = bullet.x >> 4 << 4, bullet.y >> 4 << 4
        found: list[tuple[str, int, int]] = []  # (kind, x, y)
        pr0, pc0 = y0 >> 3, x0 >> 3
        for pr in range(max(pr0, 0), min(pr0 + 4, 64)):  # clipped: a skipped bullet may be off the field
            row = (self._piece_rows[pr] >> pc0 if pc0 >= 0 else self._piece_rows[pr] << -pc0) & 0xF
            for k in _bits(row):
                found.append(("brick", (pc0 + k) * PIECE, pr * PIECE))
        for tr in range(max(y0 >> 5, 0), min((y0 + 31) >> 5, 15) + 1):
            for tc in range(max(x0 >> 5, 0), min((x0 + 31) >> 5, 15) + 1):
                if self._steel_rows[tr] >> tc & 1:
                    found.append(("steel", tc * TILE, tr * TILE))
                elif self._water_rows[tr] >> tc & 1:
                    found.append(("water", tc * TILE, tr * TILE))
        for base in self.bases.values():
            if _overlap(x0, y0, TILE, base.x, base.y, TILE):
                found.append(("base", base.x, base.y))
        if not any(kind != "water" for kind, _, _ in found):
            return
        self.bullets.remove(bullet)
        if not any(kind in ("brick", "base") for kind, _, _ in found):
            return
        facing = bullet.facing
        if facing in ("up", "down"):
            ys = [y for _, _, y in found]
            line = max(ys) if facing == "up" else min(ys)
            front = [f for f in found if f[2] == line]
        else:
            xs = [x for _, x, _ in found]
            line = max(xs) if facing == "left" else min(xs)
            front = [f for f in found if f[1] == line]
        for kind, x, y in front:
            if kind == "brick":
                self._remove_piece(y // PIECE, x // PIECE)
            elif kind == "base":
                base = next(b for b in self.bases.values() if b.x == x and b.y == y)
                self._hit_base(base, bullet.owner)

    def _hit_base(self, base: Base, shooter: int) -> None:
        if shooter < FIRST_NPC_ID:
            if not self._player_may_destroy(shooter, base.id):
                return
        elif not self._npc_may_destroy(base.id):
            return
        owner = self.base_owner_team(base.id)
        del self.bases[base.id]
        self._mark_base(base, False)
        self._report.bases_destroyed.append(base.id)
        if shooter < FIRST_NPC_ID:
            self.events[shooter].base_kills += 1
            self._round_events(shooter).base_kills += 1
            self.points[shooter] += BASE_POINTS
        if owner is not None:
            for tank in [t for t in self.tanks if t.id < FIRST_NPC_ID and self.team_of(t.id) == owner]:
                self._eliminate(tank)

    # ---------------------------------------------------------------- tanks
    def _tanks_vs_tanks(self) -> None:
        """Step 3e: each tank in turn against the tanks overlapping it. When each is in the other's
        previous box they are split apart on every axis either of them moved along; when only one
        is, that one is pushed back out of the other."""
        tanks = self.tanks
        for a in list(tanks):  # the reference's order: each a's overlaps listed once, when a's turn comes
            ax, ay = a.x, a.y
            others = [b for b in tanks if b is not a and -TANK < b.x - ax < TANK and -TANK < b.y - ay < TANK]
            for b in others:
                a_in = _overlap(a.x, a.y, TANK, b.prev_x, b.prev_y, TANK)
                b_in = _overlap(b.x, b.y, TANK, a.prev_x, a.prev_y, TANK)
                if a_in and b_in:
                    if a.x != a.prev_x or b.x != b.prev_x:
                        shift_a, shift_b = self._split(a.x - b.x)
                        a.x -= shift_a
                        b.x += shift_b
                    if a.y != a.prev_y or b.y != b.prev_y:
                        shift_a, shift_b = self._split(a.y - b.y)
                        a.y -= shift_a
                        b.y += shift_b
                elif a_in:
                    self._push_back(a, b.x, b.y, TANK)
                elif b_in:
                    self._push_back(b, a.x, a.y, TANK)

    @staticmethod
    def _split(d: int) -> tuple[int, int]:
        """The two shifts that separate two overlapping tanks on one axis (``d``: a's coordinate
        minus b's): half the overlap each, rounded down for a and up for b."""
        if d > 0:
            d -= TANK
        elif d < 0:
            d += TANK
        return d // 2, -(-d // 2)

    @staticmethod
    def _push_back(tank: Tank, bx: int, by: int, size: int) -> None:
        """Move ``tank`` out of the box along every axis it moved on since the last tick."""
        if tank.x > tank.prev_x:
            tank.x = bx - TANK
        elif tank.x < tank.prev_x:
            tank.x = bx + size
        if tank.y > tank.prev_y:
            tank.y = by - TANK
        elif tank.y < tank.prev_y:
            tank.y = by + size

    def _tanks_vs_obstacles(self) -> None:
        """Step 3f for every tank that moved."""
        push_out = self._push_out if self._fast is None else self._fast.settle  # shortcut: free ranges
        for t in self.tanks:
            if t.x != t.prev_x or t.y != t.prev_y:  # a tank that did not move is never pushed
                push_out(t)

    def _push_out(self, t: Tank) -> None:
        """The reference's push-out loop (up to 5 obstacles), then clamping into the field."""
        blocked = self._blocked_cells
        for _ in range(5):
            x, y = t.x, t.y
            c0 = x >> 4 if x > 0 else 0
            c1 = (x + 31) >> 4
            if c1 < c0:  # wholly left of the field (a push can put it there before clamping): nothing overlaps
                break
            mask = ((2 << (c1 - c0)) - 1) << c0
            r0 = y >> 4 if y > 0 else 0
            r1 = min((y + 31) >> 4, len(blocked) - 1)  # rows past the padding hold nothing
            if r1 < r0:  # wholly below the field and its padding (a push can put it there): nothing overlaps
                break
            if not any(blocked[r] & mask for r in range(r0, r1 + 1)):
                break
            bx, by, size = self._first_obstacle(r0, r1, mask)
            self._push_back(t, bx, by, size)
        t.x = min(max(t.x, 0), MAX_XY)
        t.y = min(max(t.y, 0), MAX_XY)

    def _first_obstacle(self, r0: int, r1: int, mask: int) -> tuple[int, int, int]:
        """The blocking box (x, y, size) of the first obstacle under a tank's obstacle box (16-px cell
        rows ``r0``-``r1``, cell columns ``mask``), in the order the reference's spatial index lists
        them (BattleAgentBench ``SlicedArray.find_nearest``): by 64-px part, x part first, then y part;
        inside a part in the order the map built them: tiles in reading order, a brick tile's 8-px
        pieces by x offset, then y offset. Bases come after every wall, in the same order. A brick
        piece blocks with its 16-px cell, a steel or water tile and a base with their 32-px tile."""
        pieces = self._piece_rows
        best: tuple[int, int, int, int, int, int] | None = None
        cell = (0, 0)
        for r in range(r0, r1 + 1):
            for c in _bits(self._wall_cells[r] & mask):
                col = row = 0  # the cell's first piece in build order, as offsets inside its tile
                if self._brick_cells[r] >> c & 1:
                    top, bottom = pieces[2 * r] >> 2 * c & 3, pieces[2 * r + 1] >> 2 * c & 3
                    col = 0 if (top | bottom) & 1 else 1
                    row = 0 if top >> col & 1 else 1
                    col, row = col + 2 * (c & 1), row + 2 * (r & 1)
                key = (c >> 2, r >> 2, r >> 1, c >> 1, col, row)
                if best is None or key < best:
                    best, cell = key, (r, c)
        if best is not None:
            r, c = cell
            if self._brick_cells[r] >> c & 1:
                return c * 16, r * 16, 16
            return (c >> 1) * TILE, (r >> 1) * TILE, TILE
        under = [b for b in self.bases.values() if any(
            self._base_cells[r] & mask & (3 << (b.x >> 4)) and r >> 1 == b.y >> 5 for r in range(r0, r1 + 1))]
        if not under:
            raise AssertionError("an obstacle was found in the masks but not located")
        first = min(under, key=lambda b: (b.x >> 6, b.y >> 6, b.y, b.x))
        return first.x, first.y, TILE

    def _check_touch(self) -> None:
        base = next(iter(self.bases.values()))
        for t in self.tanks:
            if t.id < FIRST_NPC_ID and self._touches(t.x, t.y, base.x, base.y):
                self.touched_base = True
                return

    @staticmethod
    def _touches(x: int, y: int, bx: int, by: int) -> bool:
        """Whether a tank at ``(x, y)`` touches the base at ``(bx, by)``: flush on one side,
        overlapping on the other axis."""
        return ((x + TANK == bx or x == bx + TILE) and abs(y - by) <= TANK - 1) or \
            ((y + TANK == by or y == by + TILE) and abs(x - bx) <= TANK - 1)

    # ---------------------------------------------------------------- end of the game
    def _check_end(self) -> None:
        """End the game when one of these holds, the first one its reason: the rounds are used up (with
        ``full_last_round``, at the end of the last one), no player is left, no base is left, a
        player touched the navigation goal, or one base is left in the other modes."""
        alive_players = [t.id for t in self.tanks if t.id < FIRST_NPC_ID]
        timeout = self.time_left <= 0 and (not self.full_last_round or self.tick_mod % ROUND_TICKS == 0)
        reason: EndReason | None = None
        if timeout:
            reason = "timeout"
        elif not alive_players:
            reason = "no_players"
        elif not self.bases:
            reason = "no_bases"
        elif self.mode == "navigation" and self.touched_base:
            reason = "touch"
        elif self.mode != "navigation" and len(self.bases) == 1:
            reason = "last_base"
        if reason is None:
            return
        self.over = True
        self.ended_by = reason
        outcome = 1 if reason in ("touch", "last_base") else 0
        for p in alive_players:
            self.win_state[p] = outcome

    # ---------------------------------------------------------------- what a tank sees
    def touching(self, tank: Tank, side: Direction) -> str:
        """What touches ``tank``'s ``side`` (the benchmark's detection tests, first match wins):
        "border", "steel", "water", "brick" (touching or one 16-px gap away), "enemy_tank",
        "own_base", "enemy_base" or "nothing", from ``tank``'s side's point of view (a player's)."""
        x, y = tank.x, tank.y
        terrain = self._terrain(x, y, side)
        if terrain:
            return terrain
        # tanks and bases: the touching test with S = 32 (edge: as in _terrain)
        vertical = side in ("up", "down")
        edge = (y - TILE if side == "up" else y + TANK) if vertical else (x - TILE if side == "left" else x + TANK)
        for other in self.tanks:
            if (other.y == edge and -TANK < other.x - x < TANK if vertical
                    else other.x == edge and -TANK < other.y - y < TANK) and other is not tank \
                    and self.is_enemy_tank(tank.id, other.id):
                return "enemy_tank"
        near = [b for b in self.bases.values()
                if (b.y == edge and -TANK < b.x - x < TANK if vertical else b.x == edge and -TANK < b.y - y < TANK)]
        if not near:
            return "nothing"
        team = self.team_of(tank.id)
        return "own_base" if any(self.base_owner_team(b.id) == team for b in near) else "enemy_base"

    def _terrain(self, x: int, y: int, side: Direction) -> str:
        """The first part of :meth:`touching` for a tank at ``(x, y)``: "border", "steel", "water",
        "brick" or "" (none)."""
        # edge: where the top-left coordinate of a touching 32-px object lies on the side's axis
        if side == "left":
            border, edge, piece_line, gap_line = x == 0, x - TILE, x - PIECE, x - 16
        elif side == "right":
            border, edge, piece_line, gap_line = x + TANK == FIELD, x + TANK, x + TANK, x + TANK + PIECE
        elif side == "up":
            border, edge, piece_line, gap_line = y == 0, y - TILE, y - PIECE, y - 16
        else:
            border, edge, piece_line, gap_line = y + TANK == FIELD, y + TANK, y + TANK, y + TANK + PIECE
        if border:
            return "border"
        vertical = side in ("up", "down")
        along = x if vertical else y  # the coordinate along the touching edge
        if self._has_tiles and edge % TILE == 0 and 0 <= edge < FIELD:
            # steel and water tiles on the line at edge whose span meets [along - 31, along + 31]
            line = edge // TILE
            lo, hi = max(-(-(along - (TILE - 1)) // TILE), 0), min((along + TILE - 1) // TILE, 15)
            for rows, kind in ((self._steel_rows, "steel"), (self._water_rows, "water")):
                if vertical:
                    hit = rows[line] >> lo & ((2 << (hi - lo)) - 1)
                else:
                    hit = any(rows[r] >> line & 1 for r in range(lo, hi + 1))
                if hit:
                    return kind
        pieces = self._piece_rows if vertical else self._piece_cols
        for line, lo_off, hi_off in ((piece_line, -(PIECE - 1), TANK - 1), (gap_line, 0, 24)):
            if line % PIECE or not 0 <= line < FIELD:
                continue
            lo, hi = max(-(-(along + lo_off) // PIECE), 0), min((along + hi_off) // PIECE, 63)
            if lo <= hi and pieces[line // PIECE] >> lo & ((2 << (hi - lo)) - 1):
                return "brick"
        return ""

    # ---------------------------------------------------------------- state
    def state(self) -> dict[str, Any]:
        """The full world as a JSON-serialisable dict (``env.state()``)."""
        return {
            "map": self.map.name,
            "tick_mod": self.tick_mod,
            "time_left": self.time_left,
            "rounds_played": self.rounds_played,
            "npc_spawned": self.npc_spawned,
            "over": self.over,
            "ended_by": self.ended_by,
            "win_state": {str(p): w for p, w in self.win_state.items()},
            "bricks": ["".join("1" if v else "0" for v in row) for row in self.bricks.tolist()],
            "steel": np.argwhere(self.steel).tolist(),
            "water": np.argwhere(self.water).tolist(),
            "npc_spawns": [list(xy) for xy in self.npc_spawns],
            "tanks": [asdict(t) for t in self.tanks],
            "players": {str(p): asdict(t) for p, t in self.players.items()},
            "bullets": [asdict(b) for b in self.bullets],
            "bases": [asdict(b) for b in self.bases.values()],
            "events": {str(p): asdict(e) for p, e in self.events.items()},
            "points": {str(p): v for p, v in self.points.items()},
        }
