"""``arena view`` in a real browser: the index, a run page, an episode's transcript (seat filter, the
jump to invalid answers), an answer holding a script shown as text, and the static export opened from
``file://``. The folders are made by real ``arena run`` commands (tests/view_helpers.py); the app is
the real Starlette app served by uvicorn on 127.0.0.1."""
from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the view extra is not installed: pip install -e '.[view]'")

from arena_envs.runner.results import read_episodes, read_steps
from arena_envs.view.catalog import folder_id
from tests.view_helpers import HOSTILE, evaluation, hostile_run, random_run, screenshot, viewer_at

FIGURES_LOADED = "[...document.querySelectorAll('figure img')].every(i => i.complete && i.naturalWidth > 100)"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """results/ with the hostile run, an ordinary run and an evaluation (three part runs and a report card)."""
    root = tmp_path_factory.mktemp("view") / "results"
    hostile_run(root / "hostile")
    random_run(root / "random")
    evaluation(root / "eval")
    return root


@pytest.fixture(scope="module")
def url(results: Path) -> Iterator[str]:
    with viewer_at(results) as served:
        yield served


def decisions(folder: Path, episode: int) -> list[dict[str, Any]]:
    return [line for line in read_steps(folder, episode) if not line.get("finish")]


def test_the_index_lists_runs_with_progress_and_the_evaluation_with_its_report_card(page: Any, url: str,
                                                                                    results: Path) -> None:
    page.goto(url)
    hostile = page.locator(f'tr[data-run="{folder_id(results / "hostile")}"]')
    assert hostile.locator("[data-progress]").inner_text() == "2 / 2"
    assert hostile.locator(".status").inner_text() == "finished"
    assert "human" in hostile.inner_text() and "max_retries=1" in hostile.inner_text()
    parts = sorted(path.parent for path in (results / "eval").rglob("run.json"))
    assert len(parts) == 3  # the model, random and rule subjects
    assert page.locator("#runs tr[data-run]").count() == 2 + len(parts)
    screenshot(page, "index")
    page.locator(f'tr[data-evaluation="{folder_id(results / "eval")}"] a').first.click()
    assert page.locator("tr[data-run]").count() == len(parts)
    assert {page.locator(f'tr[data-run="{folder_id(part)}"]').count() for part in parts} == {1}
    page.locator(".facts a", has_text="report card").click()
    figures = sorted(path.name for path in (results / "eval").glob("report_*.png"))
    assert page.locator("figure figcaption").all_inner_texts() == figures
    page.wait_for_function(FIGURES_LOADED)
    report = (results / "eval" / "report.md").read_text(encoding="utf-8")
    assert page.locator("pre.report").inner_text().strip() == report.strip()


def test_a_run_page_has_its_leaderboard_with_validity_and_its_episodes(page: Any, url: str, results: Path) -> None:
    page.goto(url)
    page.locator(f'tr[data-run="{folder_id(results / "hostile")}"] a').first.click()
    board = page.locator("#leaderboard table")
    headers = board.locator("thead th").all_inner_texts()
    assert headers[-3:] == ["valid", "re-asked", "fallback"]
    human = board.locator("tbody tr", has_text="human")
    cells = human.locator("td").all_inner_texts()
    stored = next(row for row in json.loads((results / "hostile" / "leaderboard.json").read_text())["rows"]
                  if row["policy"] == "human")
    assert stored["retry_share"] > 0 and stored["fallback_share"] > 0
    assert cells[-3:] == [f"{100 * stored[key]:.0f} %" for key in ("valid_share", "retry_share", "fallback_share")]
    rows = page.locator("#episode-rows tr[data-episode]")
    assert rows.count() == 2
    screenshot(page, "run")


