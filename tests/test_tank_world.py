"""The tank battle's world: the rules of BattleAgentBench's server, tick by tick, and the shortcuts that
skip its work (``Shortcuts``) compared with the procedure alone."""
from __future__ import annotations

import copy
import json
import pickle
import random
from collections import Counter
from functools import partial

import numpy as np
import pytest

from arena_envs.tank_battle.maps import load_map, parse_map
from arena_envs.tank_battle.records import Bullet, Tank
from arena_envs.tank_battle.shortcuts import Shortcuts
from arena_envs.tank_battle.stages import Mode, custom_stage, stage_config
from arena_envs.tank_battle.world import OPERATIONS, World, npc_choice, touches_side


def official(stage: int, seed: int = 0, **options) -> World:
    config = stage_config(stage)
    return World(load_map(config.map_name), config, np.random.default_rng(seed), **options)


BASES = "A..............B"  # two bases in the top corners, out of the way of row 8


def custom(rows: dict[int, str], mode: Mode, n_players: int = 2, **options) -> World:
    """A custom map: ``rows`` maps a row index to its text, other rows empty (row 0: ``BASES``); no NPCs."""
    lines = [rows.get(r, BASES if r == 0 else "") for r in range(16)]
    return World(parse_map(lines), custom_stage(n_players, mode), np.random.default_rng(0), **options)


def at(row: str, *cells: tuple[int, str]) -> str:
    chars = list(row.ljust(16, "."))
    for col, char in cells:
        chars[col] = char
    return "".join(chars)


def play(world: World, *rounds: dict[int, str]) -> list[tuple[int, int]]:
    """Play rounds; the positions of tank_0 after each."""
    out = []
    for ops in rounds:
        world.play_round(ops)  # type: ignore[arg-type]
        out.append((world.players[0].x, world.players[0].y))
    return out


# ---------------------------------------------------------------- setup
def test_stage_1_start():
    world = official(1)
    tank = world.players[0]
    assert (tank.x, tank.y, tank.facing, tank.health) == (32, 480, "up", 5)
    assert list(world.bases) == [100] and (world.bases[100].x, world.bases[100].y) == (224, 0)
    assert world.time_left == 60 and world.tick_mod == 0 and world.win_state == {0: None}
    while not world.over:
        world.play_round({0: "up"})
        assert all(t.id == 0 for t in world.tanks)  # no NPC ever
    assert world.npc_spawned == 0


@pytest.mark.parametrize("stage", range(1, 8))
def test_player_counts_and_no_npc_when_the_total_is_zero(stage):
    world = official(stage, npc_total=0)
    assert len(world.players) == [1, 1, 2, 2, 4, 4, 6][stage - 1] == stage_config(stage).n_players
    while not world.over:
        world.play_round({p: "shoot" for p in world.players})
    assert world.npc_spawned == 0


def test_sides_per_mode():
    s3, s4, s5, s7 = official(3), official(4), official(5), official(7)
    assert [s3.team_of(p) for p in (0, 1)] == [0, 0] and s3.base_owner_team(100) == 0 and s3.base_owner_team(101) == -1
    assert [s3.is_enemy_tank(0, 1), [t.id for t in s3.teammates(0)]] == [False, [1]]
    assert [s4.team_of(p) for p in (0, 1)] == [0, 1] and s4.is_enemy_tank(0, 1) and s4.teammates(0) == []
    assert [b.id for b in s4.own_bases(1)] == [101] and [b.id for b in s4.enemy_bases(1)] == [100]
    assert [t.id for t in s5.teammates(0)] == [2] and [t.id for t in s5.enemy_tanks(0)] == [1, 3]
    assert [s7.team_of(p) for p in range(6)] == [0, 1, 2, 0, 1, 2] and [t.id for t in s7.teammates(1)] == [4]
    assert [b.id for b in s7.enemy_bases(0)] == [101, 102]
    nav = official(1)
    assert nav.base_owner_team(100) is None and [b.id for b in nav.enemy_bases(0)] == [100] and nav.own_bases(0) == []


