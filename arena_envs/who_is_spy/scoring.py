"""Who is Spy scoring, rewards, per-agent metrics and the leaderboard (WiS paper, sections 3.4-3.5),
from plain values and from the JSON game records of :meth:`arena_envs.who_is_spy.game.WisGame.record`.

**Per-game score, generalised to ``k`` spies.** The pot is ``P = 2n`` (12 at six seats) and
each spy owns the share ``P/k`` of it. A spy alive when the game ends takes its whole share; a spy
eliminated (by vote or by foul) in round ``r`` takes ``(P/k)·(r − 1)/max_rounds``. The civilian pot
``P − Σ spy bases`` is split equally among the civilians alive at the end. Every valid civilian vote
for a spy moves 1 point from that spy to the voter; spies' votes never score. With ``k = 1`` this is
exactly the paper's rule (0/4/8/12 at ``n = 6``, three rounds). The sum is ``P`` except when the
civilian pot is positive and no civilian survives to take it (a degenerate case): then it is forfeited.
A game ends with a spy alive exactly when the spies win, so with several spies an early-caught spy
keeps only its round share even when its team wins, and the civilians still alive split what it
left; the spy team's points therefore still grow with every round each spy survives.
"""
from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from fractions import Fraction
from typing import Any

from arena_envs.core.arguments import check_choice

REWARD_MODES = ("score", "centered", "win_loss")

#: Each player's expected score: ``P / n`` with the pot ``P = 2n`` (the ``centered`` offset).
MEAN_SCORE = 2

#: Starting rating and entry fee per game of the leaderboard.
RATING_START = 100
ENTRY_FEE = 1


def pot(n_players: int) -> int:
    """The per-game pot ``P = 2n`` (12 for six players)."""
    return 2 * n_players


def final_scores(
    names: Sequence[str],
    spies: Collection[str],
    eliminated_round: Mapping[str, int],
    votes: Iterable[tuple[str, str | None]],
    max_rounds: int = 3,
) -> dict[str, Fraction]:
    """Exact final scores of one finished game (the module docstring says how, for several spies too).

    ``eliminated_round`` maps every player eliminated during the game to its round (players not in
    it were alive at the end); ``votes`` are all ``(voter, target)`` ballots of the game with
    ``target=None`` for abstentions and invalid ballots.
    """
    if not spies or any(s not in names for s in spies):
        raise ValueError(f"spies must be a non-empty subset of the players, got {sorted(spies)}")
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be >= 1, got {max_rounds}")
    share = Fraction(pot(len(names)), len(spies))
    scores = {name: Fraction(0) for name in names}
    for spy in spies:
        r = eliminated_round.get(spy)
        scores[spy] = share if r is None else share * Fraction(r - 1, max_rounds)
    civ_pot = pot(len(names)) - sum((scores[s] for s in spies), Fraction(0))
    survivors = [name for name in names if name not in spies and name not in eliminated_round]
    for name in survivors:
        scores[name] = civ_pot / len(survivors)
    for voter, target in votes:
        if target is not None and target in spies and voter not in spies:
            scores[voter] += 1
            scores[target] -= 1
    return scores


def is_degenerate(names: Sequence[str], spies: Collection[str], eliminated_round: Mapping[str, int]) -> bool:
    """Whether the civilian pot is forfeited: it is positive (some spy was caught) and no civilian
    is alive at the end. Only then does the score sum differ from the pot."""
    caught = any(s in eliminated_round for s in spies)
    return caught and all(name in spies or name in eliminated_round for name in names)


def rewards(
    scores: Mapping[str, Fraction], mode: str, spies: Collection[str], winner: str
) -> dict[str, float]:
    """The final-step env rewards: the score, the score minus :data:`MEAN_SCORE`, or ±1 by
    team (``winner`` is ``"spy"`` or ``"civilians"``; civilians are one team alive or not)."""
    check_choice("reward_mode", mode, REWARD_MODES)
    if mode == "score":
        return {name: float(s) for name, s in scores.items()}
    if mode == "centered":
        return {name: float(s - MEAN_SCORE) for name, s in scores.items()}
    return {name: 1.0 if (name in spies) == (winner == "spy") else -1.0 for name in scores}


