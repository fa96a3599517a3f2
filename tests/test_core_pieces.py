"""The shared pieces in arena_envs.core: the simultaneous-move phase, the answers a game's hooks
receive, entry points and the package-data loader. Frames are tested in test_core_frames.py."""
from __future__ import annotations

import sys
from typing import Any

import pytest
from pettingzoo.utils import wrappers

from arena_envs.core import (
    Answered,
    SimultaneousPhase,
    data_file,
    entry_points,
    parallel_entry_point,
    read_bytes,
    read_text,
)
from arena_envs.gamma.battle_royale import BattleRoyaleEnv
from arena_envs.gamma.el_farol import ElFarolEnv
from tests._tiny_game import TinyGame

# ------------------------------------------------------------------------------ simultaneous phase


def test_simultaneous_phase_buffers_until_the_last_move():
    phase: SimultaneousPhase[str, int] = SimultaneousPhase(["b", "a", "c"])
    assert phase.current == "b" and phase.awaits("a") and not phase.awaits("z")
    assert phase.submit("b", 5) is False and not phase.awaits("b") and phase.current == "a"
    with pytest.raises(RuntimeError, match="'c' is not the seat to decide now"):
        phase.submit("c", 1)
    assert phase.submit("a", 6) is False
    assert phase.submit("c", 7) is True and phase.complete and phase.current is None
    assert phase.moves == {"b": 5, "a": 6, "c": 7} and list(phase.moves) == ["b", "a", "c"]
    phase.start(["c"])
    assert phase.moves == {} and phase.current == "c" and not phase.complete
    phase.start([])
    assert phase.complete and phase.current is None
    with pytest.raises(ValueError, match="every seat once"):
        phase.start(["a", "a"])


# ------------------------------------------------------------------------------ entry points


# ------------------------------------------------------------------------------ the answers hooks receive


class HearingGame(TinyGame):
    """The tiny game, noting every answer its hooks receive."""

    def _start_game(self, options: dict[str, Any]) -> None:
        super()._start_game(options)
        self.heard: list[tuple[str, Answered]] = []

    def _apply(self, answered: Answered) -> None:
        self.heard.append(("apply", answered))
        super()._apply(answered)

    def _rejected(self, answered: Answered) -> None:
        self.heard.append(("rejected", answered))


def test_a_game_hears_a_valid_a_reasked_and_a_fallen_back_answer():
    env = HearingGame(n_players=2, max_retries=1)
    env.reset(seed=0)
    env.step("I guess 3")  # player_0: valid
    env.step("none")  # player_1: unreadable, asked again
    assert env.infos["player_1"]["invalid_action"]["kind"] == "unparseable" and env.agent_selection == "player_1"
    env.step(3)  # player_1 repeats the previous guess: illegal, no re-ask left, the fallback (0) applies
    (_, valid), (_, reasked), (_, fallback) = env.heard
    assert [kind for kind, _ in env.heard] == ["apply", "rejected", "apply"]
    assert valid == Answered("player_0", "I guess 3", 3) and valid.text == "I guess 3" and not valid.fell_back
    assert (reasked.agent, reasked.answer, reasked.move, reasked.note, reasked.asked_again) == \
        ("player_1", "none", None, None, True)
    assert reasked.invalid is not None and reasked.invalid.kind == "unparseable"
    assert reasked.text == "none" and not reasked.fell_back
    assert (fallback.agent, fallback.answer, fallback.move, fallback.asked_again) == ("player_1", 3, 0, False)
    assert fallback.invalid is not None and fallback.invalid.kind == "illegal"  # the last invalid answer
    assert fallback.note == reasked.invalid.reason  # the correction player_1 answered
    assert fallback.fell_back and fallback.text is None and env.infos["player_1"]["fallback"]


def test_entry_points_build_the_triad():
    env, raw_env = entry_points(ElFarolEnv)
    assert isinstance(raw_env(n_rounds=3), ElFarolEnv)
    wrapped = env(n_rounds=3)
    assert isinstance(wrapped, wrappers.OrderEnforcingWrapper) and isinstance(wrapped.unwrapped, ElFarolEnv)
    parallel_env = parallel_entry_point(ElFarolEnv)
    par = parallel_env(n_rounds=2)
    observations, _ = par.reset(seed=0)
    assert set(observations) == set(par.possible_agents)
    with pytest.raises(ValueError, match="max_retries=0"):
        parallel_env(max_retries=2)
    with pytest.raises(ValueError, match="BattleRoyaleEnv is not parallelizable"):
        parallel_entry_point(BattleRoyaleEnv)


def test_every_entry_module_uses_the_core_factory():
    from arena_envs.registration import ENVIRONMENTS, env_module

    for name in ENVIRONMENTS:  # parallel_env() exactly where the spec says: tests/test_registration.py
        module = env_module(name)
        assert module.env.__module__ == module.raw_env.__module__ == "arena_envs.core.entry_points", name


# ------------------------------------------------------------------------------ package data


@pytest.fixture
def data_package(tmp_path, monkeypatch):
    """A real importable package with a data folder (what a game ships)."""
    package = tmp_path / "tiny_data_game"
    (package / "data" / "maps").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "data" / "pairs.json").write_text('[["apple", "pear"]]', encoding="utf-8")
    (package / "data" / "maps" / "stage1.txt").write_bytes(b"##..##\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "tiny_data_game"
    sys.modules.pop("tiny_data_game", None)


def test_package_data_reads_shipped_files(data_package):
    assert read_text(data_package, "data/pairs.json") == '[["apple", "pear"]]'
    assert read_bytes(data_package, "data/maps/stage1.txt") == b"##..##\n"
    assert data_file(data_package, "data/pairs.json").name == "pairs.json"


def test_package_data_errors_name_the_package_the_file_and_what_exists(data_package):
    with pytest.raises(FileNotFoundError) as err:
        read_text(data_package, "data/words.json")
    message = str(err.value)
    assert "'tiny_data_game'" in message and "'data/words.json'" in message and "maps/, pairs.json" in message
    assert "\n" not in message
    with pytest.raises(FileNotFoundError, match=r"its folder holds: data/"):
        read_text(data_package, "maps/stage1.txt")
    with pytest.raises(FileNotFoundError, match="no package 'no_such_game_pkg'"):
        read_text("no_such_game_pkg", "data/x.json")


def test_a_wheel_ships_the_data_folder_of_a_game_package(tmp_path):
    """Build a real wheel of a copy of the project with a data file added to a game package."""
    import shutil
    import subprocess
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    project = tmp_path / "project"
    project.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(root / name, project / name)
    shutil.copytree(root / "arena_envs", project / "arena_envs", ignore=shutil.ignore_patterns("__pycache__"))
    (project / "arena_envs" / "gamma" / "data" / "maps").mkdir(parents=True)
    (project / "arena_envs" / "gamma" / "data" / "pairs.json").write_text("[]")
    (project / "arena_envs" / "gamma" / "data" / "maps" / "stage1.txt").write_text("#")
    subprocess.run([sys.executable, "-c", "from setuptools import build_meta; build_meta.build_wheel('dist')"],
                   cwd=project, check=True, capture_output=True, timeout=300)
    (wheel,) = (project / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"arena_envs/gamma/data/pairs.json", "arena_envs/gamma/data/maps/stage1.txt"} <= names
