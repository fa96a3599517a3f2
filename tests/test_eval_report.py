"""The report card of ``arena eval``: the papers' figures against the specs' tables, the bootstrap,
``report.md`` against the results folders it is computed from, the plots, and ``--compare``."""
from __future__ import annotations

import pytest

from arena_envs.evaluation.bootstrap import bootstrap
from arena_envs.evaluation.paper_figures import PAPER_FIGURES, Figure
from tests.eval_helpers import check_report, parse_cell, spec_cell, specs_folder, tables_of


def test_every_paper_figure_equals_its_spec_cell():
    specs_folder()
    checked = 0
    for papers in PAPER_FIGURES.values():
        for model in papers.models:
            for figure in model.figures:
                assert parse_cell(spec_cell(papers, figure)) == (figure.value, figure.spread), (papers.game, figure)
                checked += 1
    assert checked == 8 * 12 + 12 * 8 + 10 * 4 + 3 * 6 + 14  # γ-Bench, tank, Who is Spy, auction, trading


def test_the_spec_parser_finds_cells_and_refuses_what_is_not_there():
    papers = PAPER_FIGURES["tank_battle_v0"]
    s5 = next(f for f in papers.models[0].figures if f.quantity == "S5 Score")
    assert spec_cell(papers, s5) == "6.3"  # Table 4, not Table 5's 4.3 in the same column
    with pytest.raises(AssertionError, match="matches 0 cells"):
        spec_cell(papers, Figure("x", "Table 5", ("no such model",), "S5 Score", 0.0))
    assert parse_cell("−1.4") == (-1.4, None) and parse_cell("100.0±0.0") == (100.0, 0.0)


def test_every_game_has_its_papers_figures_and_a_reason_where_none_compares():
    assert len(PAPER_FIGURES) == 12
    for papers in PAPER_FIGURES.values():
        assert papers.models and papers.note
        if papers.headline is None:
            assert "no comparable published figure" in papers.note
        else:
            assert papers.headline_figures()
    tank = PAPER_FIGURES["tank_battle_v0"]
    claude = tank.values(tank.models[0])
    assert claude["Avg. Score (stages 3-7)"] == pytest.approx((5.3 + 4.3 + 6.3 + 7.0 + 8.3) / 5)
    assert "random" not in dict(tank.headline_figures()) and "random" in dict(tank.headline_figures(True))


# -- the bootstrap

def _mean_score(episodes):
    values = [e["x"] for entries in episodes.values() for e in entries]
    return sum(values) / len(values) if values else float("nan")


def test_bootstrap_is_seeded_and_contains_its_point():
    episodes = {"a": [{"x": v} for v in (1.0, 4.0, 2.0, 8.0, 5.0)], "b": [{"x": 3.0}, {"x": 7.0}]}
    first = bootstrap(episodes, _mean_score, seed=3)
    assert first == bootstrap(episodes, _mean_score, seed=3)
    assert first != bootstrap(episodes, _mean_score, seed=4)
    assert first.low < first.point < first.high and not first.degenerate
    assert first.point == pytest.approx(30 / 7) and first.episodes == 7
    assert first.low >= 1.0 and first.high <= 8.0


def test_bootstrap_of_single_episodes_is_degenerate_and_says_so():
    one = bootstrap({"a": [{"x": 2.5}], "b": []}, _mean_score)
    assert (one.point, one.low, one.high, one.episodes) == (2.5, 2.5, 2.5, 1)
    assert one.format() == "2.50 [no interval: one episode per part]"
    assert bootstrap({"a": [{"x": 2.5}]}, _mean_score).format() == "2.50 [no interval: one episode]"
    with pytest.raises(ValueError, match="resamples >= 1"):
        bootstrap({"a": [{"x": 1.0}]}, _mean_score, resamples=0)


# -- report.md of real (small) evaluations, read back and recomputed from the results folders

GAMES = ["guess_two_thirds_v0", "auction_v0", "who_is_spy_v0"]  # cheap games: one, six and two parts


@pytest.fixture(scope="module")
def evaluations(tmp_path_factory):
    """Three small evaluations: ``random`` on GAMES; ``rule`` and ``random`` on the auction and Who is
    Spy. The auction plays one episode per part (its TrueSkill makes a bootstrap the slowest), in a
    second call on the same folder, as a user adds a game to an evaluation."""
    from arena_envs.evaluation.evaluate import evaluate

    root = tmp_path_factory.mktemp("eval")
    for name, spec, seed, games in (("random3", "random", 1, GAMES), ("rule", "rule", 0, GAMES[1:]),
                                    ("random2", "random", 0, GAMES[1:])):
        evaluate(spec, root / name, games=[g for g in games if g != "auction_v0"], episodes=3, seed=seed)
        evaluate(spec, root / name, games=["auction_v0"], episodes=1, seed=seed)
    return root


