"""``arena play --web``: a person's games played through the page in a real browser (Playwright driving
Chromium) against the real command in a subprocess, recorded as ordinary results folders equal to the
same answers typed at the terminal; the page's safety (escaped texts, refused posts) and its server's
ends (a port in use, a game abandoned by stopping the server)."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from arena_envs.registration import ENVIRONMENTS
from arena_envs.runner.play_game import default_opponent
from arena_envs.runner.policy_specs import make_policy
from arena_envs.runner.results import iter_log, read_config, read_episodes
from arena_envs.runner.run_config import env_factory
from arena_envs.view.catalog import folder_id
from tests.view_helpers import viewer_at

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PYGAME_HIDE_SUPPORT_PROMPT": "1"}
GUESS = ["guess_two_thirds_v0", "--env-arg", "n_rounds=2", "--seed", "3"]
SPY = ["who_is_spy_v0", "--seed", "4"]


def arena(args: list[str], cwd: Path, answers: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena_envs.cli", *args], input=answers, capture_output=True,
                          text=True, cwd=cwd, env=ENV, timeout=60)


@contextmanager
def web_game(args: list[str], cwd: Path) -> Iterator[tuple[subprocess.Popen[str], str, list[str]]]:
    """``arena play ARGS --web`` running; yields the process, the page's URL and the lines printed
    before it (the folder, the game). The process is ended by its pid when the block leaves it running."""
    proc = subprocess.Popen([sys.executable, "-m", "arena_envs.cli", "play", *args, "--web"], cwd=cwd, env=ENV,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines: list[str] = []
        while not (lines and lines[-1].startswith("play in your browser: ")):
            line = proc.stdout.readline()
            assert line, f"arena play --web ended before serving: {proc.communicate(timeout=10)}"
            lines.append(line.rstrip("\n"))
        url = lines[-1].split(": ", 1)[1].split()[0]
        yield proc, url, lines
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def screenshot(page: Any, name: str) -> None:
    """Save the page as docs/img/play_<name>.png when ARENA_SCREENSHOTS=1 (docs/play.md shows them)."""
    if os.environ.get("ARENA_SCREENSHOTS") == "1":
        page.screenshot(path=str(ROOT / "docs" / "img" / f"play_{name}.png"), full_page=True)


def status(page: Any) -> str:
    return str(page.evaluate("document.body.dataset.status || ''"))


def next_turn(page: Any, seen: str) -> str:
    """Wait until the page shows a question other than ``seen`` (its id text), or the end; the status."""
    page.wait_for_function(
        """(seen) => { const s = document.body.dataset.status;
                      return ['over', 'abandoned', 'failed'].includes(s)
                          || (s === 'asking' && document.getElementById('question-id').textContent !== seen); }""",
        arg=seen)
    return status(page)


def question_id(page: Any) -> str:
    return str(page.locator("#question-id").text_content())


def close_page(page: Any, proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Press the end's Close button; the server stops with status 0; its output."""
    page.locator("#close").click()
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return out, err


def folder_of(lines: list[str], cwd: Path) -> Path:
    first = lines[0]
    assert first.startswith("results folder: results/play-")
    return cwd / first.removeprefix("results folder: ")


def assert_same_games(web: Path, terminal: Path) -> None:
    """Two folders of the same game: the configuration, the episode entries and every step line equal,
    each an ordinary results folder (its readers and `arena leaderboard` read it)."""
    assert read_config(web) == read_config(terminal)
    assert read_config(web)["players"].count("human") == 1
    assert read_episodes(web / "episodes.jsonl") == read_episodes(terminal / "episodes.jsonl")
    web_log, terminal_log = list(iter_log(web)), list(iter_log(terminal))
    assert [b.steps for b in web_log] == [b.steps for b in terminal_log]
    assert [b.record for b in web_log] == [b.record for b in terminal_log]
    assert (web / "log.jsonl").read_bytes() == (terminal / "log.jsonl").read_bytes()
    board = arena(["leaderboard", str(web)], web.parent)
    assert board.returncode == 0 and " human " in board.stdout, board.stderr
    assert json.loads((web / "leaderboard.json").read_text()) == json.loads((terminal / "leaderboard.json").read_text())


