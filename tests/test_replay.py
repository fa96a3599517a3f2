"""Replays (``arena replay``, ``arena run --record``): an episode re-rendered from its step log.

The replay code is generic; it is tested on a test-local drawing game (``PaintGame``: two seats
paint cells in turn, one picture per round, counted by ``frame_id``) and on the tank battle (a
short game, a four-seat one, a whole one, and ``--record``).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from gymnasium import spaces

from arena_envs.cli import main
from arena_envs.core import Answered, InvalidAnswer, TextAECEnv
from arena_envs.registration import ENVIRONMENTS
from arena_envs.runner import RunConfig, run
from arena_envs.runner.replay import ReplayError, episode_frames, record_episodes, replay_episode, write_video

imageio = pytest.importorskip("imageio.v2")
pytest.importorskip("imageio_ffmpeg")

CELLS = 4
SIDE = 16  # pixels per cell: frames are 64 x 16, multiples of 16 as MP4 wants
PAINT = "tests.test_replay:paint_game"


class PaintGame(TextAECEnv):
    """Each round both seats paint one of 4 cells in their colour; the round number is drawn as a
    grey level, so every round's picture differs. ``frame_id`` grows once per round."""

    metadata: ClassVar[dict[str, Any]] = {"name": "paint_game_v0", "render_modes": ["ansi", "rgb_array"],
                                          "render_fps": 5, "is_parallelizable": False}

    def __init__(self, rounds: int = 5, counted: bool = True, **kwargs: Any):
        agents = ["painter_0", "painter_1"]
        super().__init__(agents=agents, action_spaces={a: spaces.Discrete(CELLS) for a in agents},
                         feature_names=("round",), **kwargs)
        self.rounds = rounds
        self.counted = counted

    def config(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "counted": self.counted}

    def _start_game(self, options: dict[str, Any]) -> None:
        self.round, self.turn = 0, 0
        self.cells = [-1] * CELLS
        self.frame_count = 0

    @property
    def frame_id(self) -> int | None:
        return self.frame_count if self.counted else None

    def _parse_text(self, agent: str, text: str) -> int:
        if not text.strip().isdigit():
            raise InvalidAnswer("unparseable", "answer with a cell number 0-3")
        return int(text)

    def _from_native(self, agent: str, action: Any) -> int:
        return int(action)

    def _validate(self, agent: str, move: int) -> None:
        if not 0 <= move < CELLS:
            raise InvalidAnswer("illegal", f"no cell {move}")

    def _fallback(self, agent: str) -> int:
        return 0

    def _apply(self, answered: Answered) -> None:
        self.cells[answered.move] = self.turn
        self.turn += 1
        if self.turn == 2:
            self.turn, self.round = 0, self.round + 1
            self.frame_count += 1
            if self.round == self.rounds:
                self.terminations = {a: True for a in self.agents}

    def _next_agent(self) -> str | None:
        return None if self.round == self.rounds else self.agents[self.turn]

    def _text(self, agent: str, note: str | None) -> str:
        return f"Round {self.round}; cells {self.cells}. Paint a cell 0-3."

    def _features(self, agent: str) -> np.ndarray:
        return np.array([self.round], dtype=np.float32)

    def _action_mask(self, agent: str) -> np.ndarray:
        return np.ones(CELLS, dtype=np.int8)

    def _render_text(self) -> str:
        return f"round {self.round} cells {self.cells}"

    def _draw_frame(self) -> np.ndarray:
        frame = np.full((SIDE, SIDE * CELLS, 3), 40 * self.round + 10 * self.turn, dtype=np.uint8)
        for cell, owner in enumerate(self.cells):
            if owner >= 0:
                frame[4:12, SIDE * cell + 4:SIDE * cell + 12] = (255, 0, 0) if owner == 0 else (0, 0, 255)
        return frame

    def answer_constraint(self, agent: str | None = None) -> Any:
        return None


