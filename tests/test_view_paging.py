"""The byte-offset indexes of a run's files (arena_envs/view/paging.py) and damaged folders: an index
grows with its file and starts again when the file is cut; a corrupt ``episodes.jsonl`` line, a torn
last line, a missing log block and a corrupt log line show as such on the pages, never as an error."""
from __future__ import annotations

import json
import shutil
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the view extra is not installed: pip install -e '.[view]'")

from arena_envs.runner.results import read_episodes, read_steps
from arena_envs.view.catalog import card_id, folder_id
from arena_envs.view.paging import RunFiles
from tests.view_helpers import random_run, viewer_at


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("view-paging") / "run"
    random_run(folder, episodes=3)
    return folder


def test_the_indexes_grow_with_their_files_and_start_again_when_cut(run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    lines = (copy / "episodes.jsonl").read_bytes().splitlines(keepends=True)
    (copy / "episodes.jsonl").write_bytes(lines[0] + lines[1][:40])  # the second line torn
    files = RunFiles(copy)
    files.refresh()
    assert len(files.episodes) == 1
    assert [line.episode for line in files.episodes.lines(0, 10)] == [0]
    with open(copy / "episodes.jsonl", "ab") as f:
        f.write(lines[1][40:] + lines[2])
    files.refresh()
    assert [line.entry for line in files.episodes.lines(0, 10)] == read_episodes(run / "episodes.jsonl")
    assert files.episodes.line_of(2) == 2
    steps = files.log.block(1)
    assert steps is not None and steps[:-1] == read_steps(run, 1)
    (copy / "episodes.jsonl").write_bytes(lines[0])  # cut: a resumed run repaired the folder
    files.refresh()
    assert len(files.episodes) == 1 and files.episodes.line_of(2) is None


def test_damaged_files_show_as_such(run: Path, tmp_path: Path, page: Any) -> None:
    copy = tmp_path / "results" / "damaged"
    shutil.copytree(run, copy)
    lines = (copy / "episodes.jsonl").read_bytes().splitlines(keepends=True)
    (copy / "episodes.jsonl").write_bytes(lines[0] + b"{not json\n" + lines[1] + lines[2] + b'{"episode": 9')
    log = (copy / "log.jsonl").read_bytes().splitlines(keepends=True)
    log[1] = b'{"episode": 0, "step": 1, "agent": \xff torn\n'  # a corrupt decision line in episode 0
    cut = next(i for i, line in enumerate(log) if line.startswith(b'{"episode": 2, "record"'))
    (copy / "log.jsonl").write_bytes(b"".join(log[:cut]))  # episode 2's record line gone: its block too
    with viewer_at(tmp_path / "results") as url:
        run_url = url + f"run/{folder_id(copy)}"
        page.goto(run_url)
        assert "line 2 is not valid JSON" in page.locator("tr.corrupt").inner_text()
        assert page.locator("#episode-rows tr[data-episode]").count() == 3  # the torn tail is not an episode
        page.goto(run_url + "/episode/2")
        assert "no complete block" in page.locator("#block-missing").inner_text()
        page.goto(run_url + "/episode/0")
        assert "line 2 of the episode's block is not valid JSON" in page.locator("#transcript li.corrupt").inner_text()
        assert page.locator(".decision").count() == len([s for s in read_steps(run, 0) if not s.get("finish")]) - 1
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(run_url + "/episode/9", timeout=30)
        assert missing.value.code == 404


def test_a_link_to_a_file_elsewhere_is_neither_listed_nor_served(tmp_path: Path) -> None:
    card = tmp_path / "results" / "card"
    card.mkdir(parents=True)
    (card / "report.md").write_text("# a card\n", encoding="utf-8")
    (card / "report_secret.png").symlink_to("/etc/passwd")
    (card / "card.json").symlink_to("/etc/hostname")
    with viewer_at(tmp_path / "results") as url:
        card_url = url + f"card/{card_id(card)}"
        with urllib.request.urlopen(card_url, timeout=30) as answer:
            html = answer.read().decode()
        assert "a card" in html and "<figure>" not in html
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(card_url.replace("/card/", "/figure/") + "/0", timeout=30)
        assert missing.value.code == 404


def test_a_failing_game_view_leaves_the_transcript(run: Path, tmp_path: Path, page: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any) -> dict[str, Any]:
        raise RuntimeError("no drawing today")

    monkeypatch.setattr("arena_envs.view.payload.view_data", broken)
    with viewer_at(run.parent) as url:
        page.goto(url + f"run/{folder_id(run)}/episode/0")
        assert "RuntimeError: no drawing today" in page.locator("#game-error").inner_text()
        assert page.locator(".decision").count() == len([s for s in read_steps(run, 0) if not s.get("finish")])
        assert page.evaluate("JSON.parse(document.getElementById('episode-data').textContent).game") is None


def test_prompts_are_re_made_from_the_log_or_refused_in_one_line(tmp_path):
    """``recover`` re-plays an episode for its prompts: equal to the prompts the game showed, and a log
    that does not fit the game (a decision cut off, another seat to move) or an unregistered name is
    refused with the reason, nothing imported."""
    from arena_envs.guess_two_thirds_v0 import env as make
    from arena_envs.runner import RunConfig, run
    from arena_envs.runner.results import read_steps
    from arena_envs.view.observations import NotRecovered, recover

    out = tmp_path / "run"
    config = RunConfig("guess_two_thirds_v0", ("random",) * 3, episodes=1, seed=4,
                       env_kwargs={"n_players": 3, "n_rounds": 2})
    # in a thread of its own: a browser test of this module may keep Playwright's event loop running here
    with ThreadPoolExecutor(1) as pool:
        pool.submit(run, config, out, plots=False).result()
    steps = read_steps(out, 0)
    seed = json.loads((out / "episodes.jsonl").read_text())["seed"]
    texts = recover("guess_two_thirds_v0", {"n_players": 3, "n_rounds": 2}, seed, steps)
    game = make(n_players=3, n_rounds=2)
    game.reset(seed=seed)
    shown = []
    for line in steps:
        shown.append(game.observe(line["agent"])["text"])
        game.step(line["action"])
    assert texts == shown and len(texts) == 6
    with pytest.raises(NotRecovered, match="the log ends after 5 decisions"):
        recover("guess_two_thirds_v0", {"n_players": 3, "n_rounds": 2}, seed, steps[:5])
    swapped = [steps[1], steps[0], *steps[2:]]
    with pytest.raises(NotRecovered, match="decision 0: the log has player_1 to move"):
        recover("guess_two_thirds_v0", {"n_players": 3, "n_rounds": 2}, seed, swapped)
    with pytest.raises(NotRecovered, match="not registered"):
        recover("os:system", {}, seed, steps)
