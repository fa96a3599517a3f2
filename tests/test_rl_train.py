"""``arena train`` / :func:`baselines.rl.train`: real, short, seeded stable-baselines3 trainings on the CPU.

The two learning tests train briefly and then compare the model with a uniformly random learner
(legal actions only) on the same 200 seeded evaluation episodes: Welch's t-test must give
p < 0.01 and the mean difference must exceed the margin each test states.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats

from arena_envs import cli
from arena_envs.runner import policy_registry as registry
from baselines.rl.evaluation import EvalRow
from baselines.rl.train import TrainConfig, train

EVAL_EPISODES = 200


@pytest.fixture(autouse=True)
def one_torch_thread():
    """One thread: the trainings are small, and the test machine's cores are shared."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def arena_train(monkeypatch):
    """``arena train ...`` through the real CLI entry, with this checkout's command declared (the
    installed entry points may predate it)."""
    monkeypatch.setitem(registry.COMMANDS, "train", "baselines.rl.train:main")
    return lambda *args: cli.main(["train", *args])


def assert_beats_random(row: EvalRow, margin: float) -> None:
    assert row.episodes == EVAL_EPISODES == len(row.returns) == len(row.random_returns)
    difference = np.mean(row.returns) - np.mean(row.random_returns)
    welch = stats.ttest_ind(row.returns, row.random_returns, equal_var=False)
    assert difference > margin and welch.pvalue < 0.01, (difference, welch)


def test_maskable_ppo_in_the_auction_beats_random_bidding_against_two_rule_bidders(tmp_path):
    # 6144 steps (~370 auctions); measured differences 9007-12730 in profit for seeds 0-4
    # (seed 0: 9801), random bidding ~ -9400
    config = TrainConfig(env="auction_v0", algo="maskable_ppo", opponents=("rule*2",), steps=6144, seed=0,
                         eval_episodes=EVAL_EPISODES, algo_kwargs={"n_steps": 512})
    summary = train(config, tmp_path)
    assert config.opponents == ("rule", "rule") and summary.steps == 6144
    [row] = summary.evaluation
    assert row.opponent == "rule" and row.learner.score is not None  # the auction's profit as its score
    assert_beats_random(row, margin=5000.0)
    files = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert {"config.json", "model.zip", "model.json", "evaluation.jsonl"} <= files
    assert {f"checkpoints/step_{n}.zip" for n in range(1024, 6144, 1024)} <= files  # a tenth, at rollout starts
    meta = json.loads((tmp_path / "model.json").read_text())
    assert meta["env"] == "auction_v0" and meta["algo"] == "maskable_ppo" and meta["action_space"] == "Discrete(22)"
    assert TrainConfig.from_dict(json.loads((tmp_path / "config.json").read_text())) == config
    [line] = (tmp_path / "evaluation.jsonl").read_text().splitlines()
    assert json.loads(line)["learner"]["mean"] == row.learner.mean
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = EventAccumulator(str(tmp_path / "tb" / "run_1")).Reload()
    assert {"rollout/ep_rew_mean", "eval/rule/mean_return", "eval/rule/random_mean_return"} <= set(
        events.Tags()["scalars"])


def test_ppo_in_public_goods_beats_random_contributions(tmp_path):
    # four players, five rounds against random contributors: free riding pays (at most ~25 more than
    # random play); PPO without masks. Measured differences 8.5-24.6 for seeds 0-5 (seed 0: 19.8)
    config = TrainConfig(env="public_goods_v0", algo="ppo", opponents=("random*3",), steps=6144, seed=0,
                         env_kwargs={"n_players": 4, "n_rounds": 5}, eval_episodes=EVAL_EPISODES,
                         algo_kwargs={"n_steps": 512, "learning_rate": 1e-3})
    [row] = train(config, tmp_path).evaluation
    assert_beats_random(row, margin=5.0)


