"""What the report-card tests share: the specs' Markdown tables (the papers' figures are checked
against them), reading ``report.md`` back, and the check that every figure of a report equals the
one recomputed from its evaluation's results folders."""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from arena_envs.evaluation.bootstrap import bootstrap
from arena_envs.evaluation.paper_figures import PAPER_FIGURES, Figure, GamePapers
from tests.outside_data import SPECS, require


def specs_folder() -> Path:
    return require(SPECS)


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


#: Where each paper's published tables stand in the specs: the file and its section's heading.
SPEC_TABLES = {"γ-Bench": ("gamma_games.md", "### 14.1"), "BattleAgentBench": ("tank_battle.md", "### 7.5"),
               "WiS": ("who_is_spy.md", "### 7.1"), "AucArena": ("auction.md", "### 7.4"),
               "Agent Market Arena": ("trading.md", "## 9.")}


def spec_cell(papers: GamePapers, figure: Figure) -> str:
    spec, section = SPEC_TABLES[papers.paper]
    text = (specs_folder() / spec).read_text("utf-8")
    wanted = figure.table if figure.table.startswith("Table") else None
    found = []
    for label, header, rows in spec_tables(text, section):
        if label != wanted or figure.column not in header:
            continue
        column = header.index(figure.column)
        found += [row[column] for row in rows if tuple(row[:len(figure.row)]) == figure.row]
    assert len(found) == 1, f"{papers.game}: {figure} matches {len(found)} cells of {spec}"
    return found[0]


def report_sections(text: str) -> dict[str, list[str]]:
    """``## `` heading -> its lines."""
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = found.setdefault(line[3:], [])
        elif current is not None:
            current.append(line)
    return found


def tables_of(lines: list[str]) -> list[list[list[str]]]:
    """Each Markdown table of ``lines`` as rows of cells (header first, the ``---`` line dropped)."""
    tables: list[list[list[str]]] = []
    block: list[list[str]] = []
    for line in [*lines, ""]:
        if line.startswith("|"):
            block.append([c.strip().replace("\\|", "|") for c in line.strip()[1:-1].split(" | ")])
        elif block:
            tables.append([block[0], *block[2:]])
            block = []
    return tables


def _validity_cells(episodes: dict[str, list[dict]], seats: dict[str, list[str]]) -> list[str]:
    """The valid, re-asked and fallback cells, counted here from the entries' per-seat counts."""
    counts = [0, 0, 0]
    for part, agents in seats.items():
        for entry in episodes[part]:
            for agent in agents:
                seat = entry["validity"][agent]
                counts = [counts[0] + seat["decisions"], counts[1] + seat["retried"], counts[2] + seat["fallback"]]
    decisions, retried, fallback = counts
    shares = [100 * n / decisions for n in (decisions - fallback, retried, fallback)]
    cells = [f"{v:.1f} %" if 0 < v < 1 else f"{v:.0f} %" for v in shares]  # one decimal below 1 %
    return cells[:2] + [cells[2] + (" ⚑" if fallback > 0.1 * decisions else "")]


def _check_calls_table(out: Path, game: str, tables: list[list[list[str]]]) -> int:
    """The LLM calls table (present when a subject made calls): decisions and calls counted here
    from the step logs of the subject's evaluated seats."""
    from arena_envs.evaluation.settings import SETTINGS, load_episodes
    from arena_envs.runner.results import iter_log

    made = {}
    for subject in ("model", "random", "rule"):
        episodes = load_episodes(out, game, subject)
        decisions = calls = 0
        for part, agents in SETTINGS[game].evaluated(episodes).items():
            for block in iter_log(out / game / subject / part):
                for step in block.steps:
                    if step.get("agent") in agents and (step.get("trace") or {}).get("calls"):
                        decisions += 1
                        calls += len(step["trace"]["calls"])
        if decisions:
            made[subject] = [f"{decisions:,}", f"{calls:,}"]
    if not made:
        assert not tables
        return 0
    (table,) = tables
    assert table[0][:3] == ["LLM calls", "decisions", "calls"]
    assert {row[0].split(" ")[0]: row[1:3] for row in table[1:]} == made
    return 2 * len(made)


def check_report(out: Path, games: Sequence[str]) -> tuple[dict[str, list[str]], dict[str, list[str]], int]:
    """Read ``out/report.md`` back and check it against the results folders: the overview lists
    ``games``; each subject's row (episodes, headline with its bootstrap interval, secondaries,
    validity: its decisions' shares counted from the entries) and
    the evaluation's rows of the published table equal what the settings recompute from the
    folders; every paper row's cell equals its figure (each figure equals its spec table's cell:
    tests/test_eval_report.py). Returns the report's
    sections, the overview rows by game label and the number of cells checked."""
    from arena_envs.evaluation.formatting import number
    from arena_envs.evaluation.settings import SETTINGS, load_episodes, read_manifest

    text = (out / "report.md").read_text("utf-8")
    seed = read_manifest(out)["seed"]
    sections = report_sections(text)
    overview = {row[0].split("]")[0].lstrip("["): row for row in tables_of(sections["Overview"])[0][1:]}
    assert list(overview) == [SETTINGS[g].label for g in games]
    checked = 0
    for game in games:
        setting, papers = SETTINGS[game], PAPER_FIGURES[game]
        subjects_table, *calls_table, published_table = tables_of(sections[setting.label])
        checked += _check_calls_table(out, game, calls_table)
        assert subjects_table[0] == ["Player", "Episodes", f"{setting.metric} [95 % CI]", *setting.secondary,
                                     "valid", "re-asked", "fallback"]
        for row, subject in zip(subjects_table[1:], ("model", "random", "rule"), strict=True):
            episodes = load_episodes(out, game, subject)
            metrics = setting.metrics(episodes)
            interval = bootstrap(episodes, setting.headline, seed=seed)
            assert row[1] == str(sum(map(len, episodes.values())))
            assert row[2] == interval.format() and interval.low <= interval.point <= interval.high
            assert row[3:-3] == [number(metrics[m]) for m in setting.secondary]
            assert row[-3:] == _validity_cells(episodes, setting.evaluated(episodes))
            assert overview[setting.label][3 + ("model", "random", "rule").index(subject)] == (
                row[2] if subject == "model" else number(interval.point))
            if subject == "model":
                assert overview[setting.label][-1] == " · ".join(row[-3:])
            # the evaluation's rows of the published table: the papers' quantities, recomputed here
            ours = published_table[1 + ("model", "random", "rule").index(subject)]
            for quantity, cell in zip(published_table[0][1:], ours[1:], strict=True):
                metric, parts = papers.subsets.get(quantity, (quantity, tuple(episodes)))
                assert cell == number(setting.metrics({p: episodes[p] for p in parts})[metric]), (game, quantity)
                checked += 1
        # the papers' rows: every published cell equals its spec table's
        quantities = published_table[0][1:]
        for row, model in zip(published_table[4:], papers.models, strict=True):
            assert row[0].startswith(model.model)
            for figure in model.figures:
                cell = row[1 + quantities.index(figure.quantity)]
                assert parse_cell(cell) == (figure.value, figure.spread)
                checked += 1
    return sections, overview, checked