def test_report_figures_equal_those_recomputed_from_the_results_folders(evaluations):
    from arena_envs.evaluation.settings import SETTINGS

    sections, overview, checked = check_report(evaluations / "random3", GAMES)
    assert checked > 100
    assert overview[SETTINGS["who_is_spy_v0"].label][6:8] == ["3.24 (GPT4o)", "1.04 (Doubao)"]
    wis = tables_of(sections[SETTINGS["who_is_spy_v0"].label])[1]
    assert wis[0][1] == "WiS rating (90 games)" and wis[-1][:2] == ["GPT4o", "301.6"]  # 100 + 90 * (3.24 - 1)
    assert overview[SETTINGS["auction_v0"].label][6] == "no comparable published figure"


def test_report_header_and_plots(evaluations):
    from PIL import Image

    out = evaluations / "random3"
    text = (out / "report.md").read_text("utf-8")
    assert text.startswith("# Report card: `random`")
    assert "| seed | 1 |" in text and "| status | complete |" in text and "Newest episode: 20" in text
    # the published figures are cited in the paper's terms, never by the spec files readers do not have
    assert "Published (the γ-Bench paper, Table 1): " in text and "Published (the AucArena paper, Table 2): " in text
    assert "§" not in text and ".md" not in text.replace("report.md", "")
    for name in ["report_overview.png", *(f"report_{g}.png" for g in GAMES)]:
        assert f"]({name})" in text
        with Image.open(out / name) as image:
            image.verify()
            assert image.format == "PNG" and min(image.size) > 100


def test_a_report_of_an_unfinished_evaluation_shows_what_is_missing(evaluations, tmp_path):
    import shutil

    from arena_envs.evaluation.report import write_report

    out = tmp_path / "partial"
    shutil.copytree(evaluations / "rule", out)
    shutil.rmtree(out / "who_is_spy_v0" / "model" / "civilian")
    (out / "report.md").unlink()
    text = write_report(out).read_text("utf-8")
    assert "| status | incomplete: 33 of 36 episodes played" in text
    assert "| model (`rule`) | 3/6 | missing (civilian not played) |" in text
    assert "| [Who is Spy](#who_is_spy_v0) | WiS | Avg. score ↑ | missing (civilian not played) |" in text


def test_compare_puts_one_row_per_model_and_refuses_bad_folders(evaluations, tmp_path):
    import json
    import shutil

    from PIL import Image

    from arena_envs.evaluation.card import read_card
    from arena_envs.evaluation.formatting import validity_cells
    from arena_envs.evaluation.report import compare

    path = compare([evaluations / "random2", evaluations / "rule"], tmp_path / "cmp")
    assert path == tmp_path / "cmp" / "compare.md"
    rows = tables_of(path.read_text("utf-8").splitlines())[0]
    assert [r[0] for r in rows[1:]] == ["`random`", "`rule`", "random (baseline, random2)", "rule (baseline, random2)"]
    for row, folder in zip(rows[1:3], ("random2", "rule")):
        card = read_card(evaluations / folder)
        assert row[2::2] == [g.results["model"].headline.format() for g in card.games]
        assert row[3::2] == [" · ".join(validity_cells(g.results["model"].validity)) for g in card.games]
    assert rows[0][2:4] == [f"{card.games[0].setting.label}: {card.games[0].setting.metric} [95 % CI]",
                            f"{card.games[0].setting.label}: valid · re-asked · fallback"]
    with Image.open(tmp_path / "cmp" / "compare.png") as image:
        assert image.format == "PNG" and min(image.size) > 100
    assert "different prompts" not in path.read_text("utf-8")
    changed = tmp_path / "changed"  # the same evaluation, as if played by another version of a game's prompts
    shutil.copytree(evaluations / "rule", changed)
    manifest = json.loads((changed / "eval.json").read_text())
    game = manifest["games"][0]
    manifest["provenance"]["games"][game]["prompt_sha256"] = "0" * 64
    (changed / "eval.json").write_text(json.dumps(manifest))
    text = compare([evaluations / "random2", changed], tmp_path / "cmp2").read_text("utf-8")
    assert f"were played with different prompts in {game} " in text

    def refused(folders, match):
        with pytest.raises(ValueError, match=match) as caught:
            compare(folders, tmp_path / "refused")
        assert "\n" not in str(caught.value)
        assert not (tmp_path / "refused" / "compare.md").exists()

    refused([evaluations / "random2"], "needs two or more evaluation folders, got 1")
    refused([evaluations / "random2", tmp_path], "is not an evaluation folder")
    refused([evaluations / "random2", evaluations / "random3"], "the same model 'random'")
    other = tmp_path / "other"
    shutil.copytree(evaluations / "rule", other)
    manifest = json.loads((other / "eval.json").read_text())
    (other / "eval.json").write_text(json.dumps({**manifest, "model": "rule:K=5", "games": ["auction_v0"]}))
    refused([evaluations / "random2", other], "evaluated games auction_v0 but .* evaluated auction_v0, who_is_spy_v0")
    (other / "eval.json").write_text(json.dumps({**manifest, "model": "rule:K=5",
                                                 "env_args": {"auction_v0": {"n_items": 3}}}))
    refused([evaluations / "random2", other], "played auction_v0 with --env-arg")