def test_a_gamma_game_played_in_the_page_is_recorded_like_the_terminals(page, tmp_path):
    with web_game(GUESS, tmp_path) as (proc, url, lines):
        assert lines[1].startswith("guess_two_thirds_v0, seed 3: you are player_0; player_1: random")
        page.goto(url)
        next_turn(page, "")
        assert page.locator("#form").get_attribute("data-kind") == "fields"
        assert page.locator("#board").is_hidden()  # no picture during the game: the others' choices are hidden
        number = page.locator('[data-field="chosen_number"]')
        assert number.get_attribute("min") == "0" and number.get_attribute("max") == "100"
        # markup in an answer: the game's note quotes it, the page shows it as text and runs nothing
        number.fill("")
        page.locator("#answer-text").fill('<img src=x onerror="window.pwned=1">')
        seen = question_id(page)
        page.locator("#send-text").click()
        next_turn(page, seen)
        note = page.locator("#notes .note")
        assert note.count() == 1 and note.text_content().startswith("[not accepted (unparseable): ")
        assert page.locator("#notes img").count() == 0 and page.evaluate("window.pwned") is None
        page.locator('[data-field="chosen_number"]').fill("500")  # re-asked: out of range, the game says so
        seen = question_id(page)
        page.locator("#submit-fields").click()
        next_turn(page, seen)
        assert page.locator("#notes .note").text_content() == (
            '[not accepted (illegal): "chosen_number" must be between 0 and 100, got 500]')
        screenshot(page, "question")
        page.locator('[data-field="chosen_number"]').fill("33")
        seen = question_id(page)
        page.locator("#submit-fields").click()
        assert next_turn(page, seen) == "asking" and page.locator("#notes .note").count() == 0
        assert "You chose 33." in page.locator("#observation").text_content()
        page.locator("#answer-text").fill("20")  # a bare value typed, as at the terminal
        seen = question_id(page)
        page.locator("#send-text").press("Enter")
        assert next_turn(page, seen) == "over"
        page.locator('#board.final[data-game-view="guess_two_thirds_v0"]').wait_for()  # the game's view at its end
        rows = page.locator("#scores tbody tr")
        assert rows.count() == 10
        mine = page.locator("#scores tr.me")
        assert mine.count() == 1 and mine.get_attribute("data-agent") == "player_0" and "← you" in mine.text_content()
        folder = folder_of(lines, tmp_path)
        assert page.locator("#folder").text_content() == lines[0].removeprefix("results folder: ")
        out, _ = close_page(page, proc)
        assert "result (scores):" in out and "<- you" in out
    typed = '<img src=x onerror="window.pwned=1">\n500\n33\n20\n'
    terminal = arena(["play", *GUESS, "--out", "terminal"], tmp_path, typed)
    assert terminal.returncode == 0, terminal.stderr
    assert_same_games(folder, tmp_path / "terminal")
    # `arena view` shows the game: its transcript (the person's two refused answers marked) and its drawing
    with viewer_at(tmp_path / "results") as viewer:
        page.goto(viewer + f"run/{folder_id(folder)}/episode/0")
        lines = [line for block in iter_log(folder) for line in block.steps if not line.get("finish")]
        assert page.locator(".decision").count() == len(lines)
        human = page.locator('.decision[data-agent="player_0"]')
        assert human.count() == 4 and page.locator('.decision[data-invalid="true"]').count() == 2
        assert "human" in human.first.inner_text()
        page.locator("[data-game-view]").wait_for()
        assert page.evaluate("window.pwned") is None


def test_who_is_spy_played_in_the_page_speeches_and_votes(page, tmp_path):
    typed: list[str] = []
    with web_game(SPY, tmp_path) as (proc, url, lines):
        page.goto(url)
        seen = ""
        while next_turn(page, seen) == "asking":
            seen = question_id(page)
            if page.locator("#form").get_attribute("data-kind") == "choice":  # a vote: the first candidate
                button = page.locator("#form [data-choice]").first
                typed.append(str(button.get_attribute("data-choice")))
                button.click()
            else:  # a speech: one free line
                clue = f"It is something you can hold, clue {len(typed)}."
                typed.append(clue)
                page.locator("#answer-text").fill(clue)
                page.locator("#send-text").click()
        assert status(page) == "over" and len(typed) >= 2
        assert page.locator("#scores tr.me").get_attribute("data-agent") == "player_0"
        assert page.locator("#last-words").text_content()
        page.locator('#board.final[data-game-view="who_is_spy_v0"]').wait_for()
        shown = page.locator("#board").inner_text()  # the finished game's view: now the words may be shown
        screenshot(page, "end")
        folder = folder_of(lines, tmp_path)
        close_page(page, proc)
    steps = [s for block in iter_log(folder) for s in block.steps if s["agent"] == "player_0" and "action" in s]
    assert [s["action"] for s in steps] == typed and all(s["policy"] == "human" for s in steps)
    [record] = [block.record for block in iter_log(folder)]
    words = {e[key] for e in record["events"] for key in ("civilian_word", "spy_word") if key in e}
    assert words and all(word in shown for word in words), (words, shown[:300])
    terminal = arena(["play", *SPY, "--out", "terminal"], tmp_path, "".join(f"{line}\n" for line in typed))
    assert terminal.returncode == 0, terminal.stderr
    assert_same_games(folder, tmp_path / "terminal")