# ---------------------------------------------------------------- movement
def test_stage_1_moves_up_until_the_brick():
    world = official(1)
    assert play(world, {0: "up"}, {0: "up"}, {0: "up"}) == [(32, 463), (32, 448), (32, 448)]
    assert world.touching(world.players[0], "up") == "brick"


def test_stage_1_moves_right_until_the_brick():
    world = official(1)
    assert [x for x, _ in play(world, *[{0: "right"}] * 3)] == [49, 64, 64]


def test_stage_1_moves_left_to_the_border_and_down_only_turns():
    world = official(1)
    assert [x for x, _ in play(world, *[{0: "left"}] * 3)] == [15, 0, 0]
    assert play(world, {0: "down"}) == [(0, 480)]
    assert world.players[0].facing == "down" and world.touching(world.players[0], "down") == "border"


def test_open_map_17_px_per_round_and_the_11_tick_round():
    world = custom({8: "1", 15: at("", (15, "2"))}, "ffa")
    xs = [x for x, _ in play(world, *[{0: "right"}] * 20)]
    assert xs[:17] == [17 * (k + 1) for k in range(17)]
    assert xs[17:] == [300, 317, 334]
    assert world.rounds_played == 20


def test_rounds_last_17_ticks_except_every_18th():
    world = custom({8: "1", 15: at("", (15, "2"))}, "ffa")
    lengths = [world.play_round({}).ticks for _ in range(40)]
    assert lengths == ([17] * 17 + [11]) * 2 + [17] * 4
    assert world.time_left == 40


def test_snapping_rounds_half_to_even():
    world = custom({8: "1", 15: at("", (15, "2"))}, "ffa")
    tank = world.players[0]
    tank.x = tank.prev_x = 81
    tank.facing = "right"
    assert play(world, {0: "up"}, {0: "down"}, {0: "right"}) == [(80, 239), (80, 256), (97, 256)]
    for start, snapped in ((40, 32), (56, 64), (24, 32), (8, 0)):
        tank.x = tank.prev_x = start
        tank.facing = "right"
        world.play_round({0: "noop"})
        world._turn(tank, "up")
        assert tank.x == snapped


def test_shoot_and_noop_stop_a_tank_and_a_move_resumes():
    world = custom({8: "1", 15: at("", (15, "2"))}, "ffa")
    assert [x for x, _ in play(world, {0: "right"}, {0: "shoot"}, {0: "right"}, {0: "noop"}, {0: "right"})] == \
        [17, 17, 34, 34, 51]


def test_head_on_tanks_stop_touching():
    world = custom({8: at("", (2, "1"), (4, "2"))}, "ffa")
    world.play_round({0: "right", 1: "left"})
    assert (world.players[0].x, world.players[1].x) == (80, 112)
    world.play_round({0: "right", 1: "left"})
    assert (world.players[0].x, world.players[1].x) == (80, 112)
    assert world.players[0].y == world.players[1].y == 256


def test_driving_into_a_stationary_tank_stops_flush():
    world = custom({8: at("", (2, "1"), (5, "2"))}, "ffa")
    assert [x for x, _ in play(world, *[{0: "right"}] * 5)] == [81, 98, 115, 128, 128]
    assert world.players[1].x == 160


# ---------------------------------------------------------------- bricks and bullets
def test_each_shot_removes_one_line_of_four_pieces():
    world = official(1)
    ys = [y for _, y in play(world, *[{0: op} for op in
                                      ["up", "up", "shoot", "up", "shoot", "up", "shoot", "up", "shoot", "up"]])]
    assert ys == [463, 448, 448, 448, 448, 432, 432, 432, 432, 415]
    world = official(1)
    play(world, {0: "up"}, {0: "up"})
    tile = world.bricks[52:56, 4:8]
    for shot, row in enumerate([3, 2, 1, 0]):  # y = 440, 432, 424, 416
        world.play_round({0: "shoot"})
        assert int(tile.sum()) == 16 - 4 * (shot + 1)
        assert not tile[row].any() and tile[:row].all()
    assert not world.bricks[52:56, 4:8].any()


