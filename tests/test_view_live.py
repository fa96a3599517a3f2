"""A run started during the test shows as live, and its run page gets each new episode without a
reload. The run is a real ``arena run`` child with a person's seat whose answers the test writes
to its stdin one episode at a time, so the test decides when an episode ends.

The runner commits an ended episode at once when the last commit is older than its sync interval
(0.2 s), else by a timer of its event loop; the terminal's person reads stdin in that loop's thread,
which holds the timer while it waits, so the test writes each episode's answers more than 0.2 s after
the folder was opened or the previous episode committed, and each episode is committed when it ends."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the view extra is not installed: pip install -e '.[view]'")

from arena_envs.runner.results import SYNC_INTERVAL
from arena_envs.view.catalog import folder_id
from tests.process_helpers import REPO, finished_count, wait_until
from tests.view_helpers import child_env, episode_answers, human_run_command, viewer_at

#: the page polls every second: a new episode shows within 2 s of its commit
SHOWN_WITHIN_MS = 2_000


def test_a_run_in_progress_is_live_and_its_new_episodes_show_without_reload(page: Any, tmp_path: Path) -> None:
    out = tmp_path / "results" / "live"
    child = subprocess.Popen(human_run_command(out, 3), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, cwd=REPO, env=child_env())
    try:
        assert child.stdin is not None
        assert wait_until(lambda: (out / "episodes.jsonl").exists(), 60, 0.05), "the run did not open its folder"
        time.sleep(SYNC_INTERVAL + 0.1)
        child.stdin.write(episode_answers())
        child.stdin.flush()
        assert wait_until(lambda: finished_count(out) == 1, 60, 0.05), "the first episode was not committed"
        with viewer_at(tmp_path / "results") as url:
            page.goto(url)
            row = page.locator(f'tr[data-run="{folder_id(out)}"]')
            assert row.locator(".status").inner_text() == "live"
            assert row.locator("[data-progress]").inner_text() == "1 / 3"
            row.locator("a").click()
            page.evaluate("window.sameDocument = true")
            assert page.locator("#episode-rows tr[data-episode]").count() == 1
            child.stdin.write(episode_answers())
            child.stdin.flush()
            assert wait_until(lambda: finished_count(out) == 2, 60, 0.02), "the second episode was not committed"
            page.locator('#episode-rows tr[data-episode="1"]').wait_for(timeout=SHOWN_WITHIN_MS)
            assert page.evaluate("window.sameDocument") is True  # no reload
            assert page.locator("[data-progress]").inner_text() == "2 / 3"
            assert page.locator(".facts .status").inner_text() == "live"
            child.stdin.close()  # the person leaves: the run stops with two episodes
            assert child.wait(timeout=60) == 1
            page.wait_for_function("document.querySelector('.facts .status').textContent === 'stopped'",
                                   timeout=SHOWN_WITHIN_MS)
            assert page.locator('#episode-rows tr[data-episode="1"] a').get_attribute("href").endswith("/episode/1")
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
