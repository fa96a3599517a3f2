"""``report.md`` of an evaluation folder (the report card of ``arena eval``) and its PNGs.

Every number of the model, random and rule rows is recomputed from the results folders
(:mod:`arena_envs.evaluation.card`); the papers' figures come from
:mod:`arena_envs.evaluation.paper_figures`, each table cited. ``compare`` (several cards in one
table and one chart) lives in :mod:`arena_envs.evaluation.compare` and is re-exported here.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from arena_envs.evaluation.card import Card, GameCard, card_json, flagged_games, prompt_hashes, read_card
from arena_envs.evaluation.compare import compare
from arena_envs.evaluation.formatting import (
    CI,
    FLAG,
    VALIDITY_HEADER,
    VALIDITY_NOTE,
    headline_cell,
    number,
    paper_number,
    point_cell,
    validity_cell,
    validity_cells,
)
from arena_envs.evaluation.plots import write_game_plot, write_overview
from arena_envs.runner.results import write_durably
from arena_envs.runner.validity import percent

__all__ = ["compare", "format_report", "write_report"]

def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]


def _arrow(game: GameCard) -> str:
    return "↑" if game.setting.higher_is_better else "↓"


def episodes_per_game(expected: Mapping[str, int]) -> str:
    """``"10"``, ``"7 parts × 3"`` or ``"spy 5 + civilian 5"``."""
    counts = set(expected.values())
    if len(expected) == 1:
        return str(next(iter(counts)))
    if len(counts) == 1:
        return f"{len(expected)} parts × {next(iter(counts))}"
    return " + ".join(f"{part} {n}" for part, n in expected.items())


def _published_ends(game: GameCard) -> tuple[str, str]:
    published = game.published()
    if not published:
        return "no comparable published figure", "–"
    (best, b), (worst, w) = published[0], published[-1]
    digits = game.papers.digits_of(game.papers.headline or "")
    return f"{paper_number(b, digits)} ({best})", f"{paper_number(w, digits)} ({worst})"


def _header(card: Card) -> list[str]:
    played = sum(sum(r.played.values()) for g in card.games for r in g.results.values())
    expected = sum(sum(r.expected.values()) for g in card.games for r in g.results.values())
    status = "complete" if played >= expected else (
        f"incomplete: {played} of {expected} episodes played (still running, or stopped: the same "
        f"`arena eval` command resumes it); missing figures are marked")
    per_game = " · ".join(f"{g.setting.label}: {episodes_per_game(next(iter(g.results.values())).expected)}"
                          for g in card.games if g.results)
    newest = card.newest.strftime("%Y-%m-%d %H:%M UTC") if card.newest else "none yet"
    return [
        f"# Report card: `{card.model}`", "",
        "Written by `arena eval` from the results folders beside this file; every figure of the model, "
        "random and rule rows is recomputed from them. Intervals: seeded percentile bootstrap over "
        "episodes, 1000 resamples. The papers' figures are their published ones, each cited.", "",
        *_table(["", ""], [
            ["model", f"`{card.model}`"],
            ["subjects", ", ".join(card.subjects)],
            ["seed", str(card.seed)],
            ["mode", "quick (`--quick`)" if card.quick else "full (the papers' settings)"],
            ["episodes per game and subject", per_game],
            *([["settings changed (`--env-arg`)", "; ".join(
                f"{game}: " + ", ".join(f"{k}={json.dumps(v)}" for k, v in kwargs.items())
                for game, kwargs in card.env_args.items()) + " (not the papers' settings: the published "
                "figures do not compare)"]] if card.env_args else []),
            ["status", status],
            ["validity", _validity_summary(card)],
            *_provenance_rows(card),
        ]), "",
        f"Newest episode: {newest}", "",
    ]


def _provenance_rows(card: Card) -> list[list[str]]:
    """The code, the model as its backend describes it, and the prompts' hashes (eval.json)."""
    told = card.provenance
    if not told:
        return [["provenance", "not recorded (an evaluation written before provenance was)"]]
    commit = told.get("commit")
    rows = [["code", f"arena-envs {told.get('package')}" + (f", commit `{commit}`" if commit else "")]]
    games = told.get("games") or {}
    model = next((g["model"] for g in games.values() if isinstance(g, dict) and "model" in g), None)
    if isinstance(model, dict):
        shown = {k: model[k] for k in ("backend", "served_model", "server_reports", "weights", "config_sha256",
                                       "grammar_engine", "sampling") if model.get(k) is not None}
        shown = shown or {"policy": model.get("class")}
        rows.append(["model as run", "; ".join(f"{k}: {json.dumps(v) if isinstance(v, dict) else v}"
                                               for k, v in shown.items())])
    hashes = prompt_hashes(card)
    rows.append(["prompts (SHA-256)", " · ".join(f"{g}: `{h[:12]}`" for g, h in hashes.items() if h) or "–"])
    return rows


def _validity_summary(card: Card) -> str:
    flagged = [g.setting.label for g in flagged_games(card)]
    if flagged:
        return (f"{FLAG} not the model's play in {', '.join(flagged)}: more than a tenth of its decisions there fell "
                "back to the game's default action")
    return "the model's own play in every game (at most a tenth of its decisions fell back)"


