"""The policy spec ``sb3:PATH``: a trained model plays ``arena run`` beside rule players."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from arena_envs import cli
from arena_envs.core import PolicyFault
from arena_envs.registration import env_module
from arena_envs.runner import policy_registry as registry
from arena_envs.runner.policy_specs import SpecError, make_policy
from arena_envs.runner.runner import RunConfig, run
from baselines.rl.evaluation import evaluate
from baselines.rl.sb3_policy import Sb3Policy, policy_from_spec
from baselines.rl.train import TrainConfig, train


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A briefly trained auction model (MaskablePPO, 512 steps against two rule bidders)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("auction_model")
    train(TrainConfig(env="auction_v0", algo="maskable_ppo", opponents=("rule*2",), steps=512, seed=0,
                      eval_episodes=2, checkpoint_every=256, algo_kwargs={"n_steps": 128}), out)
    torch.set_num_threads(threads)
    return out


@pytest.fixture(autouse=True)
def sb3_prefix(monkeypatch):
    """This checkout's ``sb3`` prefix (the installed entry points may predate it)."""
    monkeypatch.setitem(registry.PREFIXES, "sb3", "baselines.rl.sb3_policy:policy_from_spec")


def test_sb3_model_plays_arena_run_beside_rule_bidders(trained, tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["run", "auction_v0", "--players", f"sb3:{trained},rule,rule", "--episodes", "6",
                     "--out", str(out), "--no-progress"]) == 0
    assert f"sb3:{trained}" in capsys.readouterr().out  # on the leaderboard
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 6


def test_the_same_seed_replays_the_same_games_sampled_or_not(trained, tmp_path):
    def metrics(spec: str, name: str) -> list[dict]:
        summary = run(RunConfig(env="auction_v0", players=(spec, "rule", "rule"), episodes=3, seed=7), tmp_path / name)
        return [e["metrics"] for e in summary.episodes]

    assert metrics(f"sb3:{trained}", "a") == metrics(f"sb3:{trained}", "b")
    sampled = f"sb3:{trained}+deterministic=false"
    assert metrics(sampled, "c") == metrics(sampled, "d")


def test_a_checkpoint_loads_with_its_trainings_metadata(trained):
    policy = policy_from_spec(f"sb3:{trained / 'checkpoints' / 'step_256.zip'}", "auction_v0")
    assert isinstance(policy, Sb3Policy) and not policy.reads_text and policy.metadata["env"] == "auction_v0"
    game = env_module("auction_v0").env()
    game.reset(seed=1)
    policy.bind(game.unwrapped)
    policy.reset(game.agent_selection, seed=1)
    observation, _, _, _, info = game.last()
    assert game.action_space(game.agent_selection).contains(policy.act(observation, info))


def test_a_model_for_another_environment_is_one_line(trained, tmp_path, capsys):
    assert cli.main(["run", "public_goods_v0", "--players", f"sb3:{trained},random*9", "--episodes", "1",
                     "--out", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"model {trained / 'model.zip'} was trained for auction_v0, not public_goods_v0" in err


def test_a_bare_model_file_is_checked_against_the_seats_spaces(trained, tmp_path):
    bare = tmp_path / "bare.zip"
    shutil.copy(trained / "model.zip", bare)  # no model.json beside it: only the spaces can tell
    policy = make_policy(f"sb3:{bare}", "public_goods_v0")
    game = env_module("public_goods_v0").env()
    game.reset(seed=0)
    policy.bind(game.unwrapped)
    with pytest.raises(PolicyFault, match=r"sees observations Box\(-inf, inf, \(65,\), float32\), seat player_0 gives"):
        policy.reset("player_0", 0)


def test_a_run_stopped_by_a_models_own_fault_says_resuming_will_not_help(trained, tmp_path, capsys):
    bare = tmp_path / "bare.zip"
    shutil.copy(trained / "model.zip", bare)  # no model.json: nothing tells the game before the seat
    out = tmp_path / "run"
    args = ["run", "public_goods_v0", "--players", f"sb3:{bare},random*4", "--env-arg", "n_players=5", "--episodes",
            "2", "--out", str(out), "--no-progress"]
    assert cli.main(args) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "raised in episode 0 (seat player_0, step 0): PolicyFault: model" in err[0]
    assert err[1] == (f"arena: finished episodes are kept in {out}; resuming will not help: the policy fails the same "
                      "way whenever these episodes are played again (its own fault, not a passing one); change the "
                      "players or the --env-arg (the changed run needs its own folder)")


@pytest.mark.parametrize(("spec", "message"), [
    ("sb3:{trained}+temperature=1", "unknown argument 'temperature'; accepted: deterministic"),
    ("sb3:{trained}+deterministic=3", "deterministic must be true or false, got 3"),
    ("sb3:{trained}/nowhere.zip", "nowhere.zip does not exist"),
    ("sb3:{empty}", "model.zip does not exist (a training folder holds its model.zip once it has finished)"),
])
def test_bad_specs_are_one_line(trained, tmp_path, spec, message):
    with pytest.raises(SpecError) as caught:
        make_policy(spec.format(trained=trained, empty=tmp_path), "auction_v0")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_evaluate_and_arena_run_play_the_same_first_game(trained, tmp_path):
    # episode 0 of a run seats player 0 in the first seat with the same seeds as the learner view's episode 0
    row = evaluate(trained / "model.zip", "auction_v0", ["rule*2"], episodes=1, seed=11)
    summary = run(RunConfig(env="auction_v0", players=(f"sb3:{trained}", "rule", "rule"), episodes=1, seed=11),
                  tmp_path)
    [episode] = summary.episodes
    assert row.learner.score == episode["metrics"]["agents"]["bidder_1"]["score"] == row.returns[0] != 0


def test_a_model_served_by_arena_serve_agent_plays_as_in_process(trained, tmp_path, capsys):
    """``sb3:`` behind the agent protocol: the numeric observation and the mask travel, the seat's seed too
    (the sampled variant draws from it)."""
    pytest.importorskip("agent_service.server")
    from tests.agent_helpers import comparable, served

    for name, spec in (("greedy", f"sb3:{trained}"), ("sampled", f"sb3:{trained}+deterministic=false")):
        with served("auction_v0", spec) as agent:
            label = f"agent:{agent.url}"
            assert cli.main(["run", "auction_v0", "--players", f"{label},rule,rule", "--episodes", "3", "--seed", "5",
                             "--out", str(tmp_path / f"http-{name}"), "--no-progress", "--no-plots"]) == 0
        assert cli.main(["run", "auction_v0", "--players", f"{spec},rule,rule", "--episodes", "3", "--seed", "5",
                         "--out", str(tmp_path / f"local-{name}"), "--no-progress", "--no-plots"]) == 0
        assert f"{label}" in capsys.readouterr().out  # on the leaderboard
        played = comparable(tmp_path / f"http-{name}", {label: spec})
        assert played == comparable(tmp_path / f"local-{name}", {}) and len(played) > 10