def test_bullet_flight():
    world = custom({4: "1", 15: at("", (15, "2"))}, "ffa")
    tank = world.players[0]
    tank.x, tank.y, tank.prev_x, tank.prev_y, tank.facing = 17, 256, 17, 256, "right"
    positions = []
    world.play_round({0: "shoot"})
    for _ in range(4):
        positions.append([(b.x, b.y) for b in world.bullets])
        world.play_round({})
    assert positions == [[(168, 270)], [(304, 270)], [(440, 270)], []]


def test_bullets_annihilate_and_a_later_shot_hits():
    world = custom({8: at("", (2, "1"), (10, "2"))}, "ffa")
    world.play_round({0: "right", 1: "left"})
    assert (world.players[0].x, world.players[1].x) == (81, 303)
    report = world.play_round({0: "shoot", 1: "shoot"})
    assert world.bullets == [] and world.players[0].health == world.players[1].health == 5 and not report.events
    world.play_round({0: "shoot"})
    assert world.players[1].health == 5 and len(world.bullets) == 1
    report = world.play_round({})
    assert world.players[1].health == 4 and world.events[0].agent_hits == 1 and world.points[0] == 10
    assert report.events[0].agent_hits == 1 and report.events[1].hit_by_agent == 1


def test_own_bullet_and_own_base():
    world = official(4)
    assert play(world, {0: "right"}) == [(0, 0)]
    assert world.players[0].facing == "right"
    world.play_round({0: "shoot"})
    world.play_round({0: "shoot"})
    assert 100 in world.bases and world.players[0].health == 5 and world.bullets == []


def test_friendly_fire_freezes_until_the_short_round_ends():
    world = custom({0: "A", 8: at("", (2, "1"), (5, "2")), 15: at("", (15, "B"))}, "coop_vs_npc")
    ops = ["right", "up", "down", "right", "shoot"]
    frozen_during = []
    for k, op in enumerate(ops):
        world.play_round({0: op, 1: "noop"}, on_tick=lambda w: frozen_during.append(w.players[1].frozen))
        if k < 4:
            assert not world.players[1].frozen
    assert world.players[1].frozen and world.players[1].health == 5 and any(frozen_during)
    tank_1 = world.players[1]
    start = (tank_1.x, tank_1.y)
    for _ in range(5, 18):
        world.play_round({1: "left"})
        assert (tank_1.x, tank_1.y, tank_1.facing) == (*start, "left")
    assert not tank_1.frozen
    world.play_round({1: "left"})
    assert tank_1.x == start[0] - 17
    assert world.events[0].agent_hits == 0 and world.points[0] == 0


@pytest.mark.parametrize("tile", ["~", "@"])
def test_water_and_steel_stop_tanks_only_water_lets_bullets_pass(tile):
    world = custom({0: "A", 8: at("", (2, "1"), (5, tile), (9, "B")), 15: at("", (15, "2"))}, "ffa")
    assert [x for x, _ in play(world, *[{0: "right"}] * 5)] == [81, 98, 115, 128, 128]
    assert world.touching(world.players[0], "right") == ("water" if tile == "~" else "steel")
    world = custom({0: "A", 8: at("", (2, "1"), (5, tile), (9, "B")), 15: at("", (15, "2"))}, "ffa")
    play(world, *[{0: "right"}] * 3)
    assert world.players[0].x == 115
    world.play_round({0: "shoot"})
    assert 101 in world.bases
    if tile == "~":
        report = world.play_round({})
        assert 101 not in world.bases and report.bases_destroyed == [101]
    else:
        for _ in range(6):
            world.play_round({0: "shoot"})
        assert 101 in world.bases and world.steel[8, 5]


# ---------------------------------------------------------------- bases and the end
def test_destroying_the_enemy_base_wins():
    world = custom({0: "A", 8: at("", (2, "1"), (6, "B")), 15: at("", (15, "2"))}, "ffa")
    assert [x for x, _ in play(world, *[{0: "right"}] * 4)] == [81, 98, 115, 132]
    report = world.play_round({0: "shoot"})
    assert report.bases_destroyed == [101] and report.eliminated == [1] and report.ticks < 17
    assert world.over and world.ended_by == "last_base"
    assert world.win_state == {0: 1, 1: -1} and not world.players[1].alive
    assert world.events[0].base_kills == 1 and world.points[0] == 200
    with pytest.raises(RuntimeError, match="the game is over"):
        world.play_round({})


