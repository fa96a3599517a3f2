"""The tank battle environment end to end (spec §4, §7, §8): rounds, answers, rewards, metrics,
observations and masks, cooperation through the env, and the baselines playing whole games."""
from __future__ import annotations

import json
import pickle
from dataclasses import FrozenInstanceError

import numpy as np
import pytest

import arena_envs
from arena_envs.rl import LearnerEnv
from arena_envs.tank_battle import grid
from arena_envs.tank_battle.env import OPS, TARGET_IDS
from baselines.tank.random_policy import RandomTank
from baselines.tank.rule import RuleTank
from tests.play_helpers import play

OPEN_FFA = ["." * 16] * 8 + ["..1.........2..."] + ["." * 16] * 6 + ["A..............B"]




def step_round(env, answers):
    """Every living agent answers once (``answers[agent]``, default a noop move)."""
    raw = env.unwrapped
    start = raw.world.rounds_played
    while raw.agents and raw.world.rounds_played == start:
        agent = env.agent_selection
        _, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else answers.get(agent, {"op": 5, "target": 0, "coop": 0,
                                                                          "coop_partner": 0, "reply": [0] * 8}))


def test_the_users_line_and_the_declared_spaces():
    env = arena_envs.tank_battle_v0.env(stage=4, render_mode="rgb_array")
    env.reset(seed=0)
    observation, _, _, _, info = env.last()
    assert observation["observation"].shape == grid.GRID_SHAPE == (25, 64, 64)
    assert observation["observation"].dtype == np.uint8
    assert env.observation_space("tank_0").contains(observation)
    assert set(info) >= {"round", "health", "frozen", "position", "facing", "target", "partner", "format_ok",
                         "parsed_op", "parsed_coop", "move_correct", "events", "score", "event_count_score",
                         "internal_points", "win_state"}
    assert env.render().shape == (576, 832, 3)
    assert env.unwrapped.possible_agents == ["tank_0", "tank_1"]


def test_stage_one_lasts_sixty_decisions_and_its_return_is_fdis():
    """Facts 23 and 37: with only invalid answers the game lasts 60 decisions and ends truncated;
    the return equals FDis."""
    env = arena_envs.tank_battle_v0.env(stage=1)
    env.reset(seed=0)
    decisions = 0
    for _ in env.agent_iter():
        _, _, termination, truncation, _ = env.last()
        if termination or truncation:
            assert truncation and not termination
            env.step(None)
            continue
        env.step("I refuse to play" if decisions % 2 else "#Operation: #Move_up#")
        decisions += 1
    raw = env.unwrapped
    assert decisions == 60
    metrics = raw.episode_metrics()
    assert metrics["agents"]["tank_0"]["fdis"] == metrics["agents"]["tank_0"]["score"] == 1.0  # (32,448): D=21
    assert raw.returns[0] == metrics["agents"]["tank_0"]["fdis"]
    assert metrics["agents"]["tank_0"]["facc"] == 0.5
    assert metrics["agents"]["tank_0"]["unparseable"] == 30


def test_an_invalid_answer_is_a_noop_with_feedback_and_the_stage_three_format():
    env = arena_envs.tank_battle_v0.env(stage=3)
    env.reset(seed=0)
    step_round(env, {"tank_0": "#Attack operation: Target 1: #Shoot#\n#Cooperation operation: #No_coop#",
                     "tank_1": "#Attack operation: Target 101: #Move_up#"})
    raw = env.unwrapped
    assert raw.world.players[0].speed == 0  # the teammate target is invalid: noop
    assert raw.invalid_counts["tank_0"] == {"unparseable": 0, "illegal": 1, "fallback": 1}
    assert raw.counts[1].format_ok == 0 and raw.counts[1].decisions == 1  # no cooperation line
    assert (raw.world.players[1].x, raw.world.players[1].y) == (448, 463)  # applied, though not format-valid
    text = env.observe("tank_0")["text"]
    assert "ERROR" in text and "Target 1: #Shoot#" in text