def paint_game(**kwargs: Any) -> PaintGame:
    return PaintGame(**kwargs)


def play(out: Path, episodes: int = 2, env: str = PAINT, players: tuple[str, ...] = ("random", "random"),
         **env_kwargs: Any) -> Path:
    run(RunConfig(env, players, episodes=episodes, seed=3, env_kwargs=env_kwargs), out)
    return out


def frame_count(path: Path) -> int:
    reader = imageio.get_reader(path)
    try:
        return sum(1 for _ in reader)
    finally:
        reader.close()


def test_mp4_replay_holds_one_frame_per_round_plus_the_start(tmp_path):
    results = play(tmp_path / "res", rounds=5)
    path = replay_episode(results, 1, tmp_path / "ep1.mp4", env=PAINT)
    assert path == tmp_path / "ep1.mp4"
    assert frame_count(path) == 5 + 1  # the picture after reset, then one per round played


def test_replayed_frames_match_the_logged_moves(tmp_path):
    results = play(tmp_path / "res", rounds=3)
    steps = json.loads("[" + ",".join((tmp_path / "res" / "log.jsonl").read_text().splitlines()) + "]")
    moves = [s["action"] for s in steps if s["episode"] == 0 and "step" in s]
    frames = list(episode_frames(results, 0, env=PAINT))
    last = frames[-1]
    painted = {}
    for i, move in enumerate(moves):
        painted[move] = i % 2
    for cell in range(CELLS):
        pixel = tuple(last[8, SIDE * cell + 8])
        expected = {0: (255, 0, 0), 1: (0, 0, 255)}.get(painted.get(cell, -1), (120, 120, 120))
        assert pixel == expected


def test_without_frame_id_every_step_gives_a_frame(tmp_path):
    results = play(tmp_path / "res", episodes=1, rounds=4, counted=False)
    frames = list(episode_frames(results, 0, env=PAINT))
    assert len(frames) == 1 + 2 * 4  # the start, then one per decision


def test_gif_replay(tmp_path):
    results = play(tmp_path / "res", episodes=1, rounds=4)
    path = replay_episode(results, 0, tmp_path / "ep0.gif", fps=2, env=PAINT)
    assert frame_count(path) == 4 + 1


def test_default_path_and_the_env_fps(tmp_path):
    results = play(tmp_path / "res", episodes=1, rounds=2)
    path = replay_episode(results, 0, env=PAINT)
    assert path == results / "replays" / "episode_0.mp4"
    assert imageio.get_reader(path).get_meta_data()["fps"] == 5  # metadata["render_fps"]


def test_arena_run_record_writes_one_file_per_episode(tmp_path, capsys):
    out, record = tmp_path / "res", tmp_path / "videos"
    code = main(["run", PAINT, "--players", "random,random", "--episodes", "3", "--seed", "1", "--out", str(out),
                 "--env-arg", "rounds=3", "--record", str(record), "--no-progress"])
    assert code == 0
    assert sorted(p.name for p in record.iterdir()) == ["episode_0.mp4", "episode_1.mp4", "episode_2.mp4"]
    assert all(frame_count(p) == 3 + 1 for p in record.iterdir())
    assert "replays: 3 written" in capsys.readouterr().out
    assert record_episodes(out, record) == []  # files already there are kept


def test_arena_replay_command(tmp_path, capsys):
    results = play(tmp_path / "res", episodes=2, rounds=2)
    target = tmp_path / "one.mp4"
    assert main(["replay", str(results), "--episode", "1", "--out", str(target), "--fps", "3", "--env", PAINT]) == 0
    assert frame_count(target) == 2 + 1
    assert imageio.get_reader(target).get_meta_data()["fps"] == 3
    assert f"replay: {target}" in capsys.readouterr().out


