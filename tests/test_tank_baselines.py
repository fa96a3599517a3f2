"""The tank battle baselines (spec §6): the rule tank's steps on a real world, the random tank's
answers, the NPC driver and the keyboard tank under pygame's dummy video driver."""
from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import arena_envs
from arena_envs.tank_battle.env import TARGET_IDS, TankBattleEnv
from arena_envs.tank_battle.maps import load_map, parse_map
from arena_envs.tank_battle.parser import format_ok, parse_answer
from arena_envs.tank_battle.stages import Stage, custom_stage, stage_config
from arena_envs.tank_battle.world import World
from baselines.tank.answer import TankMove, answer_text, native_action, player_of
from baselines.tank.keyboard import KeyboardTank, WindowClosed, key_operation
from baselines.tank.npc import NpcTank
from baselines.tank.random_policy import RandomTank
from baselines.tank.rule import RuleTank
from tests.play_helpers import play


class BoundEnv:
    """What the policies read from the raw environment: ``world``, ``stage``, ``settings.action_mode``,
    ``pending_requests``, ``nearest_target`` (the env's own); plus ``render`` for the keyboard tank."""

    metadata = {"render_fps": 30}
    nearest_target = TankBattleEnv.nearest_target

    def __init__(self, world: Any, stage: Stage, action_mode: str = "dict",
                 pending: dict[int, list[int]] | None = None, render_mode: str | None = "rgb_array"):
        self.world, self.stage, self.settings = world, stage, SimpleNamespace(action_mode=action_mode)
        self.pending = pending or {}
        self.render_mode = render_mode
        self.frames = 0

    def pending_requests(self, player: int) -> list[int]:
        return list(self.pending.get(player, ()))

    def render(self) -> np.ndarray:
        self.frames += 1
        return np.zeros((576, 832, 3), dtype=np.uint8)


def official(number: int, variant: str = "default", seed: int = 0) -> tuple[World, Stage]:
    stage = stage_config(number, variant)
    return World(load_map(stage.map_name), stage, np.random.default_rng(seed)), stage


def custom(rows: dict[int, str], mode: str, team_count: int = 1) -> tuple[World, Stage]:
    """A world on a custom map; ``rows`` gives the non-empty rows (row index -> 16 characters)."""
    game_map = parse_map([rows.get(r, "." * 16) for r in range(16)])
    stage = custom_stage(len(game_map.players), mode, team_count)  # type: ignore[arg-type]
    return World(game_map, stage, np.random.default_rng(0), npc_total=0), stage


def seat(policy: Any, env: BoundEnv, player: int = 0, seed: int | None = 0) -> Any:
    policy.bind(env)
    policy.reset(f"tank_{player}", seed)
    return policy


def rule_move(world: World, stage: Stage, player: int = 0, pending: dict[int, list[int]] | None = None) -> TankMove:
    return seat(RuleTank(), BoundEnv(world, stage, pending=pending), player).decide(world, stage)


def row(**cells: str) -> str:
    """A 16-character map row with the given characters at hex columns: ``row(c2="1", c5="A")``."""
    chars = ["."] * 16
    for key, char in cells.items():
        chars[int(key[1:])] = char
    return "".join(chars)


# ------------------------------------------------------------------------------- answers

def test_answer_text_follows_each_stage_output_format():
    move = TankMove("up", 101, {3: True, 1: False})
    assert answer_text(stage_config(1), move) == "#Operation: #Move_up#"
    assert answer_text(stage_config(2), TankMove("shoot")) == "#Operation: #Shoot#"
    assert answer_text(stage_config(4), move) == "#Operation: Target 101: #Move_up#"
    assert answer_text(stage_config(3), move) == ("#Attack operation: Target 101: #Move_up#\n"
                                                  "#Cooperation operation: #No_coop#\n"
                                                  "Reply_message 1: Disagree\nReply_message 3: Agree")
    assert answer_text(stage_config(5, "no_coop"), move) == "#Attack operation: Target 101: #Move_up#"
    assert answer_text(stage_config(6, "no_coop"), move) == "#Operation: Target 101: #Move_up#"
    with pytest.raises(ValueError, match="'noop' has no answer text"):
        answer_text(stage_config(3), TankMove("noop"))


