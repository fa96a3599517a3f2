"""The tank battle's maps and spawn layouts (spec §2.2, §2.4, §2.5; facts 1 and 3 of §8)."""
from __future__ import annotations

import numpy as np
import pytest

from arena_envs.tank_battle.maps import OFFICIAL_MAPS, apply_layout, layout_spawns, load_map, parse_map
from arena_envs.tank_battle.stages import stage_config

TOP8 = [(192, 0), (288, 0), (0, 192), (480, 192), (0, 288), (480, 288), (192, 480), (288, 480)]
# spec §2.4, "Resulting entities at layout seed 0": stage -> (players, bases, NPC spawn points)
ENTITIES = {
    1: ({0: (32, 480)}, {100: (224, 0)}, []),
    2: ({0: (32, 480)}, {100: (224, 0)}, [(0, 0), (160, 0), (320, 0), (480, 0)]),
    3: ({0: (32, 480), 1: (448, 480)}, {100: (256, 480), 101: (224, 0)}, [(0, 0), (160, 0), (320, 0), (480, 0)]),
    4: ({0: (0, 0), 1: (480, 480)}, {100: (32, 0), 101: (448, 480)},
        [(288, 0), (0, 192), (480, 192), (0, 288), (480, 288), (192, 480)]),
    5: ({0: (0, 0), 1: (480, 480), 2: (480, 0), 3: (0, 480)}, {100: (32, 0), 101: (448, 480)},
        [(288, 0), (0, 192), (480, 192), (0, 288), (480, 288), (192, 480)]),
    6: ({0: (0, 0), 1: (480, 480), 2: (480, 0), 3: (0, 480)},
        {100: (32, 0), 101: (448, 480), 102: (448, 0), 103: (32, 480)}, TOP8),
    7: ({0: (0, 0), 1: (480, 480), 2: (480, 0), 3: (64, 128), 4: (416, 352), 5: (416, 128)},
        {100: (32, 0), 101: (448, 480), 102: (448, 0)}, TOP8),
}