def test_touching_the_goal_ends_the_game_at_once():
    world = custom({0: "", 8: at("", (2, "1"), (5, "A"))}, "navigation", n_players=1)
    xs = [x for x, _ in play(world, {0: "right"}, {0: "right"}, {0: "right"})]
    assert xs == [81, 98, 115] and not world.over
    report = world.play_round({0: "right"})
    assert world.players[0].x == 128 and world.over and world.ended_by == "touch" and world.win_state == {0: 1}
    assert report.ticks == 13


def test_shooting_the_goal_ends_without_a_win():
    world = custom({0: "", 8: at("", (2, "1"), (5, "A"))}, "navigation", n_players=1)
    world.play_round({0: "right"})
    world.play_round({0: "shoot"})
    assert world.over and world.ended_by == "no_bases" and world.win_state == {0: 0} and not world.bases


def test_npc_bullets_and_base_ownership_in_co_op_mode():
    world = official(3, npc_total=0)
    # an NPC bullet reaching base 101 (the NPC faction's, walled in: the bullet starts next to it) is absorbed
    world.bullets.append(Bullet(10, 238, 18, "up", 238, 18))
    world.play_round({})
    assert 101 in world.bases and world.bullets == []
    # players cannot destroy their own base 100 (at (256, 480); a bullet flying left along the bottom row)
    world.bullets.append(Bullet(0, 300, 494, "left", 300, 494))
    world.play_round({})
    assert 100 in world.bases and world.bullets == [] and world.players[0].alive
    # an NPC bullet destroys base 100: both players lose
    world.bullets.append(Bullet(10, 300, 494, "left", 300, 494))
    report = world.play_round({})
    assert 100 not in world.bases and sorted(report.eliminated) == [0, 1]
    assert world.over and world.win_state == {0: -1, 1: -1}


def test_npc_bullets_never_destroy_the_navigation_goal():
    world = official(2, npc_total=0)
    world.bullets.append(Bullet(10, 238, 18, "up", 238, 18))
    world.play_round({})
    assert 100 in world.bases and not world.over and world.bullets == []
    world.bullets.append(Bullet(0, 238, 18, "up", 238, 18))  # a player's bullet destroys the goal
    world.play_round({})
    assert 100 not in world.bases and world.over


def test_only_noop_lasts_60_decisions_and_the_last_round_one_tick():
    world = official(1)
    reports = []
    while not world.over:
        reports.append(world.play_round({0: "noop"}))
    assert len(reports) == 60 and reports[-1].ticks == 1 and world.ended_by == "timeout" and world.win_state == {0: 0}
    world = official(1, full_last_round=True)
    reports = []
    while not world.over:
        reports.append(world.play_round({}))
    assert len(reports) == 60 and reports[-1].ticks == 17 and world.ended_by == "timeout"


def test_losing_all_health_keeps_the_base():
    world = custom({0: "A", 8: at("", (2, "1"), (10, "2")), 15: at("", (15, "B"))}, "ffa")
    world.players[1].health = 1
    world.play_round({0: "right", 1: "left"})
    world.play_round({0: "shoot"})
    world.play_round({})
    assert not world.players[1].alive and world.win_state[1] == -1 and 101 in world.bases and not world.over


@pytest.mark.parametrize("stage", [4, 5, 6, 7])
def test_a_game_ends_when_one_base_remains(stage):
    world = official(stage, npc_total=0)
    owners = {b: world.base_owner_team(b) for b in world.bases}
    last = max(world.bases)
    for base_id in sorted(world.bases)[:-1]:
        world._hit_base(world.bases[base_id], 10)  # as if an NPC's bullet reached it
        losers = [p for p in world.players if world.team_of(p) == owners[base_id]]
        assert all(not world.players[p].alive for p in losers)
    world._check_end()
    assert world.over and world.ended_by == "last_base" and list(world.bases) == [last]
    winners = [p for p in world.players if world.team_of(p) == owners[last]]
    assert all(world.win_state[p] == 1 for p in winners)
    assert all(world.win_state[p] == -1 for p in world.players if p not in winners)