@pytest.mark.parametrize("number", range(1, 8))
def test_answer_text_is_read_back_by_the_parser(number):
    world, stage = official(number)
    for op in ("up", "down", "left", "right", "shoot"):
        target = world.enemy_bases(0)[0].id
        text = answer_text(stage, TankMove(op, target, {1: True} if stage.cooperative else {}))
        for strict in (False, True):
            decision = parse_answer(text, stage, strict=strict)
            assert decision.op == op and format_ok(world, 0, stage, decision)
            if not stage.navigation:
                assert decision.target == target
            if stage.cooperative:
                assert decision.coop == "none" and decision.replies == {1: True}


def test_native_actions_of_both_action_modes():
    assert [native_action("discrete", TankMove(op)) for op in ("up", "down", "left", "right", "shoot", "noop")] \
        == [0, 1, 2, 3, 4, 5]
    action = native_action("dict", TankMove("left", 101, {2: True, 5: False}))
    assert (action["op"], TARGET_IDS[action["target"]], action["coop"]) == (2, 101, 0)
    assert action["reply"].tolist() == [0, 0, 1, 0, 0, 2, 0, 0]
    assert TARGET_IDS[native_action("dict", TankMove("shoot"))["target"]] == -1
    with pytest.raises(ValueError, match="action_mode must be"):
        native_action("text", TankMove("up"))
    with pytest.raises(ValueError, match="target 200 has no index"):
        native_action("dict", TankMove("up", 200))


def test_seats_are_tank_ids_and_a_policy_needs_its_env():
    assert player_of("tank_5") == 5
    with pytest.raises(ValueError, match="tank_<id>"):
        player_of("player_0")
    with pytest.raises(RuntimeError, match="bind"):
        RuleTank().reset("tank_0", 0)
    with pytest.raises(ValueError, match="native must be"):
        RuleTank(native="yes")  # type: ignore[arg-type]


def test_tank_kinds_are_declared_as_entry_points():
    """``arena run tank_battle_v0 --players keyboard,rule`` finds them (the env's own ``random`` wins
    over the generic one); read from pyproject.toml, so it holds whichever checkout is installed."""
    import importlib
    import re
    from pathlib import Path

    from arena_envs.core import Policy

    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    section = pyproject.split('[project.entry-points."arena_envs.policies"]')[1].split("\n[")[0]
    kinds = dict(re.findall(r'^"(tank_battle_v0/\w+)" = "([\w.:]+)"$', section, re.M))
    assert set(kinds) == {f"tank_battle_v0/{name}" for name in ("random", "rule", "npc", "keyboard")}
    for name, target in kinds.items():
        module, _, attribute = target.partition(":")
        policy = getattr(importlib.import_module(module), attribute)
        assert issubclass(policy, Policy) and policy.name == name.partition("/")[2]


# ------------------------------------------------------------------------------- rule tank

def test_rule_tank_first_three_decisions_in_stage_1():
    """Spec fact 38 (and §6.3's example): Move_up -> (32, 463), Move_up -> (32, 448), Shoot."""
    world, stage = official(1)
    policy = seat(RuleTank(), BoundEnv(world, stage))
    answers, positions = [], []
    for _ in range(3):
        answers.append(policy.act(None, {}))
        move = policy.decide(world, stage)
        world.play_round({0: move.op})
        positions.append((world.players[0].x, world.players[0].y))
    assert answers == ["#Operation: #Move_up#", "#Operation: #Move_up#", "#Operation: #Shoot#"]
    assert positions[:2] == [(32, 463), (32, 448)]


@pytest.mark.parametrize("layout", [1, 2, 4, 5])
def test_rule_tank_reaches_the_goal_of_stage_1(layout):
    """With layouts 0 and 3 the greedy zigzag through the brick rows runs out of its 60 rounds a
    tile or two short of the base (at (161, 64) and (160, 16))."""
    from arena_envs.tank_battle.maps import apply_layout

    stage = stage_config(1)
    world = World(apply_layout(load_map("single1"), 1, layout, 1, np.random.default_rng(0)), stage,
                  np.random.default_rng(0))
    policy = seat(RuleTank(native=True), BoundEnv(world, stage, action_mode="discrete"))
    while not world.over:
        world.play_round({0: policy.decide(world, stage).op})
    assert world.ended_by == "touch" and world.win_state[0] == 1