def _tile(game_map, x, y):
    return game_map.rows[y // 32][x // 32]


@pytest.mark.parametrize("stage", range(1, 8))
def test_official_maps_hold_the_spec_entities(stage):
    config = stage_config(stage)
    game_map = load_map(config.map_name)
    players, bases, spawns = ENTITIES[stage]
    assert {p: game_map.players[p] for p in range(config.n_players)} == players
    assert game_map.bases == bases
    assert list(game_map.npc_spawns) == spawns
    assert not game_map.steel.any() and not game_map.water.any()
    n_brick_tiles = sum(row.count("#") for row in game_map.rows)
    assert int(game_map.bricks.sum()) == 16 * n_brick_tiles


def test_stage_1_and_2_map_rows():
    single1, single30, double10 = load_map("single1"), load_map("single30"), load_map("double10")
    assert single1.rows[0] == "......#A##......" and single1.rows[15] == ".1.#.3.##.4.#.2."
    assert single30.rows[1:] == single1.rows[1:] and single30.rows[0] == "*....*#A##*....*"
    assert double10.rows[1:15] == single1.rows[1:15]
    assert double10.rows[15] == ".1.#.3.#A.4.#.2."
    # the goal is walled in on three sides: tiles (6,0), (8,0) and (7,1)
    assert single1.bricks[0:4, 24:28].all() and single1.bricks[0:4, 32:36].all() and single1.bricks[4:8, 28:32].all()


def test_eight_player_map_adds_four_spawns_to_multi20():
    coop8, multi20 = load_map("coop8"), load_map("multi20")
    assert {p: coop8.players[p] for p in range(4)} == {p: multi20.players[p] for p in range(4)}
    assert {p: coop8.players[p] for p in range(4, 8)} == {4: (64, 128), 5: (416, 352), 6: (416, 128), 7: (64, 352)}
    assert coop8.bases == multi20.bases and coop8.npc_spawns == multi20.npc_spawns
    assert stage_config(7, "8p").map_name == "coop8"


def test_loaded_maps_are_cached_and_read_only():
    game_map = load_map("multi30")
    assert load_map("multi30") is game_map
    for array in (game_map.bricks, game_map.steel, game_map.water):
        with pytest.raises(ValueError):
            array[0, 0] = True
    with pytest.raises(ValueError, match=r"unknown map 'nope'.*single1"):
        load_map("nope")
    assert set(OFFICIAL_MAPS) >= {stage_config(s).map_name for s in range(1, 8)}


def test_parse_pads_cuts_and_reads_every_kind_of_tile():
    game_map = parse_map(["1 #", "", "..@~*A", "........2.......XYZ"])
    assert len(game_map.rows) == 16 and all(len(row) == 16 for row in game_map.rows)
    assert game_map.rows[0] == "1.#............." and game_map.rows[4] == "." * 16
    assert game_map.players == {0: (0, 0), 1: (256, 96)}
    assert game_map.bases == {100: (160, 64)}
    assert game_map.npc_spawns == ((128, 64),)
    assert np.argwhere(game_map.steel).tolist() == [[2, 2]] and np.argwhere(game_map.water).tolist() == [[2, 3]]
    assert game_map.bricks[0:4, 8:12].all() and int(game_map.bricks.sum()) == 16
    text = parse_map("1...\n" + "....\n" * 15 + "2...\n", name="text")
    assert text.name == "text" and text.players == {0: (0, 0)}  # only the first 16 lines count


@pytest.mark.parametrize("char", ["$", "x", "0", "9", "E"])
def test_bad_characters_raise_one_line_errors(char):
    with pytest.raises(ValueError) as error:
        parse_map(["....", "..." + char])
    message = str(error.value)
    assert "\n" not in message and repr(char) in message and "row 1, col 3" in message
    assert "accepted" in message and "@" in message and "ABCD" in message


def test_a_digit_or_letter_twice_is_an_error():
    with pytest.raises(ValueError, match="'1' appears twice"):
        parse_map(["1..1"])
    with pytest.raises(ValueError, match="'A' appears twice"):
        parse_map(["A", "A"])


STAGE_LAYOUTS = [(stage, seed) for stage in range(1, 8) for seed in range(1, 6)]


@pytest.mark.parametrize(("stage", "seed"), STAGE_LAYOUTS)
def test_layout_seeds_1_to_5_reproduce_the_table(stage, seed):
    config = stage_config(stage)
    original = load_map(config.map_name)
    game_map = apply_layout(original, stage, seed, config.n_players, np.random.default_rng(0))
    table = layout_spawns(stage, seed)
    assert [p for p, *_ in table] == list(range(config.n_players))
    for player, x, y, cleared in table:
        assert game_map.players[player] == (x, y)
        assert (_tile(original, x, y) == "#") == cleared  # the shipped flag says what the map had there
        assert not game_map.bricks[y // 8:y // 8 + 4, x // 8:x // 8 + 4].any()
        old_x, old_y = original.players[player]
        if (old_x, old_y) not in [(px, py) for _, px, py, _ in table]:
            assert _tile(game_map, old_x, old_y) == "."  # the vacated spawn is empty
    # nothing else changed: bricks only disappear where a spawn landed
    removed = original.bricks & ~game_map.bricks
    assert int(removed.sum()) == 16 * sum(cleared for *_, cleared in table)
    assert game_map.bases == original.bases and game_map.npc_spawns == original.npc_spawns


def test_layout_examples_of_the_spec():
    stage3 = apply_layout(load_map("double10"), 3, 1, 2, np.random.default_rng(0))
    assert stage3.players[0] == (32, 320) and stage3.players[1] == (288, 384)
    assert not stage3.bricks[48:52, 36:40].any() and load_map("double10").bricks[48:52, 36:40].all()
    stage7 = apply_layout(load_map("coop30"), 7, 4, 6, np.random.default_rng(0))
    assert stage7.players[3] == (0, 0) and stage7.players[5] == (384, 0)
    # stages 5 and 6 share the positions; stage 4 is their first two players
    for seed in range(1, 6):
        assert layout_spawns(5, seed) == layout_spawns(6, seed)
        assert layout_spawns(4, seed) == layout_spawns(5, seed)[:2]


def test_layout_seed_0_is_the_map_as_drawn():
    game_map = load_map("multi20")
    assert apply_layout(game_map, 6, 0, 4, np.random.default_rng(0)) is game_map


@pytest.mark.parametrize("stage", [3, 4, 5, 6, 7])
def test_drawn_layouts_stay_in_the_quadrant(stage):
    config = stage_config(stage)
    original = load_map(config.map_name)
    for seed in range(6, 40):
        game_map = apply_layout(original, stage, seed, config.n_players, np.random.default_rng(seed))
        again = apply_layout(original, stage, seed, config.n_players, np.random.default_rng(seed))
        assert again.players == game_map.players
        for player in range(config.n_players):
            ox, oy = (v // 32 for v in original.players[player])
            x, y = (v // 32 for v in game_map.players[player])
            assert (x < 8, y < 8) == (ox < 8, oy < 8)
            if stage == 7:
                assert (x <= 4 or x >= 11) and (y <= 4 or y >= 11)
            assert _tile(original, 32 * x, 32 * y) in ".#" + str(player + 1) or any(
                original.players[q] == (32 * x, 32 * y) for q in range(player))
            assert not game_map.bricks[4 * y:4 * y + 4, 4 * x:4 * x + 4].any()
        assert len(set(game_map.players.values())) == len(game_map.players)
        assert game_map.bases == original.bases


def test_bad_layout_requests():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="layout_seed must be an integer >= 0"):
        apply_layout(load_map("single1"), 1, -1, 1, rng)
    with pytest.raises(ValueError, match="use layout_seed 0 or >= 6"):
        apply_layout(parse_map(["1"]), 0, 2, 1, rng)
    with pytest.raises(ValueError, match="use layout_seed 0 or >= 6"):
        apply_layout(load_map("coop8"), 7, 1, 8, rng)
    with pytest.raises(ValueError, match=r"no spawn for player\(s\) \[1\]"):
        apply_layout(parse_map(["1"]), 0, 0, 2, rng)
    assert apply_layout(load_map("coop8"), 7, 6, 8, rng).players.keys() == set(range(8))
