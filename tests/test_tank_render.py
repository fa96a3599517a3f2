"""Spec §5: the tank battle's pygame frame (832 x 576, real pygame under SDL's dummy video driver)
and its ANSI character map. Colours are checked at the pixels of the tiles and tanks that hold them.
``human`` mode draws by itself, once a round."""
from __future__ import annotations

import numpy as np
import pytest

import arena_envs
from arena_envs.core import frame_array
from arena_envs.tank_battle import render as R
from arena_envs.tank_battle.env import TankBattleEnv
from arena_envs.tank_battle.maps import apply_layout, load_map, parse_map
from arena_envs.tank_battle.records import Bullet, Tank
from arena_envs.tank_battle.stages import custom_stage, stage_config
from arena_envs.tank_battle.world import World
from tests.doc_examples import ROOT, extract

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
    assert at(image, 101, 301) == R.BULLET_COLOUR and at(image, 95, 301) == R.FIELD_COLOUR
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


def test_a_shot_brick_row_disappears_from_the_frame():
    world, stage, _ = stage_world(1)
    for op in ("up", "up", "shoot"):  # spec §8 fact 13: the shot removes the row y = 440 of tile (1, 13)
        world.play_round({0: op})
    image = frame(world, stage)
    for x in range(32, 64, 8):
        assert at(image, x + 4, 440 + 4) == R.FIELD_COLOUR
        assert at(image, x + 4, 432 + 4) == R.BRICK
    assert R.ansi_map(world).splitlines()[13][1] == "#"  # pieces are left in the tile
    tank = world.players[0]
    assert (tank.x, tank.y) == (32, 448)
    assert at(image, tank.x + 3, tank.y + 3) == R.TEAM_COLOURS[0]


# ------------------------------------------------------------------------------------ paper cuts


def relative_luminance(colour):
    """WCAG 2's relative luminance of an sRGB colour."""
    linear = [v / 255 / 12.92 if v <= 10 else ((v / 255 + 0.055) / 1.055) ** 2.4 for v in colour]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a, b):
    """WCAG 2's contrast ratio of two colours (1 to 21; text reads from 4.5)."""
    high, low = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_panel_text_stands_on_a_dark_box_on_which_every_colour_reads():
    world, stage, _ = stage_world(7)
    image = frame(world, stage)
    x, y, width, height = R.PANEL_BOX
    box = image[y:y + height, x:x + width].reshape(-1, 3)
    assert (box == R.PANEL_COLOUR).all(axis=1).mean() > 0.8  # the box holds the text, mostly background
    assert tuple(image[y - 1, x + 10]) == tuple(image[y + 10, x + width]) == R.FRAME_COLOUR
    assert contrast(R.TEAM_COLOURS[0], R.FRAME_COLOUR) < 2  # blue on the frame's grey: hard to read
    for colour in (*R.TEAM_COLOURS, R.TEXT, R.DIM_TEXT, R.GAME_OVER):
        assert contrast(colour, R.PANEL_COLOUR) >= 4.5, colour
    lines = R.panel_lines(world, stage, R.FrameInfo())
    texts = [line for line, _ in lines]
    assert len(texts) * R.LINE_HEIGHT < height  # every line is inside the box
    assert {colour for _, colour in lines if colour != R.TEXT} >= set(R.TEAM_COLOURS[:3])


def test_game_over_says_who_won_and_why():
    world, stage, _ = stage_world(1)
    world.over, world.ended_by, world.win_state = True, "touch", {0: 1}
    assert R.outcome(world) == (["P0 won"], R.TEAM_COLOURS[0], "the goal was reached")
    won = panel(frame(world, stage))
    world.win_state, world.ended_by = {0: 0}, "timeout"
    assert R.outcome(world) == (["No winner"], R.TEXT, "time is up")
    assert (panel(frame(world, stage)) != won).any()  # the panel says it
    world, stage, _ = stage_world(7)  # teams 0, 1, 2 of two tanks each
    world.over, world.ended_by = True, "last_base"
    world.win_state = {0: 1, 1: -1, 2: -1, 3: 1, 4: -1, 5: -1}
    assert R.outcome(world) == (["Team 0 won: P0 P3"], R.TEAM_COLOURS[0], "one base is left")
    image = panel(frame(world, stage))
    game_over = np.argwhere((image == R.GAME_OVER).all(axis=2))
    below = image[game_over[:, 0].max() + 1:game_over[:, 0].max() + 40]
    assert (below == R.TEAM_COLOURS[0]).all(axis=2).sum() > 30  # the winners' line, in their colour
    custom_world = make_world(parse_map(["1.2.3.4.5.6.7.8."]), custom_stage(8, "navigation"))
    custom_world.over, custom_world.win_state = True, dict.fromkeys(range(8), 1)
    winners, _, reason = R.outcome(custom_world)
    assert winners == ["Team 0 won: P0 P1 P2 P3", "P4 P5 P6 P7"] and reason == ""
    assert all(len(line) <= R.OUTCOME_CHARS for line in winners)


