"""Results folders for the viewer's tests, made by real ``arena run`` commands, and the viewer served
on 127.0.0.1 in a thread.

The hostile run: guess_two_thirds_v0 with a person's seat (``human``, answers read from stdin) and
nine random players, ``max_retries=1``. Seats rotate, so the person is player_0 in episode 0 and
player_1 in episode 1. In every round the person first answers :data:`HOSTILE` (markup and a script:
invalid, so the game asks again); in the first round of each episode the second answer is hostile
too, so the game's fallback applies; in the other rounds the second answer is valid.
"""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.process_helpers import REPO

HOSTILE = '<script>window.pwned=1</script><b class="hostile">bold</b><img src=x onerror="window.pwned=2">'
VALID = '{"chosen_number": "40"}'
ROUNDS = 20
GAME = "guess_two_thirds_v0"
#: ARENA_SCREENSHOTS=1: the browser tests save the pictures of docs/view.md here
SCREENSHOTS = REPO / "docs" / "img"


def episode_answers() -> str:
    """The person's stdin for one episode (see the module docstring)."""
    lines = [HOSTILE, HOSTILE] + [HOSTILE, VALID] * (ROUNDS - 1)
    return "".join(line + "\n" for line in lines)


def human_run_command(out: Path, episodes: int) -> list[str]:
    return [sys.executable, "-m", "arena_envs.cli", "run", GAME, "--players", "human,random*9", "--episodes",
            str(episodes), "--seed", "3", "--env-arg", "max_retries=1", "--out", str(out), "--no-progress"]


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def hostile_run(out: Path, episodes: int = 2) -> None:
    """The hostile run of ``episodes`` episodes into ``out``."""
    done = subprocess.run(human_run_command(out, episodes), input=episode_answers() * episodes, text=True,
                          capture_output=True, cwd=REPO, env=child_env(), timeout=120)
    assert done.returncode == 0, done.stderr


def random_run(out: Path, episodes: int = 3) -> None:
    """An ordinary run: guess_two_thirds_v0 with ten random players."""
    done = subprocess.run([sys.executable, "-m", "arena_envs.cli", "run", GAME, "--players", "random*10",
                           "--episodes", str(episodes), "--out", str(out), "--no-progress"],
                          capture_output=True, text=True, cwd=REPO, env=child_env(), timeout=120)
    assert done.returncode == 0, done.stderr


def evaluation(out: Path) -> None:
    """A real quick evaluation of the random policy on guess_two_thirds_v0 (``arena eval``): eval.json, three
    part runs (model, random and rule subjects) and the report card with its figures."""
    done = subprocess.run([sys.executable, "-m", "arena_envs.cli", "eval", "random", "--games", GAME, "--quick",
                           "--out", str(out), "--no-progress"], capture_output=True, text=True, cwd=REPO,
                          env={**child_env(), "MPLBACKEND": "Agg"}, timeout=300)
    assert done.returncode == 0, done.stderr


@contextmanager
def viewer_at(*folders: Path) -> Iterator[str]:
    """The viewer over ``folders``, served by uvicorn on 127.0.0.1 in a thread; its URL."""
    from arena_envs.view.app import create_app
    from arena_envs.view.pages import Viewer
    from arena_envs.view.server import running

    with running(create_app(Viewer(list(folders)))) as url:
        yield url


def screenshot(page: object, name: str) -> None:
    """Save the page as docs/img/view_<name>.png when ARENA_SCREENSHOTS=1."""
    if os.environ.get("ARENA_SCREENSHOTS") == "1":
        page.screenshot(path=str(SCREENSHOTS / f"view_{name}.png"))  # type: ignore[attr-defined]


def element_screenshot(page: Any, selector: str, name: str, max_height: int = 1000) -> None:
    """Save the element ``selector`` (a game's view), its first ``max_height`` pixels, as
    docs/img/view_<name>.png when ARENA_SCREENSHOTS=1."""
    if os.environ.get("ARENA_SCREENSHOTS") == "1":
        box = page.locator(selector).bounding_box()
        clip = {"x": box["x"], "y": box["y"], "width": box["width"], "height": min(box["height"], max_height)}
        page.screenshot(path=str(SCREENSHOTS / f"view_{name}.png"), clip=clip, full_page=True)