def test_rule_tank_targets_the_nearest_enemy_ties_to_the_lower_id():
    # tank_0 at (64, 256); tank_1 at (224, 256) and base 101 at (64, 96): both 160 px away
    world, stage = custom({0: row(c0="A"), 3: row(c2="B"), 8: row(c2="1", c7="2")}, "ffa")
    assert rule_move(world, stage).target == 1
    # base 101 one tile nearer: it wins
    world, stage = custom({0: row(c0="A"), 4: row(c2="B"), 8: row(c2="1", c7="2")}, "ffa")
    assert rule_move(world, stage).target == 101
    # the own base (100) is never a target, however near
    world, stage = custom({7: row(c3="A"), 0: row(c15="B"), 8: row(c2="1"), 15: row(c15="2")}, "ffa")
    assert rule_move(world, stage).target == 1


def test_rule_tank_shoots_when_lined_up_and_facing():
    # enemy base straight above (|dx| < 32), the tank faces up (its initial facing): shoot
    world, stage = custom({0: row(c0="A"), 2: row(c2="B"), 8: row(c2="1"), 15: row(c15="2")}, "ffa")
    assert rule_move(world, stage) == TankMove("shoot", 101)
    # lined up on the row (the base to the right): turn first, then shoot
    world, stage = custom({0: row(c0="A"), 8: row(c2="1", c9="B"), 15: row(c15="2")}, "ffa")
    assert rule_move(world, stage) == TankMove("right", 101)
    world.play_round({0: "right"})
    assert world.players[0].facing == "right"
    assert rule_move(world, stage) == TankMove("shoot", 101)
    # navigation: lined up with the goal it keeps driving to touch it, never shoots it
    world, stage = custom({2: row(c2="A"), 8: row(c2="1")}, "navigation")
    assert rule_move(world, stage) == TankMove("up", 100)


def test_rule_tank_turns_toward_the_longer_axis():
    # goal 96 px left and 160 px up: vertical (up); 192 px left and 160 px up: horizontal (left)
    world, stage = custom({3: row(c2="A"), 8: row(c5="1")}, "navigation")
    assert rule_move(world, stage).op == "up"
    world, stage = custom({3: row(c0="A"), 8: row(c6="1")}, "navigation")
    assert rule_move(world, stage).op == "left"
    # a tie goes vertical: 160 px right and 160 px down
    world, stage = custom({8: row(c2="1"), 13: row(c7="A")}, "navigation")
    assert rule_move(world, stage).op == "down"


def test_rule_tank_shoots_bricks_in_front_when_facing_its_way():
    # brick tile right above, goal further up: shoot
    world, stage = custom({1: row(c2="A"), 7: row(c2="#"), 8: row(c2="1")}, "navigation")
    assert rule_move(world, stage).op == "shoot"
    # one shot takes the lowest row of pieces: the next is one 16-px step away, shoot again
    world.play_round({0: "shoot"})
    assert not world.bricks[31, 8:12].any() and world.bricks[30, 8:12].all()
    assert rule_move(world, stage).op == "shoot"
    # two rows gone: the way is free for 16 px, drive
    world.play_round({0: "shoot"})
    assert not world.bricks[30, 8:12].any()
    assert rule_move(world, stage).op == "up"
    # bricks in front but the target lies the other way: turn, do not shoot
    world, stage = custom({7: row(c2="#"), 8: row(c2="1"), 14: row(c2="A")}, "navigation")
    assert rule_move(world, stage).op == "down"


def test_rule_tank_shoots_an_enemy_tank_touching_its_front():
    # tank_1 drives left to (79, 224): it touches tank_0's front (15 px off) while base 101, right of
    # tank_0, is the nearest target (32 px against 47)
    world, stage = custom({0: row(c0="A"), 7: row(c3="2"), 8: row(c1="B", c2="1")}, "ffa")
    assert rule_move(world, stage) == TankMove("left", 101)
    world.play_round({0: "noop", 1: "left"})
    assert (world.players[1].x, world.players[1].y) == (79, 224)
    assert rule_move(world, stage) == TankMove("shoot", 1)
    # an enemy tank touching a side the tank does not face: no reflex shot, it turns to it
    world, stage = custom({0: row(c0="A"), 8: row(c1="2", c2="1"), 15: row(c15="B")}, "ffa")
    assert rule_move(world, stage) == TankMove("left", 1)


