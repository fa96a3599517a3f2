"""Each paper's metrics of the evaluated seats, computed from ``episodes.jsonl`` entries alone.

Every function takes ``parts``: part name -> the entries of that part (a bootstrap may pass
resampled lists, with repeated entries), and ``seats``: part name -> the agents the subject
plays there. Names follow :class:`arena_envs.evaluation.settings.PaperSetting` (headline first,
then its ``secondary``); a figure with no data (no episode, no defined value) is NaN.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arena_envs.runner.leaderboard import dense_ranks
from arena_envs.runner.ratings import FreeForAll

Entries = Mapping[str, Sequence[Mapping[str, Any]]]
Seats = Mapping[str, Sequence[str]]
NAN = math.nan


def mean(values: Iterable[float | None]) -> float:
    """Mean of the finite values (``None`` and NaN left out); NaN when none is left."""
    kept = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    return sum(kept) / len(kept) if kept else NAN


def ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else NAN


def _agent(entry: Mapping[str, Any], agent: str) -> Mapping[str, Any]:
    metrics: Mapping[str, Any] = entry["metrics"]["agents"][agent]
    return metrics


# --- γ-Bench: the game's 0-100 score (all ten seats are the subject) -----------------------------

def gamma(parts: Entries, seats: Seats, metric: str) -> dict[str, float]:
    """Mean over episodes of the env's γ-Bench score (:mod:`arena_envs.gamma.scoring`, paper variant)."""
    return {metric: mean(entry["metrics"]["game"]["score"] for entry in parts.get("main", ()))}


# --- AucArena: TrueSkill of the challenger, ranked by profit ------------------------------------

def trueskill_mu(entries: Sequence[Mapping[str, Any]], agent: str) -> float:
    """The TrueSkill mu of the label in seat ``agent`` after the free-for-all matches of ``entries``
    in the given order, each ranked by the seats' ``score`` (AucArena: profit; ties draw), with the
    leaderboard's TrueSkill (package defaults, :class:`arena_envs.runner.ratings.FreeForAll`)."""
    if not entries:
        return NAN
    ffa = FreeForAll()
    ratings: dict[str, tuple[float, float]] = {}
    for entry in entries:
        seats = list(entry["seats"].items())
        ranks = dense_ranks([float(entry["metrics"]["agents"][a]["score"]) for a, _ in seats])
        new = ffa.rate([ratings.get(label, ffa.initial()) for _, label in seats], ranks)
        ratings.update((label, rating) for (_, label), rating in zip(seats, new))
    return ratings[entries[-1]["seats"][agent]][0]


def auction(parts: Entries, seats: Seats, metric: str) -> dict[str, float]:
    """Headline: the challenger's TrueSkill mu per setting (one TrueSkill environment per budget x
    order, as the AucArena paper), averaged over the settings played. Secondary: mean profit and items won per
    game, failed-bid rate F/(C+F) and belief-error rate (failed / all belief checks), in percent,
    pooled over every game of the challenger."""
    mus = [trueskill_mu(entries, seats[name][0]) for name, entries in parts.items()]
    rows = [_agent(entry, agent) for name, entries in parts.items() for entry in entries for agent in seats[name]]
    failed = sum(r["failed_bids"] for r in rows)
    checks = sum(r["belief_checks"] for r in rows)
    return {metric: mean(mus), "Profit ($)": mean(r["profit"] for r in rows),
            "Items won": mean(r["items_won"] for r in rows),
            "Failed-bid rate (%)": 100 * ratio(failed, failed + sum(r["accepted_decisions"] for r in rows)),
            "Belief-error rate (%)": 100 * ratio(sum(r["belief_errors"] for r in rows), checks)}


# --- BattleAgentBench: Score, FDis, FAcc, MAcc of the primary team -------------------------------

NAVIGATION = ("stage1", "stage2")
BATTLE = ("stage3", "stage4", "stage5", "stage6", "stage7")


