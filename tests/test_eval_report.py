"""The report card of ``arena eval``: the papers' figures against the specs' tables, the bootstrap,
``report.md`` against the results folders it is computed from, the plots, and ``--compare``."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from arena_envs.evaluation.bootstrap import bootstrap
from arena_envs.evaluation.paper_figures import PAPER_FIGURES, Figure, GamePapers

_ROOT = Path(__file__).resolve().parents[1]
#: the specs folder: $ARENA_SPECS, else ``shared/specs`` beside the checkout (or beside its worktrees' folder)
SPECS = Path(os.environ["ARENA_SPECS"]) if "ARENA_SPECS" in os.environ else next(
    (p for p in (_ROOT.parent / "shared" / "specs", _ROOT.parent.parent / "shared" / "specs") if p.is_dir()),
    _ROOT.parent / "shared" / "specs")


def _specs() -> Path:
    if not SPECS.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"the specs folder {SPECS} is missing (set ARENA_SPECS)")
        pytest.skip(f"the specs folder {SPECS} is not here")
    return SPECS


# -- the specs' Markdown tables

def _cells(line: str) -> list[str]:
    return [c.strip().replace("**", "") for c in line.strip().strip("|").split("|")]


def spec_tables(text: str, section: str) -> list[tuple[str | None, list[str], list[list[str]]]]:
    """(label, header, rows) of every table in the section whose heading starts with ``section``;
    the label is the last "Table N" named before the table in the section (its heading included)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(section + " "))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    tables: list[tuple[str | None, list[str], list[list[str]]]] = []
    label = None
    i = start
    while i < end:
        line = lines[i]
        if line.startswith("|"):
            block = []
            while i < end and lines[i].startswith("|"):
                block.append(_cells(lines[i]))
                i += 1
            tables.append((label, block[0], [row for row in block[2:]]))
            continue
        named = re.findall(r"\bTable (\d+)\b", line)
        if named and (i == start or line.startswith("Table")):
            label = f"Table {named[-1]}"
        i += 1
    return tables


def parse_cell(cell: str) -> tuple[float, float | None]:
    """``"41.4±0.5"`` -> (41.4, 0.5); ``"−6.89 %"`` -> (-6.89, None)."""
    text = cell.replace("−", "-").replace("%", "").replace(" ", "")
    mean, _, spread = text.partition("±")
    return float(mean), float(spread) if spread else None


def spec_cell(papers: GamePapers, figure: Figure) -> str:
    text = (_specs() / papers.spec).read_text("utf-8")
    wanted = figure.table if figure.table.startswith("Table") else None
    found = []
    for label, header, rows in spec_tables(text, papers.section):
        if label != wanted or figure.column not in header:
            continue
        column = header.index(figure.column)
        found += [row[column] for row in rows if tuple(row[:len(figure.row)]) == figure.row]
    assert len(found) == 1, f"{papers.game}: {figure} matches {len(found)} cells of {papers.spec}"
    return found[0]


def test_every_paper_figure_equals_its_spec_cell():
    _specs()
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
    assert (one.point, one.low, one.high, one.degenerate) == (2.5, 2.5, 2.5, True)
    assert one.format() == "2.50 [no interval: n=1]"
    with pytest.raises(ValueError, match="resamples >= 1"):
        bootstrap({"a": [{"x": 1.0}]}, _mean_score, resamples=0)