def test_rule_tank_anti_stuck_takes_the_other_axis_toward_the_target():
    # steel above, goal up and to the right: go right instead
    world, stage = custom({0: row(c5="A"), 7: row(c2="@"), 8: row(c2="1")}, "navigation")
    assert rule_move(world, stage).op == "right"
    # water above, goal straight up (less than a tank off on x): first open side of up, left, down, right
    world, stage = custom({0: row(c2="A"), 7: row(c2="~"), 8: row(c2="1")}, "navigation")
    assert rule_move(world, stage).op == "left"
    # ... and with the left side shut too (steel), down
    world, stage = custom({0: row(c2="A"), 7: row(c2="~"), 8: row(c1="@", c2="1")}, "navigation")
    assert rule_move(world, stage).op == "down"
    # the other axis shut as well: the fallback order skips it
    world, stage = custom({0: row(c5="A"), 7: row(c2="@"), 8: row(c2="1", c3="@")}, "navigation")
    assert rule_move(world, stage).op == "left"


def test_rule_tank_anti_stuck_steps_around_its_own_base_and_teammates():
    # own base (100) right above in a free-for-all, enemy base up and to the right
    world, stage = custom({0: row(c6="B"), 7: row(c2="A"), 8: row(c2="1"), 15: row(c15="2")}, "ffa")
    move = rule_move(world, stage)
    assert move.op == "right" and move.target in (1, 101)
    # a teammate right above (co-op mode), the NPC faction's base up and to the right
    world, stage = custom({0: row(c5="B"), 7: row(c2="2"), 8: row(c2="1"), 15: row(c15="A")}, "coop_vs_npc")
    assert world.touching(world.players[0], "up") == "nothing"  # teammates are not reported (§9 Q13)
    assert rule_move(world, stage) == TankMove("right", 101)


def test_rule_tank_cooperation_no_coop_agrees_only_with_teammates():
    world, stage = official(7)  # teams: id mod 3; tank_3 is tank_0's teammate, tank_1 and tank_2 are not
    move = rule_move(world, stage, pending={0: [1, 3, 2]})
    assert move.replies == {1: False, 3: True, 2: False}
    policy = seat(RuleTank(), BoundEnv(world, stage, pending={0: [1, 3]}))
    decision = parse_answer(policy.act(None, {}), stage)
    assert decision.coop == "none" and decision.replies == {1: False, 3: True}
    assert format_ok(world, 0, stage, decision)


def test_rule_tank_is_deterministic_and_answers_natively():
    world, stage = official(5)
    moves = [rule_move(world, stage, player) for player in range(4)]
    assert moves == [rule_move(world, stage, player) for player in range(4)]
    policy = seat(RuleTank(native=True), BoundEnv(world, stage, action_mode="dict"))
    action = policy.act(None, {})
    assert TARGET_IDS[action["target"]] == moves[0].target and action["op"] == ("up", "down", "left", "right",
                                                                              "shoot").index(moves[0].op)


# ------------------------------------------------------------------------------- random tank

@pytest.mark.parametrize("number", range(1, 8))
def test_random_tank_never_noops_and_answers_well_formed_text(number):
    world, stage = official(number)
    seen: Counter[str] = Counter()
    for player in range(stage.n_players):
        policy = seat(RandomTank(), BoundEnv(world, stage), player, seed=player)
        enemies = {b.id for b in world.enemy_bases(player)} | {t.id for t in world.enemy_tanks(player)}
        for _ in range(60):
            text = policy.act(None, {})
            decision = parse_answer(text, stage)
            assert decision.op != "noop" and format_ok(world, player, stage, decision), text
            if not stage.navigation:
                assert decision.target in enemies
            if stage.cooperative:
                assert decision.coop == "none" and not decision.replies
            seen[decision.op] += 1
    assert set(seen) == {"up", "down", "left", "right", "shoot"}


def test_random_tank_draws_uniformly_from_its_own_seed():
    world, stage = official(6)  # tank_0's enemies: bases 101-103 and tanks 1-3
    policy = seat(RandomTank(), BoundEnv(world, stage), seed=7)
    moves = [policy.decide(world, stage) for _ in range(3000)]
    policy.reset("tank_0", 7)
    assert [policy.decide(world, stage) for _ in range(50)] == moves[:50]
    policy.reset("tank_0", 8)
    assert [policy.decide(world, stage) for _ in range(50)] != moves[:50]
    ops, targets = Counter(m.op for m in moves), Counter(m.target for m in moves)
    assert set(ops) == {"up", "down", "left", "right", "shoot"} and min(ops.values()) > 3000 / 5 * 0.85
    assert set(targets) == {1, 2, 3, 101, 102, 103} and min(targets.values()) > 3000 / 6 * 0.85


