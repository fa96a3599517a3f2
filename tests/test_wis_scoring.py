"""Who is Spy scoring, rewards, metrics and leaderboard (spec §3) and their §8 checkable facts."""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from arena_envs.who_is_spy.game import WisConfig, WisGame, draw_setup
from arena_envs.who_is_spy.scoring import (
    agent_metrics,
    final_scores,
    is_degenerate,
    leaderboard,
    pot,
    rating,
    rewards,
)
from tests.test_wis_game import describe_round, play_fact_25, random_play, vote_round

NAMES = [f"player_{i}" for i in range(6)]


def spec_scores(names: list[str], spy: str, spy_round: int | None, survivors: set[str],
                votes: list[tuple[str, str | None]], max_rounds: int = 3) -> dict[str, Fraction]:
    """§3.1.3 written out for one spy: the reference the generalised scoring must reduce to."""
    p = pot(len(names))
    spy_base = Fraction(p) if spy_round is None else Fraction(p * (spy_round - 1), max_rounds)
    civ_pot = p - spy_base
    k = {name: sum(1 for v, t in votes if v == name and t == spy) for name in names if name != spy}
    scores = {}
    for name in names:
        if name == spy:
            scores[name] = spy_base - sum(k.values())  # K: the civilians' votes for the spy
        elif name in survivors:
            scores[name] = civ_pot / len(survivors) + k[name]
        else:
            scores[name] = Fraction(k[name])
    return scores


# ---- per-game scores (§3.1) -----------------------------------------------------------------------

@pytest.mark.parametrize(("spy_round", "spy_base", "civ_each"), [(1, 0, Fraction(12, 5)), (2, 4, Fraction(8, 5)),
                                                                   (3, 8, Fraction(4, 5)), (None, 12, 0)])
def test_base_pot_table(spy_round: int | None, spy_base: int, civ_each: Fraction) -> None:
    eliminated = {} if spy_round is None else {"player_0": spy_round}
    scores = final_scores(NAMES, {"player_0"}, eliminated, [])
    assert scores["player_0"] == spy_base
    assert all(scores[n] == civ_each for n in NAMES[1:])
    assert sum(scores.values()) == 12


def test_vote_bonus_counts_only_civilian_votes_for_the_spy() -> None:
    votes = [("player_1", "player_0"), ("player_1", "player_0"), ("player_2", "player_0"),
             ("player_3", None), ("player_0", "player_1"), ("player_4", "player_5")]
    scores = final_scores(NAMES, {"player_0"}, {"player_0": 2, "player_5": 1}, votes)
    assert scores["player_0"] == 4 - 3
    assert scores["player_1"] == Fraction(8, 4) + 2 and scores["player_2"] == Fraction(8, 4) + 1
    assert scores["player_5"] == 0 and sum(scores.values()) == 12


def test_degenerate_case_forfeits_the_civilian_pot() -> None:
    eliminated = {"player_0": 2, "player_1": 1, "player_2": 2, "player_3": 2, "player_4": 2, "player_5": 1}
    scores = final_scores(NAMES, {"player_0"}, eliminated, [("player_1", "player_0")])
    assert is_degenerate(NAMES, {"player_0"}, eliminated)
    assert scores["player_0"] == 4 - 1 and scores["player_1"] == 1
    assert sum(scores.values()) == 4  # = spy_base
    assert not is_degenerate(NAMES, {"player_0"}, {n: 1 for n in NAMES[1:4]})


def test_other_table_sizes_use_pot_2n() -> None:
    names = [f"player_{i}" for i in range(8)]
    scores = final_scores(names, {"player_3"}, {"player_3": 2}, [], max_rounds=3)
    assert scores["player_3"] == Fraction(16, 3) and sum(scores.values()) == 16
    scores = final_scores(names, {"player_3"}, {"player_3": 3}, [], max_rounds=4)
    assert scores["player_3"] == 8


def test_bad_scoring_input() -> None:
    with pytest.raises(ValueError, match="spies"):
        final_scores(NAMES, set(), {}, [])
    with pytest.raises(ValueError, match="spies"):
        final_scores(NAMES, {"nobody"}, {}, [])


def test_one_spy_generalisation_is_exactly_the_spec() -> None:
    rng = np.random.default_rng(5)
    for _ in range(500):
        n = int(rng.integers(4, 13))
        names = [f"p{i}" for i in range(n)]
        spy = names[int(rng.integers(n))]
        max_rounds = int(rng.integers(1, 5))
        eliminated = {name: int(rng.integers(1, max_rounds + 1)) for name in names if rng.random() < 0.4}
        votes = [(names[int(rng.integers(n))], None if rng.random() < 0.2 else names[int(rng.integers(n))])
                 for _ in range(int(rng.integers(0, 20)))]
        survivors = {x for x in names if x != spy and x not in eliminated}
        got = final_scores(names, {spy}, eliminated, votes, max_rounds)
        assert got == spec_scores(names, spy, eliminated.get(spy), survivors, votes, max_rounds)


