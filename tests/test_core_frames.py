"""The frame-render hook of TextAECEnv, with real pygame under SDL's dummy video driver.

A test-local game draws one pygame Surface per frame (``_draw_frame``); the core provides
``rgb_array`` and ``human`` (a window at ``metadata["render_fps"]``) and ``close()`` releases the
window; ``human`` draws after ``reset()`` and every step with no ``render()`` call. Text games keep
``ansi`` (the text) and ``human`` (the text printed as the game steps).
"""
from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
import time
from typing import Any, ClassVar

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, render_test
from pettingzoo.utils import wrappers

from arena_envs.core import Answered, InvalidAnswer, TextAECEnv, frame_array

pygame = pytest.importorskip("pygame")
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # read when a window opens: no screen needed
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

CELL = 8  # pixels per grid cell


class FrameGame(TextAECEnv):
    """One player moves a red marker over a 3 x 2 grid of cells for 6 steps."""

    metadata: ClassVar[dict[str, Any]] = {"name": "frame_game_v0", "render_modes": ["ansi", "human", "rgb_array"],
                                          "render_fps": 30, "is_parallelizable": False}

    def __init__(self, as_array: bool = False, **kwargs: Any):
        super().__init__(agents=["player_0"], action_spaces={"player_0": spaces.Discrete(6)},
                         feature_names=("cell",), **kwargs)
        self.as_array = as_array

    def _start_game(self, options: dict[str, Any]) -> None:
        self.cell, self.turns = 0, 0

    def _parse_text(self, agent: str, text: str) -> int:
        if not text.strip().isdigit():
            raise InvalidAnswer("unparseable", "answer with a cell number")
        return int(text)

    def _from_native(self, agent: str, action: Any) -> int:
        return int(action)

    def _validate(self, agent: str, move: int) -> None:
        if not 0 <= move < 6:
            raise InvalidAnswer("illegal", f"no cell {move}")

    def _fallback(self, agent: str) -> int:
        return 0

    def _apply(self, answered: Answered) -> None:
        self.cell, self.turns = answered.move, self.turns + 1
        if self.turns == 6:
            self.terminations[answered.agent] = True

    def _next_agent(self) -> str | None:
        return None if self.turns == 6 else "player_0"

    def _text(self, agent: str, note: str | None) -> str:
        return f"The marker is in cell {self.cell}. Move it (0-5)."

    def _features(self, agent: str) -> np.ndarray:
        return np.array([self.cell], dtype=np.float32)

    def _action_mask(self, agent: str) -> np.ndarray:
        return np.ones(6, dtype=np.int8)

    def answer_constraint(self, agent: str | None = None) -> Any:
        return None

    def _render_text(self) -> str:
        return f"cell {self.cell}"

    def _draw_frame(self) -> Any:
        row, col = divmod(self.cell, 3)
        if self.as_array:
            frame = np.zeros((2 * CELL, 3 * CELL, 3), dtype=np.uint8)
            frame[row * CELL:(row + 1) * CELL, col * CELL:(col + 1) * CELL] = (255, 0, 0)
            return frame
        surface = pygame.Surface((3 * CELL, 2 * CELL))
        surface.fill((0, 0, 0))
        pygame.draw.rect(surface, (255, 0, 0), pygame.Rect(col * CELL, row * CELL, CELL, CELL))
        return surface


def make(render_mode: str | None = None, **kwargs: Any) -> wrappers.OrderEnforcingWrapper:
    return wrappers.OrderEnforcingWrapper(FrameGame(render_mode=render_mode, **kwargs))


def test_render_test_passes_for_every_mode():
    render_test(make)


def test_api_test_passes_with_frames():
    api_test(make(render_mode="rgb_array"), num_cycles=20)