def rating(scores: Iterable[float | Fraction]) -> float:
    """The leaderboard rating ``100 + Σ s − N`` over ``N`` games; 100 for no games."""
    values = list(scores)
    return float(RATING_START + sum(values, Fraction(0)) - ENTRY_FEE * len(values))


# ---- per-agent metrics from game records -----------------------------------------------------------

def _ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


@dataclass
class AgentMetrics:
    """One agent's metrics over a set of games; undefined ratios are NaN."""

    agent: str
    games: int = 0
    spy_games: int = 0
    civilian_games: int = 0
    spy_wins: int = 0
    civilian_wins: int = 0
    scores: list[Fraction] = field(default_factory=list)
    spy_scores: list[Fraction] = field(default_factory=list)
    civilian_scores: list[Fraction] = field(default_factory=list)
    votes_valid: int = 0  # V: valid non-abstaining votes cast as a civilian
    votes_correct: int = 0  # C: those for a spy
    vote_phases: int = 0  # O: voting phases taken as a civilian
    survival: list[int] = field(default_factory=list)
    spy_survival: list[int] = field(default_factory=list)
    civilian_survival: list[int] = field(default_factory=list)
    turns: int = 0  # T: description turns
    fouls: dict[str, int] = field(default_factory=lambda: {"empty": 0, "keyword": 0, "repeat": 0})

    @property
    def rating(self) -> float:
        return rating(self.scores)

    @property
    def win_rate(self) -> float:
        return _ratio(self.spy_wins + self.civilian_wins, self.games)

    @property
    def spy_win_rate(self) -> float:
        return _ratio(self.spy_wins, self.spy_games)

    @property
    def civilian_win_rate(self) -> float:
        return _ratio(self.civilian_wins, self.civilian_games)

    @property
    def avg_score(self) -> float:
        return _ratio(float(sum(self.scores, Fraction(0))), len(self.scores))

    @property
    def avg_spy_score(self) -> float:
        return _ratio(float(sum(self.spy_scores, Fraction(0))), len(self.spy_scores))

    @property
    def avg_civilian_score(self) -> float:
        return _ratio(float(sum(self.civilian_scores, Fraction(0))), len(self.civilian_scores))

    @property
    def vote_accuracy(self) -> float:
        """Primary: ``C / V`` over valid votes cast as a civilian."""
        return _ratio(self.votes_correct, self.votes_valid)

    @property
    def vote_accuracy_all(self) -> float:
        """Secondary: ``C / O``, abstentions and invalid ballots counting as misses."""
        return _ratio(self.votes_correct, self.vote_phases)

    @property
    def abstention_rate(self) -> float:
        return _ratio(self.vote_phases - self.votes_valid, self.vote_phases)

    @property
    def avg_survival_rounds(self) -> float:
        return _ratio(sum(self.survival), len(self.survival))

    @property
    def avg_spy_survival_rounds(self) -> float:
        return _ratio(sum(self.spy_survival), len(self.spy_survival))

    @property
    def avg_civilian_survival_rounds(self) -> float:
        return _ratio(sum(self.civilian_survival), len(self.civilian_survival))

    @property
    def foul_rate(self) -> float:
        return _ratio(sum(self.fouls.values()), self.turns)

    def foul_rate_of(self, code: str) -> float:
        return _ratio(self.fouls[code], self.turns)

    def as_dict(self) -> dict[str, Any]:
        """The table row: counts and every metric as floats (NaN where undefined)."""
        return {
            "agent": self.agent, "rating": self.rating, "games": self.games,
            "spy_games": self.spy_games, "civilian_games": self.civilian_games,
            "win_rate": self.win_rate, "spy_win_rate": self.spy_win_rate,
            "civilian_win_rate": self.civilian_win_rate, "avg_score": self.avg_score,
            "avg_spy_score": self.avg_spy_score, "avg_civilian_score": self.avg_civilian_score,
            "vote_accuracy": self.vote_accuracy, "vote_accuracy_all": self.vote_accuracy_all,
            "abstention_rate": self.abstention_rate,
            "avg_survival_rounds": self.avg_survival_rounds,
            "avg_spy_survival_rounds": self.avg_spy_survival_rounds,
            "avg_civilian_survival_rounds": self.avg_civilian_survival_rounds,
            "foul_rate": self.foul_rate,
            **{f"foul_rate_{code}": self.foul_rate_of(code) for code in self.fouls},
        }


