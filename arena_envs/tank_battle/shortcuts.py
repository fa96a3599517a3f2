"""Exact shortcuts of the tank battle's tick procedure, there for speed only.

:class:`~arena_envs.tank_battle.world.World` runs BattleAgentBench's server procedure tick by tick;
with ``World.shortcuts`` on (the default) it hands five pieces of that work to its
:class:`Shortcuts`, each of which ends in exactly the state the procedure would reach
(``tests/test_tank_world.py`` plays worlds with and without them and compares them):

* :meth:`Shortcuts.quiet_stretch`: the rest of a round at once when only free moves can happen in it;
* :meth:`Shortcuts.quiet_tick`: a tick with no bullet in flight and no tanks close as its moves alone;
* :meth:`Shortcuts.tanks_apart`: the tank-against-tank pass (step 3e) skipped while no pair overlaps;
* :meth:`Shortcuts.settle`: no push-out loop (step 3f) while a tank drives inside its free range;
* :meth:`Shortcuts.terrain`: what borders a tank's side, remembered until an obstacle falls.

They rest on three facts of the rules: obstacles only ever disappear; a tank moves at most one pixel
per axis a tick (pushes undo moves); between the first ticks of rounds only bullets and moves
change the world.
"""
from __future__ import annotations

from arena_envs.tank_battle.world import (
    FIELD,
    MAX_XY,
    OPPOSITE,
    ROUND_TICKS,
    STEP,
    TANK,
    TICK_WRAP,
    VERTICAL,
    Direction,
    Tank,
    World,
)

#: a free range (see :meth:`Shortcuts.free_range`): facing, cross coordinate, lo, hi, and the
#: world's count of obstacle removals when it was found
FreeRange = tuple[str, int, int, int, int]


