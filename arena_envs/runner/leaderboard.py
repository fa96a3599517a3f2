"""The leaderboard of a run: per policy label, games, mean metrics and, where the game's paper rates
players that way, TrueSkill.

TrueSkill where the paper uses it, the paper's own scoring elsewhere (``docs/design.md``). An
environment's spec (``arena_envs.registration``) declares ``rating="trueskill"`` (AucArena does) or
``rating="wis"`` (Who is Spy's ``100 + Σ score − games``: every player starts at 100 and pays 1
per game; sorted by rating, then mean score, then name); a registered game that declares nothing
is ranked by its mean score and its episode-level metrics (a γ-Bench game's 0-100 score in the
game means line); an environment outside the registry (``module:callable``), which has no paper,
gets TrueSkill as the generic rating.

TrueSkill uses the ``trueskill`` package's defaults (mu 25, sigma 25/3, beta 25/6, tau 25/300, draw
probability 0.10) in its own ``TrueSkill`` environment, one free-for-all match per episode in
episode-id order, ranked by each seat's ``score`` (dense ranks by descending score; equal scores
draw). Means cover every numeric per-agent metric the environment reports (``score`` first);
non-finite values are left out of a mean.
"""
from __future__ import annotations

import contextlib
import copy
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from arena_envs.core.answers import excerpt
from arena_envs.registration import ENVIRONMENTS, RATINGS, TRUESKILL, WIS
from arena_envs.runner.policy_specs import player_labels
from arena_envs.runner.ratings import FreeForAll
from arena_envs.runner.results import FolderBusy, WriterLock, dumps_indented, read_config, read_episodes, write_durably
from arena_envs.runner.validity import Validity, percent
from arena_envs.runner.validity import note as validity_note


@dataclass
class Row:
    policy: str
    games: int
    mu: float | None
    sigma: float | None
    means: dict[str, float | None]
    rating: float | None = None  #: the WiS rating, where the environment ranks by it
    #: the label's decisions that were its own valid answer, were re-asked, fell back (validity.py);
    #: None where unknown (entries written before the counts existed)
    valid_share: float | None = None
    retry_share: float | None = None
    fallback_share: float | None = None
    flagged: bool = False  #: more than FLAG_FALLBACK_SHARE of its decisions fell back


#: The WiS rating's start and per-game fee (WiS paper, section 3.5).
WIS_START, WIS_FEE = 100.0, 1.0


def rating_of(env: str) -> str | None:
    """How the leaderboard of environment ``env`` rates players (module docstring)."""
    return ENVIRONMENTS[env].rating if env in ENVIRONMENTS else TRUESKILL


def dense_ranks(scores: Sequence[float]) -> list[int]:
    """0 for the highest score, equal scores share a rank, no gaps: (500, 800, 0) -> (1, 0, 2)."""
    distinct = sorted(set(scores), reverse=True)
    return [distinct.index(s) for s in scores]


def _numeric(value: Any) -> float | None:
    if isinstance(value, (bool, int, float)):
        return float(value)
    return None