def spy_names(record: Mapping[str, Any]) -> set[str]:
    """The spies' player names of a game record."""
    names = record["player_names"]
    seats = record.get("spy_seats", [record["spy_seat"]])
    return {names[s] for s in seats}


def agent_metrics(records: Iterable[Mapping[str, Any]]) -> dict[str, AgentMetrics]:
    """The metrics per agent over finished game records. A record's optional ``"agents"`` maps a
    player name to the agent key that sat there (default: the player name itself)."""
    table: dict[str, AgentMetrics] = {}
    for rec in records:
        outcome = rec.get("outcome")
        if not outcome:
            raise ValueError(f"metrics need finished games, got a record without outcome (seed {rec.get('seed')})")
        spies = spy_names(rec)
        seat_agent = rec.get("agents") or {}
        agent_of = {name: seat_agent.get(name, name) for name in rec["player_names"]}
        for name in rec["player_names"]:
            m = table.setdefault(agent_of[name], AgentMetrics(agent_of[name]))
            is_spy = name in spies
            score = Fraction(rec["scores"][name]).limit_denominator(10**6)
            won = (outcome["winner"] == "spy") == is_spy
            survived = rec["survival_rounds"][name]
            m.games += 1
            m.scores.append(score)
            m.survival.append(survived)
            if is_spy:
                m.spy_games += 1
                m.spy_wins += won
                m.spy_scores.append(score)
                m.spy_survival.append(survived)
            else:
                m.civilian_games += 1
                m.civilian_wins += won
                m.civilian_scores.append(score)
                m.civilian_survival.append(survived)
        for rnd in rec["rounds"]:
            for d in rnd["descriptions"]:
                m = table[agent_of[d["speaker"]]]
                m.turns += 1
                if d["violation"]:
                    m.fouls[d["violation"]] += 1
            for v in rnd["votes"]:
                if v["voter"] in spies:
                    continue
                m = table[agent_of[v["voter"]]]
                m.vote_phases += 1
                if v["target"] is not None:
                    m.votes_valid += 1
                    m.votes_correct += v["target"] in spies
    return table


# ---- leaderboard ----------------------------------------------------------------------------------

def _timestamp(record: Mapping[str, Any]) -> datetime:
    ts = record.get("timestamp")
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        return datetime.fromtimestamp(ts, tz=timezone.utc)
    if isinstance(ts, str):
        try:
            t = datetime.fromisoformat(ts)
        except ValueError:
            t = None
        if t is not None:
            return t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    raise ValueError(f"window_days needs a record timestamp (ISO 8601 or UNIX seconds), got {ts!r}")


def leaderboard(
    records: Iterable[Mapping[str, Any]],
    window_days: float | None = None,
    now: datetime | None = None,
) -> list[AgentMetrics]:
    """Agents sorted by rating (desc), average score (desc), name (asc). With
    ``window_days``, only records whose ``"timestamp"`` lies within that many days before ``now``
    (default: the current UTC time) count, as on the platform's 30-day window."""
    if window_days is not None:
        end = now or datetime.now(timezone.utc)
        if end.tzinfo is None:
            end = end.replace(tzinfo=timezone.utc)
        start = end - timedelta(days=window_days)
        records = [r for r in records if start <= _timestamp(r) <= end]
    return sorted(agent_metrics(records).values(), key=leaderboard_key)


def leaderboard_key(m: AgentMetrics) -> tuple[float, float, str]:
    """The leaderboard's sort key: rating desc, average score desc, name asc."""
    avg = m.avg_score
    return (-m.rating, -(avg if not math.isnan(avg) else -math.inf), m.agent)