def test_bullets_are_drawn_large_on_their_centre():
    world, stage, _ = stage_world(4)
    world.bullets.append(Bullet(0, 100, 300, "up"))  # the 4 x 4 square (100..103, 300..303)
    image = frame(world, stage)
    half = R.BULLET_SIZE // 2
    core = [(x, y) for x in range(102 - half, 102 + half) for y in range(302 - half, 302 + half)]
    assert R.BULLET_SIZE >= 8 and all(at(image, x, y) == R.BULLET_COLOUR for x, y in core)
    ring = [(102 - half - 1, 302), (102 + half, 302), (102, 302 - half - 1), (102, 302 + half)]
    assert all(at(image, x, y) == R.BULLET_RING for x, y in ring)
    assert (frame(world, stage) == image).all()  # frames stay deterministic


# ---------------------------------------------------------------------------------- human mode


class CountingDisplay:
    """Counts pygame's display flips and the frame rates the window's clock is asked to keep (the
    real pygame calls still run: the dummy driver shows the frames nowhere)."""

    def __init__(self, monkeypatch):
        self.flips = 0
        self.rates: list[float] = []
        flip, clock = pygame.display.flip, pygame.time.Clock
        counter = self

        def counted_flip():
            counter.flips += 1
            flip()

        class Clock:
            def __init__(self):
                self.clock = clock()

            def tick(self, fps=0):
                counter.rates.append(fps)
                return self.clock.tick(fps)

        monkeypatch.setattr(pygame.display, "flip", counted_flip)
        monkeypatch.setattr(pygame.time, "Clock", Clock)


def test_human_mode_draws_once_a_round_inside_step_without_render(monkeypatch):
    """PettingZoo's convention: a stage-4 episode in ``human`` mode that never calls ``render()``
    updates the window after ``reset()`` and once a round (not once a decision), each frame kept to
    ``metadata["render_fps"]`` (raised on this instance to 1000 so that the test takes no time)."""
    display = CountingDisplay(monkeypatch)
    env = arena_envs.tank_battle_v0.env(stage=4, render_mode="human", max_rounds=12)
    raw = env.unwrapped
    raw.metadata = {**raw.metadata, "render_fps": 1000}
    env.reset(seed=0)
    env.action_space("tank_0").seed(0)  # one space object for both tanks
    assert display.flips == 1 and pygame.display.get_surface().get_size() == (R.WIDTH, R.HEIGHT)
    decisions = 0
    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        rounds, flips = raw.world.rounds_played, display.flips
        if termination or truncation:
            env.step(None)
            continue
        env.step(env.action_space(agent).sample(observation["action_mask"]))
        decisions += 1
        assert display.flips - flips == raw.world.rounds_played - rounds  # a flip exactly when a round ends
        shown = frame_array(pygame.display.get_surface())
        assert (shown == frame_array(raw._draw_frame())).all()  # the window shows the current state
    assert raw.world.rounds_played == 12 and sum(sum(c.values()) for c in raw.invalid_counts.values()) == 0
    assert display.flips == 1 + 12 and decisions == 2 * 12
    assert display.rates == [1000] * display.flips
    env.close()
    assert not pygame.display.get_init()


def test_a_render_call_after_every_decision_draws_nothing_more(monkeypatch):
    """A loop written for environments that draw only on ``render()`` (the issue's: a 4-fps wait per
    decision) draws and waits once a round all the same; a closed window is opened again."""
    display = CountingDisplay(monkeypatch)
    env = arena_envs.tank_battle_v0.env(stage=4, render_mode="human", max_rounds=3)
    env.unwrapped.metadata = {**env.unwrapped.metadata, "render_fps": 1000}
    env.reset(seed=0)
    assert env.render() is None and display.flips == 1
    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else env.action_space(agent).sample(observation["action_mask"]))
        env.render()
    assert display.flips == len(display.rates) == 1 + 3
    env.close()
    env.render()
    assert display.flips == 5 and pygame.display.get_surface() is not None
    env.close()


def test_human_mode_keeps_to_the_default_render_fps(monkeypatch):
    """The class's ``render_fps`` (4) is what the window keeps when the instance does not change it."""
    display = CountingDisplay(monkeypatch)
    env = arena_envs.tank_battle_v0.env(stage=1, render_mode="human", max_rounds=1)
    env.reset(seed=0)
    env.step({"op": 0, "target": 0, "coop": 0, "coop_partner": 0, "reply": [0] * 8})
    assert display.rates == [4, 4] and env.unwrapped.metadata["render_fps"] == 4
    env.close()


def test_the_tank_pages_human_example_plays_legal_moves_and_draws_once_a_round(monkeypatch):
    """docs/envs/tank_battle.md's first example, run as written (render_fps raised to 1000 for the
    test): no answer is invalid (it once answered ``Target 101``, tank_1's own base in stage 4),
    and the window is updated after reset and once a round."""
    (example, *_) = [e for e in extract(ROOT / "docs/envs/tank_battle.md") if e.lang == "python"]
    assert 'render_mode="human"' in example.code and "render()" not in example.code
    monkeypatch.setitem(TankBattleEnv.metadata, "render_fps", 1000)
    display = CountingDisplay(monkeypatch)
    namespace: dict = {}
    exec(compile(example.code, example.id, "exec"), namespace)
    raw = namespace["env"].unwrapped
    assert raw.stage.number == 4 and raw.world.over
    assert raw.invalid_counts == {a: {"unparseable": 0, "illegal": 0, "fallback": 0} for a in raw.possible_agents}
    assert display.flips == 1 + raw.world.rounds_played
