"""The exact shortcuts of the tank battle's tick procedure (:mod:`arena_envs.tank_battle.world`), for
speed only: a world takes them, from two hooks (a round's ticks, step 3f), when ``World.shortcuts``
is on."""
from __future__ import annotations

from typing import Protocol

from arena_envs.tank_battle.records import MAX_XY, ROUND_TICKS, TANK, TICK_WRAP, VERTICAL, Base, Bullet, Direction, Tank


class TickedWorld(Protocol):
    """What the shortcuts read and change of the world they serve (a ``World``): its public state,
    the blocked 16-px cells (a bit mask per cell row: walls or bases), the count of obstacles
    removed so far, step 3f for one tank (the push-out loop) and the end check."""

    tick_mod: int

    @property
    def mode(self) -> str: ...

    @property
    def tanks(self) -> list[Tank]: ...

    @property
    def players(self) -> dict[int, Tank]: ...

    @property
    def bullets(self) -> list[Bullet]: ...

    @property
    def bases(self) -> dict[int, Base]: ...

    @property
    def _blocked_cells(self) -> list[int]: ...

    @property
    def _removals(self) -> int: ...

    def _push_out(self, t: Tank) -> None: ...

    def _check_end(self) -> None: ...


#: a free range (see :meth:`Shortcuts.free_range`): facing, cross coordinate, lo, hi, and the
#: world's count of obstacle removals when it was found
FreeRange = tuple[str, int, int, int, int]


class Shortcuts:
    """The exact shortcuts of one world's tick procedure, for speed only, and what they remember of
    it between ticks. Each ends in exactly the state the procedure would reach (tests/test_tank_world.py
    plays worlds with and without them): :meth:`quiet_stretch`, the rest of a round at once when only
    free moves can happen in it; :meth:`settle`, no push-out loop (step 3f) while a tank drives inside
    its free range. Both rest on two facts of the rules: obstacles only ever disappear, and between
    the first ticks of rounds only bullets and moves change the world."""

    def __init__(self, world: TickedWorld):
        self.world = world
        self.free: dict[int, FreeRange | None] = {}  # per tank id: its free range (see settle)
        self.stretch_pause = 0  # ticks quiet_stretch waits before it tries again

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
        the range's end, as tick by tick), no pair of tanks able to meet (moves are monotone, so a
        pair's gap shrinks by at most the sum of their moves) and, in navigation, nobody near the
        goal. Returns the number of ticks run, 0 when no stretch can be run now."""
        world = self.world
        tick = world.tick_mod
        if tick % ROUND_TICKS == 0 or world.bullets:
            return 0
        if self.stretch_pause:  # a pair of tanks was close a moment ago: not worth trying every tick
            self.stretch_pause -= 1
            return 0
        ticks = (ROUND_TICKS - tick % ROUND_TICKS) if tick < TICK_WRAP - TICK_WRAP % ROUND_TICKS else TICK_WRAP - tick
        plans = []  # (tank, vertical, along, lo, hi, sign)
        removals = world._removals
        for t in world.tanks:
            if not t.speed or t.frozen:
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
        world.tick_mod = (tick + ticks) % TICK_WRAP
        world._check_end()
        return ticks
