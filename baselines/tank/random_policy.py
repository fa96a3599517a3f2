"""The random tank of BattleAgentBench, the paper's "random" rows: every decision an
operation drawn uniformly from the four moves and ``Shoot`` (never a no-op) and a target drawn
uniformly from the current enemy bases and enemy tanks; no cooperation, no replies."""
from __future__ import annotations

import numpy as np

from arena_envs.tank_battle.stages import Stage
from arena_envs.tank_battle.world import Operation, World
from baselines.tank.answer import NO_TARGET, OP_TOKENS, TankMove, TankPolicy

RANDOM_OPS: tuple[Operation, ...] = tuple(OP_TOKENS)


class RandomTank(TankPolicy):
    """Uniform operation and target from its own generator, seeded by :meth:`reset`."""

    name = "random"

    def __init__(self, native: bool = False):
        super().__init__(native)
        self._rng = np.random.default_rng()

    def reset(self, agent: str, seed: int | None = None) -> None:
        super().reset(agent, seed)
        self._rng = np.random.default_rng(seed)

    def decide(self, world: World, stage: Stage) -> TankMove:
        op = RANDOM_OPS[self._rng.integers(len(RANDOM_OPS))]
        targets = [base.id for base in world.enemy_bases(self.player)] + \
                  [tank.id for tank in world.enemy_tanks(self.player)]
        target = targets[self._rng.integers(len(targets))] if targets else NO_TARGET
        return TankMove(op, target)