# ---------------------------------------------------------------- NPCs
def _watch_npcs(born: dict[int, tuple[int, int, str]], world: World) -> None:
    """After a tick: at most 5 NPCs alive, in spawn order; note where and how each one appeared."""
    npcs = [t for t in world.tanks if t.id >= 10]
    assert len(npcs) <= 5
    assert [t.id for t in npcs] == sorted(t.id for t in npcs)
    for t in npcs:
        born.setdefault(t.id, (t.x, t.y, t.facing))


@pytest.mark.parametrize("stage", [2, 3, 6])
def test_npc_limits_ids_and_spawns(stage):
    spawns = set(load_map(stage_config(stage).map_name).npc_spawns)
    py = random.Random(stage)
    totals = []
    for seed in range(8):
        world = official(stage, seed)
        born: dict[int, tuple[int, int, str]] = {}
        while not world.over:
            world.play_round({p: py.choice(OPERATIONS) for p in world.players}, on_tick=partial(_watch_npcs, born))
        assert sorted(born) == list(range(10, 10 + len(born))) and world.npc_spawned == len(born) <= 10
        assert all((x, y) in spawns and facing == "down" for x, y, facing in born.values())
        totals.append(len(born))
    assert max(totals) >= 5


def test_killed_npcs_are_replaced_up_to_the_total():
    stage = custom_stage(1, "navigation", rounds=80, npc_total=10)
    game_map = parse_map(["", "", at("", (2, "*")), "", "", "", "", "", at("", (2, "1")), "", "", "", "", "", "",
                          at("", (9, "A"))])
    world = World(game_map, stage, np.random.default_rng(0), npc_spawn_base_prob=1.0, npc_act_prob=0.0)
    born: dict[int, tuple[int, int, str]] = {}
    while not world.over:
        world.play_round({0: "shoot"}, on_tick=partial(_watch_npcs, born))
    assert sorted(born) == list(range(10, 20)) and world.npc_spawned == 10
    assert world.events[0].npc_kills == 10 and world.points[0] == 50 and world.players[0].health == 5


def test_npcs_never_damage_npcs():
    world = official(2, npc_total=1, npc_spawn_base_prob=1.0, npc_act_prob=0.0)
    world.play_round({})
    npc = next(t for t in world.tanks if t.id >= 10)
    world.bullets.append(Bullet(11, npc.x + 14, npc.y + 40, "up", npc.x + 14, npc.y + 48))
    world.play_round({})
    assert npc.alive and npc in world.tanks


def test_npc_randomness_comes_from_the_generator():
    a, b = official(2, seed=5), official(2, seed=5)
    for _ in range(30):
        a.play_round({0: "noop"})
        b.play_round({0: "noop"})
    assert a.state() == b.state() and a.npc_spawned > 0


