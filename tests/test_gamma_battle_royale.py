"""Battle Royale (γ-Bench game 7): rules, AEC adapter, scoring (spec §9)."""
from __future__ import annotations

import pickle

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from arena_envs import battle_royale_v0, make
from arena_envs.gamma import scoring
from arena_envs.gamma.battle_royale_rules import (
    BattleRoyale,
    aims_at_strongest,
    linear_hit_rates,
    shooting_order,
    strongest_opponents,
)
from arena_envs.gamma.history import missing_keys
from baselines.gamma.sequential import (
    RandomShooter,
    StrongestShooter,
    TruelMissShooter,
    WeakestShooter,
)
from tests.play_helpers import play

DEFAULT_RATES = [35, 40, 45, 50, 55, 60, 65, 70, 75, 80]

# ---------------------------------------------------------------------------------------- rules


def test_default_hit_rates_and_order():
    assert linear_hit_rates(10) == DEFAULT_RATES
    assert shooting_order(DEFAULT_RATES) == list(range(10))
    assert BattleRoyale(linear_hit_rates(10)).shooter == 0


@pytest.mark.parametrize(
    ("base", "step", "expected"),
    [(51, 1, list(range(51, 61))), (10, 10, list(range(10, 101, 10)))],
)
def test_generalization_grids(base, step, expected):
    assert linear_hit_rates(10, base, step) == expected


def test_unsorted_rates_shoot_in_ascending_order_ties_by_index():
    assert shooting_order([50, 20, 50, 10]) == [3, 1, 0, 2]


@pytest.mark.parametrize("rates", [[50], [0, 50], [50, 101], [-5, 20]])
def test_bad_hit_rates_raise(rates):
    with pytest.raises(ValueError, match="hit_rates"):
        BattleRoyale(rates)


class _Always:
    """A generator stand-in whose draws are all ``value``: pins hit / miss outcomes in rule tests."""

    def __init__(self, value: float):
        self.value = value

    def random(self) -> float:
        return self.value


def test_turn_order_wraps_and_skips_the_eliminated():
    game = BattleRoyale(linear_hit_rates(10), max_turns=None)
    miss = _Always(0.999)
    for expected in range(10):
        assert game.shooter == expected
        game.play(None, miss)
    assert game.shooter == 0  # after player_9 the lowest-indexed alive player
    game.play(1, _Always(0.0))  # player_0 hits player_1
    assert 1 not in game.alive and game.shooter == 2
    assert 1 not in game.alive_in_order()


def test_hit_rate_is_the_shooters():
    game = BattleRoyale(linear_hit_rates(10))
    assert game.play(9, _Always(0.3499))["hit"]  # 34.99 < 35
    assert not game.play(8, _Always(0.40))["hit"]  # player_1 has 40%: 40 is not < 40
    assert game.play(8, _Always(0.4499))["hit"]  # player_2 has 45%


def test_intentional_miss_draws_nothing_and_hits_no_one():
    game = BattleRoyale(linear_hit_rates(10))
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    record = game.play(None, rng)
    assert rng.bit_generator.state == before
    assert record["target"] is None and not record["hit"] and record["alive_after"] == list(range(10))


def test_hit_frequency_matches_rate():
    rng = np.random.default_rng(123)
    hits = 0
    trials = 4000
    for _ in range(trials):
        game = BattleRoyale([80, 35], max_turns=None)
        game.play(0, rng)  # player_1 (35%) shoots first, at player_0
        hits += 0 not in game.alive
    assert abs(hits / trials - 0.35) < 0.03


def test_illegal_targets():
    game = BattleRoyale(linear_hit_rates(10))
    assert "yourself" in game.target_problem(0, 0)
    assert "no player_12" in game.target_problem(0, 12)
    game.play(5, _Always(0.0))
    assert "eliminated" in game.target_problem(1, 5)
    with pytest.raises(ValueError, match="eliminated"):
        game.play(5, _Always(0.0))


def test_strongest_opponent_rules():
    alive = list(range(10))
    assert strongest_opponents(DEFAULT_RATES, alive, 0) == [9]
    assert strongest_opponents(DEFAULT_RATES, alive, 9) == [8]  # the strongest aims at the second
    without_9 = list(range(9))
    assert aims_at_strongest(DEFAULT_RATES, without_9, 3, 8)  # spec §9f.3
    assert not aims_at_strongest(DEFAULT_RATES, alive, 1, None)  # a miss never counts
    assert strongest_opponents([50, 70, 70], [0, 1, 2], 0) == [1, 2]  # ties: any of them counts