def test_random_tank_native_actions():
    world, stage = official(4)
    for mode in ("dict", "discrete"):
        policy = seat(RandomTank(native=True), BoundEnv(world, stage, action_mode=mode), seed=1)
        actions = [policy.act(None, {}) for _ in range(200)]
        ops = [a["op"] if mode == "dict" else a for a in actions]
        assert set(ops) == {0, 1, 2, 3, 4}
        if mode == "dict":
            assert {TARGET_IDS[a["target"]] for a in actions} == {1, 101}


# ------------------------------------------------------------------------------- NPC driver

def test_npc_tank_drives_on_unless_it_acts():
    world, stage = official(4)
    lazy = seat(NpcTank(act_prob=0.0), BoundEnv(world, stage))
    assert all(lazy.decide(world, stage) == TankMove("up") for _ in range(50))  # its facing
    world.play_round({0: "right"})
    assert lazy.act(None, {}) == "#Operation: Target -1: #Move_right#"
    busy = seat(NpcTank(act_prob=1.0), BoundEnv(world, stage), seed=3)
    ops = Counter(busy.decide(world, stage).op for _ in range(4000))
    assert 0.45 < ops["shoot"] / 4000 < 0.55
    assert all(0.1 < ops[d] / 4000 < 0.15 for d in ("up", "down", "left", "right"))


def test_npc_tank_acts_with_its_probability_and_seed():
    world, stage = official(2)
    policy = seat(NpcTank(), BoundEnv(world, stage), seed=11)
    moves = [policy.decide(world, stage) for _ in range(4000)]
    kept = sum(m == TankMove("up") for m in moves)  # driving on, or a turn that drew its own facing
    assert 0.6 + 0.4 * 0.5 * 0.25 - 0.03 < kept / 4000 < 0.6 + 0.4 * 0.5 * 0.25 + 0.03
    policy.reset("tank_0", 11)
    assert [policy.decide(world, stage) for _ in range(100)] == moves[:100]
    with pytest.raises(ValueError, match="act_prob must be"):
        NpcTank(act_prob=1.5)


# ------------------------------------------------------------------------------- keyboard

@pytest.fixture
def pygame_dummy(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    pygame = pytest.importorskip("pygame")
    pygame.display.init()
    pygame.event.clear()
    yield pygame
    pygame.display.quit()


def press(pygame: Any, *keys: int) -> None:
    for key in keys:
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=0, unicode="", scancode=0))


def test_keyboard_keys_map_to_operations(pygame_dummy):
    pygame = pygame_dummy
    assert [key_operation(k) for k in (pygame.K_UP, pygame.K_DOWN, pygame.K_LEFT, pygame.K_RIGHT,
                                       pygame.K_SPACE, pygame.K_ESCAPE, pygame.K_a)] \
        == ["up", "down", "left", "right", "shoot", "noop", None]


def test_keyboard_tank_answers_the_keys_it_is_given(pygame_dummy):
    pygame = pygame_dummy
    world, stage = official(4)
    env = BoundEnv(world, stage, action_mode="discrete")
    policy = seat(KeyboardTank(), env)
    press(pygame, pygame.K_a, pygame.K_LEFT, pygame.K_SPACE, pygame.K_ESCAPE, pygame.K_UP)
    assert [policy.act(None, {}) for _ in range(4)] == [2, 4, 5, 0]  # the "a" is skipped
    assert env.frames == 4  # the state was shown before each wait
    assert policy.finish(None, {}) is False and env.frames == 5  # and the end of the game
    policy.close()


def test_keyboard_tank_dict_actions_name_the_nearest_target(pygame_dummy):
    world, stage = official(4)
    policy = seat(KeyboardTank(), BoundEnv(world, stage, action_mode="dict"))
    press(pygame_dummy, pygame_dummy.K_DOWN)
    action = policy.act(None, {})
    assert action["op"] == 1 and TARGET_IDS[action["target"]] == 101  # base 101 is nearer than tank_1
    policy.close()


def test_keyboard_tank_stops_the_run_when_the_window_closes(pygame_dummy):
    pygame = pygame_dummy
    world, stage = official(1)
    policy = seat(KeyboardTank(), BoundEnv(world, stage, action_mode="discrete"))
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    with pytest.raises(WindowClosed, match="tank_0"):
        policy.act(None, {})
    policy.close()


def test_keyboard_tank_needs_a_window():
    env = BoundEnv(None, stage_config(1), render_mode=None)
    KeyboardTank().bind(env)
    assert env.render_mode == "human"  # a person must see the game
    with pytest.raises(ValueError, match="render_mode must be"):
        KeyboardTank().bind(BoundEnv(None, stage_config(1), render_mode="ansi"))



