"""Spec §5: the tank battle's pygame frame (832 x 576, real pygame under SDL's dummy video driver)
and its ANSI character map. Colours are checked at the pixels of the tiles and tanks that hold them."""
from __future__ import annotations

import numpy as np
import pytest

from arena_envs.tank_battle import render as R
from arena_envs.tank_battle.maps import apply_layout, load_map, parse_map
from arena_envs.tank_battle.stages import custom_stage, stage_config
from arena_envs.tank_battle.world import Bullet, Tank, World

pygame = pytest.importorskip("pygame")


@pytest.fixture(autouse=True)
def no_screen(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")  # read by pygame when it starts: no screen needed
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")


def make_world(game_map, stage):
    return World(game_map, stage, np.random.default_rng(0))


def stage_world(k):
    stage = stage_config(k)
    game_map = apply_layout(load_map(stage.map_name), k, 0, stage.n_players, np.random.default_rng(0))
    return make_world(game_map, stage), stage, game_map


def frame(world, stage, info=None):
    """The frame as an (H, W, 3) array, as the environment's render() returns it."""
    surface = R.draw_frame(world, stage, info)
    return np.ascontiguousarray(pygame.surfarray.array3d(surface).transpose(1, 0, 2))


def at(image, x, y):
    """The colour at field position (x, y)."""
    return tuple(int(v) for v in image[R.OFFSET[1] + y, R.OFFSET[0] + x])


def test_frame_shape_and_frame_colour_for_every_stage():
    for k in range(1, 8):
        world, stage, game_map = stage_world(k)
        image = frame(world, stage, R.FrameInfo())
        assert image.shape == (576, 832, 3) and image.dtype == np.uint8
        assert tuple(image[0, 0]) == tuple(image[560, 560]) == R.FRAME_COLOUR  # frame around the field
        assert tuple(image[300, 826]) == R.FRAME_COLOUR  # the panel's background, right of its text
        rows, cols = np.nonzero(~game_map.bricks.reshape(16, 4, 16, 4).any(axis=(1, 3)))
        for row, col in zip(rows, cols):
            x, y = 32 * int(col), 32 * int(row)
            covered = [t for t in world.tanks if abs(t.x - x) < 32 and abs(t.y - y) < 32]
            covered += [b for b in world.bases.values() if (b.x, b.y) == (x, y)]
            if not covered and (x, y) not in game_map.npc_spawns:
                assert at(image, x + 16, y + 16) == R.FIELD_COLOUR  # an empty tile is black
        # walls: every remaining piece is brick red inside, with its darker border
        for row, col in zip(*np.nonzero(world.bricks)):
            assert at(image, 8 * col + 4, 8 * row + 4) == R.BRICK
            assert at(image, 8 * col, 8 * row) == R.BRICK_EDGE


def test_tanks_in_team_colours_with_barrel_and_id():
    expected_teams = {1: [0], 3: [0, 0], 4: [0, 1], 5: [0, 1, 0, 1], 6: [0, 1, 2, 3], 7: [0, 1, 2, 0, 1, 2]}
    for k, teams in expected_teams.items():
        world, stage, _ = stage_world(k)
        image = frame(world, stage)
        for pid, team in enumerate(teams):
            tank = world.players[pid]
            colour = R.TEAM_COLOURS[team]
            assert at(image, tank.x + 3, tank.y + 3) == colour
            assert at(image, tank.x + 28, tank.y + 28) == colour
            # facing up: the darker barrel at the top centre, the id (white) in the middle
            assert tank.facing == "up"
            assert at(image, tank.x + 16, tank.y + 2) == R._darker(colour)
            middle = image[R.OFFSET[1] + tank.y + 10:R.OFFSET[1] + tank.y + 22,
                           R.OFFSET[0] + tank.x + 10:R.OFFSET[0] + tank.x + 22]
            assert (middle == 255).all(axis=2).any()  # white id pixels
    assert R.TEAM_COLOURS[:4] == ((0, 128, 255), (255, 0, 0), (0, 200, 0), (255, 255, 0))


def test_bases_gold_with_owner_border():
    cases = {1: {100: R.NO_OWNER}, 3: {100: R.TEAM_COLOURS[0], 101: R.NPC_BODY},
             4: {100: R.TEAM_COLOURS[0], 101: R.TEAM_COLOURS[1]},
             6: {100 + k: R.TEAM_COLOURS[k] for k in range(4)},
             7: {100 + k: R.TEAM_COLOURS[k] for k in range(3)}}
    for k, borders in cases.items():
        world, stage, _ = stage_world(k)
        image = frame(world, stage)
        assert set(world.bases) == set(borders)
        for base_id, border in borders.items():
            base = world.bases[base_id]
            assert at(image, base.x + 1, base.y + 1) == border
            assert at(image, base.x + 30, base.y + 16) == border
            assert at(image, base.x + 4, base.y + 4) == R.GOLD
            letter = image[R.OFFSET[1] + base.y + 6:R.OFFSET[1] + base.y + 26,
                           R.OFFSET[0] + base.x + 6:R.OFFSET[0] + base.x + 26]
            assert (letter == 0).all(axis=2).any()  # the black letter A-D


CUSTOM = ["1.@@~...........",
          "................",
          "..#.....*.......",
          "................",
          "2..............A",
          "................",
          "................",
          "...............B"]


def test_custom_map_steel_water_bricks_spawns_npcs_bullets_and_freezing():
    game_map = parse_map(CUSTOM)
    stage = custom_stage(2, "ffa")
    world = make_world(game_map, stage)
    info = R.FrameInfo()
    image = frame(world, stage, info)
    for col in (2, 3):
        assert at(image, 32 * col + 16, 16) == R.STEEL
        assert at(image, 32 * col + 1, 1) == R.STEEL
    assert at(image, 4 * 32 + 16, 16) == R.WATER
    assert at(image, 2 * 32 + 4, 2 * 32 + 4) == R.BRICK
    assert at(image, 8 * 32, 2 * 32 + 10) == R.SPAWN_OUTLINE  # the NPC spawn point's outline
    assert at(image, 8 * 32 + 16, 2 * 32 + 16) == R.FIELD_COLOUR
    # a shot piece is gone, its neighbours stay
    world.bricks[8, 8] = False
    image = frame(world, stage, info)
    assert at(image, 64 + 4, 64 + 4) == R.FIELD_COLOUR
    assert at(image, 64 + 12, 64 + 4) == R.BRICK
    # an NPC (grey, yellow id), a bullet (white), a frozen player (cyan overlay), facing right
    npc = Tank(10, 256, 256, "down", 1)
    world.tanks.append(npc)
    world.bullets.append(Bullet(0, 100, 300, "up"))
    p1 = world.players[1]
    p1.frozen, p1.facing = True, "right"
    image = frame(world, stage, info)
    assert at(image, 256 + 3, 256 + 3) == R.NPC_BODY
    assert at(image, 256 + 16, 256 + 30) == R._darker(R.NPC_BODY)  # barrel down
    npc_middle = image[R.OFFSET[1] + 266:R.OFFSET[1] + 278, R.OFFSET[0] + 266:R.OFFSET[0] + 278]
    assert (npc_middle == (255, 255, 0)).all(axis=2).any()
    assert at(image, 101, 301) == R.BULLET_COLOUR and at(image, 99, 301) == R.FIELD_COLOUR
    frozen = at(image, p1.x + 3, p1.y + 3)
    red = R.TEAM_COLOURS[1]
    assert frozen != red and frozen[1] > 80 and frozen[2] > 80  # cyan over red
    assert at(image, p1.x + 30, p1.y + 16) != R._darker(red)  # the barrel points right, under the overlay
    blinked = frame(world, stage, R.FrameInfo(blink_on=False))
    assert at(blinked, p1.x + 3, p1.y + 3) == red
    assert at(blinked, p1.x + 30, p1.y + 16) == R._darker(red)


def panel(image):
    return image[:, R.PANEL_X:]


def test_panel_game_over_in_red_only_when_over():
    world, stage, _ = stage_world(1)  # one blue player: no other red text in the panel
    red = (panel(frame(world, stage)) == R.GAME_OVER).all(axis=2).sum()
    assert red == 0
    world.over = True
    assert (panel(frame(world, stage)) == R.GAME_OVER).all(axis=2).sum() > 50


def test_panel_text():
    world, stage, _ = stage_world(6)
    world.players[2].frozen = True
    info = R.FrameInfo(scores={0: 6, 1: 1}, targets={0: 101},
                       messages=[(0, 1, "hold the middle while I go for base C"), (1, 0, "Agree")])
    lines = [line for line, _ in R.panel_lines(world, stage, info)]
    assert "Stage 6" in lines and "Dynamic cooperation-competition" in lines
    assert "Round 0 / 80" in lines and "Time left 80" in lines
    assert "NPCs left 10" in lines and "NPCs in area 0" in lines
    assert "P0 T0 HP5 S6" in lines and "P1 T1 HP5 S1" in lines and "P2 T2 HP5 S0 [FROZEN]" in lines
    assert "  target 101" in lines and lines.count("  target -1") == 3
    assert R.message_lines(info) == ["0 -> 1: hold the middle while I", "  go for base C", "1 -> 0: Agree"]
    assert all(len(line) <= R.PANEL_CHARS for line in lines + R.message_lines(info))
    world.players[3].alive = False
    assert R.player_line(world, 3, info) == "P3 T3 HP0 S0 [KILLED]"
    image = frame(world, stage, info)
    # the player lines are written in their team colours
    for team in range(4):
        assert (panel(image) == R.TEAM_COLOURS[team]).all(axis=2).any()


def test_frame_is_drawn_without_a_window():
    world, stage, _ = stage_world(2)
    frame(world, stage)
    assert not pygame.display.get_init() or pygame.display.get_surface() is None


def test_ansi_map_stage_1():
    world = stage_world(1)[0]
    lines = R.ansi_map(world).splitlines()
    assert lines[0] == "......#A##......"
    assert lines[1] == ".####.####.####."
    assert lines[15] == ".0.#...##...#..."  # tank 0 on spawn digit 1; other spawns are empty
    assert lines[16:] == ["P0 T0 HP5 S0"]
    assert len(lines) == 17 and all(len(line) == 16 for line in lines[:16])


def test_ansi_map_symbols():
    game_map = parse_map(CUSTOM)
    stage = custom_stage(2, "ffa")
    world = make_world(game_map, stage)
    world.tanks.append(Tank(10, 250, 250, "down", 1))  # centre (266, 266): tile (8, 8)
    world.bullets.append(Bullet(1, 100, 300, "up"))
    world.bricks[8:12, 8:12] = False  # the brick tile (2, 2) shot away entirely
    world.bricks[8:12, 12:16] = [[True, False, False, False]] + [[False] * 4] * 3  # one piece left of tile (3,2)
    world.players[0].x, world.players[0].y = 47, 0  # centre (63, 16): still tile (1, 0)
    lines = R.ansi_map(world, R.FrameInfo(scores={1: 2})).splitlines()
    assert lines[0] == ".0@@~..........."
    assert lines[2] == "...#............"  # the spawn point '*' is an empty tile
    assert lines[4] == "1..............A"
    assert lines[7] == "...............B"
    assert lines[8][8] == "n" and lines[9][3] == "*"
    assert lines[16:] == ["P0 T0 HP5 S0", "P1 T1 HP5 S2"]


def test_drawing_survives_pygame_quit():
    world, stage, _ = stage_world(4)
    first = frame(world, stage)
    pygame.quit()  # what closing a human window may do; the cached fonts are then invalid
    assert (frame(world, stage) == first).all()


def test_redrawing_only_changed_pieces_gives_the_full_picture(monkeypatch):
    world, stage, _ = stage_world(5)
    frame(world, stage)
    rng = np.random.default_rng(1)
    for _ in range(5):  # pieces shot away, and one put back (a new map of the same shape)
        world.bricks[tuple(rng.integers(64, size=(2, 6)))] = False
        world.bricks[tuple(rng.integers(64, size=2))] = True
        incremental = frame(world, stage)
        monkeypatch.setattr(R, "_cache", None)  # a fresh cache draws the whole terrain
        assert (frame(world, stage) == incremental).all()
    other, other_stage, _ = stage_world(1)  # another map: most pieces differ
    assert (frame(other, other_stage)[32:544, 32:544] != frame(world, stage)[32:544, 32:544]).any()
    monkeypatch.setattr(R, "_cache", None)
    switched = frame(other, other_stage)
    frame(world, stage)
    assert (frame(other, other_stage) == switched).all()