def test_game_ends_with_one_survivor_or_at_the_cap():
    game = BattleRoyale([90, 95], max_turns=None)
    game.play(1, _Always(0.0))
    assert game.over and game.alive == [0] and not game.cut_off
    capped = BattleRoyale(linear_hit_rates(10), max_turns=3)
    for _ in range(3):
        capped.play(None, _Always(0.5))
    assert capped.over and capped.cut_off


# ---------------------------------------------------------------------------------- environment

MISS = '{"action": "miss", "target": null}'


def shoot(k) -> str:
    return f'{{"action": "shoot", "target": "player_{k}"}}'


def test_pettingzoo_api_and_seed():
    api_test(battle_royale_v0.env(), num_cycles=200)
    seed_test(battle_royale_v0.env, num_cycles=50)
    api_test(battle_royale_v0.env(hit_rates=[90, 95, 100], max_turns=None), num_cycles=200)


def test_registered_and_defaults():
    env = make("battle_royale_v0")
    env.reset(seed=0)
    raw = env.unwrapped
    assert raw.hit_rates == DEFAULT_RATES and raw.max_turns == 20
    assert env.agent_selection == "player_0"
    assert env.action_space("player_3").n == 11
    obs = env.observe("player_0")
    assert set(obs) == {"text", "observation", "action_mask"}
    assert obs["observation"].shape == (len(raw.feature_names),) == (4 + 2 * 10,)
    assert obs["action_mask"].tolist() == [0] + [1] * 10  # not yourself; the last entry is the miss
    assert raw.params() == {"n_players": 10, "hit_rates": DEFAULT_RATES, "max_turns": 20}


def test_generalization_parameters():
    env = battle_royale_v0.env(hit_rate_base=51, hit_rate_step=1)
    assert env.unwrapped.hit_rates == list(range(51, 61))
    env = battle_royale_v0.env(n_players=4, hit_rate_base=10, hit_rate_step=30)
    assert env.unwrapped.hit_rates == [10, 40, 70, 100]


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"n_players": 1}, "n_players"), ({"n_players": 3, "hit_rates": [10, 20]}, "n_players"),
     ({"max_turns": 0}, "max_turns"), ({"fallback_action": "skip"}, "fallback_action"),
     ({"score_variant": "nope"}, "score_variant"), ({"n_players": 14, "hit_rate_base": 40}, "hit_rates")],
)
def test_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        battle_royale_v0.env(**kwargs)


def test_spec_example_scores_one_third():
    """Spec §9f.2: correct shot, intentional miss, wrong target -> S7 = 1/3."""
    env = battle_royale_v0.env()
    env.reset(seed=0)
    for answer in (shoot(9), MISS, '{"action": "shoot", "target": "5"}'):
        env.step(answer)
    raw = env.unwrapped
    assert [r["shooter"] for r in raw.history] == [0, 1, 2]
    assert [r["target"] for r in raw.history] == [9, None, 5]
    assert raw.compute_raw_score() == pytest.approx(1 / 3)
    assert raw.compute_score() == pytest.approx(33.333, abs=1e-3)
    assert raw.episode_metrics()["game"]["score"] == pytest.approx(100 / 3)


def test_scoring_cases_of_the_spec():
    params = {"n_players": 10, "hit_rates": DEFAULT_RATES, "max_turns": 20}
    without_9 = list(range(9))
    history = [
        {"round": 1, "shooter": 3, "target": 8, "hit": False, "alive_before": without_9, "alive_after": without_9},
        {"round": 2, "shooter": 9, "target": 8, "hit": False, "alive_before": list(range(10)),
         "alive_after": list(range(10))},
    ]
    assert scoring.score("battle_royale_v0", params, history) == 100.0
    assert scoring.score("battle_royale_v0", params, history, "per_player") == pytest.approx(10.0)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("kwargs", [{}, {"hit_rate_base": 51, "hit_rate_step": 1},
                                    {"hit_rate_base": 10, "hit_rate_step": 10}])
def test_strongest_shooters_score_100(seed, kwargs):
    env = battle_royale_v0.env(**kwargs)
    raw = play(env, [StrongestShooter() for _ in range(10)], seed)
    assert raw.history and raw.compute_score() == 100.0
    assert all(r["correct"] for r in raw.history)


