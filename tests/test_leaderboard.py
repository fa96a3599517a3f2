"""The leaderboard: dense ranks, TrueSkill against the trueskill package, means, labels, output."""
from __future__ import annotations

import json
import math
import random
from dataclasses import asdict

import pytest
import trueskill

from arena_envs.runner import RunConfig, run
from arena_envs.runner.leaderboard import (
    VALIDITY_NOTE,
    Standings,
    compute,
    dense_ranks,
    format_table,
    game_means,
    leaderboard,
    leaderboard_text,
    rating_of,
)
from arena_envs.runner.ratings import FreeForAll


def episode(k: int, seats: dict[str, str], scores: dict[str, float], **extra: dict[str, float]) -> dict:
    agents = {a: {"score": s, **{name: values[a] for name, values in extra.items()}} for a, s in scores.items()}
    return {"episode": k, "seats": seats, "metrics": {"agents": agents, "game": {}}}


SEATS = {"bidder_1": "A", "bidder_2": "B", "bidder_3": "C"}


def by_policy(rows):
    return {r.policy: r for r in rows}


def test_dense_ranks():
    assert dense_ranks([500, 800, 0]) == [1, 0, 2]
    assert dense_ranks([5, 5, 1]) == [0, 0, 1]
    assert dense_ranks([1, 7, 1, 0, 9]) == [2, 1, 2, 3, 0]
    assert dense_ranks([3, 3, 3]) == [0, 0, 0]


def test_one_game_matches_the_spec_and_the_package():
    rows = by_policy(compute([episode(0, SEATS, {"bidder_1": 3, "bidder_2": 2, "bidder_3": 1})], "ABC"))
    assert [rows[p].mu for p in "ABC"] == pytest.approx([31.675, 25.000, 18.325], abs=0.01)
    assert [rows[p].sigma for p in "ABC"] == pytest.approx([6.656, 6.208, 6.656], abs=0.01)
    # Fixture A profits (500, 800, 0) -> ranks (1, 0, 2)
    rows = by_policy(compute([episode(0, SEATS, {"bidder_1": 500, "bidder_2": 800, "bidder_3": 0})], "ABC"))
    assert [rows[p].mu for p in "ABC"] == pytest.approx([25.000, 31.675, 18.325], abs=0.01)


def test_fixture_b_five_players():
    seats = {f"b{i}": name for i, name in enumerate("PQRST")}
    scores = dict(zip(seats, [1, 7, 1, 0, 9]))  # ranks (2, 1, 2, 3, 0)
    rows = by_policy(compute([episode(0, seats, scores)], "PQRST"))
    assert [rows[p].mu for p in "PQRST"] == pytest.approx([23.24, 27.77, 23.26, 17.31, 33.43], abs=0.01)


def test_sequence_with_ties_is_rated_in_episode_order():
    rng = random.Random(0)
    games = []
    for k in range(30):
        order = list(SEATS)
        rng.shuffle(order)  # rotating seats: labels move between agents
        seats = dict(zip(order, "ABC"))
        scores = {a: float(rng.choice([0, 100, 100, 250])) for a in SEATS}
        games.append(episode(k, seats, scores))
    env = trueskill.TrueSkill()
    expected = {p: env.create_rating() for p in "ABC"}
    for game in games:
        agents = list(game["seats"])
        scores = [game["metrics"]["agents"][a]["score"] for a in agents]
        ranks = [sorted(set(scores), reverse=True).index(s) for s in scores]
        rated = env.rate([(expected[game["seats"][a]],) for a in agents], ranks=ranks)
        for a, (r,) in zip(agents, rated):
            expected[game["seats"][a]] = r
    shuffled = games[:]
    rng.shuffle(shuffled)  # completion order of a concurrent run
    rows = compute(shuffled, "ABC")
    for row in rows:
        assert row.mu == pytest.approx(expected[row.policy].mu, abs=1e-5)  # exact cdf vs the package's 1e-7 erfc
        assert row.sigma == pytest.approx(expected[row.policy].sigma, abs=1e-5)
    assert [r.mu for r in rows] == sorted((r.mu for r in rows), reverse=True)
    assert any(len(set(g["metrics"]["agents"][a]["score"] for a in SEATS)) < 3 for g in games)  # ties occurred


