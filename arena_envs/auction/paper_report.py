"""The AucArena paper's metrics for its standard competition (its section 4.2), from played games.

The setting: three bidders, two fixed baselines (the paper: GPT-4-Turbo and GPT-3.5-Turbo) and one
challenger, six settings (budget 20 000 or 40 000 × random, ascending or descending order), ten
repetitions each. Per setting, one TrueSkill environment (the ``trueskill`` package's defaults) rates
every game as a free-for-all ranked by profit (equal profits draw), games fed in the order given
(challenger-major, repetition-minor); a challenger of the same type as a baseline of its game is
rated as ``"<type> (challenger)"``. Over all games, per type: mean profit and items won, the
failed-bid rate F / (C + F) pooled over games (F rejected bids, C accepted decisions), and the
belief-error rate pooled the same way over belief checks (None when a type had no check, e.g. rule
bidders).

The games come from any source (a run's ``episodes.jsonl`` entries: their ``seats`` and
``metrics["agents"]``); this module reads no files and plays nothing. A seat label ``spec#k`` (the
runner's mark for a policy listed twice in one run) counts as ``spec``: the type is the policy.
"""
from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

PAPER_BUDGETS = (20000, 40000)
PAPER_ORDERS = ("random", "ascending", "descending")
#: (budget, item order) of each of the paper's six settings.
PAPER_SETTINGS: tuple[tuple[int, str], ...] = tuple((b, o) for b in PAPER_BUDGETS for o in PAPER_ORDERS)
PAPER_REPETITIONS = 10


@dataclass(frozen=True)
class Game:
    """One auction: its setting, who played each seat (a type label) and the env's per-agent metrics."""

    setting: Hashable
    seats: Mapping[str, str]
    agents: Mapping[str, Mapping[str, Any]]


_REPEAT_MARK = re.compile(r"#\d+$")


def identities(seats: Mapping[str, str], challenger: str) -> dict[str, str]:
    """The rated identity of each seat: its type, ``"<type> (challenger)"`` for a challenger seat
    whose type also plays another seat of the game."""
    if challenger not in seats:
        raise ValueError(f"challenger seat {challenger!r} is not a seat of the game, seats: {sorted(seats)}")
    ids = {seat: _REPEAT_MARK.sub("", label) for seat, label in seats.items()}
    seats = ids
    if any(seat != challenger and label == seats[challenger] for seat, label in seats.items()):
        ids = {**ids, challenger: f"{seats[challenger]} (challenger)"}
    return ids


def profit_ranks(profits: Sequence[float]) -> list[int]:
    """Dense ranks by descending profit (0 = best; equal profits share a rank: a draw)."""
    order = sorted(set(profits), reverse=True)
    return [order.index(p) for p in profits]


Ratings = dict[Hashable, dict[str, tuple[float, float]]]  #: setting -> identity -> (mu, sigma)


def trueskill_by_setting(games: Iterable[Game], challenger: str = "bidder_3") -> Ratings:
    """Per setting, each identity's TrueSkill (mu, sigma) after its games, in the order given."""
    import trueskill

    envs: dict[Hashable, trueskill.TrueSkill] = {}
    ratings: dict[Hashable, dict[str, trueskill.Rating]] = {}
    for game in games:
        env = envs.setdefault(game.setting, trueskill.TrueSkill())
        table = ratings.setdefault(game.setting, {})
        ids = identities(game.seats, challenger)
        seats = list(game.seats)
        if len(set(ids[s] for s in seats)) != len(seats):
            raise ValueError(f"two seats of one game share the identity {ids}; give the baselines distinct labels")
        groups = [(table.get(ids[s], env.create_rating()),) for s in seats]
        ranks = profit_ranks([game.agents[s]["profit"] for s in seats])
        for seat, (rating,) in zip(seats, env.rate(groups, ranks=ranks)):
            table[ids[seat]] = rating
    return {setting: {name: (r.mu, r.sigma) for name, r in table.items()} for setting, table in ratings.items()}


def type_summary(games: Iterable[Game], challenger: str = "bidder_3") -> dict[str, dict[str, Any]]:
    """Per identity: games, mean profit and items won, pooled failed-bid and belief-error rates."""
    sums: dict[str, dict[str, float]] = {}
    for game in games:
        ids = identities(game.seats, challenger)
        for seat, metrics in game.agents.items():
            s = sums.setdefault(ids[seat], dict.fromkeys(
                ("games", "profit", "items_won", "failed", "accepted", "belief_errors", "belief_checks"), 0.0))
            s["games"] += 1
            s["profit"] += metrics["profit"]
            s["items_won"] += metrics["items_won"]
            s["failed"] += metrics["failed_bids"]
            s["accepted"] += metrics["accepted_decisions"]
            s["belief_errors"] += metrics["belief_errors"]
            s["belief_checks"] += metrics["belief_checks"]
    out = {}
    for name, s in sums.items():
        decisions = s["failed"] + s["accepted"]
        out[name] = {
            "games": int(s["games"]), "profit": s["profit"] / s["games"], "items_won": s["items_won"] / s["games"],
            "failed_bid_rate": s["failed"] / decisions if decisions else 0.0,
            "belief_error_rate": s["belief_errors"] / s["belief_checks"] if s["belief_checks"] else None,
        }
    return out


def paper_metrics(games: Iterable[Game], challenger: str = "bidder_3") -> dict[str, Any]:
    """``{"trueskill": trueskill_by_setting(...), "types": type_summary(...)}`` of the same games."""
    games = list(games)
    return {"trueskill": trueskill_by_setting(games, challenger), "types": type_summary(games, challenger)}


def _setting_name(setting: Hashable) -> str:
    if isinstance(setting, tuple) and len(setting) == 2 and isinstance(setting[0], int):
        return f"{setting[0] // 1000}k {setting[1]}"
    return str(setting)


def markdown_table(report: Mapping[str, Any], settings: Sequence[Hashable] = PAPER_SETTINGS) -> str:
    """The report as a Markdown table: per identity, TrueSkill mu ± sigma per setting, then the means."""
    names = sorted(report["types"])
    header = ["bidder"] + [_setting_name(setting) for setting in settings]
    header += ["profit", "items", "failed bids", "belief errors"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in names:
        cells = [name]
        for setting in settings:
            rating = report["trueskill"].get(setting, {}).get(name)
            cells.append("–" if rating is None else f"{rating[0]:.2f} ± {rating[1]:.2f}")
        t = report["types"][name]
        belief = t["belief_error_rate"]
        cells += [f"{t['profit']:.0f}", f"{t['items_won']:.2f}", f"{100 * t['failed_bid_rate']:.2f} %",
                  "–" if belief is None else f"{100 * belief:.2f} %"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
