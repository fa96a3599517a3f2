"""The viewer's pages in Firefox: the static export of a tank battle, opened from ``file://`` in a
headless Firefox (Debian's firefox-esr), draws the game on its canvas, which only the pages' scripts
(view.js and static/games/*.js) do. Chromium runs the interactive tests (tests/test_view_*.py)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from tests.browser import firefox_screenshot
from tests.process_helpers import REPO
from tests.view_helpers import child_env

pytest.importorskip("starlette", reason="the view extra is not installed: pip install -e '.[view]'")

#: colours of the tank view's picture (static/games/tank.js): the frame around the map and the bricks
FRAME, BRICK = (95, 87, 79), (164, 74, 36)


def arena(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "arena_envs.cli", *args], capture_output=True, text=True,
                          cwd=REPO, env=child_env(), timeout=300)
    assert done.returncode == 0, done.stderr


def test_an_exported_tank_episode_draws_in_firefox(tmp_path: Path) -> None:
    results, site = tmp_path / "results", tmp_path / "site"
    arena("run", "tank_battle_v0", "--players", "rule,random", "--episodes", "1", "--env-arg", "stage=4",
          "--env-arg", "max_rounds=10", "--out", str(results / "tank"), "--no-progress", "--no-plots")
    arena("view", str(results), "--export", str(site))
    (page,) = site.glob("episode-*-0.html")
    shot = tmp_path / "firefox.png"
    firefox_screenshot(page.as_uri(), shot, tmp_path / "home")
    with Image.open(shot) as picture:
        counts = dict(picture.convert("RGB").getcolors(maxcolors=1 << 20) or [])
    colours = {colour: count for count, colour in counts.items()}
    assert colours.get(FRAME, 0) > 20_000 and colours.get(BRICK, 0) > 20_000, \
        f"the tank's picture is not drawn: frame {colours.get(FRAME, 0)} px, bricks {colours.get(BRICK, 0)} px"
