"""The γ-Bench suite end to end: all eight registered games with baseline players on a reduced
protocol (2 runs, 3 rounds, 6 Battle Royale turns), through the real runner and environments."""
from __future__ import annotations

import json
from statistics import fmean, stdev

import pytest

from arena_envs.cli import main as arena_main
from arena_envs.gamma.history import GAMES, missing_keys
from arena_envs.gamma.scoring import score
from arena_envs.registration import ENVIRONMENTS
from arena_envs.runner.gamma_suite import format_row, history_from_record, play_suite, seat_specs
from arena_envs.runner.results import iter_log, read_record

RUNS = 2
REDUCED = {**{g: {"n_rounds": 3} for g in GAMES[:6]}, "battle_royale_v0": {"max_turns": 6}}
FIGURES = ("scores.png", "rounds.png", "guess_choices.png", "battle_royale_actions.png")

pytestmark = pytest.mark.skipif(
    any(g not in ENVIRONMENTS for g in GAMES),
    reason=f"not all γ-Bench games registered yet: {[g for g in GAMES if g not in ENVIRONMENTS]}",
)


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    out = tmp_path_factory.mktemp("gamma")
    return play_suite(["random"], out, runs=RUNS, seed=7, env_kwargs=REDUCED)


def test_suite_writes_row_scores_and_figures(suite):
    out = suite.out
    for name in ("gamma_row.json", "gamma_row.md", "episode_scores.jsonl", *FIGURES):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    for name in FIGURES:
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for game in GAMES:
        episodes = (out / game / "episodes.jsonl").read_text().splitlines()
        assert len(episodes) == RUNS
        assert [block.record is not None for block in iter_log(out / game)] == [True] * RUNS
    lines = [json.loads(line) for line in (out / "episode_scores.jsonl").read_text().splitlines()]
    assert sorted((x["game"], x["run"]) for x in lines) == sorted((g, k) for g in GAMES for k in (1, 2))


def test_row_is_the_mean_of_the_episode_scores(suite):
    document = json.loads((suite.out / "gamma_row.json").read_text())
    assert document["seats"] == ["random"] * 10 and document["runs"] == RUNS
    row, scores = document["row"], document["scores"]
    for game in GAMES:
        assert len(scores[game]) == RUNS
        assert row[game]["mean"] == pytest.approx(fmean(scores[game]))
        assert row[game]["std"] == pytest.approx(stdev(scores[game]))
    per_run = [fmean(scores[g][k] for g in GAMES) for k in range(RUNS)]
    assert row["overall"]["mean"] == pytest.approx(fmean(per_run))
    assert row["overall"]["mean"] == pytest.approx(fmean(row[g]["mean"] for g in GAMES))
    assert row["overall"]["std"] == pytest.approx(stdev(per_run))
    table = (suite.out / "gamma_row.md").read_text()
    assert table.strip() == format_row(suite.row, "random")
    assert f"{row['overall']['mean']:.1f} ± {row['overall']['std']:.1f}" in table


def test_episode_scores_match_rescoring_the_saved_records(suite):
    lines = [json.loads(line) for line in (suite.out / "episode_scores.jsonl").read_text().splitlines()]
    for line in lines:
        record = read_record(suite.out / line["game"], line["run"] - 1)
        params, history = history_from_record(record)
        assert history, line["game"]
        assert missing_keys(line["game"], params, history) == []
        assert score(line["game"], params, history) == pytest.approx(line["score"])
    rounds = {g: [len(log["history"]) for log in suite.logs[g]] for g in GAMES}
    assert all(n == [3, 3] for g, n in rounds.items() if g in GAMES[:6])
    assert all(1 <= n <= 6 for n in rounds["battle_royale_v0"])


def test_suite_resumes_without_replaying(suite):
    again = play_suite(["random"], suite.out, runs=RUNS, seed=7, env_kwargs=REDUCED, plots=False)
    assert again.scores == suite.scores
    for game in GAMES:
        assert len((suite.out / game / "episodes.jsonl").read_text().splitlines()) == RUNS