class Shortcuts:
    """The shortcuts of one world, and what they remember of it between ticks."""

    def __init__(self, world: World):
        self.world = world
        #: how far the closest pair of tanks may still close in before they can overlap, as the last
        #: scan of tanks_apart found (void once an NPC has spawned since: see _slack_now)
        self.slack = 0
        self._slack_spawned = world.npc_spawned
        self.free: dict[int, FreeRange | None] = {}  # per tank id: its free range (see settle)
        self.stretch_pause = 0  # ticks quiet_stretch waits before it tries again
        self._terrain: dict[tuple[int, int, str], str] = {}
        self._terrain_removals = world._removals

    def _slack_now(self) -> int:
        """The slack, void (0) when an NPC has spawned since it was measured."""
        if self._slack_spawned != self.world.npc_spawned:
            self._slack_spawned = self.world.npc_spawned
            self.slack = 0
        return self.slack

    def tanks_apart(self, first: bool) -> bool:
        """Whether no two tanks overlap, so that step 3e has nothing to do. A pair's gap shrinks by at
        most 2 px a tick, so the tanks are scanned only when the slack of the last scan is used up; a
        round's first tick (its turns snap), a spawn and a push-out void the slack."""
        if not first and self._slack_now() >= 2:
            self.slack -= 2
            return True
        tanks = self.world.tanks
        n = len(tanks)
        closest = FIELD
        for i in range(n - 1):
            a = tanks[i]
            ax, ay = a.x, a.y
            for j in range(i + 1, n):
                b = tanks[j]
                dx, dy = b.x - ax, b.y - ay
                if dx < 0:
                    dx = -dx
                if dy < 0:
                    dy = -dy
                gap = dx if dx > dy else dy
                if gap < closest:
                    closest = gap
        self._slack_spawned = self.world.npc_spawned
        self.slack = max(closest - TANK, 0)
        return closest >= TANK

    def quiet_tick(self) -> bool:
        """Run this tick as its moves alone (steps 1, 3f, the thaw of step 2, 5, 6 and the end check)
        when it is not a round's first, no bullet is in flight and no pair of tanks can meet in it;
        False, having done nothing, otherwise."""
        world = self.world
        if world.tick_mod % ROUND_TICKS == 0 or world.bullets or self._slack_now() < 2:
            return False
        self.slack -= 2
        for t in world.tanks:
            if t.speed and not t.frozen:
                dx, dy = STEP[t.facing]
                t.x += dx
                t.y += dy
                self.settle(t)
                t.prev_x = t.x
                t.prev_y = t.y
        if world.tick_mod >= TICK_WRAP - 1:
            for t in world.tanks:
                t.frozen = False
        if world.mode == "navigation" and len(world.bases) == 1:
            world._check_touch()
        world.tick_mod = (world.tick_mod + 1) % TICK_WRAP
        world._check_end()
        return True

    def settle(self, t: Tank) -> None:
        """Step 3f for a moved tank, as ``World._push_out``. A tank moving along one axis keeps, per
        facing and cross coordinate, a range of positions on its line where its obstacle box is
        free: inside it nothing happens (obstacles only ever disappear, so the range stays free); one
        pixel past its far end, having moved only along the line, the push lands on that end, as the
        push-out loop would. The range is found anew, from where the tank came from along its line,
        when it has none for its facing and cross coordinate, or when it is past the end of a range
        found before something was removed (the removal may have lengthened it)."""
        facing = t.facing
        vertical = VERTICAL[facing]
        cross, came_across, along = (t.x, t.prev_x, t.y) if vertical else (t.y, t.prev_y, t.x)
        entry = self.free.get(t.id)
        if entry is None or entry[0] != facing or entry[1] != cross \
                or (not entry[2] <= along <= entry[3] and entry[4] != self.world._removals):
            came_from = (t.x, t.prev_y) if vertical else (t.prev_x, t.y)  # along its line
            entry = self.free[t.id] = self.free_range(facing, *came_from)
        if entry is not None:
            lo, hi = entry[2], entry[3]
            if lo <= along <= hi:
                return
            ahead = facing in ("down", "right")
            if cross == came_across and along == (hi + 1 if ahead else lo - 1):  # back onto the far end
                if vertical:
                    t.y = hi if ahead else lo
                else:
                    t.x = hi if ahead else lo
                return
        self.world._push_out(t)
        self.slack = 0
        self.free[t.id] = self.free_range(facing, t.x, t.y)

    def free_range(self, facing: Direction, x: int, y: int) -> FreeRange | None:
        """(facing, cross coordinate, lo, hi, obstacle removals): the positions along the ``facing``
        axis, at the cross coordinate of a tank at ``(x, y)``, where its obstacle box is free and inside
        the field; None when its box at ``(x, y)`` is not free now or not inside the field."""
        if not (0 <= x <= MAX_XY and 0 <= y <= MAX_XY):
            return None
        blocked = self.world._blocked_cells
        removals = self.world._removals
        c0, c1, r0, r1 = x >> 4, (x + 31) >> 4, y >> 4, (y + 31) >> 4
        cols = ((2 << (c1 - c0)) - 1) << c0
        if VERTICAL[facing]:
            if any(blocked[r] & cols for r in range(r0, r1 + 1)):
                return None
            if facing == "down":
                lo, hi = r0 * 16, MAX_XY
                for r in range(r1 + 1, 32):
                    if blocked[r] & cols:  # a tile's first blocked row is its upper half: 16 r is its top
                        hi = min(hi, r * 16 - TANK)
                        break
            else:
                lo, hi = 0, min(r1 * 16 - 16, MAX_XY)
                for r in range(r0 - 1, -1, -1):
                    if blocked[r] & cols:
                        lo = r * 16 + 16
                        break
            return facing, x, lo, hi, removals
        rows = 0
        for r in range(r0, r1 + 1):
            rows |= blocked[r]
        if rows & cols:
            return None
        if facing == "right":
            lo, hi = c0 * 16, MAX_XY
            ahead = rows >> (c1 + 1)
            if ahead:
                hi = min(hi, (c1 + 1 + (ahead & -ahead).bit_length() - 1) * 16 - TANK)
        else:
            lo, hi = 0, min(c1 * 16 - 16, MAX_XY)
            behind = rows & ((1 << c0) - 1)
            if behind:
                lo = behind.bit_length() * 16
        return facing, y, lo, hi, removals

    def quiet_stretch(self) -> int:
        """Run several ticks of this round at once when nothing can happen in them but moves: no round
        start, no bullet in flight, every moving tank inside its free range (it drives on and stops at
        the range's end, as tick by tick) or held still by a tank in front (:meth:`_held`), no pair of
        tanks able to meet (moves are monotone, so a pair's gap shrinks by at most the sum of their
        moves) and, in navigation, nobody near the goal. Returns the number of ticks run, 0 when no
        stretch can be run now."""
        world = self.world
        tick = world.tick_mod
        if tick % ROUND_TICKS == 0 or world.bullets:
            return 0
        if self.stretch_pause:  # a pair of tanks was close a moment ago: not worth trying every tick
            self.stretch_pause -= 1
            return 0
        ticks = (ROUND_TICKS - tick % ROUND_TICKS) if tick < TICK_WRAP - TICK_WRAP % ROUND_TICKS else TICK_WRAP - tick
        # the slack bounds the gaps of the last tick's moves (a push back since takes at most 2 px more
        # off a pair's): where it outlasts the stretch, no tank is held and no pair can meet
        crowded = self._slack_now() < 2 * ticks + 4
        plans = []  # (tank, vertical, along, lo, hi, sign)
        removals = world._removals
        for t in world.tanks:
            if not t.speed or t.frozen or (crowded and self._held(t)):
                plans.append((t, False, t.x, t.x, t.x, 0))
                continue
            facing = t.facing
            vertical = VERTICAL[facing]
            cross, along = (t.x, t.y) if vertical else (t.y, t.x)
            entry = self.free.get(t.id)
            if entry is None or entry[0] != facing or entry[1] != cross or entry[4] != removals:
                entry = self.free[t.id] = self.free_range(facing, t.x, t.y)
                if entry is None:
                    return 0
            lo, hi = entry[2], entry[3]
            if not lo <= along <= hi:
                return 0
            plans.append((t, vertical, along, lo, hi, 1 if facing in ("down", "right") else -1))
        caps = [hi - along if sign > 0 else along - lo if sign else 0 for _, _, along, lo, hi, sign in plans]
        if crowded:
            for i in range(len(plans) - 1):
                a, cap_a = plans[i][0], caps[i]
                for j in range(i + 1, len(plans)):
                    b, cap_b = plans[j][0], caps[j]
                    budget = max(abs(a.x - b.x), abs(a.y - b.y)) - TANK  # how much the pair's gap may shrink
                    if cap_a + cap_b <= budget:
                        continue
                    if budget < 0:
                        ticks = 0
                        break
                    low = min(cap_a, cap_b)  # the moves in k ticks: 2k up to `low`, then low + k
                    ticks = min(ticks, budget // 2 if budget // 2 <= low else budget - low)
                if not ticks:
                    break
        if not ticks:
            self.stretch_pause = 4
            return 0
        if world.mode == "navigation" and len(world.bases) == 1:
            base = next(iter(world.bases.values()))
            reach = TANK + ticks + 1
            players = [t for t in world.players.values() if t.alive]
            if any(abs(t.x - base.x) <= reach and abs(t.y - base.y) <= reach for t in players):
                return 0
        for (t, vertical, along, _, _, sign), cap in zip(plans, caps):
            if not sign:
                continue
            step = min(ticks, cap)
            if vertical:
                t.y = t.prev_y = along + sign * step
            else:
                t.x = t.prev_x = along + sign * step
        if tick + ticks >= TICK_WRAP:
            for t in world.tanks:
                t.frozen = False
        self.slack = 0
        world.tick_mod = (tick + ticks) % TICK_WRAP
        world._check_end()
        return ticks

    def _held(self, t: Tank) -> bool:
        """Whether moving tank ``t`` is pressed against a tank flush in front of it that stays put
        (idle or frozen) or drives head-on into it: every tick of a stretch its one-pixel move is
        undone by step 3e (a push back onto its place, or the split of a head-on pair), so the
        stretch may keep it still."""
        dx, dy = STEP[t.facing]
        fx, fy = t.x + dx * TANK, t.y + dy * TANK  # a tank flush in front, straight ahead
        opposite = OPPOSITE[t.facing]
        for o in self.world.tanks:
            if (o.x == fx and -TANK < o.y - fy < TANK if dy == 0 else o.y == fy and -TANK < o.x - fx < TANK) \
                    and (not o.speed or o.frozen or o.facing == opposite):
                return True
        return False

    def terrain(self, x: int, y: int, side: Direction) -> str:
        """``World._terrain`` for a tank at ``(x, y)``, remembered until an obstacle is removed."""
        removals = self.world._removals
        if self._terrain_removals != removals:
            self._terrain.clear()
            self._terrain_removals = removals
        found = self._terrain.get((x, y, side))
        if found is None:
            found = self._terrain[x, y, side] = self.world._terrain(x, y, side)
        return found
