"""The numeric observation of a tank for RL: a ``(25, 64, 64)`` uint8 image, channels first.

One cell is 8 x 8 px (the brick piece); an object marks every cell its rectangle overlaps with 255
(an image stable-baselines3's ``CnnPolicy`` takes as is: it divides by 255). Channels 15-24 hold
the ten vector features as constant planes (value x 255), so one ``Box`` carries it all:

* 0 brick pieces, 1 steel, 2 water, 3 self, 4 teammates, 5 enemy player tanks, 6 NPC tanks,
  7 own or friendly base, 8 enemy base or the navigation goal, 9 bullets of self and teammates,
  10 other bullets, 11-14 tanks facing up, down, left, right;
* 15 own x / 480, 16 own y / 480, 17-20 own facing up, down, left, right, 21 health / 5,
  22 frozen, 23 rounds left / rounds, 24 living teammates / max(team size - 1, 1).
"""
from __future__ import annotations

import numpy as np

from arena_envs.tank_battle.records import BULLET, DIRECTIONS, FIRST_NPC_ID, PIECE, PLAYER_HEALTH, TANK, TILE
from arena_envs.tank_battle.world import World

CHANNELS = 25
CELLS = 64
GRID_SHAPE = (CHANNELS, CELLS, CELLS)
ON = 255
CHANNEL_NAMES = (
    "brick", "steel", "water", "self", "teammates", "enemy_players", "npcs", "own_base", "enemy_base",
    "own_bullets", "other_bullets", "facing_up", "facing_down", "facing_left", "facing_right",
    "x", "y", "dir_up", "dir_down", "dir_left", "dir_right", "health", "frozen", "rounds_left", "teammates_alive",
)
_FACING_CHANNEL = {d: 11 + k for k, d in enumerate(DIRECTIONS)}
_TILE_CELLS = TILE // PIECE
_COMMON = 15  # the channels before the vector features


def _mark(obs: np.ndarray, channel: int, x: int, y: int, size: int) -> None:
    """Set the cells of ``obs[channel]`` that the ``size`` x ``size`` px rectangle at ``(x, y)`` overlaps
    (a bullet may lie partly or wholly off the field: only cells on it are set)."""
    obs[channel, max(y // PIECE, 0):max((y + size - 1) // PIECE + 1, 0),
        max(x // PIECE, 0):max((x + size - 1) // PIECE + 1, 0)] = ON


def static_planes(world: World) -> np.ndarray:
    """Channels 1 and 2 (steel and water never change during a game), as one ``(2, 64, 64)`` array."""
    planes = np.zeros((2, CELLS, CELLS), dtype=np.uint8)
    for k, tiles in enumerate((world.steel, world.water)):
        planes[k] = np.kron(tiles, np.ones((_TILE_CELLS, _TILE_CELLS), dtype=bool)) * ON
    return planes


def common_planes(world: World, static: np.ndarray) -> np.ndarray:
    """What every tank's grid shows alike at this moment: channels 0-14 with bricks, steel, water,
    NPCs and facings (built once per round and copied for each tank); ``static`` from :func:`static_planes`."""
    obs = np.zeros((_COMMON, CELLS, CELLS), dtype=np.uint8)
    np.multiply(world.bricks.view(np.uint8), ON, out=obs[0])
    obs[1:3] = static
    for tank in world.tanks:
        if tank.id >= FIRST_NPC_ID:
            _mark(obs, 6, tank.x, tank.y, TANK)
        _mark(obs, _FACING_CHANNEL[tank.facing], tank.x, tank.y, TANK)
    return obs


def grid_observation(world: World, player: int, common: np.ndarray, team_size: int) -> np.ndarray:
    """Player ``player``'s observation (module docstring); ``common`` from :func:`common_planes`.
    Friends are the players of ``player``'s team (:meth:`World.team_of`): its tank mates, its bases
    and their bullets."""
    obs = np.empty(GRID_SHAPE, dtype=np.uint8)
    obs[:_COMMON] = common  # channels 15-24 are all written below
    team_of = world.team_of
    team = team_of(player)
    for tank in world.tanks:
        if tank.id < FIRST_NPC_ID:
            _mark(obs, 3 if tank.id == player else 4 if team_of(tank.id) == team else 5, tank.x, tank.y, TANK)
    for base in world.bases.values():
        _mark(obs, 7 if world.base_owner_team(base.id) == team else 8, base.x, base.y, TILE)
    for bullet in world.bullets:
        friendly = bullet.owner < FIRST_NPC_ID and team_of(bullet.owner) == team
        _mark(obs, 9 if friendly else 10, bullet.x, bullet.y, BULLET)
    me = world.players[player]
    if me.alive:
        vector = [round(me.x / 480 * ON), round(me.y / 480 * ON), *(ON if me.facing == d else 0 for d in DIRECTIONS),
                  round(me.health / PLAYER_HEALTH * ON), ON if me.frozen else 0]
    else:
        vector = [0] * 8
    vector += [round(world.time_left / world.stage.rounds * ON),
               round(len(world.teammates(player)) / max(team_size - 1, 1) * ON)]
    obs[15:] = np.array(vector, dtype=np.uint8)[:, None, None]
    return obs


def blank() -> np.ndarray:
    """A read-only all-zero observation (``obs_mode="text"``: no grid is computed)."""
    zeros = np.zeros(GRID_SHAPE, dtype=np.uint8)
    zeros.setflags(write=False)
    return zeros