class Standings:
    """The leaderboard built one episode at a time, in memory that does not grow with the run.

    TrueSkill depends on the order of matches, so episodes are rated in episode-id order whatever
    order they finish in: ``add`` holds an episode until every lower id has been added. ``rows()``
    and ``game_means()`` also count the held ones (in id order), so a stopped run's table is that
    of its finished episodes, as :func:`compute` gives it.
    """

    def __init__(self, labels: Sequence[str], rating: str | None = TRUESKILL):
        if rating not in RATINGS:
            raise ValueError(f"rating must be one of {RATINGS}, got {excerpt(rating)}")
        self.rating = rating
        self.labels = list(labels)
        self.ffa = FreeForAll()
        self.ratings = dict.fromkeys(self.labels, self.ffa.initial())
        self.games = dict.fromkeys(self.labels, 0)
        #: label -> key -> [total, n] of its finite values (n = 0: none was finite)
        self.sums: dict[str, dict[str, list[float]]] = {label: {} for label in self.labels}
        self.columns: list[str] = ["score"]
        self.game_sums: dict[str, list[float]] = {}
        self.rated = False
        self.episodes = 0
        self.next_id = 0
        self.held: dict[int, dict[str, Any]] = {}
        self.points = dict.fromkeys(self.labels, WIS_START)  # the WiS rating so far
        self.validity = {label: Validity() for label in self.labels}

    def add(self, episode: dict[str, Any]) -> None:
        """Count a finished episode (an ``episodes.jsonl`` entry)."""
        self.held[episode["episode"]] = episode
        while self.next_id in self.held:
            self._count(self.held.pop(self.next_id))
            self.next_id += 1

    def _count(self, episode: dict[str, Any]) -> None:
        self.episodes += 1
        agents = episode["metrics"]["agents"]
        seats = list(episode["seats"].items())
        columns = self.columns
        validity = episode.get("validity")
        for agent, label in seats:  # this runs per seat and metric: lean
            self.games[label] += 1
            self.validity[label].add(None if validity is None else validity.get(agent))
            sums = self.sums[label]
            for key, value in agents[agent].items():
                kind = type(value)
                if kind is not int and kind is not bool and not (kind is float or isinstance(value, (int, float))):
                    continue
                total = sums.get(key)
                if total is None:  # the label's first number under this key
                    if key not in columns:
                        columns.append(key)
                    total = sums[key] = [0.0, 0]
                if kind is int or kind is bool or math.isfinite(value):
                    total[0] += value
                    total[1] += 1
        _add_finite(self.game_sums, episode["metrics"].get("game", {}))
        if self.rating == WIS:
            for agent, label in seats:
                self.points[label] += float(agents[agent]["score"]) - WIS_FEE
        if self.rating == TRUESKILL and len(seats) >= 2:
            ranks = dense_ranks([float(agents[agent]["score"]) for agent, _ in seats])
            new = self.ffa.rate([self.ratings[label] for _, label in seats], ranks)
            for (_, label), rating in zip(seats, new):
                self.ratings[label] = rating
            self.rated = True

    def _settled(self) -> Standings:
        """Self with the held episodes counted (a copy when there are any)."""
        if not self.held:
            return self
        done = copy.deepcopy(self)
        for key in sorted(done.held):
            done._count(done.held.pop(key))
        return done

    def rows(self) -> list[Row]:
        """One row per label, sorted by TrueSkill mu or the WiS rating (then mean score, then label)."""
        done = self._settled()
        rows = [Row(label, done.games[label], done.ratings[label][0] if done.rated else None,
                    done.ratings[label][1] if done.rated else None,
                    {key: (t[0] / t[1] if (t := done.sums[label].get(key)) and t[1] else None)
                     for key in done.columns},
                    done.points[label] if done.rating == WIS else None,
                    **done.validity[label].shares())
                for label in done.labels]
        rows.sort(key=lambda r: (-_or_lowest(r.mu if r.rating is None else r.rating),
                                 -_or_lowest(r.means.get("score")), r.policy))
        return rows

    def game_means(self) -> dict[str, float]:
        """Means over episodes of the numeric episode-level metrics (``metrics["game"]``), such as a
        γ-Bench game's 0-100 score, which belongs to the whole table rather than to one seat."""
        return _means(self._settled().game_sums)

    @property
    def count(self) -> int:
        """Episodes added so far."""
        return self.episodes + len(self.held)


def _or_lowest(value: float | None) -> float:
    return -math.inf if value is None else value


def standings(episodes: Iterable[dict[str, Any]], labels: Sequence[str],
              rating: str | None = TRUESKILL) -> Standings:
    result = Standings(labels, rating)
    for episode in episodes:
        result.add(episode)
    return result


def compute(episodes: Iterable[dict[str, Any]], labels: Sequence[str], rating: str | None = TRUESKILL) -> list[Row]:
    """Rows for ``labels`` (every player of the run) from finished episodes, sorted by TrueSkill mu
    (by mean score without a rating)."""
    return standings(episodes, labels, rating).rows()


def game_means(episodes: Iterable[dict[str, Any]]) -> dict[str, float]:
    """:meth:`Standings.game_means` of ``episodes`` (in their order)."""
    sums: dict[str, list[float]] = {}
    for episode in episodes:
        _add_finite(sums, episode["metrics"].get("game", {}))
    return _means(sums)


def _add_finite(sums: dict[str, list[float]], values: dict[str, Any]) -> None:
    """Add the finite numbers of ``values`` to ``sums`` (key -> [total, count])."""
    for key, value in values.items():
        number = _numeric(value)
        if number is not None and math.isfinite(number):
            total = sums.setdefault(key, [0.0, 0])
            total[0] += number
            total[1] += 1