def test_other_baselines_score_below_100_and_stay_legal():
    for policy in (WeakestShooter, RandomShooter, TruelMissShooter):
        raw = play(battle_royale_v0.env(max_turns=None), [policy() for _ in range(10)], seed=3)
        assert len(raw.game.alive) == 1
        assert sum(c["fallback"] + c["illegal"] for c in raw.invalid_counts.values()) == 0
    raw = play(battle_royale_v0.env(), [WeakestShooter() for _ in range(10)], seed=3)
    assert raw.compute_score() < 100


def test_truel_miss_misses_as_weakest_of_three():
    policy = TruelMissShooter()
    info = {"player": 1, "hit_rates": DEFAULT_RATES, "alive": [1, 5, 9]}
    assert policy.act(None, info) == 10
    assert policy.act(None, {**info, "player": 5}) == 9


def test_hit_removes_target_from_order_observations_and_agents():
    env = battle_royale_v0.env(hit_rates=[100, 100, 100], max_turns=None)
    env.reset(seed=0)
    env.step(shoot(2))  # player_0 always hits player_2
    assert env.terminations["player_2"] and env.agent_selection == "player_2"
    env.step(None)  # dead-agent protocol
    assert "player_2" not in env.agents and env.agent_selection == "player_1"
    obs = env.observe("player_1")
    request = obs["text"].split("=== Round 2 starts ===")[1]
    assert "player_2" not in request.split("Players still in the game")[1].split("\n")[0]
    assert obs["observation"][4 + 2 * 2] == 0.0  # alive_2
    assert obs["action_mask"].tolist() == [1, 0, 0, 1]
    env.step(shoot(2))  # dead target: re-asked
    assert env.infos["player_1"]["invalid_action"]["kind"] == "illegal"
    assert "already eliminated" in env.observe("player_1")["text"]
    env.step(0)
    assert env.terminations["player_0"] and env.terminations["player_1"]
    assert env.rewards["player_1"] == 1.0 and env.unwrapped.episode_metrics()["agents"]["player_1"]["survived"]
    for _ in range(2):
        env.step(None)
    assert env.agents == []


def test_truncation_at_max_turns():
    env = battle_royale_v0.env(max_turns=3)
    env.reset(seed=0)
    for _ in range(3):
        env.step(10)  # intentional miss
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert all(r == 0 for r in env.rewards.values())
    metrics = env.unwrapped.episode_metrics()
    assert metrics["game"]["truncated"] and metrics["game"]["survivors"] == list(range(10))
    assert metrics["game"]["score"] == 0.0


def test_unlimited_turns_play_to_one_survivor():
    raw = play(battle_royale_v0.env(max_turns=None), [RandomShooter() for _ in range(10)], seed=11)
    assert len(raw.game.alive) == 1 and raw.returns[raw.game.alive[0]] == 1.0 and sum(raw.returns) == 1.0


@pytest.mark.parametrize(
    ("answer", "target"),
    [('{"action": "shoot", "target": "player_4"}', 4), ('{"action": "shoot", "target": "4"}', 4),
     ('{"action": "shoot", "target": 4}', 4), ('{"action": "shoot", "target": null}', None),
     ('{"action": "shoot", "target": "none"}', None), ('{"action": "shoot", "target": ""}', None),
     ('{"action": "shoot", "target": "-1"}', None), ('{"action": "shoot", "target": -1}', None),
     ('{"action": "miss", "target": "player_4"}', None),
     ('Sure!\n```json\n{"action": "Shoot", "target": "Player_4"}\n```', 4),
     ('{"explanation": "x", "action": "shoot", "target": "player_4"}', 4)],
)
def test_text_answers(answer, target):
    env = battle_royale_v0.env()
    env.reset(seed=0)
    env.step(answer)
    assert env.infos["player_0"]["invalid_action"] is None
    assert env.unwrapped.history[0]["target"] == target


@pytest.mark.parametrize(
    ("answer", "kind"),
    [(shoot(0), "illegal"), (shoot(12), "illegal"), ('{"action": "shoot", "target": "the strong one"}', "illegal"),
     ("I shoot player 9", "unparseable"), ('{"action": "shoot"}', "unparseable"), (0, "illegal"), (11, "illegal"),
     (2.5, "unparseable")],
)
def test_invalid_answers_are_reasked(answer, kind):
    env = battle_royale_v0.env()
    env.reset(seed=0)
    env.step(answer)
    info = env.infos["player_0"]
    assert env.agent_selection == "player_0" and info["invalid_action"]["kind"] == kind
    assert info["retries"] == 1 and not env.unwrapped.history
    assert "could not be used" in env.observe("player_0")["text"]


