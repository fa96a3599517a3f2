"""A stand-in for the tank World's read-only queries, for the text, parser and cooperation tests:
any set of tanks, teams, bases and touching categories, without running the simulation."""
from __future__ import annotations

from dataclasses import dataclass, field

from arena_envs.tank_battle.records import Base, Tank


@dataclass
class SidesWorld:
    """``team[id]`` for players (NPCs: ids >= 10, no team); ``owner[base]``: the owning team (-1 the
    NPC faction, None a navigation goal); ``touch[(tank id, side)]``: what ``touching`` answers
    ("nothing" when absent)."""

    tanks: list[Tank]
    team: dict[int, int]
    owner: dict[int, int | None] = field(default_factory=dict)
    base_xy: dict[int, tuple[int, int]] = field(default_factory=dict)
    touch: dict[tuple[int, str], str] = field(default_factory=dict)

    @property
    def bases(self) -> dict[int, Base]:
        return {b: Base(b, *self.base_xy.get(b, (0, 0))) for b in self.owner}

    def team_of(self, tank_id: int) -> int:
        return self.team.get(tank_id, -1)

    def enemy_tanks(self, player: int) -> list[Tank]:
        npcs = [t for t in self.tanks if t.is_npc]
        return npcs + sorted((t for t in self.tanks if not t.is_npc and self.team[t.id] != self.team[player]),
                             key=lambda t: t.id)

    def teammates(self, player: int) -> list[Tank]:
        return [t for t in self.tanks if not t.is_npc and t.id != player and self.team[t.id] == self.team[player]]

    def enemy_bases(self, player: int) -> list[Base]:
        return [b for b in self.bases.values() if self.owner[b.id] != self.team[player]]

    def own_bases(self, player: int) -> list[Base]:
        return [b for b in self.bases.values() if self.owner[b.id] == self.team[player]]

    def touching(self, tank: Tank, side: str) -> str:
        return self.touch.get((tank.id, side), "nothing")


def tanks(*ids: int) -> list[Tank]:
    """Tanks with the given ids at distinct places (players health 5 facing up, NPCs health 1 facing down)."""
    return [Tank(i, 32 * (i % 10), 32 * (i // 10), "down" if i >= 10 else "up", 1 if i >= 10 else 5) for i in ids]


def real_world(number: int, variant: str = "default", seed: int = 0, npc_total: int | None = None):
    """The World of an official stage at layout 0, its NPCs drawn with ``seed``."""
    import numpy as np

    from arena_envs.tank_battle.maps import load_map
    from arena_envs.tank_battle.stages import stage_config
    from arena_envs.tank_battle.world import World

    stage = stage_config(number, variant)
    return World(load_map(stage.map_name), stage, np.random.default_rng(seed), npc_total=npc_total)
