"""Hostile input that reaches code rather than a game: a results folder naming code to run, a server
record naming another process, Ctrl-C in ``arena play``, and the environment API called out of order.

* A results folder is data: ``arena replay`` (the real command) builds only a registered environment
  or the one named on its command line; a folder naming ``subprocess:getoutput`` and a shell command
  runs nothing (its marker file is never made), and is refused in one line before anything is
  imported. Reading commands (``leaderboard``, ``eval --compare``) call nothing named in a folder.
* ``arena serve --stop`` stops only a server ``arena serve`` started: a record naming a harmless
  ``sleep`` in its own process group, however well forged, leaves it running.
* Ctrl-C (SIGINT to the real ``arena play``) abandons every game with status 130 while it waits for
  the person, the tank's pygame window included.
* ``raw_env()`` out of order, in all twelve games: ``step()`` / ``observe()`` / ``last()`` before
  ``reset()`` raise PettingZoo's error, ``last()`` after the episode a ``RuntimeError``, and an episode
  reset with a NumPy seed keeps a JSON-serialisable record.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arena_envs.cli import main
from arena_envs.registration import ENVIRONMENTS, env_module
from arena_envs.runner.policy_specs import SpecError, make_policy, split_players
from arena_envs.runner.runner import RunConfig, run
from tests.process_helpers import REPO, wait_until

GAMES = sorted(ENVIRONMENTS)
#: a module whose import alone makes the marker file named by ARENA_TEST_MARKER
IMPORT_SIDE_EFFECT = "from pathlib import Path\nimport os\nPath(os.environ['ARENA_TEST_MARKER']).touch()\nenv = None\n"


def one_line_error(err: str) -> str:
    """The one ``arena: error: ...`` line of ``err`` (the test fails on anything else)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), err
    return lines[0]


# ---------------------------------------------------------------- results folders are data


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real one-episode results folder of a registered game."""
    out = tmp_path_factory.mktemp("played") / "run"
    config = RunConfig("guess_two_thirds_v0", tuple(split_players("random*10")), episodes=1,
                       env_kwargs={"n_rounds": 1})
    run(config, out, plots=False)
    return out


@pytest.fixture
def hostile(played: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``hostile(env, env_kwargs)``: a copy of the played folder whose ``run.json`` names ``env``; the marker
    file that running (or importing) what it names would make is ``tmp_path / "MARKER"``, and ``tmp_path``
    holds ``hostile_module.py`` (importing it makes the marker) on ``sys.path``."""
    marker = tmp_path / "MARKER"
    monkeypatch.setenv("ARENA_TEST_MARKER", str(marker))
    (tmp_path / "hostile_module.py").write_text(IMPORT_SIDE_EFFECT)
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(env: Any, env_kwargs: dict[str, Any] | None = None) -> Path:
        folder = tmp_path / "folder"
        shutil.copytree(played, folder)
        stored = json.loads((folder / "run.json").read_text())
        stored["config"].update(env=env, env_kwargs=env_kwargs or {})
        (folder / "run.json").write_text(json.dumps(stored))
        return folder

    yield make
    assert not marker.exists(), "a name read from the results folder was imported or run"
    sys.modules.pop("hostile_module", None)


def touch(marker: str) -> str:
    return f"touch {marker}"