def _means(sums: dict[str, list[float]]) -> dict[str, float]:
    return {key: total / n for key, (total, n) in sums.items()}


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
    """The metrics a run's table shows: ``score`` plus the ``leaderboard_metrics`` of the environment's
    spec; ``None`` (every metric) for environments that declare none."""
    name = read_config(Path(folder))["env"]
    if name not in ENVIRONMENTS:
        return None
    declared = ENVIRONMENTS[name].leaderboard_metrics
    return None if declared is None else ["score", *declared]


def _table(rows: list[Row], columns: Sequence[str] | None = None) -> tuple[list[str], list[list[str]]]:
    if columns is None:
        columns = list(rows[0].means) if rows else ["score"]
    rated = any(r.mu is not None for r in rows)
    wis = any(r.rating is not None for r in rows)
    header = (["#", "policy", *(["mu", "sigma"] if rated else []), *(["rating"] if wis else []), "games"]
              + [f"mean {c}" for c in columns] + ["valid", "re-asked", "fallback"])
    body = [[str(i), r.policy, *([_cell(r.mu), _cell(r.sigma)] if rated else []),
             *([_cell(r.rating)] if wis else []), str(r.games)]
            + [_cell(r.means.get(c)) for c in columns]
            + [percent(r.valid_share), percent(r.retry_share), percent(r.fallback_share) + (" !" if r.flagged else "")]
            for i, r in enumerate(rows, 1)]
    return header, body


#: What the validity columns mean, under every leaderboard.md.
VALIDITY_NOTE = validity_note("policy", "`!`")


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
    """The leaderboard of the results folder ``folder``, recomputed from its episodes; writes
    leaderboard.json/.md there when ``write``."""
    folder = Path(folder)
    config = read_config(folder)
    table = standings(read_episodes(folder / "episodes.jsonl"), player_labels(config["players"]),
                      rating_of(config["env"]))
    if write:
        write_leaderboard(folder, table)
    return table.rows()


def leaderboard_text(folder: str | Path) -> str:
    """The printed leaderboard of a results folder: the table of its headline columns, then the
    game means line. Read from leaderboard.json when that covers every committed episode (a run
    writes it when it ends), else recomputed, and rewritten unless a run holds the folder or it
    cannot be written (read-only, disk full): reading never fails for want of writing."""
    folder = Path(folder)
    stored = _stored(folder)
    if stored is None:
        config = read_config(folder)
        table = standings(read_episodes(folder / "episodes.jsonl"), player_labels(config["players"]),
                          rating_of(config["env"]))
        with contextlib.suppress(FolderBusy, OSError), WriterLock(folder):
            write_leaderboard(folder, table)
        stored = table.rows(), table.game_means()
    rows, game = stored
    text = format_table(rows, headline_columns(folder))
    return f"{text}\n{format_game_line(game)}" if game else text


def _stored(folder: Path) -> tuple[list[Row], dict[str, float]] | None:
    """The rows and game means of leaderboard.json if it counts every line of episodes.jsonl."""
    path = folder / "leaderboard.json"
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("episodes") != (folder / "episodes.jsonl").read_bytes().count(b"\n"):
        return None
    return [Row(**row) for row in data["rows"]], data["game_means"]


def write_leaderboard(folder: Path, table: Standings) -> None:
    """Write leaderboard.json and leaderboard.md of ``table`` into results folder ``folder``."""
    config = read_config(folder)
    rows, game = table.rows(), table.game_means()
    data = {"env": config["env"], "episodes": table.count, "episodes_planned": config["episodes"],
            "rating": table.rating,
            **({"trueskill": "trueskill package defaults, one free-for-all match per episode ranked by score"}
               if table.rating == TRUESKILL else {}),
            **({"wis": "100 + sum of scores - games (WiS platform rating)"} if table.rating == WIS else {}),
            "rows": [asdict(r) for r in rows], "game_means": game}
    write_durably(folder / "leaderboard.json", dumps_indented(data))
    title = f"# {config['env']}: {table.count} of {config['episodes']} episodes, seed {config['seed']}\n\n"
    footer = f"\n\n{format_game_line(game)}" if game else ""
    footer += "\n\n" + VALIDITY_NOTE
    write_durably(folder / "leaderboard.md", title + format_markdown(rows, headline_columns(folder)) + footer + "\n")
