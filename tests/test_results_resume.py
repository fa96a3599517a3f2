"""The results folder: configuration check, crash states, resume after an interruption and kill -9."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena_envs.runner import RunConfig, run
from arena_envs.runner.results import ResultsError, ResultsFolder, read_episodes

REPO = Path(__file__).resolve().parents[1]
TINY = "tests._tiny_game:env"
TINY_CONFIG = RunConfig(TINY, ("random", "random", "random"), episodes=6, seed=4)


def episode_ids(folder: Path) -> list[int]:
    return [json.loads(line)["episode"] for line in (folder / "episodes.jsonl").read_text().splitlines()]


def canonical(folder: Path) -> dict[str, object]:
    lines = (folder / "episodes.jsonl").read_text().splitlines()
    return {"episodes": sorted(lines, key=lambda line: json.loads(line)["episode"]),
            "files": {p.relative_to(folder).as_posix(): p.read_text()
                      for sub in ("steps", "records") for p in sorted((folder / sub).iterdir())}}


def test_other_configuration_is_refused_same_resumes(tmp_path):
    out = tmp_path / "r"
    run(TINY_CONFIG, out)
    stored = json.loads((out / "run.json").read_text())
    assert stored == {"format": 1, "config": {"env": TINY, "env_kwargs": {}, "players": ["random"] * 3,
                                              "seed": 4, "episodes": 6}}
    for other in (RunConfig(TINY, ("random",) * 3, episodes=6, seed=5),
                  RunConfig(TINY, ("random",) * 3, episodes=7, seed=4),
                  RunConfig(TINY, ("random", "random", "human"), episodes=6, seed=4),
                  RunConfig(TINY, ("random",) * 3, episodes=6, seed=4, env_kwargs={"rounds": 2})):
        with pytest.raises(ResultsError, match="another configuration"):
            run(other, out)
    before = canonical(out)
    summary = run(TINY_CONFIG, out)
    assert (summary.played, summary.resumed) == (0, 6)
    assert canonical(out) == before


def test_non_empty_folder_without_run_json_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ResultsError, match="not empty"):
        run(TINY_CONFIG, tmp_path)


def test_crash_states_are_repaired_on_resume(tmp_path):
    """Rebuild what a kill -9 can leave, from a finished run, then resume it."""
    full = tmp_path / "full"
    run(TINY_CONFIG, full)
    lines = (full / "episodes.jsonl").read_text().splitlines(keepends=True)
    crashed = tmp_path / "crashed"
    (crashed / "steps").mkdir(parents=True)
    (crashed / "records").mkdir()
    shutil.copy(full / "run.json", crashed / "run.json")
    # episodes 0-2 committed; episode 3 made durable but its line torn; episode 4 mid-episode
    (crashed / "episodes.jsonl").write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2])
    for k in range(4):
        for sub, suffix in (("steps", "jsonl"), ("records", "json")):
            name = f"episode_{k:06d}.{suffix}"
            shutil.copy(full / sub / name, crashed / sub / name)
    (crashed / "steps" / "episode_000004.jsonl.partial").write_text(
        (full / "steps" / "episode_000004.jsonl").read_text()[:50])
    (crashed / "records" / "episode_000004.json.tmp").write_text("{")

    folder = ResultsFolder(crashed, TINY_CONFIG.to_dict())
    assert folder.finished == {0, 1, 2}
    assert (crashed / "episodes.jsonl").read_text() == "".join(lines[:3])  # torn tail cut off
    assert sorted(p.name for p in (crashed / "steps").iterdir()) == [f"episode_{k:06d}.jsonl" for k in range(3)]
    assert sorted(p.name for p in (crashed / "records").iterdir()) == [f"episode_{k:06d}.json" for k in range(3)]

    summary = run(TINY_CONFIG, crashed)
    assert (summary.played, summary.resumed) == (3, 3)
    assert canonical(crashed) == canonical(full)


def test_corrupt_middle_line_and_duplicates_are_errors(tmp_path):
    path = tmp_path / "episodes.jsonl"
    path.write_text('{"episode": 0}\nnot json\n{"episode": 2}\n')
    with pytest.raises(ResultsError, match="line 2"):
        read_episodes(path)
    path.write_text('{"episode": 0}\n{"episode": 0}\n')
    with pytest.raises(ResultsError, match="twice"):
        read_episodes(path)
    path.write_text('{"episode": 0}\n{"episode": 1}\n{"epis')
    assert [e["episode"] for e in read_episodes(path)] == [0, 1]
    assert path.read_text().endswith('{"epis')  # reading without repair leaves the file alone


def arena_command(env: str, players: str, episodes: int, out: Path) -> list[str]:
    return [sys.executable, "-m", "arena_envs.runner.cli", "run", env, "--players", players,
            "--episodes", str(episodes), "--seed", "9", "--out", str(out), "--no-progress"]


def finished_count(out: Path) -> int:
    path = out / "episodes.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


def kill_during_run(command: list[str], out: Path, at_least: int, total: int) -> int:
    """Start ``command``, SIGKILL it once ``at_least`` episodes are committed; returns the count then."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    deadline = time.monotonic() + 120
    with subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as proc:
        while finished_count(out) < at_least:
            assert proc.poll() is None, f"run ended before it was killed: {proc.communicate()[1].decode()}"
            assert time.monotonic() < deadline, "run too slow"
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    count = finished_count(out)
    assert count < total, "the run finished before the kill; raise the episode count"
    return count


def check_complete(out: Path, total: int) -> None:
    ids = episode_ids(out)
    assert len(ids) == total and sorted(ids) == list(range(total))  # none lost, none twice
    assert sorted(p.name for p in (out / "steps").iterdir()) == [f"episode_{k:06d}.jsonl" for k in range(total)]
    assert sorted(p.name for p in (out / "records").iterdir()) == [f"episode_{k:06d}.json" for k in range(total)]


def test_kill_9_mid_run_then_resume_auction(tmp_path):
    total = 25
    out = tmp_path / "killed"
    command = arena_command("auction_v0", "rule,rule,random", total, out)
    killed_at = kill_during_run(command, out, at_least=3, total=total)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"({total - killed_at} episodes played, {killed_at} already there, {total}/{total} finished)" in done.stdout
    check_complete(out, total)
    run(RunConfig("auction_v0", ("rule", "rule", "random"), episodes=total, seed=9), tmp_path / "clean")
    assert canonical(out) == canonical(tmp_path / "clean")


def test_kill_9_repeatedly_tiny_game(tmp_path):
    """Several kills at different points of the same run; the tiny game commits an episode every few ms."""
    total = 150
    out = tmp_path / "killed"
    command = arena_command(TINY, "random,random,random", total, out)
    reached = 0
    for target in (5, 40, 90):
        reached = kill_during_run(command, out, at_least=max(target, reached + 1), total=total)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    check_complete(out, total)
    run(RunConfig(TINY, ("random",) * 3, episodes=total, seed=9), tmp_path / "clean")
    assert canonical(out) == canonical(tmp_path / "clean")
