"""Episodes on a local Ray cluster: the same results folder as a local run, a killed worker's
episodes played again exactly once, a killed driver's run resumed, Ray imported only when used."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from arena_envs.core import Policy, PolicyFault
from arena_envs.core.episode_context import current_episode
from arena_envs.runner.ray_runner import RayOptions
from arena_envs.runner.runner import RunConfig, RunError, RunFault, run
from baselines.random_policy import RandomPolicy
from tests.process_helpers import arena_command, kill_during_run, process_tree, run_in_repo, wait_gone
from tests.results_helpers import folder_content
from tests.test_results_resume import TINY, check_complete, resume_matches_clean

pytestmark = pytest.mark.ray

DECISION_S = 0.01  # a slow decision: time for a worker to be killed in the middle of its batch
FAILING_EPISODE = 7


def same_folders(a: Path, b: Path) -> None:
    assert folder_content(a) == folder_content(b)
    assert json.loads((a / "leaderboard.json").read_text()) == json.loads((b / "leaderboard.json").read_text())


def test_ray_matches_local_two_games_and_stays_on_loopback(tmp_path, ray_local):
    import ray

    assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}
    assert os.environ["RAY_USAGE_STATS_ENABLED"] == "0"
    for game, players, kwargs in (("guess_two_thirds_v0", ("level_k", "best_response_last", "random"),
                                   {"n_players": 3}),
                                  ("auction_v0", ("rule", "rule", "random"), {})):
        config = RunConfig(game, players, episodes=20, seed=5, env_kwargs=kwargs)
        local = run(config, tmp_path / game / "local")
        seen: list[dict[str, Any]] = []
        on_ray = run(config, tmp_path / game / "ray", ray=RayOptions(workers=2, batch=3), on_episode=seen.append)
        assert (on_ray.played, on_ray.resumed, on_ray.worker_failures) == (20, 0, [])
        assert sorted(entry["episode"] for entry in seen) == list(range(20))
        same_folders(tmp_path / game / "local", tmp_path / game / "ray")
        assert on_ray.episodes == local.episodes


class Interrupt(Exception):
    """Stops a run after some episodes (as a Ctrl-C would), leaving a half-played folder."""


def stop_after(count: int) -> Any:
    seen: list[int] = []

    def on_episode(entry: dict[str, Any]) -> None:
        seen.append(entry["episode"])
        if len(seen) == count:
            raise Interrupt

    return on_episode


def test_a_half_local_run_resumes_on_ray_and_the_other_way(tmp_path, ray_local):
    config = RunConfig("auction_v0", ("rule", "rule", "random"), episodes=20, seed=2)
    run(config, tmp_path / "clean")
    for first, then in ((None, RayOptions(workers=2, batch=2)), (RayOptions(workers=2, batch=2), None)):
        out = tmp_path / ("local-then-ray" if first is None else "ray-then-local")
        with pytest.raises(Interrupt):
            run(config, out, ray=first, on_episode=stop_after(8))
        summary = run(config, out, ray=then)
        assert summary.resumed >= 8 and summary.finished == 20
        check_complete(out, 20)
        same_folders(out, tmp_path / "clean")


class SlowRandom(RandomPolicy):
    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        time.sleep(DECISION_S)
        return super().act(observation, info)


def slow_policies(spec: str, env: str) -> Policy:
    return SlowRandom()


def test_a_killed_worker_is_reported_and_its_episodes_played_again_once(tmp_path, ray_local, capsys):
    config = RunConfig(TINY, ("random",) * 3, episodes=24, seed=3)
    run(config, tmp_path / "local")
    pids: list[int] = []
    committed: list[int] = []
    killed: list[int] = []

    def on_episode(entry: dict[str, Any]) -> None:
        committed.append(entry["episode"])
        if len(committed) == 4:
            killed.append(pids[0])
            os.kill(pids[0], signal.SIGKILL)

    summary = run(config, tmp_path / "ray", policy_factory=slow_policies, on_episode=on_episode,
                  ray=RayOptions(workers=2, batch=2, on_start=pids.extend))
    assert sorted(committed) == list(range(24))  # every episode exactly once
    check_complete(tmp_path / "ray", 24)
    same_folders(tmp_path / "ray", tmp_path / "local")
    [failure] = summary.worker_failures
    assert failure.pid == killed[0] and failure.node == "127.0.0.1" and failure.episodes
    assert not set(failure.episodes) & set(committed[:4])  # only episodes not finished before the kill
    assert len(pids) == 3  # two workers, then the one that took the dead one's place
    line = f"arena: ray worker {failure.worker} (pid {killed[0]} on 127.0.0.1) died during episodes " \
           f"{', '.join(map(str, failure.episodes))}; playing them again"
    assert line in capsys.readouterr().err


class FailsInOneEpisode(RandomPolicy):
    error: type[Exception] = RuntimeError

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        key = current_episode()
        if isinstance(key, tuple) and key[1] == FAILING_EPISODE:
            raise self.error("broken on purpose")
        return super().act(observation, info)


class FaultyInOneEpisode(FailsInOneEpisode):
    error = PolicyFault  # its own fault: the run's error says so, from a worker too


def failing_policies(spec: str, env: str) -> Policy:
    return FailsInOneEpisode()


def test_a_policy_error_in_a_worker_stops_the_run_like_a_local_one(tmp_path, ray_local):
    config = RunConfig(TINY, ("random",) * 3, episodes=16, seed=1)
    with pytest.raises(RunError) as local:
        run(config, tmp_path / "local", policy_factory=failing_policies)
    with pytest.raises(RunError) as on_ray:
        run(config, tmp_path / "ray", policy_factory=failing_policies, ray=RayOptions(workers=2, batch=2))
    assert str(on_ray.value) == str(local.value) and type(on_ray.value) is type(local.value) is RunError
    with pytest.raises(RunFault, match="PolicyFault: broken on purpose"):
        run(config, tmp_path / "fault", policy_factory=lambda spec, env: FaultyInOneEpisode(),
            ray=RayOptions(workers=2, batch=2))
    assert f"in episode {FAILING_EPISODE} " in str(local.value)
    kept = [json.loads(line)["episode"] for line in (tmp_path / "ray" / "episodes.jsonl").read_text().splitlines()]
    assert kept and FAILING_EPISODE not in kept
    run(config, tmp_path / "clean")
    clean = folder_content(tmp_path / "clean")
    ray_kept = folder_content(tmp_path / "ray")
    assert ray_kept["log"] == {k: clean["log"][k] for k in sorted(kept)}  # what was kept is what a clean run writes


def test_cli_ray_run_killed_with_sigkill_then_resumed(tmp_path):
    """The driver of a ``--ray`` run (its own local cluster) is SIGKILLed: the cluster's processes
    go with it, and the same command resumes to the folder of a local run."""
    total = 1500
    out = tmp_path / "killed"
    command = arena_command(TINY, "random,random,random", total, out) + ["--ray", "--ray-workers", "2",
                                                                        "--ray-batch", "25"]
    cluster: dict[int, str] = {}
    kill_during_run(command, out, at_least=5, total=total, before_kill=lambda pid: cluster.update(process_tree(pid)))
    commands = " ".join(cmd for _, cmd in cluster.values())
    assert "raylet" in commands and "gcs_server" in commands and "ray::EpisodeWorker" in commands
    temp_dirs = set(re.findall(r"(/tmp/ray\w{8})/session_", commands))  # left behind by the killed driver
    assert temp_dirs
    agents = ("ray::DashboardAgent", "ray::RuntimeEnvAgent")
    # Ray's two agents notice their raylet's death at once but then try for 60 s (a fixed timeout
    # of Ray's) to tell the dead GCS about it before they exit: they are checked at the end
    assert wait_gone(cluster, 15, ignore=agents) == []
    resume_matches_clean(command, out, RunConfig(TINY, ("random",) * 3, episodes=total, seed=9), tmp_path / "clean")
    assert wait_gone(cluster, 90) == []
    for folder in temp_dirs:
        shutil.rmtree(folder, ignore_errors=True)


def test_the_runner_and_arena_list_do_not_import_ray():
    code = ("import sys, io, contextlib\n"
            "import arena_envs.runner.runner, arena_envs.runner.ray_runner\n"
            "from arena_envs.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['list']) == 0\n"
            "print('ray' in sys.modules)\n")
    done = run_in_repo([sys.executable, "-c", code], timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_ray_missing_is_one_line_with_the_install_command(tmp_path):
    code = ("import sys\n"
            "sys.modules['ray'] = None  # as if the extra were not installed\n"
            "from arena_envs.cli import main\n"
            f"sys.exit(main(['run', 'auction_v0', '--players', 'rule,rule,random', '--episodes', '2', "
            f"'--out', {str(tmp_path / 'r')!r}, '--ray']))\n")
    done = run_in_repo([sys.executable, "-c", code], timeout=120)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line == ("arena: error: arena run --ray needs the ray extra (ray is not installed): "
                    "pip install 'arena-envs[ray]'")
    assert not (tmp_path / "r").exists()  # refused before the folder is made


def test_bad_ray_options_are_one_line_errors(tmp_path, ray_local):
    for bad in ({"workers": 0}, {"batch": -1}, {"workers": 1.5}, {"max_worker_failures": -1}):
        with pytest.raises(ValueError, match=r"must be (an integer )?>= "):
            RayOptions(**bad)
    config = RunConfig(TINY, ("random",) * 3, episodes=4)
    one_line = r"^ray workers: 3 asked for, but the cluster has 2 CPUs \(a worker takes one\)$"
    with pytest.raises(ValueError, match=one_line):
        run(config, tmp_path / "r", ray=RayOptions(workers=3))
