"""MAcc as BattleAgentBench's metric script counts it (``battle_city/examples/compute_metric.py``):
only moves of format-valid answers (in cooperative stages these hold a cooperation operation), each
against its target (200: the previous one) if that is a living enemy tank or base when the tank
decides. ``macc="all_moves"`` keeps the reading that scores every applied move."""
from __future__ import annotations

import numpy as np
import pytest

import arena_envs

COOP = "\n#Cooperation operation: #No_coop#"
# stage 3, seed 0: tank_0 starts at (32, 480), tank_1 at (448, 480); the enemy base 101 is at (224, 0),
# so Move_up brings either tank closer to it and Move_down does not
UP, DOWN = "#Attack operation: Target {}: #Move_up#", "#Attack operation: Target {}: #Move_down#"


def play_rounds(rounds: list[dict[str, str]], **kwargs):
    """A stage 3 game (seed 0) whose rounds are answered as scripted; returns the env."""
    env = arena_envs.tank_battle_v0.env(stage=3, **kwargs)
    env.reset(seed=0)
    for answers in rounds:
        for agent in env.possible_agents:
            assert env.agent_selection == agent
            env.step(answers[agent])
    return env


def scored(env, agent: str) -> bool | None:
    """Whether ``agent``'s last move counted for MAcc: its correctness, ``None`` when not scored."""
    return env.unwrapped.infos[agent]["move_correct"]


def test_a_move_without_a_cooperation_operation_counts_for_facc_but_not_macc():
    """The answer is applied (the tank moves) and is a format failure, so MAcc does not score it;
    the teammate's answer with ``#No_coop#`` is scored."""
    rounds = [{"tank_0": UP.format(101), "tank_1": UP.format(101) + COOP}]
    env = play_rounds(rounds)
    raw, agents = env.unwrapped, env.unwrapped.episode_metrics()["agents"]
    assert raw.world.players[0].y < 480  # applied
    assert scored(env, "tank_0") is None and scored(env, "tank_1") is True
    assert (raw.counts[0].format_ok, raw.counts[0].moves) == (0, 0)
    assert agents["tank_0"]["facc"] == 0.0 and agents["tank_1"]["facc"] == 1.0
    old = play_rounds(rounds, macc="all_moves")
    assert scored(old, "tank_0") is True and old.unwrapped.counts[0].moves == 1
    assert old.unwrapped.episode_metrics()["agents"]["tank_0"]["facc"] == 0.0  # FAcc is the same reading


def test_an_unformatted_wrong_move_lowers_only_the_old_reading():
    rounds = [{"tank_0": UP.format(101) + COOP, "tank_1": UP.format(101) + COOP},
              {"tank_0": DOWN.format(101), "tank_1": UP.format(101) + COOP}]
    assert play_rounds(rounds).unwrapped.episode_metrics()["agents"]["tank_0"]["macc"] == 1.0
    assert play_rounds(rounds, macc="all_moves").unwrapped.episode_metrics()["agents"]["tank_0"]["macc"] == 0.5


@pytest.mark.parametrize("macc", ["reference", "all_moves"])
def test_a_move_whose_target_names_no_object_is_not_scored(macc):
    """``Target 200`` ("a wall") takes the previous target, as the reference's agent writes it into
    the action: with none stated yet (or -1, none) the move is not scored; after ``Target 101`` it
    is scored against base 101. ``Target -1`` is never scored."""
    filler = {"tank_1": UP.format(101) + COOP}
    env = play_rounds([{"tank_0": UP.format(200) + COOP, **filler}], macc=macc)
    assert scored(env, "tank_0") is None
    env = play_rounds([{"tank_0": UP.format(-1) + COOP, **filler},
                       {"tank_0": UP.format(200) + COOP, **filler}], macc=macc)
    assert scored(env, "tank_0") is None and env.unwrapped.counts[0].moves == 0
    env = play_rounds([{"tank_0": UP.format(101) + COOP, **filler},
                       {"tank_0": DOWN.format(200) + COOP, **filler}], macc=macc)
    assert scored(env, "tank_0") is False and env.unwrapped.counts[0].moves == 2
    assert env.unwrapped.episode_metrics()["agents"]["tank_0"]["macc"] == 0.5


@pytest.mark.parametrize("stage", [1, 2])
def test_navigation_figures_are_the_same_in_both_readings(stage):
    """Stages 1-2 have no cooperation operation, so a format-valid answer is an applied one: FDis,
    FAcc and MAcc of seeded games (moves, shots and unparseable answers drawn at random) agree."""
    answers = ["#Operation: #Move_up#", "#Operation: #Move_right#", "#Operation: #Move_down#",
               "#Operation: #Move_left#", "#Operation: #Shoot#", "no operation here"]
    for seed in range(3):
        figures = []
        for macc in ("reference", "all_moves"):
            env = arena_envs.tank_battle_v0.env(stage=stage, macc=macc)
            env.reset(seed=seed)
            rng = np.random.default_rng(seed)
            for _ in env.agent_iter():
                _, _, termination, truncation, _ = env.last()
                env.step(None if termination or truncation else answers[rng.integers(len(answers))])
            game = env.unwrapped.episode_metrics()["game"]
            figures.append((game["fdis"], game["facc"], game["macc"], env.unwrapped.counts[0].moves))
        assert figures[0] == figures[1]
        assert figures[0][3] > 0 and 0 < figures[0][1] < 1


def test_the_option_is_checked_and_recorded():
    with pytest.raises(ValueError, match="macc must be one of reference, all_moves, got 'any'") as err:
        arena_envs.tank_battle_v0.env(macc="any")
    assert "\n" not in str(err.value)
    assert arena_envs.tank_battle_v0.env().unwrapped.config()["macc"] == "reference"
