"""``arena play``: a person's answers fed on stdin to the real command in a subprocess (each game in a
folder of its own, whose first line of output names its results folder)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from arena_envs.cli import main
from arena_envs.core import Policy
from arena_envs.core.answers import AnswerConstraint
from arena_envs.runner import policy_registry as registry
from arena_envs.runner.play import answer_text, legal_answers
from arena_envs.runner.run_config import env_factory

ROOT = Path(__file__).resolve().parents[1]


def play(args: list[str], answers: str) -> subprocess.CompletedProcess[str]:
    """The command's run in a new folder; its ``stdout`` without the first line, which names the
    game's results folder under ``results/`` (a request refused writes nothing)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYGAME_HIDE_SUPPORT_PROMPT": "1"}
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run([sys.executable, "-m", "arena_envs.cli", "play", *args], input=answers,
                              capture_output=True, text=True, cwd=cwd, env=env, timeout=60)
        if done.returncode != 2:
            first, _, rest = done.stdout.partition("\n")
            assert first.startswith(f"results folder: results/play-{args[0]}-"), first
            assert (Path(cwd) / first.removeprefix("results folder: ") / "run.json").is_file()
            done.stdout = rest
    return done


def test_gamma_game_takes_bare_numbers_help_and_corrections():
    done = play(["guess_two_thirds_v0", "--env-arg", "n_rounds=2", "--seed", "3"], "help\nabc\n500\n33\n20\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # help shows the legal answers once more, on their own, before the same question is asked again
    assert out.count("legal answers: chosen_number: integer in [0, 100]") == 5  # 4 questions + help
    assert "[not accepted (unparseable): \"chosen_number\" must be an integer, got 'abc']" in out
    assert "[not accepted (illegal): \"chosen_number\" must be between 0 and 100, got 500]" in out
    assert "You chose 33." in out and "You chose 20." in out  # the bare numbers were the answers
    assert "game over" in out
    result = out.split("result (scores):\n")[1].splitlines()
    assert len(result) == 10 and sum("<- you" in line for line in result) == 1
    assert done.stderr == ""


def test_same_seed_and_answers_replay_the_same_game():
    first, second, other = (play(["guess_two_thirds_v0", "--env-arg", "n_rounds=1", "--seed", str(seed)], "40\n")
                            for seed in (5, 5, 6))
    assert first.returncode == second.returncode == other.returncode == 0
    assert first.stdout == second.stdout
    assert first.stdout.split("Round 1 results")[1] != other.stdout.split("Round 1 results")[1]


def test_quit_abandons_the_game():
    done = play(["guess_two_thirds_v0", "--env-arg", "n_rounds=2"], "7\nquit\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("game abandoned after 10 steps; no scores")


def test_auction_in_another_seat_against_chosen_policies():
    answers = "1000\n" + "I'm out!\n" * 30  # a bid below the starting price, then out of every item
    done = play(["auction_v0", "--seat", "1", "--players", "rule,random", "--seed", "2"], answers)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("auction_v0, seed 2: you are bidder_2; bidder_1: rule, bidder_3: random\n")
    assert "legal answers: \"I bid $X!\" with 1000 <= X <= 20000, or \"I'm out!\"" in out
    assert "[not accepted (illegal): your bid of $1000 is below the starting price of $3000]" in out
    assert "The auction is over." in out
    result = out.split("result (scores):\n")[1].splitlines()
    assert [line.split()[0] for line in result if "<- you" in line] == ["bidder_2"]
    assert "bidder_2           0.000  <- you" in out  # out of every item: no profit, no loss


@pytest.mark.parametrize(("args", "message"), [
    (["guess_two_thirds_v0", "--seat", "10"], "--seat 10: guess_two_thirds_v0 has seats 0..9"),
    (["auction_v0", "--players", "rule,rule,rule"], "needs 1 or 2 opponent specs"),
    (["nope_v0"], "unknown environment 'nope_v0'"),
])
def test_bad_play_requests_give_one_line_and_status_2(args, message):
    done = play(args, "")
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""


def test_bare_answers_are_completed_only_where_one_value_is_asked():
    number = AnswerConstraint("json", "n", schema={"required": ["chosen_number"]})
    assert answer_text("42\n", number) == '{"chosen_number": 42}'
    assert answer_text('{"chosen_number": 42}', number) == '{"chosen_number": 42}'
    pair = AnswerConstraint("json", "shoot", schema={"required": ["explanation", "action", "target"]})
    assert answer_text("shoot player_2", pair) == '{"action": "shoot", "target": "player_2"}'
    assert answer_text("miss", pair) == '{"action": "miss"}'
    assert answer_text("shoot player_2 now", pair) == "shoot player_2 now"  # too many values: as typed
    choice = AnswerConstraint("choice", "pick", choices=("Go", "Stay"))
    assert answer_text("2", choice) == "Stay" and answer_text("go", choice) == "Go"
    assert answer_text("3", choice) == "3"
    assert "  1. Go\n  2. Stay" in legal_answers(choice)


def test_a_bare_answer_nested_past_the_interpreters_depth_is_sent_as_text():
    number = AnswerConstraint("json", "n", schema={"required": ["chosen_number"]})
    deep = "[" * 100_000 + "]" * 100_000
    assert json.loads(answer_text(deep, number)) == {"chosen_number": deep}


def test_ctrl_c_at_the_prompt_abandons_the_game_with_status_130():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "arena_envs.cli", "play", "guess_two_thirds_v0"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env=env)
    assert proc.stdout is not None
    seen = ""
    while not seen.endswith("\n> "):  # the first question has been asked
        char = proc.stdout.read(1)
        assert char, "arena play ended before asking"
        seen += char
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert err.strip() == "arena: game abandoned (Ctrl-C or the game window closed)"


@pytest.mark.parametrize(("game", "typed"), [
    ("battle_royale_v0", "shoot player_2"),
    ("battle_royale_v0", "miss"),
    ("pirate_game_v0", "40 0 30 0 10 0 10 0 10 0"),
    ("pirate_game_v0", "40, 0, 30, 0, 10, 0, 10, 0, 10, 0"),
    ("diners_dilemma_v0", "cheap"),
])
def test_bare_answers_are_accepted_by_the_games_in_both_prompt_styles(game, typed):
    for cot in (False, True):
        env = env_factory(game, {"cot": cot})()
        env.reset(seed=0)
        raw = env.unwrapped
        agent = raw.agent_selection
        env.step(answer_text(typed, raw.answer_constraint()))
        assert raw.infos[agent]["invalid_action"] is None, (cot, raw.infos[agent]["invalid_action"])
        env.close()


def test_tank_battle_is_played_with_keys_in_its_window_until_it_is_closed(monkeypatch, capsys, tmp_path):
    pygame = pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    keys = [pygame.event.Event(pygame.KEYDOWN, key=pygame.K_SPACE),
            pygame.event.Event(pygame.KEYDOWN, key=pygame.K_ESCAPE), pygame.event.Event(pygame.QUIT)]
    monkeypatch.setattr(pygame.event, "wait", lambda timeout=0: keys.pop(0))  # the keys, then the window closed
    monkeypatch.chdir(tmp_path)
    assert main(["play", "tank_battle_v0", "--seed", "1"]) == 130
    assert keys == []
    out, err = capsys.readouterr()
    assert out.startswith("results folder: results/play-tank_battle_v0-seat0-seed1\n"
                          "tank_battle_v0, seed 1: you are tank_0\n")
    assert err.strip() == "arena: game abandoned (Ctrl-C or the game window closed)"



class Broken(Policy):
    """An opponent whose every decision raises (a model server gone, say)."""

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        raise ConnectionError("server went away")


def test_a_failing_opponent_stops_the_game_with_one_line_and_status_1(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(registry.POLICIES, ("*", "broken"), "tests.test_play:Broken")
    monkeypatch.chdir(tmp_path)
    assert main(["play", "guess_two_thirds_v0", "--players", "broken", "--seat", "1", "--seed", "0"]) == 1
    out, err = capsys.readouterr()
    assert err == ("arena: error: policy 'broken' of seat player_0 raised at step 0: ConnectionError: "
                   "server went away\n")
    assert out.split("\n", 1)[1].startswith("guess_two_thirds_v0, seed 0: you are player_1; player_0: broken,")


def test_each_game_is_a_folder_of_its_own_and_a_finished_one_is_not_played_again(tmp_path):
    folders = []
    for _ in range(2):  # the same game twice: the second in the next free folder
        done = subprocess.run([sys.executable, "-m", "arena_envs.cli", "play", "guess_two_thirds_v0", "--env-arg",
                               "n_rounds=1", "--seed", "5"], input="40\n", capture_output=True, text=True,
                              cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
        assert done.returncode == 0, done.stderr
        folders.append(done.stdout.splitlines()[0].removeprefix("results folder: "))
    assert folders == ["results/play-guess_two_thirds_v0-n_rounds=1-seat0-random_x9-seed5",
                       "results/play-guess_two_thirds_v0-n_rounds=1-seat0-random_x9-seed5-2"]
    again = subprocess.run([sys.executable, "-m", "arena_envs.cli", "play", "guess_two_thirds_v0", "--env-arg",
                            "n_rounds=1", "--seed", "5", "--out", folders[0]], input="40\n", capture_output=True,
                           text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr == f"arena: error: {folders[0]} holds a finished game; play into another folder (--out)\n"