# ---------------------------------------------------------------- properties; the shortcuts
def _overlaps_obstacle(world: World, x: int, y: int) -> bool:
    if world.bricks[y // 8:(y + 31) // 8 + 1, x // 8:(x + 31) // 8 + 1].any():
        return True
    tiles = (slice(y // 32, (y + 31) // 32 + 1), slice(x // 32, (x + 31) // 32 + 1))
    if world.steel[tiles].any() or world.water[tiles].any():
        return True
    return any(b.x < x + 32 and x < b.x + 32 and b.y < y + 32 and y < b.y + 32 for b in world.bases.values())


@pytest.mark.parametrize("stage", range(1, 8))
def test_tanks_never_overlap_obstacles_and_stay_in_the_field(stage):
    """No tank overlaps an obstacle or leaves the field. (Two tanks can end up overlapping after a
    turn's snap: their separation compares with the previous positions, and a snap is no move.)"""
    py = random.Random(stage)
    for seed in range(4):
        world = official(stage, seed)
        while not world.over:
            world.play_round({p: py.choice(OPERATIONS) for p in world.players})
            for t in world.tanks:
                assert 0 <= t.x <= 480 and 0 <= t.y <= 480
                assert not _overlaps_obstacle(world, t.x, t.y), (stage, seed, t)


@pytest.mark.parametrize("stage", [1, 3, 4])
def test_tanks_that_never_turn_never_overlap(stage):
    """Tanks keep apart too: without snaps (players keep one axis, NPCs never act) no tank drives into
    another. A 1-px overlap can stay: a tank pressed against a wall moves 1 px, the tank behind it is
    pushed flush against that position (3e), then the wall pushes the first one back (3f)."""
    py = random.Random(stage)
    for seed in range(4):
        world = official(stage, seed, npc_act_prob=0.0)
        axis = {p: py.choice([("up", "down"), ("left", "right")]) for p in world.players}
        while not world.over:
            world.play_round({p: py.choice(axis[p] + ("shoot", "noop")) for p in world.players if p in axis})
            tanks = world.tanks
            for i, t in enumerate(tanks):
                for u in tanks[i + 1:]:
                    assert max(abs(t.x - u.x), abs(t.y - u.y)) >= 31, (t, u)  # at most 1 px deep


class _PlainWorld(World):
    """The reference procedure alone: none of its Shortcuts."""

    shortcuts = False


def _counting(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count the work each shortcut saves in the worlds that take them (the plain ones are not counted)."""
    taken: Counter[str] = Counter()
    push_out, settle, quiet_stretch = World._push_out, Shortcuts.settle, Shortcuts.quiet_stretch

    def counted_push_out(self: World, t: Tank) -> None:
        taken["push-outs"] += self._fast is not None
        push_out(self, t)

    def counted_settle(self: Shortcuts, t: Tank) -> None:
        before, pushes = (t.x, t.y), taken["push-outs"]
        settle(self, t)
        if taken["push-outs"] == pushes:
            taken["settle inside its range" if (t.x, t.y) == before else "settle onto its range's end"] += 1

    def counted_stretch(self: Shortcuts) -> int:
        ticks = quiet_stretch(self)
        taken["quiet stretches"] += ticks > 0
        return ticks

    monkeypatch.setattr(World, "_push_out", counted_push_out)
    monkeypatch.setattr(Shortcuts, "settle", counted_settle)
    monkeypatch.setattr(Shortcuts, "quiet_stretch", counted_stretch)
    return taken


@pytest.mark.parametrize(("stage", "variant"), [(s, "default") for s in range(1, 8)] + [(7, "8p")])
def test_the_shortcuts_change_nothing(stage, variant, monkeypatch):
    """Worlds with the shortcuts, without them, and with them but every tick on its own (no quiet
    stretch), played with the same random operations, agree after every round, in state and report;
    every shortcut saves work in each stage."""
    taken = _counting(monkeypatch)
    config = stage_config(stage, variant)
    for seed in range(4):
        options = {"removal_skip": seed >= 2, "full_last_round": seed == 3}
        fast, plain, ticked = (kind(load_map(config.map_name), config, np.random.default_rng(seed), **options)
                               for kind in (World, _PlainWorld, World))
        py = random.Random(seed)
        while not fast.over:
            ops = {p: py.choice(OPERATIONS) for p in fast.players}
            report = fast.play_round(ops)
            assert plain.play_round(ops) == ticked.play_round(ops, on_tick=lambda w: None) == report
            assert fast.state() == plain.state() == ticked.state()
        assert plain.over and ticked.over
    saved = ("quiet stretches", "settle inside its range", "settle onto its range's end")
    assert all(taken[name] > 0 for name in saved), sorted(taken.items())


def test_pressed_tanks_are_held_as_tick_by_tick():
    """A tank driving into an idle tank, or two tanks head-on, stay put while a third drives on, with
    the shortcuts as without them."""
    rows = {8: at("", (2, "1"), (3, "2"), (9, "3")), 12: at("", (2, "4"))}
    fast, plain = custom(rows, "ffa", 4), _PlainWorld(custom(rows, "ffa", 4).map, custom_stage(4, "ffa"),
                                                       np.random.default_rng(0))
    rounds = [{0: "right", 1: "noop", 2: "left", 3: "down"}, {0: "right", 1: "left", 2: "right", 3: "up"},
              {0: "noop", 1: "left", 2: "down", 3: "right"}]
    for ops in rounds * 2:
        assert fast.play_round(ops) == plain.play_round(ops)
        assert fast.state() == plain.state()
    assert (fast.players[0].x, fast.players[1].x) == (64, 96)


# ---------------------------------------------------------------- touching, state, copies
def test_touching_categories():
    world = custom({0: "A", 4: at("", (4, "@")), 8: at("", (2, "1"), (3, "2"), (6, "#")),
                    15: at("", (15, "B"))}, "ffa")
    tank_0, tank_1 = world.players[0], world.players[1]
    assert world.touching(tank_0, "right") == "enemy_tank" and world.touching(tank_1, "left") == "enemy_tank"
    assert world.touching(tank_0, "up") == "nothing" and world.touching(tank_0, "down") == "nothing"
    tank_1.x = 160  # the brick tile (6,8) at x = 192: one 8-px gap away counts
    assert world.touching(tank_1, "right") == "brick"
    tank_1.x = 144
    assert world.touching(tank_1, "right") == "nothing"
    tank_1.x, tank_1.y = 128, 160  # steel tile (4,4) right above
    assert world.touching(tank_1, "up") == "steel"
    tank_0.x, tank_0.y = 32, 0  # base A at (0, 0) on the left, its own
    assert world.touching(tank_0, "left") == "own_base" and world.touching(tank_0, "up") == "border"
    tank_1.x, tank_1.y = 32, 0
    assert world.touching(tank_1, "left") == "enemy_base"


def test_state_is_json_safe_and_worlds_copy():
    world = official(2, seed=1)
    for _ in range(10):
        world.play_round({0: "shoot"})
    state = world.state()
    assert json.loads(json.dumps(state)) == state
    assert state["time_left"] == 50 and len(state["bricks"]) == 64
    twin, pickled = copy.deepcopy(world), pickle.loads(pickle.dumps(world))
    for _ in range(5):
        for w in (world, twin, pickled):
            w.play_round({0: "up"})
    assert world.state() == twin.state() == pickled.state()
    assert load_map("single30").bricks.sum() > world.bricks.sum()  # the cached map is untouched


@pytest.mark.parametrize(("stage", "shooter", "destroyed"), [(4, 0, False), (4, 1, True), (5, 2, False),
                                                            (5, 3, True), (7, 3, False), (7, 4, True)])
def test_a_base_falls_only_to_other_sides(stage, shooter, destroyed):
    """Base 100 at (32, 0): a bullet flying up column x = 46 from the free tile below reaches only it."""
    world = official(stage, npc_total=0)
    world.bullets.append(Bullet(shooter, 46, 40, "up", 46, 40))
    report = world.play_round({})
    assert (100 not in world.bases) == destroyed and world.bullets == []
    assert report.bases_destroyed == ([100] if destroyed else [])
    assert world.events[shooter].base_kills == int(destroyed)
    owners = [p for p in world.players if world.team_of(p) == 0]
    assert all(world.players[p].alive != destroyed for p in owners)


def test_npc_choice_follows_the_reference_probabilities():
    draws = np.random.default_rng(0).random((20000, 2))
    choices = [npc_choice(a, b) for a, b in draws]
    share = {c: choices.count(c) / len(choices) for c in set(choices)}
    assert set(share) == {None, "shoot", "up", "down", "left", "right"}
    assert abs(share[None] - 0.6) < 0.02 and abs(share["shoot"] - 0.2) < 0.02
    assert all(abs(share[d] - 0.05) < 0.01 for d in ("up", "down", "left", "right"))
    assert npc_choice(0.0, 0.99, act_prob=0.0) is None and npc_choice(0.99, 0.0, act_prob=1.0) == "up"


@pytest.mark.parametrize("x, y, side, touching", [
    (32, 64, "right", True), (32, 95, "right", True), (32, 96, "right", False), (33, 64, "right", False),
    (-32, 64, "left", True), (0, 32, "up", True), (31, 32, "up", True), (32, 32, "up", False),
    (0, 96, "down", True), (-31, 96, "down", True), (0, 96, "up", False),
])
def test_touches_side_is_the_touching_test_of_the_world(x, y, side, touching):
    """The benchmark's touching test for 32-px objects: flush on the side, overlapping along it (the
    rule tank's test for enemy tanks in front and teammates in the way)."""
    tank = Tank(0, 0, 64, "up", 5)
    assert touches_side(tank, x, y, side) is touching
