"""A short seeded RLlib PPO training on a γ-Bench game, and its modules as players of ``arena run``.

Two learner seats of the Guess 2/3 game (3 players) share one masked PPO module against a
level-k player, on the session's local Ray cluster, with sampling in the driver; the same
configuration trained again gives the same progress and weights; sampling also runs on an
EnvRunner actor. The saved folder then plays an
``arena run`` (spec ``rllib:OUT``), in the learner seats and in the seat it never trained in.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arena_envs.cli import main as arena

pytestmark = [pytest.mark.ray, pytest.mark.slow]

ENV = "guess_two_thirds_v0"


def _config(**changes: Any) -> Any:
    from baselines.rllib.train import RllibConfig

    settings: dict[str, Any] = {"env": ENV, "env_kwargs": {"n_players": 3}, "others": ["level_k"], "iterations": 2,
                                "batch": 300, "minibatch": 100, "epochs": 2, "seed": 5}
    return RllibConfig(**{**settings, **changes})


@pytest.fixture(scope="module")
def trained(ray_local: object, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from baselines.rllib.train import SHARED_MODULE, train

    out = tmp_path_factory.mktemp("rllib") / "ppo"
    summary = train(_config(), out)
    assert summary.modules == {SHARED_MODULE: ["player_0", "player_1"]}
    assert summary.iterations == 2 and summary.env_steps >= 600
    return out


def _progress(out: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (out / "progress.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row.pop("seconds")
    return rows


def test_training_writes_progress_modules_and_metadata(trained: Path) -> None:
    rows = _progress(trained)
    assert [row["iteration"] for row in rows] == [1, 2]
    assert 300 <= rows[0]["env_steps"] < rows[1]["env_steps"]
    for row in rows:  # the shared module's return is its two seats' together
        assert row["episodes"] > 0 and set(row["seat_returns"]) == {"player_0", "player_1"}
        assert row["returns"]["learner"] == pytest.approx(sum(row["seat_returns"].values()))
    meta = json.loads((trained / "model.json").read_text(encoding="utf-8"))
    assert meta["env"] == ENV and meta["env_kwargs"] == {"n_players": 3}
    assert meta["others"] == {"player_2": "level_k"}
    assert meta["modules"]["learner"]["seats"] == ["player_0", "player_1"]
    assert (trained / "modules" / "learner").is_dir()


def test_same_seed_same_training(trained: Path, tmp_path: Path) -> None:
    import torch
    from ray.rllib.core.rl_module.rl_module import RLModule

    from baselines.rllib.train import train

    train(_config(), tmp_path / "again")
    assert _progress(tmp_path / "again") == _progress(trained)
    first, second = (RLModule.from_checkpoint(str(out / "modules" / "learner")).state_dict()
                     for out in (trained, tmp_path / "again"))
    assert first.keys() == second.keys()
    assert all(torch.equal(torch.as_tensor(first[key]), torch.as_tensor(second[key])) for key in first)


def test_trained_module_plays_arena_run(trained: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    players = f"rllib:{trained},rllib:{trained}?deterministic=1,best_response_last"
    status = arena(["run", ENV, "--env-arg", "n_players=3", "--players", players, "--episodes", "3",
                    "--seed", "1", "--out", str(out)])
    assert status == 0, capsys.readouterr().err
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(e["episode"] for e in episodes) == [0, 1, 2]
    # players rotate over the seats: the module also played player_2, which never learned
    assert any(e["seats"]["player_2"].startswith("rllib:") for e in episodes)
    played = [(e, seat) for e in episodes for seat, spec in e["seats"].items() if spec.startswith("rllib:")]
    assert len(played) == 6 and all(sum(e["invalid"][seat].values()) == 0 for e, seat in played)


def test_model_for_another_game_is_refused_in_one_line(trained: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    status = arena(["run", "el_farol_v0", "--players", f"rllib:{trained},random*9", "--episodes", "1",
                    "--out", str(tmp_path / "wrong")])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert len(err.splitlines()) == 1 and f"was trained for {ENV}, not el_farol_v0" in err


def test_sampling_on_an_env_runner_actor(ray_local: object, tmp_path: Path) -> None:
    """``env_runners`` 1: the games are stepped in an EnvRunner actor (another process of the
    cluster, which imports the suite and builds the registered environment there)."""
    from baselines.rllib.train import train

    summary = train(_config(iterations=1, batch=200, minibatch=100, epochs=1, env_runners=1), tmp_path / "remote")
    assert summary.env_steps >= 200
    assert set(_progress(tmp_path / "remote")[0]["seat_returns"]) == {"player_0", "player_1"}
    assert (tmp_path / "remote" / "modules" / "learner").is_dir()