def test_rgb_array_is_the_drawn_frame():
    env = make(render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.shape == (2 * CELL, 3 * CELL, 3) and frame.dtype == np.uint8
    assert frame[0, 0].tolist() == [255, 0, 0]  # the marker starts in cell 0 (red), the rest is black
    assert frame[0, CELL].tolist() == [0, 0, 0]
    env.step(1)
    moved = env.render()
    assert moved[0, CELL].tolist() == [255, 0, 0] and moved[0, 0].tolist() == [0, 0, 0]
    env.close()


def test_a_game_may_return_an_rgb_array_instead_of_a_surface():
    env = make(render_mode="rgb_array", as_array=True)
    env.reset(seed=0)
    assert env.render()[0, 0].tolist() == [255, 0, 0]
    with pytest.raises(ValueError, match=r"\(H, W, 3\) uint8"):
        frame_array(np.zeros((4, 4), dtype=np.uint8))


def test_human_mode_opens_a_window_at_render_fps_and_close_releases_it():
    env = make(render_mode="human")
    env.reset(seed=0)
    assert env.render() is None
    window = env.unwrapped._frame_window
    assert window is not None and window.is_open and window.fps == FrameGame.metadata["render_fps"]
    screen = pygame.display.get_surface()
    assert screen is not None and screen.get_size() == (3 * CELL, 2 * CELL)
    assert pygame.display.get_caption()[0] == "frame_game_v0"
    assert screen.get_at((1, 1))[:3] == (255, 0, 0)  # the frame was drawn into the window
    start = time.perf_counter()
    for _ in range(6):  # kept to render_fps: 6 more frames take at least 6 / 30 s
        env.render()
    assert time.perf_counter() - start >= 0.9 * 6 / FrameGame.metadata["render_fps"]
    clone = copy.deepcopy(env)  # a copy does not share the window
    assert clone.unwrapped._frame_window is not window and not clone.unwrapped._frame_window.is_open
    assert pickle.loads(pickle.dumps(window)).is_open is False
    env.close()
    assert not window.is_open and env.unwrapped._frame_window is None
    assert not pygame.display.get_init()
    env.close()  # closing twice is harmless


def test_human_mode_draws_after_reset_and_every_step_without_render(monkeypatch):
    """As in PettingZoo's games, ``human`` needs no ``render()`` call: a game without ``frame_id``
    draws after ``reset()`` and after every step (an invalid answer's included)."""
    flips = []
    flip = pygame.display.flip
    monkeypatch.setattr(pygame.display, "flip", lambda: (flips.append(1), flip())[-1])
    env = make(render_mode="human")
    env.reset(seed=0)
    assert len(flips) == 1 and pygame.display.get_surface().get_at((1, 1))[:3] == (255, 0, 0)
    env.step(4)  # cell 4: row 1, column 1
    assert len(flips) == 2 and pygame.display.get_surface().get_at((CELL + 1, CELL + 1))[:3] == (255, 0, 0)
    env.step("no")
    assert len(flips) == 3
    env.close()


def test_text_games_print_in_human_mode_as_they_step(capsys):
    """``ansi`` returns the text; ``human`` prints it with no ``render()`` call, as PettingZoo's text
    games do: each step prints the lines its text gained (El Farol's log: a round's line when the
    round ends, once), and ``render()`` prints the whole text."""
    from arena_envs import el_farol_v0

    env = el_farol_v0.env(n_rounds=2, render_mode="ansi")
    env.reset(seed=0)
    for _ in range(20):
        env.step(1)
    text = env.render()
    lines = text.splitlines()
    assert len(lines) == 2 and lines[0].startswith("Round 1: 10/10 went (crowded)")
    human = el_farol_v0.env(n_rounds=2, render_mode="human")
    human.reset(seed=0)
    assert capsys.readouterr().out == ""  # the log is empty
    printed = []
    for _ in range(20):
        human.step(1)
        printed.append(capsys.readouterr().out)
    assert printed[9] == lines[0] + "\n" and printed[19] == lines[1] + "\n"
    assert printed[:9] == printed[10:19] == [""] * 9  # a decision inside a round changes nothing shown
    assert human.render() is None and capsys.readouterr().out == text + "\n"
    with pytest.raises(ValueError, match="render_mode"):
        el_farol_v0.env(render_mode="rgb_array")


def test_a_text_human_view_prints_from_its_first_changed_line():
    """A snapshot whose first line changed (a new day) is printed whole, a log that grew its new
    lines (and a changed line after them), an unchanged text nothing."""
    from arena_envs.core.text_env import new_lines

    assert new_lines("day 1\nA 10\nB 12", "day 2\nA 11\nB 12") == "day 2\nA 11\nB 12"
    assert new_lines("rules\nRound 1\nto move: A", "rules\nRound 1\nRound 2\nto move: B") == "Round 2\nto move: B"
    assert new_lines("same", "same") == "" and new_lines("", "Round 1") == "Round 1"


def test_importing_the_package_does_not_import_pygame():
    code = "import sys, arena_envs, arena_envs.core; from arena_envs import battle_royale_v0; " \
           "print('pygame' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
