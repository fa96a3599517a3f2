"""The rule tank of the tank battle, a greedy hunter (after the reference code's disabled
"advanced NPC"): deterministic; it heads for the nearest enemy tank or base (the goal in the
navigation stages), shoots what blocks it and what it is lined up with, and turns aside when its
way is shut for good. No cooperation; it agrees to its teammates' requests and refuses the others'.
"""
from __future__ import annotations

from arena_envs.tank_battle.records import Direction, Tank
from arena_envs.tank_battle.stages import Stage
from arena_envs.tank_battle.world import World, touches_side
from baselines.tank.answer import NO_TARGET, TankMove, TankPolicy

#: what makes a side a dead end for the anti-stuck rule (besides a teammate)
BLOCKING = frozenset({"border", "steel", "water", "own_base"})
#: the anti-stuck rule's last resort, in this order
FALLBACK_ORDER: tuple[Direction, ...] = ("up", "left", "down", "right")


def desired_direction(me: Tank, tx: int, ty: int) -> tuple[Direction, bool]:
    """Step 3 of :meth:`RuleTank.decide`: the direction toward the target at (tx, ty) and whether the tank is lined up
    with it (less than a tank's width off on one axis)."""
    dx, dy = me.x - tx, me.y - ty
    if abs(dx) < 32:
        return ("down" if dy <= 0 else "up"), True
    if abs(dy) < 32:
        return ("right" if dx <= 0 else "left"), True
    h: Direction = "right" if dx < 0 else "left"
    v: Direction = "down" if dy < 0 else "up"
    return (h if abs(dx) > abs(dy) else v), False


class RuleTank(TankPolicy):
    """The greedy hunter, in seven steps (commented in :meth:`decide`): pick the target, shoot an
    enemy tank touching the front, find the direction toward the target, fire when lined up and
    facing it, shoot bricks in the way, detour when the way is shut, else move."""

    name = "rule"

    def decide(self, world: World, stage: Stage) -> TankMove:
        player = self.player
        me = world.players[player]
        replies = {src: world.team_of(src) == world.team_of(player) for src in self._env.pending_requests(player)}
        # 1. the target
        if stage.navigation:
            goals = world.enemy_bases(player)
            target = goals[0].id if goals else NO_TARGET
        else:
            target = self._env.nearest_target(player)
        # 2. an enemy tank touching the front
        for tank in world.enemy_tanks(player):
            if touches_side(me, tank.x, tank.y, me.facing):
                return TankMove("shoot", tank.id, replies)
        if target == NO_TARGET:
            return TankMove("shoot", target, replies)
        tx, ty = self._position(world, player, target)
        # 3. where to go
        desired, aligned = desired_direction(me, tx, ty)
        # 4. lined up and facing it: fire (the navigation goal is reached, never shot)
        if aligned and me.facing == desired and not stage.navigation:
            return TankMove("shoot", target, replies)
        # 5. bricks in the way
        if me.facing == desired and world.touching(me, desired) == "brick":
            return TankMove("shoot", target, replies)
        # 6. anti-stuck
        if self._blocked(world, me, desired):
            desired = self._detour(world, me, desired, tx, ty)
        # 7. go
        return TankMove(desired, target, replies)

    @staticmethod
    def _position(world: World, player: int, target: int) -> tuple[int, int]:
        if target in world.bases:
            base = world.bases[target]
            return base.x, base.y
        tank = next(t for t in world.enemy_tanks(player) if t.id == target)
        return tank.x, tank.y

    def _blocked(self, world: World, me: Tank, side: Direction) -> bool:
        """The side is shut by the border, steel, water, the own base or a teammate."""
        return world.touching(me, side) in BLOCKING or any(touches_side(me, mate.x, mate.y, side)
                                                            for mate in world.teammates(self.player))

    def _detour(self, world: World, me: Tank, desired: Direction, tx: int, ty: int) -> Direction:
        """Step 6: the other axis' direction toward the target when it is at least a tank away on that
        axis and open, else the first open side of up, left, down, right (``desired`` if none is)."""
        dx, dy = me.x - tx, me.y - ty
        if desired in ("up", "down"):
            other: Direction = "right" if dx < 0 else "left"
            offset = dx
        else:
            other = "down" if dy < 0 else "up"
            offset = dy
        if abs(offset) >= 32 and not self._blocked(world, me, other):
            return other
        return next((side for side in FALLBACK_ORDER if not self._blocked(world, me, side)), desired)
