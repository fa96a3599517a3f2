"""Ctrl-C stops a run cleanly: SIGINT to a real ``arena run`` once some episodes are committed; the
first one ends it (exit status 130, one line saying where the finished episodes are and how to
resume, no traceback), and the same command then completes the folder to what an uninterrupted run
writes."""
from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from arena_envs.runner import RunConfig
from arena_envs.runner.policy_specs import split_players
from tests.process_helpers import arena_command, finished_count, signal_during_run
from tests.test_results_resume import resume_matches_clean

ENV = "el_farol_v0"
PLAYERS = "contrarian*5,random*5"  # rule and random players: every decision is synchronous, CPU-bound
TOTAL = 200  # about 1.5 s of play; the SIGINT comes after the first group commit (0.2 s)


def interrupt_then_resume(tmp_path, *options: str) -> tuple[int, subprocess.CompletedProcess[str]]:
    """SIGINT a run once episodes are committed, check how it stopped, resume it; returns the count
    of episodes the interrupted run kept and the resumed run."""
    out = tmp_path / "interrupted"
    command = [*arena_command(ENV, PLAYERS, TOTAL, out), *options]
    sent: list[float] = []  # when the signal went (the run's start-up, Ray's included, is not counted)
    status, stderr = signal_during_run(command, out, at_least=3, sig=signal.SIGINT,
                                       before_signal=lambda pid: sent.append(time.monotonic()))
    assert time.monotonic() - sent[0] < 15, "the first Ctrl-C did not stop the run"
    assert status == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == (f"arena: interrupted; finished episodes are kept in {out}; "
                                               "run the same command again to resume")
    kept = finished_count(out)
    assert 3 <= kept < TOTAL, "the run finished before the signal; raise TOTAL"
    assert (out / "leaderboard.json").exists()  # the interrupted run ended its bookkeeping
    config = RunConfig(ENV, tuple(split_players(PLAYERS)), episodes=TOTAL, seed=9)
    return kept, resume_matches_clean(command, out, config, tmp_path / "clean", timeout=120)


def test_sigint_stops_a_cpu_bound_run_then_resume_is_exact(tmp_path):
    kept, done = interrupt_then_resume(tmp_path)
    assert f"({TOTAL - kept} episodes played, {kept} already there, {TOTAL}/{TOTAL} finished)" in done.stdout


def test_sigint_with_concurrent_episodes(tmp_path):
    interrupt_then_resume(tmp_path, "--concurrency", "4")


@pytest.mark.parametrize("command, watched", [
    (["run", "gamma", "--players", "random", "--runs", "3000", "--games", ENV], ENV),
    (["eval", "random", "--games", ENV, "--episodes", "3000"], f"{ENV}/model/main"),
], ids=["gamma", "eval"])
def test_sigint_stops_gamma_and_eval(tmp_path, command, watched):
    """``arena run gamma`` and ``arena eval`` play through the same runner: the first Ctrl-C ends them too."""
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "arena_envs.cli", *command, "--out", str(out), "--no-progress"]
    status, stderr = signal_during_run(argv, out / watched, at_least=3, sig=signal.SIGINT)
    assert status == 130, stderr
    assert stderr.strip() == (f"arena: interrupted; finished episodes are kept in {out}; "
                              "run the same command again to resume")
    assert 3 <= finished_count(out / watched) < 3000


@pytest.mark.ray
def test_sigint_stops_a_ray_run(tmp_path):
    pytest.importorskip("ray")
    interrupt_then_resume(tmp_path, "--ray", "--ray-workers", "2")