def tank(parts: Entries, seats: Seats, metric: str) -> dict[str, float]:
    """As BattleAgentBench reports them: per run, Score = sum over the primary agents (stages 3-7),
    FDis of tank_0 (stages 1-2), FAcc and MAcc = mean over the primary agents; a stage's value is
    the mean over its runs.
    Headline: mean Score over stages 3-7; Avg. Dis: mean FDis over stages 1-2; FAcc, MAcc: mean
    over the seven stages."""
    out: dict[str, float] = {}
    facc, macc = [], []
    for name in NAVIGATION + BATTLE:
        entries = parts.get(name, ())
        rows = [[_agent(entry, agent) for agent in seats[name]] for entry in entries]
        label = f"S{name[-1]}"
        if name in NAVIGATION:
            out[f"{label} FDis"] = mean(row[0]["fdis"] for row in rows)
        else:
            out[f"{label} Score"] = mean(sum(float(r["score"]) for r in row) for row in rows)
        facc.append(mean(mean(r["facc"] for r in row) for row in rows))
        macc.append(mean(mean(r["macc"] for r in row) for row in rows))
    return {metric: mean(out[f"S{name[-1]} Score"] for name in BATTLE),
            "Avg.Dis (stages 1-2)": mean(out[f"S{name[-1]} FDis"] for name in NAVIGATION),
            **out, "FAcc": mean(facc), "MAcc": mean(macc)}


# --- Who is Spy: the platform rating, win rates, average score ----------------------------------

#: The spy's share of seats (1 spy among 6 players): the weight of the spy games.
SPY_SHARE = 1 / 6
#: Games per model in the WiS paper's main experiment (its section 5.1); the rating is stated for that many.
WIS_GAMES = 90


def who_is_spy(parts: Entries, seats: Seats, metric: str) -> dict[str, float]:
    """Role-weighted figures (spy games weigh 1/6, civilian games 5/6, the share of a seat drawn
    at random, which is the paper's mix: about 15 spy games in 90), so they do not depend on how
    many games each part played. The headline is the average score of the paper's Table 2; the WiS
    platform rating ``100 + sum(score) - games`` (WiS paper, section 3.5) is given for a model that played the
    paper's 90 games with that average: ``100 + 90 * (avg - 1)``. Vote accuracy pools the civilian games'
    valid votes."""
    spy = [_agent(entry, agent) for entry in parts.get("spy", ()) for agent in seats["spy"]]
    civ = [_agent(entry, agent) for entry in parts.get("civilian", ()) for agent in seats["civilian"]]

    def weighted(as_spy: float, as_civilian: float) -> float:
        return SPY_SHARE * as_spy + (1 - SPY_SHARE) * as_civilian

    spy_score, civ_score = mean(r["score"] for r in spy), mean(r["score"] for r in civ)
    spy_wr, civ_wr = 100 * mean(r["spy_win"] for r in spy), 100 * mean(r["civilian_win"] for r in civ)
    score = weighted(spy_score, civ_score)
    votes = sum(r["civilian_votes"] or 0 for r in civ)
    return {metric: score, "WiS rating (90 games)": 100 + WIS_GAMES * (score - 1), "Spy win rate (%)": spy_wr,
            "Civilian win rate (%)": civ_wr, "Win rate (%)": weighted(spy_wr, civ_wr),
            "Avg. score as spy": spy_score, "Avg. score as civilian": civ_score,
            "Vote accuracy (%)": 100 * ratio(sum(r["votes_for_spy"] or 0 for r in civ), votes)}


# --- Agent Market Arena: the five PAI metrics of the evaluation window ---------------------------

def trading(parts: Entries, seats: Seats, metric: str) -> dict[str, float]:
    """Means over episodes of the trader's eval-window CR, AR, AV, SR, MDD (the Agent Market Arena
    paper's five metrics; the env's :mod:`arena_envs.trading.metrics`), percentages as the paper
    prints them (SR as a number)."""
    rows = [_agent(entry, agent) for entry in parts.get("main", ()) for agent in seats["main"]]
    return {metric: 100 * mean(r["cr"] for r in rows), "AR (%)": 100 * mean(r["ar"] for r in rows),
            "AV (%)": 100 * mean(r["av"] for r in rows), "SR": mean(r["sr"] for r in rows),
            "MDD (%)": 100 * mean(r["mdd"] for r in rows)}