@pytest.mark.parametrize("name", ["subprocess:getoutput", "hostile_module:env"])
def test_replay_through_the_real_cli_runs_nothing_a_folder_names(hostile, tmp_path, name):
    folder = hostile(name, {"cmd": touch(os.environ["ARENA_TEST_MARKER"])} if name.startswith("subprocess") else {})
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{tmp_path}"}
    done = subprocess.run([sys.executable, "-m", "arena_envs.cli", "replay", str(folder), "--episode", "0"],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    line = one_line_error(done.stderr)
    assert f"names environment {name!r}, which is not registered" in line and "--env NAME" in line
    assert not (tmp_path / "MARKER").exists()


@pytest.mark.parametrize(("name", "kwargs"), [
    ("subprocess:getoutput", {"cmd": "MARKER"}),
    ("os:popen", {"cmd": "MARKER"}),
    ("hostile_module:env", {}),
    ("arena_envs.guess_two_thirds_v0:env", {}),  # harmless, but named only by the folder
    ("guess_two_thirds_v0 ", {}),
    (12, {}),
    (None, {}),
    (["subprocess", "getoutput"], {}),
    ("x" * 5000 + ":y", {}),
], ids=["getoutput", "popen", "import", "own-callable", "near-name", "number", "null", "list", "long"])
def test_replay_refuses_an_unregistered_name_in_one_line(hostile, capsys, name, kwargs):
    kwargs = {key: touch(os.environ["ARENA_TEST_MARKER"]) for key in kwargs}
    folder = hostile(name, kwargs)
    assert main(["replay", str(folder), "--episode", "0"]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert "which is not registered" in line and "a results folder is data" in line and len(line) < 600
    assert "hostile_module" not in sys.modules


def test_replay_builds_the_name_given_on_the_command_line_and_only_that(hostile, capsys):
    """``--env`` naming the folder's own callable lets it be built (it then cannot draw); another is refused."""
    own = "arena_envs.guess_two_thirds_v0:env"
    folder = hostile(own)
    assert main(["replay", str(folder), "--episode", "0", "--env", own]) == 2
    assert "cannot draw replays" in one_line_error(capsys.readouterr().err)
    assert main(["replay", str(folder), "--episode", "0", "--env", "hostile_module:env"]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert f"holds a run of environment {own!r}, not of 'hostile_module:env'" in line


def test_replay_of_a_registered_environment_needs_no_name(played, capsys):
    assert main(["replay", str(played), "--episode", "0"]) == 2
    assert "guess_two_thirds_v0 cannot draw replays" in one_line_error(capsys.readouterr().err)


def test_leaderboard_calls_nothing_a_folder_names(hostile, capsys):
    folder = hostile("subprocess:getoutput", {"cmd": touch(os.environ["ARENA_TEST_MARKER"])})
    assert main(["leaderboard", str(folder)]) == 0
    assert "random#1" in capsys.readouterr().out


def test_eval_compare_calls_nothing_a_folder_names(hostile, tmp_path, capsys):
    folders = []
    for k, model in enumerate(["subprocess:getoutput", "hostile_module:env"]):
        folder = tmp_path / f"eval{k}"
        folder.mkdir()
        (folder / "eval.json").write_text(json.dumps({"format": 1, "model": model, "seed": 0, "quick": True,
                                                      "games": ["hostile_module:env"]}))
        folders.append(str(folder))
    assert main(["eval", "--compare", *folders, "--out", str(tmp_path / "compare")]) == 2
    assert "unknown game 'hostile_module:env'" in one_line_error(capsys.readouterr().err)
    assert "hostile_module" not in sys.modules


@pytest.mark.parametrize("spec", ["subprocess:getoutput", "hostile_module:env", "os:system"])
def test_a_policy_spec_is_never_an_import_path(hostile, spec):
    with pytest.raises(SpecError, match=f"unknown policy {spec.partition(':')[0]!r} for el_farol_v0"):
        make_policy(spec, "el_farol_v0")
    assert "hostile_module" not in sys.modules


# ---------------------------------------------------------------- arena serve --stop


def proc_stat(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (proc(5) fields 3 on)."""
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()


def proc_command(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


@pytest.fixture
def bystander(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[subprocess.Popen[bytes]]:
    """A harmless ``sleep`` leading its own process group (and a child ``sleep`` in that group), with the
    server records under ``tmp_path``; it must outlive the test."""
    pytest.importorskip("llm_policies.serve")
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    proc = subprocess.Popen(["sh", "-c", "sleep 60 & exec sleep 60"], start_new_session=True)
    assert wait_until(lambda: bool(children(proc.pid)), 10, 0.02)
    yield proc
    alive = proc.poll() is None
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert alive, "arena serve --stop signalled a process it did not start"


def children(pid: int) -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()
            and _parent(p) == str(pid)]


def _parent(path: Path) -> str | None:
    try:
        return (path / "stat").read_text().rpartition(")")[2].split()[1]
    except OSError:
        return None


def forged(kind: str, proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    """A record of 127.0.0.1:8131 naming ``proc`` (or its child), forged as ``kind`` says."""
    pid = children(proc.pid)[0] if kind == "child" else proc.pid
    record: dict[str, Any] = {"pid": pid, "url": "http://127.0.0.1:8131/v1", "model": "m", "name": "m"}
    if kind != "bare":
        record.update(started=proc_stat(pid)[19], command=proc_command(pid))
    if kind == "other-command":
        record["command"] = ["python", "-m", "vllm.entrypoints.openai.api_server", "--served-model-name", "m",
                             "--host", "127.0.0.1", "--port", "8131"]
    return record


@pytest.mark.skipif(sys.platform != "linux", reason="processes are read from /proc")
@pytest.mark.parametrize(("kind", "why"), [
    ("bare", "holds no start time and command line"),
    ("exact", "does not serve 'm' at 127.0.0.1:8131"),
    ("other-command", "another command line than the recorded one"),
    ("child", "not leading its own"),
])
def test_serve_stop_refuses_a_record_naming_another_process(bystander, kind, why, capsys):
    from llm_policies.server_records import record_path
    path = record_path("127.0.0.1", 8131)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(forged(kind, bystander)))
    assert main(["serve", "--stop", "--port", "8131"]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and lines[0].startswith("arena serve: error: "), err
    assert "which is not a server arena serve started" in err and why in err and "nothing was stopped" in err
    assert path.exists()


@pytest.mark.skipif(sys.platform != "linux", reason="processes are read from /proc")
def test_serve_stop_through_the_real_cli_leaves_a_foreign_process_group_alone(bystander, tmp_path):
    from llm_policies.server_records import record_path
    path = record_path("127.0.0.1", 8131)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(forged("exact", bystander)))
    done = subprocess.run([sys.executable, "-m", "arena_envs.cli", "serve", "--stop", "--port", "8131"],
                          capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "which is not a server arena serve started" in done.stderr


# ---------------------------------------------------------------- Ctrl-C in arena play


def cpu_ticks(pid: int) -> int:
    fields = proc_stat(pid)
    return int(fields[11]) + int(fields[12])  # proc(5) fields 14 and 15: user and system time


@pytest.fixture(scope="module")
def players(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[subprocess.Popen[bytes], Path]]]:
    """``arena play GAME`` of every game, started at once (so their start-ups overlap), each with its
    stdin left open (nothing is typed: the person is thinking) and its stdout in a file."""
    folder = tmp_path_factory.mktemp("play")
    env = {**os.environ, "PYTHONPATH": str(REPO), "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    started = {}
    for game in GAMES:
        out = folder / f"{game}.out"
        with out.open("wb") as stdout:
            started[game] = (subprocess.Popen([sys.executable, "-m", "arena_envs.cli", "play", game],
                                              stdin=subprocess.PIPE, stdout=stdout, stderr=subprocess.PIPE,
                                              cwd=REPO, env=env), out)
    yield started
    for proc, _ in started.values():
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def waiting(proc: subprocess.Popen[bytes], out: Path, game: str) -> bool:
    """Whether ``arena play`` waits for the person: at the prompt, or (the tank) idle in its window."""
    assert proc.poll() is None, f"arena play {game} ended: {proc.communicate()[1].decode()}"
    text = out.read_text(errors="replace")
    if game != "tank_battle_v0":
        return text.endswith("\n> ")
    if "you are tank_" not in text:
        return False
    before = cpu_ticks(proc.pid)
    time.sleep(0.3)
    return cpu_ticks(proc.pid) == before


@pytest.mark.skipif(sys.platform != "linux", reason="processes are read from /proc")
@pytest.mark.xdist_group("arena-play-sigint")  # one worker starts the twelve games once
@pytest.mark.parametrize("game", GAMES)
def test_ctrl_c_leaves_arena_play_with_status_130(players, game):
    proc, out = players[game]
    assert wait_until(lambda: waiting(proc, out, game), 90, 0.05), f"arena play {game} never asked"
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(15)  # stdin stays open: only the signal can end the wait
    except subprocess.TimeoutExpired:
        pytest.fail(f"Ctrl-C did not leave arena play {game}")
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert proc.returncode == 130, err
    assert err.strip() == "arena: game abandoned (Ctrl-C or the game window closed)"


# ---------------------------------------------------------------- the environment API out of order


def raw(game: str, **kwargs: Any) -> Any:
    return env_module(game).raw_env(**kwargs)


@pytest.mark.parametrize("game", GAMES)
def test_before_reset_env_and_raw_env_raise_pettingzoo_error(game):
    for env in (raw(game), env_module(game).env()):
        agent = env.possible_agents[0]
        for call, method in (("step", partial(env.step, None)), ("observe", partial(env.observe, agent)),
                             ("last", env.last)):
            with pytest.raises(AssertionError, match=rf"^reset\(\) needs to be called before {call}\.$"):
                method()
        env.close()


@pytest.mark.parametrize("game", GAMES)
def test_last_after_the_episode_says_it_is_over(game):
    """One cycle (``max_cycles=1``) of unusable answers played out; then ``last()`` raises a clear
    error in ``env()`` and ``raw_env()`` alike, and ``step()`` only warns."""
    env = env_module(game).env(max_cycles=1)
    env.reset(seed=3)
    for _agent in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else "?")
    assert env.unwrapped.agents == []
    for target in (env, env.unwrapped):
        with pytest.raises(RuntimeError, match=r"last\(\) after the episode: every agent is done; reset\(\) starts"):
            target.last()
    env.unwrapped.step("?")  # PettingZoo's warning, as env() gives
    env.close()


@pytest.mark.parametrize("game", GAMES)
def test_numpy_seed_keeps_the_record_json_safe(game):
    first, second = raw(game), raw(game)
    first.reset(seed=np.int64(5))
    second.reset(seed=5)
    first.step("?")
    second.step("?")
    record = first.episode_record()
    assert type(record["seed"]) is int and record["seed"] == 5
    assert json.dumps(record) == json.dumps(second.episode_record())  # serialisable, and the same episode
    first.close()
    second.close()