def test_fallback_after_max_retries_is_random_legal():
    env = battle_royale_v0.env(max_retries=5)
    env.reset(seed=0)
    for _ in range(5):
        env.step(shoot(0))
    assert not env.unwrapped.history
    env.step(shoot(0))
    raw = env.unwrapped
    assert len(raw.history) == 1 and raw.history[0]["target"] != 0
    assert env.infos["player_0"]["fallback"]
    assert raw.invalid_counts["player_0"] == {"unparseable": 0, "illegal": 6, "fallback": 1}
    assert "could not be used" not in env.observe("player_0")["text"]
    strict = battle_royale_v0.env(max_retries=0, fallback_action="raise")
    strict.reset(seed=0)
    with pytest.raises(RuntimeError, match="fallback_action='raise'"):
        strict.step(shoot(0))


def test_text_blocks():
    env = battle_royale_v0.env()
    env.reset(seed=0)
    first = env.observe("player_0")["text"]
    assert "You are player_0. Your hit rate is 35%. You are number 1 in the shooting order." in first
    assert "player_9 (80%)" in first and "miss on purpose" in first and '"target"' in first
    waiting = env.observe("player_4")["text"]
    assert "starts ===" not in waiting and first.startswith(waiting.split("You are player_4")[0])
    env.step(MISS)
    after = env.observe("player_0")["text"]
    assert "Round 1 starts" not in after  # the request block is not kept
    assert 'Your answer: {"action": "miss", "target": null}' in after
    assert "player_0 missed on purpose. 10 players are left." in env.observe("player_5")["text"]
    assert "Your answer" not in env.observe("player_5")["text"]
    assert "You are number 2 of the" not in env.observe("player_1")["text"]
    assert "player_1, hit rate 40%, number 2 of the 10 remaining players" in env.observe("player_1")["text"]


def test_persona_and_cot():
    env = battle_royale_v0.env(persona="You are a cautious player.", cot=True)
    env.reset(seed=0)
    text = env.observe("player_0")["text"]
    assert text.startswith("You are a cautious player.") and '"explanation"' in text
    assert "explanation" in env.unwrapped.answer_constraint().schema["required"]


def test_answer_constraint_lists_legal_targets():
    env = battle_royale_v0.env(hit_rates=[100, 100, 100], max_turns=None)
    env.reset(seed=0)
    constraint = env.unwrapped.answer_constraint()
    assert constraint.kind == "json"
    assert constraint.schema["properties"]["target"]["enum"] == ["player_1", "player_2", None]
    assert constraint.accepts('{"action": "shoot", "target": "player_2"}')


def test_features():
    env = battle_royale_v0.env()
    env.reset(seed=0)
    env.step(MISS)
    feats = dict(zip(env.unwrapped.feature_names, env.observe("player_3")["observation"].tolist()))
    assert feats["round_index"] == 1 and feats["max_turns"] == 20
    assert feats["own_hit_rate"] == pytest.approx(0.5) and feats["own_position"] == 4
    assert feats["alive_9"] == 1 and feats["hit_rate_9"] == pytest.approx(0.8)
    assert battle_royale_v0.env(max_turns=None).unwrapped.feature_names[1] == "max_turns"


def test_same_seed_same_actions_same_episode_and_history_schema():
    runs = []
    for _ in range(2):
        raw = play(battle_royale_v0.env(), [RandomShooter() for _ in range(10)], seed=5)
        runs.append((raw.history, raw.record.to_dict(), raw.observe("player_0")["text"]))
        assert missing_keys("battle_royale_v0", raw.params(), raw.history) == []
    assert runs[0] == runs[1]
    other = play(battle_royale_v0.env(), [RandomShooter() for _ in range(10)], seed=6)
    assert other.history != runs[0][0]


def test_pickle_mid_episode_continues_identically():
    env = battle_royale_v0.env()
    env.reset(seed=4)
    for _ in range(3):
        env.step(shoot(9) if env.agent_selection != "player_9" else shoot(8))
        while env.terminations.get(env.agent_selection):
            env.step(None)
    clone = pickle.loads(pickle.dumps(env))
    for e in (env, clone):
        for _ in range(4):
            agent = e.agent_selection
            if e.terminations[agent] or e.truncations[agent]:
                e.step(None)
            else:
                e.step(e.unwrapped.n_players)
    assert clone.unwrapped.history == env.unwrapped.history


def test_render_ansi():
    env = battle_royale_v0.env(render_mode="ansi")
    env.reset(seed=0)
    env.step(MISS)
    assert env.render() == "Round 1: player_0 missed on purpose. 10 left."
