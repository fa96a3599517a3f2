"""The numbers of a report card, recomputed from an evaluation folder's results folders.

:func:`read_card` reads ``OUT/eval.json`` and, for every game and subject, the episodes of each part
(``settings.load_episodes``), then computes the setting's headline with its bootstrap interval and
its other metrics. A subject with a part not played yet (an evaluation still running, or stopped)
gets no figures: the report shows it as missing.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from arena_envs.evaluation.bootstrap import Interval, bootstrap
from arena_envs.evaluation.paper_figures import PAPER_FIGURES, GamePapers
from arena_envs.evaluation.settings import SETTINGS, PaperSetting, load_episodes, read_manifest
from arena_envs.evaluation.telemetry import Telemetry, telemetry
from arena_envs.runner.line_json import finite
from arena_envs.runner.validity import Validity, of_seats


@dataclass(frozen=True)
class SubjectResult:
    subject: str
    played: Mapping[str, int]  #: part -> finished episodes
    expected: Mapping[str, int]  #: part -> episodes the evaluation plays
    headline: Interval | None  #: None while a part has no episode
    metrics: Mapping[str, float]  #: the setting's metrics (headline included); empty while missing
    comparable: Mapping[str, float]  #: the papers' quantities this subject has a figure for (empty while missing)
    validity: Validity  #: the subject's decisions over its evaluated seats of every part
    telemetry: Telemetry | None = None  #: the LLM calls of those seats (None: the subject made none)

    @property
    def missing(self) -> list[str]:
        """The parts without any finished episode."""
        return [part for part, n in self.played.items() if n == 0]

    @property
    def complete(self) -> bool:
        return all(self.played.get(part, 0) >= n for part, n in self.expected.items())

    def episodes_text(self) -> str:
        """``"10"``, or ``"4/10"`` while parts are unfinished."""
        played, expected = sum(self.played.values()), sum(self.expected.values())
        return str(played) if played >= expected else f"{played}/{expected}"


@dataclass(frozen=True)
class GameCard:
    setting: PaperSetting
    papers: GamePapers
    results: Mapping[str, SubjectResult]  #: subject -> its figures, in the manifest's order

    def published(self, include_baselines: bool = False) -> list[tuple[str, float]]:
        """(model, figure comparable to the headline), best first; the papers' random rows only with
        ``include_baselines`` (named ``"random (paper's)"``)."""
        baselines = {m.model for m in self.papers.models if m.baseline}
        figures = [(f"{m} (paper's)" if m in baselines else m, v)
                   for m, v in self.papers.headline_figures(include_baselines)]
        return sorted(figures, key=lambda mv: mv[1], reverse=self.setting.higher_is_better)


@dataclass(frozen=True)
class Card:
    folder: Path
    model: str
    seed: int
    quick: bool
    subjects: tuple[str, ...]
    games: tuple[GameCard, ...]
    newest: datetime | None  #: when the newest episode was committed (its episodes.jsonl's time)
    env_args: Mapping[str, Mapping[str, Any]]  #: game -> the --env-arg values that changed its setting
    provenance: Mapping[str, Any]  #: eval.json's: package, commit, per game prompt hash and model description


def _newest(out: Path, games: list[str]) -> datetime | None:
    times = [os.stat(p).st_mtime for game in games for p in (out / game).glob("*/*/episodes.jsonl")]
    return datetime.fromtimestamp(max(times), timezone.utc) if times else None


def comparable(setting: PaperSetting, papers: GamePapers, episodes: Mapping[str, list[dict[str, Any]]],
               metrics: Mapping[str, float]) -> dict[str, float]:
    """The papers' quantities in the evaluation: a metric of the setting by the same name, or that
    metric on the parts ``papers.subsets`` names."""
    values = {}
    for quantity in papers.quantities():
        if quantity in papers.subsets:
            metric, parts = papers.subsets[quantity]
            values[quantity] = setting.metrics({part: episodes[part] for part in parts})[metric]
        elif quantity in metrics:
            values[quantity] = metrics[quantity]
    return values


def subject_result(setting: PaperSetting, papers: GamePapers, subject: str,
                   episodes: Mapping[str, list[dict[str, Any]]], expected: Mapping[str, int],
                   seed: int, folder: Path | None = None) -> SubjectResult:
    """The subject's figures from its parts' entries; ``folder`` (``OUT/<game>/<subject>``, holding a
    results folder per part) for the telemetry of its LLM calls."""
    played = {part: len(entries) for part, entries in episodes.items()}
    seats = setting.evaluated(episodes)
    validity = sum((of_seats(episodes.get(part, ()), agents) for part, agents in seats.items()), Validity())
    calls = None if folder is None else telemetry({folder / part: agents for part, agents in seats.items()})
    if any(n == 0 for n in played.values()):
        return SubjectResult(subject, played, expected, None, {}, {}, validity, calls)
    headline = bootstrap(episodes, setting.headline, seed=seed)
    metrics = setting.metrics(episodes)
    return SubjectResult(subject, played, expected, headline, metrics, comparable(setting, papers, episodes, metrics),
                         validity, calls)


def read_card(out: str | Path) -> Card:
    """The report card of evaluation folder ``out`` (ValueError, one line, when it is not one)."""
    out = Path(out)
    manifest = read_manifest(out)
    games = list(manifest["games"])
    unknown = [g for g in games if g not in SETTINGS]
    if unknown:
        raise ValueError(f"{out / 'eval.json'}: unknown game {unknown[0]!r}; known: {', '.join(SETTINGS)}")
    subjects = tuple(manifest["subjects"])
    seed = int(manifest["seed"])
    cards = []
    for game in (g for g in SETTINGS if g in games):  # the report's order
        setting = SETTINGS[game]
        expected = {part.name: int(n) for part, n in
                    ((p, manifest["episodes"][game][p.name]) for p in setting.parts)}
        papers = PAPER_FIGURES[game]
        results = {s: subject_result(setting, papers, s, load_episodes(out, game, s), expected, seed, out / game / s)
                   for s in subjects}
        cards.append(GameCard(setting, papers, results))
    provenance = manifest.get("provenance")
    return Card(out, str(manifest["model"]), seed, bool(manifest["quick"]), subjects, tuple(cards),
                _newest(out, games), manifest.get("env_args") or {}, provenance if isinstance(provenance, dict) else {})


def card_json(card: Card) -> dict[str, Any]:
    """Every figure of the report card, JSON-safe (no NaN: a figure without a value is ``null``):
    the evaluation, then per game its setting, per subject its episodes, headline interval,
    metrics, the papers' quantities, validity (counts, shares, ``flagged``), and the published
    figures."""
    games = {}
    for game in card.games:
        subjects = {}
        for subject, result in game.results.items():
            v = result.validity
            subjects[subject] = {
                "episodes": dict(result.played), "episodes_expected": dict(result.expected),
                "complete": result.complete,
                "headline": None if result.headline is None else {
                    "point": result.headline.point, "low": result.headline.low, "high": result.headline.high,
                    "no_interval": result.headline.degenerate or None},
                "metrics": dict(result.metrics), "comparable": dict(result.comparable),
                "decisions": {"total": v.decisions, "retried": v.retried, "fallback": v.fallback} if v.known else None,
                **v.shares(),
                "telemetry": None if result.telemetry is None else result.telemetry.to_json(),
            }
        setting = game.setting
        games[setting.game] = {
            "label": setting.label, "paper": setting.paper, "metric": setting.metric,
            "higher_is_better": setting.higher_is_better, "secondary": list(setting.secondary),
            "parts": [part.name for part in setting.parts], "subjects": subjects,
            "published": [{"model": model, "value": value} for model, value in game.published(include_baselines=True)],
            "citation": game.papers.citation(),
        }
    return finite({"model": card.model, "seed": card.seed, "quick": card.quick, "subjects": list(card.subjects),
                   "provenance": card.provenance,
                   "env_args": {g: dict(a) for g, a in card.env_args.items()},
                   "newest_episode": card.newest.isoformat() if card.newest else None,
                   "flagged": [g.setting.game for g in flagged_games(card)],
                   "games": games})


def prompt_hashes(card: Card) -> dict[str, str | None]:
    """Game -> the hash of its prompts when the card was played (None: not recorded)."""
    games = card.provenance.get("games") or {}
    return {g.setting.game: (games.get(g.setting.game) or {}).get("prompt_sha256") for g in card.games}


def flagged_games(card: Card, subject: str = "model") -> list[GameCard]:
    """The games where ``subject``'s figure is flagged (more than a tenth of its decisions fell back)."""
    return [g for g in card.games if subject in g.results and g.results[subject].validity.flagged]