# ---- rewards (§3.2) -----------------------------------------------------------------------------------

def test_reward_modes() -> None:
    scores = final_scores(NAMES, {"player_2"}, {"player_2": 1}, [("player_0", "player_2")])
    assert rewards(scores, "score", {"player_2"}, "civilians") == {n: float(s) for n, s in scores.items()}
    centered = rewards(scores, "centered", {"player_2"}, "civilians")
    assert abs(sum(centered.values())) < 1e-9 and centered["player_0"] == float(scores["player_0"]) - 2
    assert rewards(scores, "win_loss", {"player_2"}, "civilians") == {
        n: (-1.0 if n == "player_2" else 1.0) for n in NAMES}
    assert rewards(scores, "win_loss", {"player_2"}, "spy") == {n: (1.0 if n == "player_2" else -1.0) for n in NAMES}
    with pytest.raises(ValueError, match="reward_mode"):
        rewards(scores, "elo", {"player_2"}, "spy")


# ---- constant sum over random games (§8.5 fact 30; several spies) -------------------------------------------

@pytest.mark.parametrize(("n_players", "n_spies", "games"), [(6, 1, 500), (8, 2, 200), (11, 4, 100), (4, 1, 100)])
def test_constant_sum_except_degenerate(n_players: int, n_spies: int, games: int) -> None:
    cfg = WisConfig(n_players=n_players, n_spies=n_spies)
    pairs = [("tea", "coffee"), ("sand", "soil")]
    degenerate = 0
    for seed in range(games):
        rng = np.random.default_rng(seed)
        game = WisGame(cfg, draw_setup(cfg, pairs, rng), seed=seed)
        random_play(game, rng)
        rec = game.record()
        total = sum(game.scores.values())
        spies = {game.names[s] for s in game.spy_seats}
        eliminated = {game.names[s]: game.elimination_round(s) for s in range(n_players) if game.elimination_round(s)}
        no_civilian_left = all(game.is_spy(s) for s in game.alive_seats)
        spy_bases = sum(Fraction(2 * n_players, n_spies) * Fraction(eliminated[s] - 1, cfg.max_rounds)
                        if s in eliminated else Fraction(2 * n_players, n_spies) for s in spies)
        # the spec's identification: civilians won and no civilian survives -> the sum is spy_base
        degenerate += rec["outcome"]["winner"] == "civilians" and no_civilian_left
        assert total == (spy_bases if no_civilian_left else pot(n_players)), (seed, rec)
        assert is_degenerate(game.names, spies, eliminated) == (total != pot(n_players))
        assert abs(sum(rec["scores"].values()) - float(total)) < 1e-9
    if (n_players, n_spies) == (6, 1):
        assert degenerate > 0  # the random play does reach the exception


# ---- metrics (§3.4, §8.5 fact 25) ----------------------------------------------------------------------

def test_metrics_of_fact_25() -> None:
    m = agent_metrics([play_fact_25().record()])
    assert m["player_2"].foul_rate == 1 and m["player_2"].fouls == {"empty": 0, "keyword": 0, "repeat": 1}
    assert m["player_2"].foul_rate_of("repeat") == 1
    assert all(m[f"player_{i}"].foul_rate == 0 for i in (0, 1, 3, 4, 5))
    assert (m["player_0"].votes_correct, m["player_0"].votes_valid) == (2, 2)
    assert (m["player_1"].votes_correct, m["player_1"].votes_valid) == (1, 2)
    assert (m["player_4"].votes_correct, m["player_4"].votes_valid) == (1, 2)
    assert (m["player_3"].votes_correct, m["player_3"].votes_valid) == (2, 2)
    assert m["player_1"].vote_accuracy == 0.5 and m["player_0"].vote_accuracy == 1
    assert math.isnan(m["player_5"].vote_accuracy)  # spy votes do not count
    assert math.isnan(m["player_2"].vote_accuracy)  # never voted
    assert {a: x.avg_survival_rounds for a, x in m.items()} == {
        "player_0": 2, "player_1": 2, "player_2": 0, "player_3": 2, "player_4": 2, "player_5": 1}
    assert m["player_5"].avg_spy_survival_rounds == 1 and math.isnan(m["player_5"].avg_civilian_survival_rounds)
    assert m["player_5"].spy_win_rate == 0 and m["player_0"].civilian_win_rate == 1
    assert m["player_2"].civilian_win_rate == 1  # civilians won, whether or not it survived
    assert m["player_5"].avg_spy_score == -2 and m["player_0"].avg_civilian_score == 4