def test_scores_rewards_and_a_base_destruction_on_a_custom_map():
    """Fact 19 through the env: four moves and a shot destroy base 101, tank_1 is eliminated,
    tank_0 wins with Score 5, its return."""
    rows = ["A"] + ["." * 16] * 7 + ["..1...B........."] + ["." * 16] * 6 + ["...............2"]
    env = arena_envs.tank_battle_v0.env(custom_map=rows, custom_mode="ffa", action_mode="discrete")
    env.reset(seed=0)
    for op in (3, 3, 3, 3, 4):
        step_round(env, {"tank_0": op, "tank_1": 5})
    raw = env.unwrapped
    assert raw.world.over and 101 not in raw.world.bases
    metrics = raw.episode_metrics()
    assert metrics["agents"]["tank_0"]["score"] == 5 and metrics["agents"]["tank_0"]["win_state"] == 1
    assert metrics["agents"]["tank_1"]["win_state"] == -1
    assert raw.returns[0] == 5
    assert raw.terminations["tank_0"] and raw.terminations["tank_1"]


def test_team_score_of_stage_five_sums_the_primary_team():
    env = arena_envs.tank_battle_v0.env(stage=5, npc_total=10)
    raw = play(env, {a: RuleTank() for a in env.possible_agents}, seed=3)
    metrics = raw.episode_metrics()
    assert metrics["game"]["score"] == metrics["agents"]["tank_0"]["score"] + metrics["agents"]["tank_2"]["score"]
    assert metrics["game"]["score"] > 0  # rule tanks kill NPCs


def test_move_accuracy_and_the_discrete_target():
    """Fact 35: at the stage 1 start Move_up and Move_right are correct, Move_down and Move_left not."""
    for op, correct in (("Move_up", True), ("Move_right", True), ("Move_down", False), ("Move_left", False)):
        env = arena_envs.tank_battle_v0.env(stage=1)
        env.reset(seed=0)
        env.step(f"#Operation: #{op}#")
        assert env.unwrapped.infos["tank_0"]["move_correct"] is correct
    env = arena_envs.tank_battle_v0.env(stage=4, action_mode="discrete")
    env.reset(seed=0)
    raw = env.unwrapped
    assert raw.nearest_target(0) == 101  # no NPC yet: base 101 (L1 928) is nearer than tank_1 (960)
    step_round(env, {"tank_0": OPS.index("shoot"), "tank_1": OPS.index("noop")})
    assert raw.targets[0] == 101


def test_dict_masks_allow_exactly_the_legal_targets_and_partners():
    env = arena_envs.tank_battle_v0.env(stage=6)
    env.reset(seed=0)
    observation, *_ = env.last()
    mask = observation["action_mask"]
    legal = {TARGET_IDS[k] for k in np.flatnonzero(mask["target"])}
    assert legal == {-1, 1, 2, 3, 101, 102, 103}
    assert list(np.flatnonzero(mask["coop_partner"])) == [1, 2, 3]
    assert mask["coop"].tolist() == [1, 1, 1, 1]
    assert all(m.tolist() == [1, 0, 0] for m in mask["reply"])  # nothing to answer yet


def test_cooperation_through_the_env_follows_the_one_round_timeline():
    """Fact 33: a request in round t is listed in round t+1; an agreement shows in round t+2."""
    env = arena_envs.tank_battle_v0.env(stage=3)
    env.reset(seed=0)
    coop_none = "\n#Cooperation operation: #No_coop#"
    step_round(env, {"tank_0": "#Attack operation: Target -1: #Shoot#\n#Cooperation operation: "
                               "#Request_coop# 1: cover me",
                     "tank_1": "#Attack operation: Target -1: #Shoot#" + coop_none})
    raw = env.unwrapped
    assert raw.pending_requests(1) == [0]
    assert "cover me" in env.observe("tank_1")["text"]
    step_round(env, {"tank_0": "#Attack operation: Target -1: #Shoot#" + coop_none,
                     "tank_1": "#Attack operation: Target -1: #Shoot#" + coop_none + "\nReply_message 0: Agree"})
    assert raw.infos["tank_0"]["partner"] == 1
    for agent in ("tank_0", "tank_1"):
        assert "cover me" in env.observe(agent)["text"]


def test_obs_modes_skip_what_is_not_read():
    grid_env = arena_envs.tank_battle_v0.env(stage=2, obs_mode="grid")
    grid_env.reset(seed=1)
    observation, *_ = grid_env.last()
    assert observation["text"] == "" and observation["observation"].any()
    text_env = arena_envs.tank_battle_v0.env(stage=2, obs_mode="text")
    text_env.reset(seed=1)
    observation, *_ = text_env.last()
    assert observation["text"] and not observation["observation"].any()


