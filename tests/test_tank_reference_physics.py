"""Two details of the tank battle's physics where BattleAgentBench's game server (THUDM/BattleAgentBench,
``battle_city``) has a rule of its own: the order in which a tank is pushed out of walls, and the
elements its collision passes skip after a removal (the ``removal_skip`` option). The expected
positions were taken from the original server run on the same scripted situations."""
from __future__ import annotations

import numpy as np
import pytest

import arena_envs
from arena_envs.tank_battle import grid
from arena_envs.tank_battle.maps import parse_map
from arena_envs.tank_battle.records import Bullet
from arena_envs.tank_battle.render import ansi_map
from arena_envs.tank_battle.stages import custom_stage
from arena_envs.tank_battle.world import World


def world_of(rows: dict[int, str], n_players: int, **options: bool) -> World:
    """A free-for-all on a custom map (``rows``: row index -> text; other rows empty; bases in row 0)."""
    lines = [rows.get(r, "A..............B" if r == 0 else "") for r in range(16)]
    return World(parse_map(lines), custom_stage(n_players, "ffa"), np.random.default_rng(0), **options)


def positions(world: World, player: int, ops: dict[int, str]) -> list[tuple[int, int]]:
    """Play one round; ``player``'s position after every tick."""
    out: list[tuple[int, int]] = []
    tank = world.players[player]
    world.play_round(ops, on_tick=lambda w: out.append((tank.x, tank.y)))  # type: ignore[arg-type]
    return out


def test_a_turns_snap_into_a_partly_shot_brick_is_pushed_out_of_the_first_piece_the_index_lists():
    """The server pushes a tank out of the first wall its spatial index lists: 64-px parts x part first,
    then y part; inside a part, tiles in reading order; inside a brick tile, 8-px pieces by x offset,
    then y offset; the wall blocks with the piece's 16-px cell, on every axis the tank moved.

    Tank 0 shoots the left column of pieces off the upper half of the brick tile at (320, 384). Tank 1,
    facing down at (288, 379), turns right: its y snaps to 384 and it moves to x 289, so its box meets
    the tile's upper-left cell (pieces only at x offset 8) and lower-left cell (a piece at x offset 0).
    The lower cell's piece comes first: the tank lands at (320 - 32, 400 - 32) = (288, 368), where the
    server puts it (by cell, upper half first, it would land at (288, 352) and drive on)."""
    world = world_of({11: ".......1", 12: "..........#", 15: "2"}, 2)
    shooter = world.players[0]
    shooter.y = shooter.prev_y = 360
    shooter.facing = "right"
    world.play_round({0: "shoot", 1: "noop"})
    upper_left = world.bricks[48:50, 40:42]
    assert upper_left.tolist() == [[False, True], [False, True]]
    assert world.bricks[50:52, 40:44].all() and world.bricks[48:50, 41:44].all()

    tank = world.players[1]
    tank.x, tank.y, tank.prev_x, tank.prev_y, tank.facing = 288, 379, 288, 379, "down"
    ticks = positions(world, 1, {0: "noop", 1: "right"})
    assert ticks[0] == (288, 368)
    assert ticks[-1] == (288, 368)  # held against the upper cell's pieces for the rest of the round


def test_the_first_of_two_64px_parts_is_the_one_further_left():
    """Parts are listed x part first: under a tank's box at (48, 48) (16-px cells 3-4 by 3-4), the brick
    tile at (32, 64) (part 0, 1) comes before the one at (64, 32) (part 1, 0), though the latter comes
    first in reading order; it blocks with its cell at (48, 64), as on the server."""
    world = world_of({1: "..#", 2: ".#", 15: "12"}, 2)
    assert world._first_obstacle(3, 4, 0b11000) == (48, 64, 16)


def three_shots() -> dict[int, str]:
    """Three tanks in a row each shoot up at a brick tile 64 px above them; the bullets hit together."""
    return {7: "..#...#...#", 10: "..1...2...3"}


@pytest.mark.parametrize("removal_skip", [False, True])
def test_a_removed_bullet_makes_the_server_skip_the_next_one(removal_skip):
    """The server removes bullets from the list it is iterating, so the bullet after a removed one is
    not checked that tick. Tanks 0-2 shoot at once; on the 11th tick their bullets all reach bricks.
    Every bullet checked (the default): all three stop and break their tile's bottom row. With
    ``removal_skip``, as on the server: bullet 0 stops, bullet 1 is skipped (it flies on to (206, 248)),
    bullet 2 stops; bullet 1 breaks its bricks one tick later."""
    world = world_of(three_shots(), 3, removal_skip=removal_skip)
    states: list[tuple[list[tuple[int, int, int]], list[int]]] = []

    def record(w: World) -> None:
        broken = [c // 4 for c in range(64) if any(w.bricks[28:32, c]) and not w.bricks[31, c]]
        states.append(([(b.x, b.y, b.owner) for b in w.bullets], sorted(set(broken))))

    world.play_round({0: "shoot", 1: "shoot", 2: "shoot"}, on_tick=record)
    assert states[9][0] == [(78, 256, 0), (206, 256, 1), (334, 256, 2)] and states[9][1] == []
    if removal_skip:
        assert states[10] == ([(206, 248, 1)], [2, 10])
    else:
        assert states[10] == ([], [2, 6, 10])
    assert states[11] == ([], [2, 6, 10])


@pytest.mark.parametrize(("x", "y"), [(100, -12), (-12, 100), (100, 520)])
def test_a_bullet_left_off_the_field_is_drawn_nowhere(x, y):
    """Under ``removal_skip`` a skipped bullet can stay off the field: the text map and the grid show it
    in no cell (no wrap-around to the far side)."""
    world = world_of(three_shots(), 3, removal_skip=True)
    world.bullets.append(Bullet(0, x, y, "up"))
    assert "*" not in ansi_map(world)
    observation = grid.grid_observation(world, 0, grid.common_planes(world, grid.static_planes(world)), 1)
    assert not observation[9:11].any()


def test_removal_skip_is_an_env_option():
    env = arena_envs.tank_battle_v0.env(stage=4, removal_skip=True)
    env.reset(seed=0)
    assert env.unwrapped.world.removal_skip and env.unwrapped.config()["removal_skip"] is True
    env = arena_envs.tank_battle_v0.env(stage=4)
    env.reset(seed=0)
    assert not env.unwrapped.world.removal_skip
    with pytest.raises(ValueError, match=r"^removal_skip must be True or False, got 'yes'$"):
        arena_envs.tank_battle_v0.env(stage=4, removal_skip="yes")