def test_secondary_vote_accuracy_and_abstentions() -> None:
    game = WisGame(WisConfig(), draw_setup(WisConfig(), [("tea", "coffee")], np.random.default_rng(0),
                                           {"spy_seat": 2, "first_speaker": 0}))
    describe_round(game)
    vote_round(game, {0: 2, 1: "player_9", 3: 4})  # p1 invalid, p4 and p5 abstain
    describe_round(game)
    vote_round(game, {0: 2, 1: 2, 2: 0})
    m = agent_metrics([game.record()])
    assert (m["player_0"].vote_accuracy, m["player_0"].vote_accuracy_all, m["player_0"].abstention_rate) == (1, 1, 0)
    assert (m["player_1"].vote_accuracy, m["player_1"].vote_accuracy_all, m["player_1"].abstention_rate) == (
        1, 0.5, 0.5)
    assert (m["player_3"].vote_accuracy, m["player_3"].vote_accuracy_all) == (0, 0)
    assert m["player_2"].vote_phases == 0
    row = m["player_1"].as_dict()
    assert row["vote_accuracy_all"] == 0.5 and row["foul_rate_keyword"] == 0 and row["games"] == 1


def test_metrics_need_finished_games() -> None:
    game = WisGame(WisConfig(), draw_setup(WisConfig(), [("tea", "coffee")], np.random.default_rng(0)))
    with pytest.raises(ValueError, match="finished"):
        agent_metrics([game.record()])


# ---- rating and leaderboard (§3.3, §8.7 facts 34-35) -------------------------------------------------------

def test_rating() -> None:
    assert abs(rating([3.4, -2, 10]) - 108.4) < 1e-9
    assert rating([Fraction(17, 5), -2, 10]) == pytest.approx(108.4)
    assert rating([]) == 100


def fake_record(scores: dict[str, float], spy: str, winner: str, timestamp: Any = None) -> dict[str, Any]:
    names = sorted(scores)
    rec: dict[str, Any] = {"player_names": names, "spy_seat": names.index(spy), "rounds": [],
                           "outcome": {"winner": winner}, "scores": scores,
                           "survival_rounds": {n: 1 for n in names}}
    if timestamp is not None:
        rec["timestamp"] = timestamp
    return rec


def test_leaderboard_sort_order() -> None:
    records = [
        fake_record({"a": 4, "b": 4, "c": 4, "d": 0}, "d", "civilians"),
        fake_record({"a": 1, "b": 1, "c": 0, "d": 10}, "d", "spy"),
        fake_record({"a": 2, "e": 2, "f": 0, "g": 8}, "g", "spy"),
    ]
    board = leaderboard(records)
    ratings = [m.rating for m in board]
    assert ratings == sorted(ratings, reverse=True)
    # d: 100 + 10 - 2 = 108, g: 100 + 8 - 1 = 107, a: 100 + 7 - 3 = 104
    assert [m.agent for m in board][:2] == ["d", "g"]
    tie = leaderboard([fake_record({"x": 3, "y": 1, "z": 0, "w": 8}, "w", "spy"),
                       fake_record({"y": 3, "v": 1, "u": 0, "t": 8}, "t", "spy")])
    by_name = {m.agent: m for m in tie}
    assert by_name["y"].rating == by_name["x"].rating == 102
    assert by_name["y"].avg_score < by_name["x"].avg_score
    order = [m.agent for m in tie]
    assert order.index("x") < order.index("y")  # same rating: higher average score first
    assert order.index("t") < order.index("w")  # same rating and average: name ascending
    assert leaderboard([]) == []


def test_leaderboard_window_days() -> None:
    now = datetime(2026, 11, 24, 12, 0, tzinfo=timezone.utc)
    old = (now - timedelta(days=40)).isoformat()
    new = (now - timedelta(days=3)).timestamp()
    records = [fake_record({"a": 10, "b": 0, "c": 0, "d": 2}, "a", "spy", old),
               fake_record({"a": 0, "b": 6, "c": 6, "d": 0}, "a", "civilians", new)]
    assert {m.agent: m.rating for m in leaderboard(records)}["a"] == 108
    windowed = {m.agent: m for m in leaderboard(records, window_days=30, now=now)}
    assert windowed["a"].rating == 99 and windowed["a"].games == 1
    assert {m.agent: m.games for m in leaderboard(records, window_days=30, now=now.replace(tzinfo=None))}["a"] == 1
    with pytest.raises(ValueError, match="timestamp"):
        leaderboard([fake_record({"a": 12, "b": 0, "c": 0, "d": 0}, "a", "spy")], window_days=30)