def test_keyboard_tank_drives_a_tank_of_the_real_environment(pygame_dummy):
    """Stage 1 in a (dummy) window: the up arrow moves tank_0 from (32, 480) to (32, 463) (fact 5)."""
    env = arena_envs.tank_battle_v0.env(stage=1, render_mode="human")
    env.reset(seed=0)
    policy = seat(KeyboardTank(), env.unwrapped)
    press(pygame_dummy, pygame_dummy.K_UP)
    observation, _, _, _, info = env.last()
    env.step(policy.act(observation, info))
    assert env.unwrapped.world.players[0].y == 463 and env.unwrapped.infos["tank_0"]["parsed_op"] == "up"
    env.close()


def test_keyboard_tank_in_the_envs_window_draws_each_round_once(pygame_dummy, monkeypatch):
    """``arena play``: the keyboard binds after ``reset()`` and switches the env to ``human``; it draws
    the first picture, then the env draws each round itself and the keyboard does not draw it again
    (render_fps raised to 1000 on the instance so that the test takes no time)."""
    pygame = pygame_dummy
    flips = []
    flip = pygame.display.flip
    monkeypatch.setattr(pygame.display, "flip", lambda: (flips.append(1), flip())[-1])
    env = arena_envs.tank_battle_v0.env(stage=1, max_rounds=3)
    raw = env.unwrapped
    raw.metadata = {**raw.metadata, "render_fps": 1000}
    env.reset(seed=0)
    policy = seat(KeyboardTank(), raw)
    assert raw.render_mode == "human" and not flips
    press(pygame, pygame.K_UP, pygame.K_UP, pygame.K_SPACE)
    for _agent in env.agent_iter():
        observation, _, termination, truncation, info = env.last()
        env.step(None if termination or truncation else policy.act(observation, info))
    assert raw.world.rounds_played == 3 and len(flips) == 1 + 3
    assert policy.finish(observation, info) is False and len(flips) == 1 + 3
    env.close()


# ------------------------------------------------------------------------------- whole games



@pytest.mark.parametrize("number", range(1, 8))
def test_every_tank_answer_of_a_whole_game_is_well_formed(number):
    """Random, rule and NPC tanks answer in text through the env: every decision is format-valid
    (FAcc 1), in every stage."""
    env = arena_envs.tank_battle_v0.env(stage=number, obs_mode="grid")
    kinds = (RuleTank, RandomTank, NpcTank)
    n = env.unwrapped.stage.n_players
    raw = play(env, {f"tank_{j}": kinds[j % 3]() for j in range(n)}, seed=number)
    agents = raw.episode_metrics()["agents"]
    assert all(agents[f"tank_{j}"]["facc"] == 1.0 and agents[f"tank_{j}"]["decisions"] > 0 for j in range(n))


@pytest.mark.parametrize("action_mode", ["dict", "discrete"])
def test_native_answers_are_valid_actions_of_the_env(action_mode):
    env = arena_envs.tank_battle_v0.env(stage=5, action_mode=action_mode, obs_mode="grid")
    policies = {f"tank_{j}": (RuleTank, RandomTank, NpcTank, RuleTank)[j](native=True) for j in range(4)}
    raw = play(env, policies, seed=2)
    agents = raw.episode_metrics()["agents"]
    assert all(agents[f"tank_{j}"]["facc"] == 1.0 for j in range(4))


def test_rule_tank_agrees_to_its_teammates_request_through_the_env():
    """Stage 3: tank_1 asks tank_0 in round 0; the rule tank agrees in round 1; from then on tank_1's
    partner is tank_0 (spec §4.5)."""
    env = arena_envs.tank_battle_v0.env(stage=3, obs_mode="grid")
    env.reset(seed=0)
    raw = env.unwrapped
    rule = seat(RuleTank(), raw)
    request = "#Attack operation: Target -1: #Shoot#\n#Cooperation operation: #Request_coop# 0: cover me"
    answers = []
    for _ in range(4):  # rounds 0 and 1, tank_0 then tank_1
        observation, _, _, _, info = env.last()
        if env.agent_selection == "tank_0":
            answers.append(rule.act(observation, info))
            env.step(answers[-1])
        else:
            env.step(request if len(answers) == 1 else "#Attack operation: Target -1: #Shoot#\n#No_coop#")
    assert "Reply_message" not in answers[0] and answers[1].endswith("Reply_message 1: Agree")
    assert raw.infos["tank_1"]["partner"] == 0