def test_an_episode_transcript_filters_by_seat_and_jumps_to_invalid_answers(page: Any, url: str,
                                                                             results: Path) -> None:
    folder = results / "hostile"
    page.goto(url + f"run/{folder_id(folder)}/episode/1")
    lines = decisions(folder, 1)
    shown = page.locator(".decision")
    assert shown.count() == len(lines)
    assert shown.nth(0).get_attribute("data-agent") == lines[0]["agent"]
    invalid = [i for i, line in enumerate(lines) if line["invalid_action"]]
    assert page.locator('.decision[data-invalid="true"]').count() == len(invalid) == 21
    # the observation text is folded and holds the game's prompt
    first = shown.nth(0).locator("details.observation")
    assert not first.get_attribute("open")
    assert "2/3" in first.locator("pre").text_content()
    # telemetry of the person's seat is its answer text; the badges say valid / re-asked / fallback
    person = [i for i, line in enumerate(lines) if line["policy"] == "human"]
    assert shown.nth(person[0]).locator(".badge-retry").count() == 1
    assert shown.nth(person[1]).locator(".badge-fallback").count() == 1
    assert "valid after 1 re-ask" in shown.nth(person[3]).locator(".badge-valid").inner_text()

    page.select_option("#seat-filter", "player_1")
    visible = page.locator(".decision:visible")
    assert visible.count() == sum(line["agent"] == "player_1" for line in lines) == 40
    assert set(visible.evaluate_all("items => items.map(i => i.dataset.agent)")) == {"player_1"}
    page.select_option("#seat-filter", "")
    assert page.locator(".decision:visible").count() == len(lines)

    for expected in invalid[:3]:
        page.click("#next-invalid")
        current = page.locator(".decision.current")
        assert current.get_attribute("data-index") == str(expected)
        assert current.get_attribute("data-invalid") == "true"
        assert current.is_visible() and current.bounding_box()["y"] >= 0
    screenshot(page, "episode")


def test_an_answer_holding_a_script_shows_as_text_and_runs_nothing(page: Any, url: str, results: Path) -> None:
    folder = results / "hostile"
    page.goto(url + f"run/{folder_id(folder)}/episode/0")
    raw = page.locator('.decision[data-agent="player_0"] pre.raw').first
    assert raw.inner_text() == HOSTILE
    assert page.locator("#transcript script, #transcript b.hostile, #transcript img").count() == 0
    assert page.evaluate("window.pwned") is None


def test_the_export_opens_from_file_and_shows_the_transcript(page: Any, results: Path, tmp_path: Path) -> None:
    from arena_envs.view.export import export_site
    from arena_envs.view.pages import Links, Viewer

    site = tmp_path / "site"
    written = export_site(Viewer([results], Links(export=True)), site)
    committed = sum(len(read_episodes(results / name / "episodes.jsonl")) for name in ("hostile", "random"))
    parts = list((results / "eval").rglob("run.json"))
    committed += sum(len(read_episodes(part.parent / "episodes.jsonl")) for part in parts)
    # the index, a page per run, the episodes, the evaluation and its card
    assert written == 1 + 2 + len(parts) + committed + 1 + 1
    page.goto((site / "index.html").as_uri())
    page.locator(f'tr[data-run="{folder_id(results / "hostile")}"] a').first.click()
    page.locator('#episode-rows tr[data-episode="0"] a').click()
    page.locator(".decision").first.wait_for()
    assert page.url.startswith("file://")
    assert page.locator(".decision").count() == len(decisions(results / "hostile", 0))
    assert page.locator('.decision[data-agent="player_0"] pre.raw').first.inner_text() == HOSTILE
    assert page.evaluate("window.pwned") is None
    page.goto((site / "index.html").as_uri())
    page.locator("#cards a").click()
    page.wait_for_function(FIGURES_LOADED)


def test_a_decision_shows_the_telemetry_its_trace_holds(page: Any, results: Path, tmp_path: Path) -> None:
    """An LLM policy's trace (llm_policies.base: the calls of the decision with their tokens and latency)
    put on one decision line of a copy of a real run."""
    copy = tmp_path / "results" / "llm"
    shutil.copytree(results / "random", copy)
    lines = (copy / "log.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    line = json.loads(lines[0])
    line["trace"] = {"backend": "vllm", "prompt_tokens": 812, "cached_tokens": 640, "completion_tokens": 17,
                     "latency_s": 0.4321, "calls": [{"purpose": "answer", "text": '{"chosen_number": "33"}',
                                                     "prompt_tokens": 812, "completion_tokens": 17}]}
    lines[0] = json.dumps(line) + "\n"
    (copy / "log.jsonl").write_text("".join(lines), encoding="utf-8")
    with viewer_at(copy.parent) as url:
        page.goto(url + f"run/{folder_id(copy)}/episode/0")
        first = page.locator(".decision").first
        assert first.locator(".telemetry").inner_text() == ("prompt 812 tokens · cached 640 · completion 17 tokens · "
                                                            "latency 0.432 s · 1 call · vllm")
        assert first.locator("pre.raw").inner_text() == '{"chosen_number": "33"}'
        assert page.locator(".decision .telemetry").count() == 1
