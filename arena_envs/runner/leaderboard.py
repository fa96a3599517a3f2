"""The leaderboard of a run: per policy label, games, mean metrics and TrueSkill.

TrueSkill uses the ``trueskill`` package's defaults (mu 25, sigma 25/3, beta 25/6, tau 25/300, draw
probability 0.10) in its own ``TrueSkill`` environment, one free-for-all match per episode in
episode-id order, ranked by each seat's ``score`` (dense ranks by descending score; equal scores
draw). Means cover every numeric per-agent metric the environment reports (``score`` first);
non-finite values are left out of a mean.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import trueskill

from arena_envs.registration import ENVIRONMENTS, env_module
from arena_envs.runner.policy_specs import player_labels
from arena_envs.runner.results import write_durably, read_config, read_episodes


@dataclass
class Row:
    policy: str
    games: int
    mu: float | None
    sigma: float | None
    means: dict[str, float | None]


def dense_ranks(scores: Sequence[float]) -> list[int]:
    """0 for the highest score, equal scores share a rank, no gaps: (500, 800, 0) -> (1, 0, 2)."""
    distinct = sorted(set(scores), reverse=True)
    return [distinct.index(s) for s in scores]


def _numeric(value: Any) -> float | None:
    if isinstance(value, (bool, int, float)):
        return float(value)
    return None


def compute(episodes: Iterable[dict[str, Any]], labels: Sequence[str]) -> list[Row]:
    """Rows for ``labels`` (every player of the run) from finished episodes, sorted by TrueSkill mu."""
    env = trueskill.TrueSkill()
    ratings = {label: env.create_rating() for label in labels}
    games = dict.fromkeys(labels, 0)
    sums: dict[str, dict[str, list[float]]] = {label: {} for label in labels}
    columns: list[str] = ["score"]
    rated = False
    for episode in sorted(episodes, key=lambda e: e["episode"]):
        agents = episode["metrics"]["agents"]
        seats = list(episode["seats"].items())
        for agent, label in seats:
            games[label] += 1
            for key, value in agents[agent].items():
                number = _numeric(value)
                if number is None:
                    continue
                if key not in columns:
                    columns.append(key)
                if math.isfinite(number):
                    sums[label].setdefault(key, []).append(number)
        if len(seats) >= 2:
            ranks = dense_ranks([float(agents[agent]["score"]) for agent, _ in seats])
            new = env.rate([(ratings[label],) for _, label in seats], ranks=ranks)
            for (_, label), (rating,) in zip(seats, new):
                ratings[label] = rating
            rated = True
    rows = [Row(label, games[label], ratings[label].mu if rated else None, ratings[label].sigma if rated else None,
                {key: (sum(v) / len(v) if (v := sums[label].get(key)) else None) for key in columns})
            for label in labels]
    rows.sort(key=lambda r: (-(r.mu if r.mu is not None else -math.inf),
                             -(r.means.get("score") if r.means.get("score") is not None else -math.inf)))
    return rows


def game_means(episodes: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Means over episodes of the numeric episode-level metrics (``metrics["game"]``), such as a
    γ-Bench game's 0-100 score, which belongs to the whole table rather than to one seat."""
    sums: dict[str, list[float]] = {}
    for episode in episodes:
        for key, value in episode["metrics"].get("game", {}).items():
            number = _numeric(value)
            if number is not None and math.isfinite(number):
                sums.setdefault(key, []).append(number)
    return {key: sum(values) / len(values) for key, values in sums.items()}


def format_game_line(means: dict[str, float]) -> str:
    """``game means: score 63.400, raw_score 34.590`` (empty when the environment has none)."""
    return "game means: " + ", ".join(f"{k} {_cell(v)}" for k, v in means.items()) if means else ""


def _cell(value: float | int | None) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, int):
        return str(value)
    return f"{value:.3f}" if abs(value) < 1000 else f"{value:.1f}"


def headline_columns(folder: str | Path) -> list[str] | None:
    """The metrics a run's table shows: ``score`` plus the environment's ``LEADERBOARD_METRICS``
    (declared in its entry module); ``None`` (every metric) for environments that declare none."""
    name = read_config(Path(folder))["env"]
    if name not in ENVIRONMENTS:
        return None
    declared = getattr(env_module(name), "LEADERBOARD_METRICS", None)
    return None if declared is None else ["score", *declared]


def _table(rows: list[Row], columns: Sequence[str] | None = None) -> tuple[list[str], list[list[str]]]:
    if columns is None:
        columns = list(rows[0].means) if rows else ["score"]
    header = ["#", "policy", "mu", "sigma", "games"] + [f"mean {c}" for c in columns]
    body = [[str(i), r.policy, _cell(r.mu), _cell(r.sigma), str(r.games)] + [_cell(r.means.get(c)) for c in columns]
            for i, r in enumerate(rows, 1)]
    return header, body


def format_table(rows: list[Row], columns: Sequence[str] | None = None) -> str:
    """An aligned plain-text table (text left-aligned, numbers right-aligned) of ``columns``
    (default: every metric)."""
    header, body = _table(rows, columns)
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def fmt(line: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 1 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))).rstrip()

    return "\n".join([fmt(header), "  ".join("-" * w for w in widths), *map(fmt, body)])


def format_markdown(rows: list[Row], columns: Sequence[str] | None = None) -> str:
    header, body = _table(rows, columns)
    align = "|".join("---" if i == 1 else "--:" for i in range(len(header)))
    lines = ["| " + " | ".join(header) + " |", f"|{align}|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in line) + " |" for line in body]
    return "\n".join(lines)


def leaderboard(folder: str | Path, write: bool = True) -> list[Row]:
    """The leaderboard of the results folder ``folder``; writes leaderboard.json/.md there when ``write``."""
    return _leaderboard(Path(folder), write)[0]


def leaderboard_text(folder: str | Path) -> str:
    """The printed leaderboard of a results folder: the table of its headline columns, then the
    game means line (rewrites leaderboard.json/.md)."""
    rows, game = _leaderboard(Path(folder), True)
    table = format_table(rows, headline_columns(folder))
    return f"{table}\n{format_game_line(game)}" if game else table


def _leaderboard(folder: Path, write: bool) -> tuple[list[Row], dict[str, float]]:
    config = read_config(folder)
    episodes = read_episodes(folder / "episodes.jsonl")
    rows = compute(episodes, player_labels(config["players"]))
    game = game_means(episodes)
    if write:
        data = {"env": config["env"], "episodes": len(episodes), "episodes_planned": config["episodes"],
                "trueskill": "trueskill package defaults, one free-for-all match per episode ranked by score",
                "rows": [asdict(r) for r in rows], "game_means": game}
        write_durably(folder / "leaderboard.json", json.dumps(data, indent=2) + "\n")
        title = f"# {config['env']}: {len(episodes)} of {config['episodes']} episodes, seed {config['seed']}\n\n"
        footer = f"\n\n{format_game_line(game)}" if game else ""
        write_durably(folder / "leaderboard.md", title + format_markdown(rows, headline_columns(folder)) + footer + "\n")
    return rows, game