def _overview(card: Card) -> list[str]:
    rows = []
    for g in card.games:
        best, worst = _published_ends(g)
        model = g.results.get("model")
        rows.append([f"[{g.setting.label}](#{g.setting.game})", g.setting.paper, f"{g.setting.metric} {_arrow(g)}",
                     headline_cell(model) if model else "–", point_cell(g.results.get("random")),
                     point_cell(g.results.get("rule")), best, worst, validity_cell(model.validity) if model else "–"])
    return ["## Overview", "",
            *_table(["Game", "Paper", "Metric", f"Model [{CI}]", "Random", "Rule", "Best published", "Worst published",
                     "Model: valid · re-asked · fallback"], rows), "",
            VALIDITY_NOTE, "",
            "![Overview](report_overview.png)", "",
            "Each panel is one game in its own unit: dots are the model, random and rule with their 95 % "
            "intervals (hollow when the figure is flagged: not the subject's own play), hollow diamonds the best "
            "and worst model the paper published (where it published a comparable figure).", ""]


def _subject_name(card: Card, subject: str) -> str:
    return f"model (`{card.model}`)" if subject == "model" else subject


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} s"


def _telemetry_table(card: Card, game: GameCard) -> list[str]:
    """The LLM calls of the subjects that made any (from their step logs)."""
    rows = []
    for subject, result in game.results.items():
        t = result.telemetry
        if t is None:
            continue
        cached = "not reported" if t.cached_tokens is None else f"{t.cached_tokens:,}"
        rows.append([_subject_name(card, subject), f"{t.decisions:,}", f"{t.calls:,}", f"{t.requests:,}",
                     f"{t.tokens_per_decision:,.0f}", f"{t.prompt_tokens:,}", cached, f"{t.completion_tokens:,}",
                     _seconds(t.latency_p50), _seconds(t.latency_p95)])
    if not rows:
        return []
    return [*_table(["LLM calls", "decisions", "calls", "requests", "tokens / decision", "prompt tokens",
                     "of them cached", "completion tokens", "latency p50", "latency p95"], rows), ""]


def _game_section(card: Card, game: GameCard) -> list[str]:
    s = game.setting
    parts = ", ".join(f"{p.name}" for p in s.parts)
    lines = [f"## {s.label}", "", f'<a id="{s.game}"></a>`{s.game}` · {s.paper} · headline: {s.metric} '
             f"({'higher' if s.higher_is_better else 'lower'} is better) · parts: {parts}", ""]
    header = ["Player", "Episodes", f"{s.metric} [{CI}]", *s.secondary, *VALIDITY_HEADER]
    rows = []
    for subject, result in game.results.items():
        rows.append([_subject_name(card, subject), result.episodes_text(), headline_cell(result),
                     *(number(result.metrics.get(m)) if result.headline else "missing" for m in s.secondary),
                     *validity_cells(result.validity)])
    lines += [*_table(header, rows), ""]
    lines += _telemetry_table(card, game)
    for subject, result in game.results.items():
        if result.validity.flagged:
            lines += [f"{FLAG} {_subject_name(card, subject)}: {percent(result.validity.fallback_share)} of its "
                      "decisions fell back to the game's default action: its figures here are not its own play.", ""]
    papers = game.papers
    quantities = papers.quantities()
    rows = [[_subject_name(card, subject), *(number(result.comparable.get(q)) if result.headline else "missing"
                                             for q in quantities)]
            for subject, result in game.results.items()]
    for m in papers.models:
        values = papers.values(m)
        cells = {f.quantity: paper_number(f.value, papers.digits, f.spread) for f in m.figures}
        cells.update({q: paper_number(values[q], papers.digits_of(q)) for q in papers.derived if q in values})
        name = f"{m.model} (paper's random)" if m.baseline else m.model
        rows.append([name, *(cells.get(q, "–") for q in quantities)])
    lines += [f"Published ({papers.citation()}): {papers.note}. The evaluation's rows first, then the papers' "
              "models.", "",
              *_table(["Player / model", *quantities], rows), "",
              f"![{s.label}](report_{s.game}.png)", ""]
    return lines


def format_report(card: Card) -> str:
    lines = _header(card) + _overview(card)
    for game in card.games:
        lines += _game_section(card, game)
    return "\n".join(lines)


def write_report(out: str | Path) -> Path:
    """Write ``OUT/report.md``, ``OUT/card.json`` (its figures, machine-readable: :func:`card_json`),
    ``OUT/report_overview.png`` and ``OUT/report_<game>.png`` from evaluation folder ``out``;
    returns the path of ``report.md``."""
    out = Path(out)
    card = read_card(out)
    write_overview(card, out / "report_overview.png")
    for game in card.games:
        write_game_plot(game, out / f"report_{game.setting.game}.png", card.model)
    write_durably(out / "card.json", json.dumps(card_json(card), indent=2, allow_nan=False) + "\n")
    path = out / "report.md"
    write_durably(path, format_report(card))
    return path