def test_arena_run_gamma_command(tmp_path, capsys):
    out = tmp_path / "cli"
    code = arena_main(["run", "gamma", "--players", "random", "--runs", "2", "--seed", "1", "--out", str(out),
                       "--games", "divide_dollar_v0,battle_royale_v0", "--env-arg", "divide_dollar_v0.n_rounds=2",
                       "--env-arg", "battle_royale_v0.max_turns=3", "--no-plots"])
    printed = capsys.readouterr().out
    assert code == 0
    assert "| Players | Overall | Divide $ | Battle Royale |" in printed
    document = json.loads((out / "gamma_row.json").read_text())
    assert document["games"] == ["divide_dollar_v0", "battle_royale_v0"]
    assert document["env_kwargs"] == {"divide_dollar_v0": {"n_rounds": 2}, "battle_royale_v0": {"max_turns": 3}}
    assert not (out / "rounds.png").exists()


def test_arena_run_gamma_usage_errors(tmp_path, capsys):
    assert arena_main(["run", "gamma", "--players", "random,random", "--out", str(tmp_path / "x")]) == 2
    assert "one per seat (10)" in capsys.readouterr().err
    assert arena_main(["run", "gamma", "--players", "random", "--games", "chess", "--out", str(tmp_path / "y")]) == 2
    assert "unknown game 'chess'; known: guess_two_thirds_v0, " in capsys.readouterr().err
    bad_game = ["run", "gamma", "--players", "random", "--env-arg", "chess.n=1", "--out", str(tmp_path / "z")]
    assert arena_main(bad_game) == 2
    assert "--env-arg" in capsys.readouterr().err


@pytest.mark.parametrize("options, message", [
    ({"games": ["chess"]}, "unknown game 'chess'; known: " + ", ".join(GAMES)),
    ({"games": []}, "no game given; known: " + ", ".join(GAMES)),
    ({"runs": 0}, "runs must be an integer in 1..1000000, got 0"),
    ({"runs": 2.0}, "runs must be an integer in 1..1000000, got 2.0"),
    ({"games": ["el_farol_v0"], "env_kwargs": {"divide_dollar_v0": {"n_rounds": 2}}},
     "env_kwargs names game 'divide_dollar_v0', which this run does not play; games played: el_farol_v0"),
])
def test_play_suite_refuses_bad_arguments_before_writing(tmp_path, options, message):
    with pytest.raises(ValueError) as err:
        play_suite(["random"], tmp_path / "out", **options)
    assert str(err.value) == message
    assert not (tmp_path / "out").exists()


def test_seat_specs():
    assert seat_specs(["random"], 3) == ["random"] * 3
    assert seat_specs(["a", "b", "c"], 3) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="one per seat"):
        seat_specs(["a", "b"], 3)


def test_equilibrium_players_reach_the_optimum(tmp_path):
    """One run of the paper's protocol (20 rounds) with every seat an equilibrium player: 100 where
    the optimum is reachable, the first-price auction at its shaded-bid value (spec §8f: 4.83)."""
    result = play_suite(["equilibrium"], tmp_path, runs=1, seed=0, plots=False)
    for game in GAMES:
        if game not in ("el_farol_v0", "sealed_bid_auction_v0"):
            assert result.scores[game] == [pytest.approx(100)], game
    assert result.scores["sealed_bid_auction_v0"] == [pytest.approx(4.83, abs=0.01)]
    assert 0 <= result.scores["el_farol_v0"][0] <= 100  # mixed play: random around 79.9
    assert result.row["overall"]["mean"] == pytest.approx(fmean(result.scores[g][0] for g in GAMES))


def test_an_env_arg_without_a_game_goes_to_the_games_that_take_it(tmp_path, capsys):
    out = tmp_path / "suite"
    assert arena_main(["run", "gamma", "--players", "random", "--runs", "1", "--env-arg", "n_rounds=2",
                       "--env-arg", "battle_royale_v0.max_turns=3", "--out", str(out), "--no-plots"]) == 0
    kwargs = json.loads((out / "gamma_row.json").read_text())["env_kwargs"]
    rounds = set(GAMES) - {"battle_royale_v0", "pirate_game_v0"}
    assert {g for g, kw in kwargs.items() if kw.get("n_rounds") == 2} == rounds
    assert kwargs["battle_royale_v0"] == {"max_turns": 3} and "pirate_game_v0" not in kwargs
    for game in rounds:
        (entry,) = [json.loads(line) for line in (out / game / "episodes.jsonl").read_text().splitlines()]
        assert len(history_from_record(read_record(out / game, entry["episode"]))[1]) == 2, game
    assert arena_main(["run", "gamma", "--players", "random", "--runs", "1", "--games", "pirate_game_v0",
                       "--env-arg", "n_rounds=2", "--out", str(tmp_path / "none")]) == 2
    assert "no game of this run takes 'n_rounds'" in capsys.readouterr().err