def test_an_env_that_cannot_draw_is_a_one_line_error(tmp_path, capsys):
    out = tmp_path / "res"
    code = main(["run", "tests._tiny_game:env", "--players", "random,random,random", "--episodes", "1",
                 "--out", str(out), "--record", str(tmp_path / "v"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "cannot draw replays" in err and "rgb_array" in err
    assert not out.exists()  # refused before playing


def test_an_uncommitted_episode_is_a_clear_error(tmp_path, capsys):
    results = play(tmp_path / "res", episodes=1, rounds=2)
    assert main(["replay", str(results), "--episode", "7", "--env", PAINT]) == 2
    err = capsys.readouterr().err
    assert "episode 7 is not committed" in err and "committed episodes: 0" in err


@pytest.mark.parametrize(("rounds", "message"), [(2, "finished after 4 decisions but the log holds 6"),
                                                 (4, "the log ends after 6 decisions")])
def test_log_and_env_disagreeing_is_an_error(tmp_path, rounds, message):
    results = play(tmp_path / "res", episodes=1, rounds=3)
    run_file = results / "run.json"
    stored = json.loads(run_file.read_text())
    stored["config"]["env_kwargs"]["rounds"] = rounds  # the environment now plays another game than the log
    run_file.write_text(json.dumps(stored))
    with pytest.raises(ReplayError, match=message):
        list(episode_frames(results, 0, env=PAINT))


def test_wrong_agent_in_the_log_is_an_error(tmp_path):
    results = play(tmp_path / "res", episodes=1, rounds=2)
    log = results / "log.jsonl"
    log.write_text(log.read_text().replace('"agent": "painter_1"', '"agent": "painter_0"', 1))
    with pytest.raises(ReplayError, match="decision 1: the log has painter_0 to move, the environment painter_1"):
        list(episode_frames(results, 0, env=PAINT))


def test_bad_file_names_and_fps(tmp_path):
    with pytest.raises(ReplayError, match=r"must end in \.mp4 or \.gif"):
        write_video([], tmp_path / "x.avi")
    with pytest.raises(ReplayError, match="fps must be > 0"):
        write_video([], tmp_path / "x.mp4", fps=0)


TANK_GAMES = [({"stage": 1, "max_rounds": 6}, ("random",)),  # the goal is not reached: 6 rounds
              ({"stage": 5, "max_rounds": 5}, ("random",) * 4),  # four decisions a round, one frame
              ({"stage": 4}, ("rule", "random"))]  # a whole game: the time-out, then each tank steps None


@pytest.mark.skipif("tank_battle_v0" not in ENVIRONMENTS, reason="tank_battle_v0 is not registered")
@pytest.mark.parametrize(("kwargs", "players"), TANK_GAMES)
def test_tank_battle_replay_has_one_frame_per_round(tmp_path, monkeypatch, kwargs, players):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    results = play(tmp_path / "res", episodes=1, env="tank_battle_v0", players=players, **kwargs)
    (entry,) = [json.loads(line) for line in (results / "episodes.jsonl").read_text().splitlines()]
    rounds = entry["metrics"]["game"]["rounds"]
    if "max_rounds" in kwargs:
        assert rounds == kwargs["max_rounds"]
    path = replay_episode(results, 0, tmp_path / "tank.mp4")
    reader = imageio.get_reader(path)
    assert reader.get_data(0).shape == (576, 832, 3)
    assert reader.get_meta_data()["fps"] == 4  # the environment's render_fps
    reader.close()
    assert frame_count(path) == rounds + 1


@pytest.mark.skipif("tank_battle_v0" not in ENVIRONMENTS, reason="tank_battle_v0 is not registered")
def test_tank_battle_record(tmp_path, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    record = tmp_path / "videos"
    code = main(["run", "tank_battle_v0", "--players", "rule,random", "--episodes", "2", "--out", str(tmp_path / "r"),
                 "--env-arg", "stage=4", "--env-arg", "max_rounds=8", "--record", str(record), "--no-progress"])
    assert code == 0
    assert sorted(p.name for p in record.iterdir()) == ["episode_0.mp4", "episode_1.mp4"]