def test_the_grid_marks_the_world():
    env = arena_envs.tank_battle_v0.env(stage=4)
    env.reset(seed=0)
    raw = env.unwrapped
    obs = env.last()[0]["observation"]
    assert (obs[0] == raw.world.bricks * 255).all()
    me = raw.world.players[0]
    assert obs[3, me.y // 8:(me.y + 32) // 8, me.x // 8:(me.x + 32) // 8].all() and obs[3].sum() == 16 * 255
    enemy = raw.world.players[1]
    assert obs[5, enemy.y // 8, enemy.x // 8] == 255
    assert obs[7, 0, 4] == 255 and obs[8, 60, 56] == 255  # own base 100 at (32,0), enemy base 101 at (448,480)
    assert obs[11].sum() == 2 * 16 * 255  # both tanks face up
    assert obs[15, 0, 0] == 0 and obs[21, 5, 5] == 255 and obs[23, 0, 0] == 255  # x = 0, full health, all rounds left


def test_state_is_json_and_copies_continue_identically():
    env = arena_envs.tank_battle_v0.env(stage=7)
    policies = {a: RandomTank() for a in env.possible_agents}
    env.reset(seed=5)
    raw = env.unwrapped
    for j, (agent, policy) in enumerate(policies.items()):
        policy.bind(raw)
        policy.reset(agent, j)
    for _ in range(40):
        agent = env.agent_selection
        observation, _, termination, truncation, info = env.last()
        env.step(None if termination or truncation else policies[agent].act(observation, info))
    state = raw.state()
    assert json.loads(json.dumps(state)) == state
    copy = pickle.loads(pickle.dumps(raw))
    for _ in range(30):
        agent = raw.agent_selection
        action = {"op": 1, "target": 0, "coop": 0, "coop_partner": 0, "reply": [0] * 8}
        raw.step(None if raw.terminations[agent] or raw.truncations[agent] else action)
        copy.step(None if copy.terminations[agent] or copy.truncations[agent] else action)
    assert copy.state() == raw.state()


def test_rule_tank_beats_random_tank_on_stage_four():
    """Over 50 seeded episodes, seats alternating, the rule tank's mean Score exceeds the random
    tank's by at least 1.5 (measured: 2.5 against 0.0)."""
    rule, rand = [], []
    for episode in range(50):
        env = arena_envs.tank_battle_v0.env(stage=4)
        seats = ("rule", "random") if episode % 2 == 0 else ("random", "rule")
        policies = {f"tank_{j}": RuleTank() if kind == "rule" else RandomTank() for j, kind in enumerate(seats)}
        metrics = play(env, policies, seed=episode).episode_metrics()["agents"]
        for j, kind in enumerate(seats):
            (rule if kind == "rule" else rand).append(metrics[f"tank_{j}"]["score"])
    assert np.mean(rule) >= np.mean(rand) + 1.5


@pytest.mark.parametrize("layout", [1, 2, 4, 5])
def test_rule_tank_reaches_the_goal_on_stage_one(layout):
    env = arena_envs.tank_battle_v0.env(stage=1, layout_seed=layout)
    raw = play(env, {"tank_0": RuleTank()})
    metrics = raw.episode_metrics()
    assert raw.world.ended_by == "touch" and metrics["agents"]["tank_0"]["win_state"] == 1
    # touching, the tank's top-left tile is next to the base tile or diagonal to it: D(end) is 2 or 3
    game = metrics["game"]
    assert game["success"] and game["d0"] - 3 <= game["fdis"] <= game["d0"] - 2


def test_an_animated_window_shows_a_round_in_the_time_of_one_frame(monkeypatch):
    """``render_every_tick`` redraws after every tick and once more for the round: its window runs
    ``render_fps`` x 18 frames a second, so an animated round lasts what one frame a round lasts."""
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    animated = arena_envs.tank_battle_v0.env(stage=3, render_mode="human", render_every_tick=True, max_rounds=2)
    plain = arena_envs.tank_battle_v0.env(stage=3, render_mode="human", max_rounds=2)
    assert animated.unwrapped._frame_rate() == 4 * 18 and plain.unwrapped._frame_rate() == 4
    animated.reset(seed=0)
    for _ in range(2):
        animated.step("#Attack operation: Target 101: #Move_up#\n#Cooperation operation: #No_coop#")
    assert animated.unwrapped.frame_id == 1 + 17  # the round's frame and one per tick
    animated.close()


@pytest.mark.parametrize("kwargs, message", [
    ({"stage": 9}, r"stage must be an integer in 1\.\.7, got 9"),
    ({"stage": 4, "variant": "no_coop"}, "variant 'no_coop' exists for stages 5-7, got stage 4"),
    ({"action_mode": "text"}, "action_mode must be one of dict, discrete, got 'text'"),
    ({"obs_mode": "pixels"}, "obs_mode must be one of both, text, grid, numeric, got 'pixels'"),
    ({"layout_seed": -1}, "layout_seed must be an integer >= 0, got -1"),
    ({"npc_total": 11}, "npc_total must be an integer in 0..10, got 11"),
    ({"npc_act_prob": 1.5}, r"npc_act_prob must be a finite number in \[0, 1\], got 1.5"),
    ({"custom_map": ["A"]}, "custom_map must hold at least one player spawn"),
    ({"custom_map": ["1A"], "custom_mode": "coop"}, "custom_mode must be one of navigation, coop_vs_npc, ffa, teams"),
])
def test_bad_options_are_one_clear_line(kwargs, message):
    with pytest.raises(ValueError, match=message) as err:
        arena_envs.tank_battle_v0.env(**kwargs)
    assert "\n" not in str(err.value)



def test_config_records_the_values_played():
    """config() (run.json's record) in order, plain Python values; a custom map ignores stage and variant."""
    env = arena_envs.tank_battle_v0.env(stage=3, max_rounds=np.int64(12), base_score=4, team_reward=np.bool_(True))
    expected = {
        "stage": 3, "variant": "default", "action_mode": "dict", "obs_mode": "both", "lang": "en",
        "parser": "reference", "macc": "reference", "layout_seed": 0, "max_rounds": 12, "npc_total": 10,
        "npc_max_alive": 5, "npc_spawn_base_prob": 0.6, "npc_act_prob": 0.4, "base_score": 4.0, "tank_hit_score": 1.0,
        "npc_kill_score": 1.0, "team_reward": True, "hit_penalty": 0.0, "success_bonus": 0.0, "full_last_round": False,
        "removal_skip": False, "custom_map": None, "custom_mode": None, "custom_team_count": None, "max_retries": 0}
    config = env.unwrapped.config()
    assert list(config.items()) == list(expected.items())
    assert [type(v) for v in config.values()] == [type(v) for v in json.loads(json.dumps(config)).values()]
    custom = arena_envs.tank_battle_v0.env(stage=9, custom_map="1..A\n2..B", custom_mode="ffa").unwrapped.config()
    assert (custom["stage"], custom["variant"], custom["max_rounds"], custom["npc_total"]) == (0, "default", 80, 0)
    assert custom["custom_map"] == ["1..A" + "." * 12, "2..B" + "." * 12] + ["." * 16] * 14
    assert (custom["custom_mode"], custom["custom_team_count"]) == ("ffa", 2)


def test_a_layout_set_between_episodes_is_checked_and_recorded():
    env = arena_envs.tank_battle_v0.env(stage=4).unwrapped
    env.layout_seed = 2
    assert env.config()["layout_seed"] == 2 == env.settings.layout_seed
    with pytest.raises(ValueError, match="layout_seed must be an integer >= 0, got -1"):
        env.layout_seed = -1
    with pytest.raises(FrozenInstanceError):
        env.settings.lang = "zh"  # type: ignore[misc]


def test_a_tank_pushed_below_the_field_is_clamped_back():
    """A push-out can put a tank past the padding rows below the field before it is clamped; this
    seeded stage-4 game (a random discrete learner against the rule tank) once raised IndexError
    in the push-out loop at its 46th decision."""
    env = LearnerEnv(lambda: arena_envs.tank_battle_v0.env(stage=4, action_mode="discrete", obs_mode="grid"),
                     [RuleTank(native=True)])
    rng = np.random.default_rng(2)
    env.reset(seed=2)
    steps, done = 0, False
    while not done:
        _, _, terminated, truncated, _ = env.step(int(rng.integers(6)))
        done = terminated or truncated
        steps += 1
    assert steps > 46
    assert all(0 <= t.y <= 480 for t in env.raw.world.tanks)
