"""The runner and ``arena eval`` called from code that already runs an event loop (a Jupyter cell, an
async caller): they play on a loop of their own in a helper thread, with the results of a plain call,
and the notebook's interrupt (a KeyboardInterrupt in the caller's thread) cancels the work first."""
from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from arena_envs.core.event_loops import run_to_end
from arena_envs.evaluation.cli import main as eval_main
from arena_envs.runner.runner import RunConfig, run

CONFIG = RunConfig(env="el_farol_v0", players=("always_go", "always_stay", "random"), episodes=3, seed=4,
                   env_kwargs={"n_players": 3})


def in_a_running_loop(call):
    """``call()`` made from a coroutine of a loop without asyncio.run's Ctrl-C handler (as a notebook's)."""
    async def cell():
        asyncio.get_running_loop()  # a loop runs here, as in a notebook cell
        return call()

    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(cell())
    finally:
        loop.close()


def test_the_runner_called_inside_a_running_loop_writes_what_a_plain_call_writes(tmp_path: Path) -> None:
    summary = in_a_running_loop(lambda: run(CONFIG, tmp_path / "cell"))
    assert len(summary.episodes) == 3
    run(CONFIG, tmp_path / "plain")
    for name in ("episodes.jsonl", "log.jsonl"):
        assert (tmp_path / "cell" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()


def test_arena_eval_runs_inside_a_running_loop(tmp_path: Path) -> None:
    assert in_a_running_loop(lambda: eval_main(["random", "--games", "el_farol_v0", "--quick", "--out",
                                                str(tmp_path / "eval"), "--no-progress"])) == 0
    assert (tmp_path / "eval" / "card.json").is_file()


def test_an_interrupt_in_the_callers_thread_cancels_the_work_before_it_is_raised() -> None:
    cancelled = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        in_a_running_loop(lambda: run_to_end(forever))
    assert cancelled.is_set() and time.monotonic() - started < 30


def test_an_error_of_the_work_is_raised_in_the_callers_thread() -> None:
    async def fails() -> None:
        raise ValueError("bad setting 7")

    with pytest.raises(ValueError, match="bad setting 7"):
        in_a_running_loop(lambda: run_to_end(fails))