@pytest.mark.parametrize("players", [2, 3, 10, 20])
def test_free_for_all_equals_the_package_over_chained_matches(players):
    """The lean chain schedule gives the package's ratings, draws (ties) and long chains included."""
    rng = random.Random(players)
    env, ffa = trueskill.TrueSkill(), FreeForAll()
    theirs = [env.create_rating() for _ in range(players)]
    ours = [ffa.initial()] * players
    for m in range(60):
        ranks = [rng.randrange(max(2, players // (1 + m % 3))) for _ in range(players)]
        theirs = [r for (r,) in env.rate([(r,) for r in theirs], ranks=ranks)]
        ours = ffa.rate(ours, ranks)
        for (mu, sigma), r in zip(ours, theirs):
            assert mu == pytest.approx(r.mu, abs=1e-5) and sigma == pytest.approx(r.sigma, abs=1e-5)
    assert len({round(mu, 3) for mu, _ in ours}) > 1  # the matches moved the ratings apart
    with pytest.raises(ValueError, match="rate needs"):
        ffa.rate(ours[:1], [0])


def test_standings_rate_in_id_order_and_count_held_episodes():
    """Episodes added out of order are held until their turn; a gap (a stopped concurrent run) still
    gives the table of what finished, the same as rating it from scratch."""
    rng = random.Random(3)
    games = [episode(k, SEATS, {a: float(rng.choice([0, 1, 2])) for a in SEATS}) for k in range(12)]
    table = Standings("ABC")
    for k in (1, 0, 3, 2, 5, 4, 7, 6, 9, 11):  # 8 and 10 never finished
        table.add(games[k])
        assert table.count == len(table.held) + table.episodes
    assert sorted(table.held) == [9, 11] and table.episodes == 8
    finished = [g for g in games if g["episode"] not in (8, 10)]
    assert table.rows() == compute(finished, "ABC")
    assert sorted(table.held) == [9, 11]  # rows() did not consume the held episodes
    table.add(games[8])
    table.add(games[10])
    assert not table.held and table.rows() == compute(games, "ABC")


def test_a_draw_moves_nobody_between_equals():
    rows = by_policy(compute([episode(0, SEATS, {"bidder_1": 5, "bidder_2": 5, "bidder_3": 5})], "ABC"))
    assert rows["A"].mu == pytest.approx(25.0) and rows["A"].sigma < 25 / 3


def test_means_cover_every_numeric_metric():
    games = [episode(0, SEATS, {"bidder_1": 1, "bidder_2": 2, "bidder_3": 3},
                     items_won={"bidder_1": 2, "bidder_2": 0, "bidder_3": 1},
                     failed_bid_rate={"bidder_1": 0.5, "bidder_2": math.nan, "bidder_3": 0.0}),
             episode(1, {"bidder_1": "C", "bidder_2": "A", "bidder_3": "B"},
                     {"bidder_1": 5, "bidder_2": 3, "bidder_3": 0},
                     items_won={"bidder_1": 4, "bidder_2": 1, "bidder_3": 0},
                     failed_bid_rate={"bidder_1": 0.25, "bidder_2": 0.0, "bidder_3": 1.0})]
    games[0]["metrics"]["agents"]["bidder_1"]["plan"] = "text is skipped"
    games[0]["metrics"]["agents"]["bidder_2"]["never_finite"] = math.inf
    rows = by_policy(compute(games, "ABC"))
    assert rows["A"].games == 2
    assert rows["A"].means == {"score": 2.0, "items_won": 1.5, "failed_bid_rate": 0.25, "never_finite": None}
    assert rows["B"].means["failed_bid_rate"] == 1.0  # NaN left out of the mean
    assert rows["B"].means["never_finite"] is None  # a column whose every value is left out
    assert rows["C"].means["score"] == 4.0


def test_table_is_aligned_and_sorted(tmp_path):
    out = tmp_path / "r"
    run(RunConfig("auction_v0", ("rule", "rule", "random"), episodes=6, seed=2), out)
    rows = leaderboard(out)
    assert sorted(r.policy for r in rows) == ["random", "rule#1", "rule#2"]
    assert all(r.games == 6 for r in rows)
    assert {"profit", "items_won"} <= set(rows[0].means)
    lines = format_table(rows).splitlines()
    assert len({len(line) for line in lines[:2]}) == 1  # header and rule line have the same width
    mu_end = lines[0].index("mu") + 2
    assert all(line[mu_end - 1] != " " for line in lines[2:])  # mu column right-aligned
    data = json.loads((out / "leaderboard.json").read_text())
    assert [r["policy"] for r in data["rows"]] == [r.policy for r in rows]
    assert data["rows"][0]["mu"] == pytest.approx(rows[0].mu)
    md = (out / "leaderboard.md").read_text().splitlines()
    assert md[0].startswith("# auction_v0: 6 of 6 episodes, seed 2")
    assert md[2].startswith("| # | policy | mu | sigma | games | mean score |")
    assert [line.split(" | ")[1] for line in md[4:4 + len(rows)]] == [r.policy for r in rows]
    assert md[4 + len(rows):5 + len(rows)] == [""] and md[-3].startswith("game means: ")
    assert md[2].endswith("| valid | re-asked | fallback |") and md[-1] == VALIDITY_NOTE
    assert all(r.valid_share == 1.0 and r.retry_share == r.fallback_share == 0.0 and not r.flagged for r in rows)


def test_validity_shares_of_each_policy_and_the_flag_above_a_tenth_of_fallbacks():
    seats = {"a": "A", "b": "B"}
    games = [{**episode(k, seats, {"a": 1, "b": 0}),
              "validity": {"a": {"decisions": 10, "retried": 2, "fallback": 1},
                           "b": {"decisions": 10, "retried": 5, "fallback": 2 if k else 0}}} for k in range(2)]
    rows = by_policy(compute(games, "AB"))
    assert (rows["A"].valid_share, rows["A"].retry_share, rows["A"].fallback_share) == (0.9, 0.2, 0.1)
    assert not rows["A"].flagged  # exactly a tenth is not more than a tenth
    assert (rows["B"].valid_share, rows["B"].retry_share, rows["B"].fallback_share) == (0.9, 0.5, 0.1)
    games[1]["validity"]["b"]["fallback"] = 3
    rows = by_policy(compute(games, "AB"))
    assert rows["B"].fallback_share == 0.15 and rows["B"].flagged
    assert format_table(list(rows.values())).splitlines()[3].endswith("15 % !")
    older = [episode(2, seats, {"a": 1, "b": 0})]  # written before the counts existed: unknown, not guessed
    rows = by_policy(compute(games + older, "AB"))
    assert rows["A"].valid_share is rows["A"].fallback_share is None and not rows["A"].flagged


def test_game_means_skip_missing_and_non_numeric_values():
    episodes = [{"metrics": {"game": {"score": 60.0, "raw_score": 0.2, "variant": "paper"}}},
                {"metrics": {"game": {"score": 70.0, "raw_score": None}}},
                {"metrics": {"agents": {}}}]
    assert game_means(episodes) == {"score": 65.0, "raw_score": 0.2}


def test_gamma_score_reaches_the_leaderboard(tmp_path):
    """A γ-Bench game's 0-100 score is episode-level: its mean is printed and stored with the table."""
    out = tmp_path / "r"
    summary = run(RunConfig("el_farol_v0", ("random",) * 10, episodes=3, seed=1), out)
    scores = [e["metrics"]["game"]["score"] for e in summary.episodes]
    assert len(set(scores)) > 1  # the mean below is of differing values
    text = leaderboard_text(out)
    assert text.splitlines()[-1].startswith("game means: ") and f"score {sum(scores) / 3:.3f}" in text
    data = json.loads((out / "leaderboard.json").read_text())
    assert data["game_means"]["score"] == pytest.approx(sum(scores) / 3)
    assert (out / "leaderboard.md").read_text().splitlines()[-3] == text.splitlines()[-1]


def test_the_runner_table_equals_a_recomputation_and_stale_tables_are_redone(tmp_path):
    """The run's incremental table (concurrent workers finish out of id order) is what recomputing
    from episodes.jsonl gives; leaderboard_text reprints it, unless it no longer covers every episode."""
    out = tmp_path / "r"
    run(RunConfig("tests._tiny_game:env", ("random", "random", "random"), episodes=9, seed=4), out, concurrency=3)
    stored = json.loads((out / "leaderboard.json").read_text())
    assert stored["episodes"] == 9
    assert stored["rows"] == [asdict(row) for row in leaderboard(out, write=False)]
    text = leaderboard_text(out)
    stale = {**stored, "episodes": 8, "rows": [{**row, "games": 999} for row in stored["rows"]]}
    (out / "leaderboard.json").write_text(json.dumps(stale))
    assert leaderboard_text(out) == text  # recomputed, not the stale rows
    assert json.loads((out / "leaderboard.json").read_text()) == stored  # and rewritten


def test_trueskill_only_where_the_paper_rates_with_it():
    assert rating_of("auction_v0") == "trueskill"  # AucArena ranks bidders with TrueSkill
    assert rating_of("el_farol_v0") is None  # γ-Bench ranks by its 0-100 score
    assert rating_of("who_is_spy_v0") == "wis"  # the WiS platform's 100 + Σ score − games
    assert rating_of("tests._tiny_game:env") == "trueskill"  # no paper: the generic rating


def test_the_wis_rating_is_100_plus_scores_minus_games_and_ranks_ties_by_mean_then_name():
    """Spec §8.7 34-35: scores 3.4, −2, 10 give 100 + 11.4 − 3 = 108.4; no games, 100."""
    def episode(k: int, scores: dict[str, float]) -> dict:
        return {"episode": k, "seats": {f"p{i}": label for i, label in enumerate(scores)},
                "metrics": {"agents": {f"p{i}": {"score": s} for i, s in enumerate(scores.values())}, "game": {}}}

    games = [episode(0, {"a": 3.4, "b": 0.0, "c": 1.0}), episode(1, {"a": -2.0, "b": 4.0, "c": 1.0}),
             episode(2, {"a": 10.0, "b": 1.4, "c": 5.4})]
    rows = compute(games, ["a", "b", "c", "d"], "wis")
    assert [(r.policy, r.games) for r in rows] == [("a", 3), ("c", 3), ("b", 3), ("d", 0)]
    assert rows[0].rating == pytest.approx(108.4) and rows[-1].rating == 100.0
    assert rows[1].rating == pytest.approx(104.4) and rows[2].rating == pytest.approx(102.4)
    tied = compute([episode(0, {"y": 2.0, "x": 2.0}), episode(1, {"z": 1.0})], ["y", "x", "z"], "wis")
    assert [r.policy for r in tied] == ["x", "y", "z"]  # equal ratings and means: by name
    assert "rating" in format_table(rows).splitlines()[0] and "mu" not in format_table(rows).splitlines()[0]


def test_an_unrated_leaderboard_ranks_by_mean_score_without_trueskill_columns(tmp_path):
    out = tmp_path / "el"
    run(RunConfig("el_farol_v0", ("always_go", "always_stay", "random"), episodes=2, seed=0,
                  env_kwargs={"n_players": 3, "n_rounds": 4}), out)
    text = leaderboard_text(out)
    header = text.splitlines()[0].split()
    assert header[:3] == ["#", "policy", "games"] and "mu" not in header and "sigma" not in header
    data = json.loads((out / "leaderboard.json").read_text())
    assert data["rating"] is None and "trueskill" not in data
    assert all(row["mu"] is None and row["sigma"] is None for row in data["rows"])
    scores = [row["means"]["score"] for row in data["rows"]]
    assert scores == sorted(scores, reverse=True)
    last = text.splitlines()[-1]
    assert last.startswith("game means: ") and " score " in last  # the paper's 0-100 score