def test_leaving_the_page_abandons_the_game_and_stops_the_server(page, tmp_path):
    with web_game(SPY, tmp_path) as (proc, url, lines):
        page.goto(url)
        next_turn(page, "")
        page.locator("#leave").click()
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert out.rstrip().endswith("game abandoned after 5 steps; no scores")  # the 5 others spoke first
        page.locator("#stopped").wait_for()
        folder = folder_of(lines, tmp_path)
    assert read_config(folder)["players"] == ["human"] + ["rule"] * 5
    assert read_episodes(folder / "episodes.jsonl") == []


def post(url: str, body: bytes, kind: str = "application/json") -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": kind})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_bad_posts_are_refused_and_stopping_the_server_abandons_the_game(tmp_path):
    with web_game(GUESS, tmp_path) as (proc, url, lines):
        def state() -> dict[str, Any]:
            with urllib.request.urlopen(url + "api/state", timeout=10) as response:
                return dict(json.loads(response.read()))

        while state()["status"] != "asking":
            time.sleep(0.05)
        before = state()
        answer = url + "api/answer"
        assert post(answer, b"{not json")[0] == 400
        assert post(answer, b'{"question": 1, "text": "33"}', "text/plain")[0] == 400  # a form post from elsewhere
        assert post(answer, b'{"question": 1, "text": "' + b"3" * 20_000 + b'"}')[0] == 413
        assert post(answer, b'{"question": 7, "text": "33"}') == (400, {"error": "the answer names no open question "
                                                                             "(its id)"})
        assert post(answer, b'{"question": 1, "values": [1, 2]}')[0] == 400
        assert post(answer, b'{"question": 1, "op": "up"}')[0] == 400
        assert post(answer, b'{"question": 1, "text": "3\\n3"}')[0] == 400
        rebound = urllib.request.Request(url + "api/state", headers={"Host": "evil.example"})  # DNS rebinding
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(rebound, timeout=10)
        assert refused.value.code == 400
        assert state() == before  # the game saw none of them
        proc.send_signal(signal.SIGINT)  # Ctrl-C on the server: the game is abandoned
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert out.rstrip().endswith("game abandoned after 0 steps; no scores")
        folder = folder_of(lines, tmp_path)
    assert read_episodes(folder / "episodes.jsonl") == [] and (folder / "log.jsonl").read_bytes() == b""
    assert sorted(p.name for p in folder.iterdir()) == [".lock", "episodes.jsonl", "leaderboard.json",
                                                        "leaderboard.md", "log.jsonl", "run.json"]