def test_same_seed_same_model_and_periodic_evaluations(tmp_path):
    def params(out: Path) -> list[np.ndarray]:
        from baselines.rl.models import load_model
        return [p.detach().numpy() for p in load_model(out / "model.zip").policy.parameters()]

    config = TrainConfig(env="el_farol_v0", opponents=("random*9",), steps=256, seed=3, eval_every=128,
                         eval_episodes=5, algo_kwargs={"n_steps": 64, "batch_size": 32})
    first = train(config, tmp_path / "a")
    train(config, tmp_path / "b")
    assert all(np.array_equal(x, y) for x, y in zip(params(tmp_path / "a"), params(tmp_path / "b"), strict=True))
    rows = [json.loads(line) for line in (tmp_path / "a" / "evaluation.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [128, 256] == [128, first.steps]  # at a rollout start, and at the end
    other = TrainConfig(**{**config.to_dict(), "seed": 4})
    train(other, tmp_path / "c")
    assert not all(np.array_equal(x, y) for x, y in zip(params(tmp_path / "a"), params(tmp_path / "c")))


def test_resume_continues_from_the_last_checkpoint_to_the_same_step_count(tmp_path):
    config = TrainConfig(env="diners_dilemma_v0", algo="dqn", opponents=("random*2",), steps=400, seed=1,
                         env_kwargs={"n_players": 3}, checkpoint_every=100, eval_episodes=5,
                         algo_kwargs={"learning_starts": 50})
    whole = train(config, tmp_path)
    assert whole.steps == 400 and whole.resumed_from == 0
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == [
        "step_100.zip", "step_200.zip", "step_300.replay.pkl", "step_300.zip"]
    # an interrupted training: only what had been written by step 200 is left
    for name in ("model.zip", "model.json", "checkpoints/step_300.zip", "checkpoints/step_300.replay.pkl"):
        (tmp_path / name).unlink()
    with pytest.raises(ValueError, match="already holds a training; --resume continues it"):
        train(config, tmp_path)
    other = TrainConfig(**{**config.to_dict(), "steps": 500})
    with pytest.raises(ValueError, match=r"another configuration \(differs in steps"):
        train(other, tmp_path, resume=True)
    resumed = train(config, tmp_path, resume=True)
    assert resumed.resumed_from == 200 and resumed.steps == 400 and not resumed.already_finished
    assert json.loads((tmp_path / "model.json").read_text())["steps"] == 400
    again = train(config, tmp_path, resume=True)
    assert again.already_finished and again.steps == 400


def test_self_play_trains_against_snapshots_and_is_evaluated_against_itself(tmp_path, arena_train, capsys,
                                                                           monkeypatch):
    from arena_envs.rl import LearnerEnv

    added: list[int] = []  # the ids of the copies that got a snapshot
    original = LearnerEnv.add_snapshot
    monkeypatch.setattr(LearnerEnv, "add_snapshot", lambda self, snap: (added.append(id(self)), original(self, snap)))
    out = tmp_path / "self"
    assert arena_train("diners_dilemma_v0", "--opponents", "self,random", "--env-arg", "n_players=3",
                       "--n-envs", "2", "--steps", "384", "--snapshot-every", "100", "--algo-arg", "n_steps=64",
                       "--eval-episodes", "5", "--out", str(out), "--no-progress") == 0
    # rollouts of 2 x 64 steps start at 0, 128, 256: a snapshot for both copies at 128 and at 256,
    # then one for each of the two views of the evaluation against `self`
    assert len(added) == 6 and len(set(added[:4])) == 2
    printed = capsys.readouterr().out
    rows = [json.loads(line) for line in (out / "evaluation.jsonl").read_text().splitlines()]
    assert [r["opponent"] for r in rows] == ["self", "random"]
    assert "opponent" in printed and "self " in printed and f"model: {out / 'model.zip'}" in printed


@pytest.mark.parametrize(("args", "message"), [
    (["auction_v0", "--algo", "a2c", "--opponents", "rule*2"],
     "unknown algorithm 'a2c'; accepted: ppo, maskable_ppo, dqn"),
    (["auction_v0", "--opponents", "rule*2", "--seat", "player_7"],
     "learner seat 'player_7' is not a seat of this environment; seats: bidder_1, bidder_2, bidder_3"),
    (["pirate_game_v0", "--algo", "dqn", "--opponents", "nash*9"],
     "dqn needs a Discrete action space, this seat's is MultiDiscrete([10 10"),
    (["auction_v0", "--opponents", "rule"],
     "auction_v0 has 3 seats (bidder_1, bidder_2, bidder_3): the learner and 2 opponents expected, "
     "--opponents gives 1 (rule)"),
    (["auction_v0", "--opponents", "rule,nobody"], "unknown policy 'nobody' for auction_v0"),
    (["auction_v0", "--opponents", "rule*2", "--algo-arg", "n_stepz=5"], "--algo-arg for ppo: "),
])
def test_bad_input_is_one_line_and_exit_status_2(tmp_path, arena_train, capsys, args, message):
    assert arena_train(*args, "--steps", "64", "--out", str(tmp_path / "x"), "--no-progress") == 2
    err = capsys.readouterr().err
    assert err.startswith("arena: error: ") and message in err and err.count("\n") == 1, err


def test_arena_help_lists_train_and_a_missing_rl_extra_says_what_to_install(monkeypatch, capsys):
    assert "train" in cli.parser().format_help()
    monkeypatch.setitem(registry.COMMANDS, "train", "baselines.rl.no_such_module:main")
    assert cli.main(["train", "auction_v0"]) == 2
    err = capsys.readouterr().err
    assert "arena train needs the rl extra" in err and "pip install 'arena-envs[rl]'" in err and err.count("\n") == 1
    monkeypatch.delitem(registry.COMMANDS, "train")
    assert cli.main(["train", "auction_v0"]) == 2
    assert "no installed package provides 'arena train'" in capsys.readouterr().err


def test_a_folder_of_another_training_is_refused(tmp_path, arena_train, capsys):
    args = ["el_farol_v0", "--opponents", "random*9", "--steps", "64", "--algo-arg", "n_steps=64",
            "--eval-episodes", "2", "--no-progress", "--out", str(tmp_path)]
    assert arena_train(*args) == 0
    assert arena_train(*args, "--resume") == 0
    assert "is finished" in capsys.readouterr().out
    assert arena_train(*args[:-2], "--seed", "5", "--out", str(tmp_path), "--resume") == 2
    assert "differs in seed" in capsys.readouterr().err


def test_the_tank_battle_trains_a_grid_cnn_with_the_learner_defaults(tmp_path, monkeypatch):
    from arena_envs.runner.policy_specs import SpecError
    from arena_envs.runner.runner import RunConfig, run
    from baselines.rl.models import GridCNN, load_model

    summary = train(TrainConfig(env="tank_battle_v0", steps=64, eval_episodes=1,
                                algo_kwargs={"n_steps": 32, "batch_size": 32, "n_epochs": 1}), tmp_path / "tank")
    model = load_model(summary.model)
    assert isinstance(model.policy.features_extractor, GridCNN) and model.policy.normalize_images
    meta = json.loads((summary.out / "model.json").read_text())
    assert meta["env_kwargs"] == {"action_mode": "discrete", "obs_mode": "grid"}
    assert meta["observation_space"] == "Box(0, 255, (25, 64, 64), uint8)" and meta["action_space"] == "Discrete(6)"
    # the model plays the stage in `arena run` with the discrete actions it learnt, which it carries; not
    # obs_mode="grid", which only spared the learner the text (other players may read it)
    monkeypatch.setitem(registry.PREFIXES, "sb3", "baselines.rl.sb3_policy:policy_from_spec")
    played = run(RunConfig(env="tank_battle_v0", players=(f"sb3:{summary.out}",), episodes=1), tmp_path / "run")
    assert len(played.episodes) == 1 and played.config.env_kwargs == {"action_mode": "discrete"}
    with pytest.raises(SpecError, match=r"trained with action_mode='discrete' and this run sets action_mode='dict'; "
                                        r"give --env-arg action_mode=discrete \(or leave action_mode out\)$"):
        run(RunConfig(env="tank_battle_v0", players=(f"sb3:{summary.out}",), episodes=1,
                      env_kwargs={"action_mode": "dict"}), tmp_path / "dict")
    assert not (tmp_path / "dict").exists()  # refused before any folder


def test_arena_run_plays_a_tank_model_trained_with_learner_settings_with_no_extra_argument(
        tmp_path, arena_train, monkeypatch, capsys):
    """The researcher's day: `arena train` on stage 4 (learner settings applied), then `arena run` with
    the model and a rule tank, no --env-arg: the model brings its stage, rounds and discrete actions."""
    monkeypatch.setitem(registry.PREFIXES, "sb3", "baselines.rl.sb3_policy:policy_from_spec")
    model = tmp_path / "tank4"
    assert arena_train("tank_battle_v0", "--env-arg", "stage=4", "--env-arg", "max_rounds=3", "--opponents", "rule",
                       "--steps", "32", "--algo-arg", "n_steps=32", "--algo-arg", "batch_size=32", "--algo-arg",
                       "n_epochs=1", "--eval-episodes", "1", "--no-progress", "--out", str(model)) == 0
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    players = f"sb3:{model},rule"
    assert cli.main(["run", "tank_battle_v0", "--players", players, "--episodes", "2", "--no-progress"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    folder = Path(first.removeprefix("results folder: "))
    assert folder.parent == Path("results") and folder.name.startswith("tank_battle_v0-sb3-tank4,rule-2ep-seed0-")
    config = json.loads((folder / "run.json").read_text())["config"]
    assert config["env_kwargs"] == {"stage": 4, "max_rounds": 3, "action_mode": "discrete"}
    assert len((folder / "episodes.jsonl").read_text().splitlines()) == 2
    # another setting of the command is refused before the first episode, in one line naming the --env-arg
    assert cli.main(["run", "tank_battle_v0", "--players", players, "--episodes", "2", "--no-progress",
                     "--env-arg", "stage=3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "trained with stage=4 and this run sets stage=3; give --env-arg stage=4" in err
    assert sorted(p.name for p in Path("results").iterdir()) == [folder.name]
