"""The tank battle's NPC controller driving a player tank: each decision, with probability
``act_prob`` it acts, half the time turning to a direction drawn uniformly from the four
(``Move_d``), half the time shooting; otherwise it does what an NPC does when it does not act:
keeps driving the way it faces (the previous move repeated). It names no target."""
from __future__ import annotations

import numpy as np

from arena_envs.core.answers import excerpt
from arena_envs.tank_battle.stages import Stage
from arena_envs.tank_battle.world import World, npc_choice
from baselines.tank.answer import TankMove, TankPolicy


class NpcTank(TankPolicy):
    """The NPCs' random driver on a player tank, from its own generator seeded by :meth:`reset`."""

    name = "npc"

    def __init__(self, act_prob: float = 0.4, native: bool = False):
        super().__init__(native)
        if not 0 <= act_prob <= 1:
            raise ValueError(f"act_prob must be a probability in [0, 1], got {excerpt(act_prob)}")
        self.act_prob = act_prob
        self._rng = np.random.default_rng()

    def reset(self, agent: str, seed: int | None = None) -> None:
        super().reset(agent, seed)
        self._rng = np.random.default_rng(seed)

    def decide(self, world: World, stage: Stage) -> TankMove:
        # two uniform draws per decision, read as the world reads them for its NPCs: act or not,
        # then turn (the lower half, split in four directions) or shoot
        act, choice = self._rng.random(2).tolist()
        operation = npc_choice(act, choice, self.act_prob)
        return TankMove(world.players[self.player].facing if operation is None else operation)