def test_a_port_in_use_is_one_line_and_status_2(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = arena(["play", *GUESS, "--web", "--port", str(port)], tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"arena: error: port {port} on 127.0.0.1 is in use; give another --port, or leave it out "
                           "for a free one\n")
    assert not (tmp_path / "results").exists()


def drawn_board(page) -> dict:
    """The field the page shows now: drawn (its canvas), each tank where the game has it."""
    state = page.evaluate("fetch('/api/state').then((r) => r.json())")
    page.wait_for_selector(f'#board[data-board="{state["board_id"]}"] canvas')
    tanks = state["board"]["frames"][0]["tanks"]
    for tank in tanks:
        shown = page.locator(f'#board [data-tank="{tank["id"]}"]').text_content()
        assert f" {tank['id']}: {tank['x']},{tank['y']} {tank['dir']} " in shown, (tank, shown)
    return state["board"]


def test_a_tank_is_played_with_keys_in_the_page(page, tmp_path):
    with web_game(["tank_battle_v0", "--env-arg", "max_rounds=3", "--seed", "1"], tmp_path) as (proc, url, lines):
        page.goto(url)
        next_turn(page, "")
        assert page.locator("#form").get_attribute("data-kind") == "keys"
        first = drawn_board(page)
        assert first["frames"][0]["round"] == 0
        assert page.locator("#form [data-op]").all_text_contents() == [
            "Move upArrowUp", "Move downArrowDown", "Move leftArrowLeft", "Move rightArrowRight", "ShootSpace",
            "Wait a roundEscape"]
        for press in ("ArrowUp", "Space"):
            seen = question_id(page)
            page.keyboard.press(press)
            assert next_turn(page, seen) == "asking"
        assert drawn_board(page)["frames"][0]["round"] == 2  # each turn's field
        screenshot(page, "tank")
        page.locator('#form [data-op="noop"]').click()
        assert next_turn(page, question_id(page)) == "over"
        game = drawn_board(page)  # at the end: the whole game, as arena view draws it, to play back
        assert [frame["round"] for frame in game["frames"]] == [0, 1, 2, 3]
        assert page.locator("#board.final .tank-controls").is_visible()
        folder = folder_of(lines, tmp_path)
        close_page(page, proc)
    steps = [s for block in iter_log(folder) for s in block.steps if s["agent"] == "tank_0" and "action" in s]
    assert [s["action"]["op"] for s in steps] == [0, 4, 5]  # up, shoot, wait: the game's operation indexes


#: each game's forms (the person in seat 0 against the default opponents)
FORMS = {"auction_v0": {"bid", "choice"},  # a choice: only withdrawing is left (the budget is spent)
         "battle_royale_v0": {"fields"}, "diners_dilemma_v0": {"fields"},
         "divide_dollar_v0": {"fields"}, "el_farol_v0": {"fields"}, "guess_two_thirds_v0": {"fields"},
         "pirate_game_v0": {"fields"}, "public_goods_v0": {"fields"}, "sealed_bid_auction_v0": {"fields"},
         "tank_battle_v0": {"keys"}, "trading_v0": {"trade"}, "who_is_spy_v0": {"text", "choice"}}


def form_answer(form: dict[str, Any]) -> dict[str, Any]:
    """A legal answer through ``form``: the lowest number or first value of each field (a pirate's
    proposal keeps every coin), the first choice, the lowest bid, buying half, waiting, a clue."""
    kind = form["kind"]
    if kind == "fields":
        values = [field["options"][0]["value"] if field["type"] == "enum" else str(field["min"])
                  for field in form["fields"]]
        if form["outer"] == "proposal":
            values[0] = "100"
        return {"values": values}
    if kind == "choice":
        return {"text": form["choices"][0]}
    if kind == "bid":
        return {"text": form["bid"].replace("{X}", str(form["min"]))}
    if kind == "trade":
        return {"text": form["decision"].replace("{ACTION}", "BUY").replace("{SIZE}", "0.5")}
    return {"op": "noop"} if kind == "keys" else {"text": "It is something you can hold."}


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_every_games_questions_have_a_form_whose_answers_the_game_takes(name):
    from arena_envs.view.web_seat import answer_form, decode
    from baselines.tank.answer import TankMove, native_action, player_of

    assert set(FORMS) == set(ENVIRONMENTS)
    env = env_factory(name, {"max_rounds": 3} if name == "tank_battle_v0" else {})()
    env.reset(seed=0)
    raw = env.unwrapped
    me = raw.possible_agents[0]
    others = {agent: make_policy(default_opponent(name), name) for agent in raw.possible_agents[1:]}
    for k, (agent, policy) in enumerate(others.items()):
        policy.bind(raw)
        policy.reset(agent, k)
    kinds = set()
    for agent in env.agent_iter():
        observation, _, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
        elif agent != me:
            env.step(others[agent].act(observation, info))
        else:
            constraint = raw.answer_constraint()
            form = answer_form(name, constraint, raw)
            kinds.add(form["kind"])
            action = decode(form_answer(form), form, constraint).action
            if form["kind"] == "keys":
                action = native_action(raw.settings.action_mode, TankMove(action, raw.nearest_target(player_of(me))))
            env.step(action)
            assert raw.infos[me]["invalid_action"] is None, (form, raw.infos[me]["invalid_action"])
    env.close()
    assert kinds == FORMS[name]


def test_without_the_view_extra_or_without_web_the_web_options_are_one_line(monkeypatch, capsys, tmp_path):
    from arena_envs.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["play", "guess_two_thirds_v0", "--port", "8000"]) == 2
    assert capsys.readouterr().err == "arena: error: --port needs --web (the game in a browser page)\n"
    for name in list(sys.modules):  # the extra not installed (the view's modules imported again, without it)
        if name.split(".")[0] in ("starlette", "uvicorn", "jinja2"):
            monkeypatch.setitem(sys.modules, name, None)
        elif name.startswith("arena_envs.view."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "starlette", None)
    assert main(["play", "guess_two_thirds_v0", "--web"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and re.fullmatch(r"arena: error: arena play --web needs the view extra "
                                      r"\((starlette|uvicorn|jinja2)"
                                      r"\S* is not installed\): pip install 'arena-envs\[view\]'\n", err), err
    assert not (tmp_path / "results").exists()