# ---- Table 2 from 150 synthetic games (§8.7 fact 36) -----------------------------------------------------------

# model: (spy wins, spy games, civilian wins, civilian games), the spec's §7.1 derived counts
TABLE2_COUNTS = {
    "Doubao": (1, 13, 51, 77), "Gemini": (4, 13, 53, 77), "ERNIE": (3, 11, 50, 79), "Claude": (4, 18, 53, 72),
    "Llama": (4, 24, 45, 66), "GPT4": (3, 14, 54, 76), "Qwen": (7, 15, 56, 75), "Kimi": (6, 15, 55, 75),
    "O1Mini": (3, 10, 61, 80), "GPT4o": (7, 17, 62, 73),
}
# model: (spy WR %, civilian WR %, overall WR %) of Table 2, Qwen's 46.60 read as 46.67
TABLE2_RATES = {
    "Doubao": (7.69, 66.23, 57.78), "Gemini": (30.77, 68.83, 63.33), "ERNIE": (27.27, 63.29, 58.89),
    "Claude": (22.22, 73.61, 63.33), "Llama": (16.67, 68.18, 54.44), "GPT4": (21.43, 71.05, 63.33),
    "Qwen": (46.67, 74.67, 70.00), "Kimi": (40.00, 73.33, 67.78), "O1Mini": (30.00, 76.25, 71.11),
    "GPT4o": (41.18, 84.93, 76.67),
}


def table2_schedule() -> list[tuple[str, list[str], bool]]:
    """150 games ``(spy, civilians, spy_won)`` whose per-model counts are exactly TABLE2_COUNTS:
    each game's civilians are the models with the least slack (games of that kind still to come
    where they could sit, minus the seats they still need), a greedy fill that cannot strand one."""
    games: list[tuple[str, bool]] = []
    for model, (sw, sg, _, _) in TABLE2_COUNTS.items():
        games += [(model, True)] * sw + [(model, False)] * (sg - sw)
    demand = {True: {m: cg - cw for m, (_, _, cw, cg) in TABLE2_COUNTS.items()},
              False: {m: cw for m, (_, _, cw, _) in TABLE2_COUNTS.items()}}
    open_games = {kind: {m: sum(1 for s, w in games if w == kind and s != m) for m in TABLE2_COUNTS}
                  for kind in (True, False)}
    schedule = []
    for spy, spy_won in games:
        left, room = demand[spy_won], open_games[spy_won]
        civilians = sorted((m for m in left if m != spy and left[m] > 0),
                           key=lambda m: (room[m] - left[m], m))[:5]
        assert len(civilians) == 5
        for m in left:
            room[m] -= m != spy
        for m in civilians:
            left[m] -= 1
        schedule.append((spy, civilians, spy_won))
    assert all(v == 0 for d in demand.values() for v in d.values())
    return schedule


def scripted_record(spy: str, civilians: list[str], spy_won: bool, seed: int) -> dict[str, Any]:
    """A real game: the civilians vote the spy (seat 0) out in round 1, or everyone abstains for
    three rounds and the spy wins."""
    cfg = WisConfig()
    setup = draw_setup(cfg, [("tea", "coffee")], np.random.default_rng(seed), {"spy_seat": 0, "first_speaker": 0})
    game = WisGame(cfg, setup, seed=seed)
    while not game.over:
        describe_round(game)
        vote_round(game, {} if spy_won else {s: 0 for s in range(1, 6)})
    rec = game.record()
    rec["agents"] = dict(zip(game.names, [spy, *civilians]))
    return rec


def test_table2_win_rates_from_150_synthetic_games() -> None:
    records = [scripted_record(spy, civs, won, i) for i, (spy, civs, won) in enumerate(table2_schedule())]
    assert len(records) == 150
    assert sum(r["outcome"]["winner"] == "spy" for r in records) == 42
    metrics = agent_metrics(records)
    for model, (spy_wr, civ_wr, all_wr) in TABLE2_RATES.items():
        m = metrics[model]
        assert m.games == 90
        assert (round(100 * m.spy_win_rate, 2), round(100 * m.civilian_win_rate, 2),
                round(100 * m.win_rate, 2)) == (spy_wr, civ_wr, all_wr), model
    assert round(100 * metrics["Qwen"].spy_win_rate, 2) == 46.67
    assert sum(m.civilian_wins for m in metrics.values()) == 5 * 108
    mean_of_averages = sum(Fraction(m.avg_score).limit_denominator(10**6) for m in metrics.values()) / 10
    assert mean_of_averages == 2  # every agent played 90 games of a 12-point pot
