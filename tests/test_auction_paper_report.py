"""The paper's standard-competition metrics (issue 11, point 10), computed from runs.

The docs page shows the table of a rule-bidder run of the paper setting; this test recomputes it
from a fresh run and compares (model runs are made with ``arena run``, see the docs page).
"""
import re
from pathlib import Path

import pytest
import trueskill

from arena_envs.auction import paper_report as R
from arena_envs.runner.results import read_episodes
from arena_envs.runner.runner import RunConfig, run

DOCS = Path(__file__).parent.parent / "docs" / "envs" / "auction.md"
#: stand-ins for the paper's seats: Bidder 1 (GPT-4-Turbo), Bidder 2 (GPT-3.5-Turbo), Bidder 3 the challenger
BASELINES = ("rule", "truthful_min_raise")
CHALLENGERS = ("rule", "truthful_min_raise", "random_valid")


def games(**agents):
    return {seat: {"profit": p, "items_won": 1, "failed_bids": f, "accepted_decisions": c, "belief_errors": e,
                   "belief_checks": k} for seat, (p, f, c, e, k) in agents.items()}


def test_trueskill_per_setting_matches_the_package_and_rates_a_same_type_challenger_apart():
    seats = {"bidder_1": "gpt-4", "bidder_2": "gpt-3.5", "bidder_3": "gpt-4"}
    game = R.Game((20000, "random"), seats, games(bidder_1=(500, 0, 1, 0, 0), bidder_2=(800, 0, 1, 0, 0),
                                                  bidder_3=(0, 0, 1, 0, 0)))
    table = R.trueskill_by_setting([game])[(20000, "random")]
    env = trueskill.TrueSkill()
    expected = env.rate([(env.create_rating(),)] * 3, ranks=[1, 0, 2])
    assert table["gpt-4"] == pytest.approx((expected[0][0].mu, expected[0][0].sigma))
    assert table["gpt-4 (challenger)"] == pytest.approx((expected[2][0].mu, expected[2][0].sigma))
    assert table["gpt-4"][0] == pytest.approx(25.0, abs=0.01) and table["gpt-3.5"][0] == pytest.approx(31.675, abs=0.01)
    # another setting starts from fresh ratings
    other = R.trueskill_by_setting([game, R.Game((40000, "random"), seats, game.agents)])
    fresh = other[(40000, "random")]
    assert fresh.keys() == table.keys()
    for name, rating in table.items():  # pytest.approx takes no nested containers (pytest >= 9.2)
        assert fresh[name] == pytest.approx(rating)


def test_equal_profits_draw():
    assert R.profit_ranks([300, 300, 100]) == [0, 0, 1]


def test_rates_are_pooled_over_games():
    seats = {"bidder_1": "a", "bidder_2": "b", "bidder_3": "c"}
    quiet = (0, 0, 5, 0, 0)
    played = [R.Game("s", seats, games(bidder_1=(100, 1, 9, 1, 3), bidder_2=quiet, bidder_3=quiet)),
              R.Game("s", seats, games(bidder_1=(300, 0, 30, 0, 7), bidder_2=quiet, bidder_3=quiet))]
    summary = R.type_summary(played)
    assert summary["a"]["failed_bid_rate"] == pytest.approx(1 / 40)  # not the mean of 0.1 and 0
    assert summary["a"]["belief_error_rate"] == pytest.approx(1 / 10) and summary["b"]["belief_error_rate"] is None
    assert summary["a"]["profit"] == 200 and summary["a"]["games"] == 2


def test_a_missing_challenger_seat_is_an_error():
    with pytest.raises(ValueError, match="challenger seat 'bidder_9'"):
        R.identities({"bidder_1": "a"}, "bidder_9")


def rule_run_report(folder: Path) -> dict:
    played = []
    for challenger in CHALLENGERS:
        for budget, order in R.PAPER_SETTINGS:
            out = folder / f"{challenger}-{budget}-{order}"
            config = RunConfig("auction_v0", (*BASELINES, challenger), episodes=R.PAPER_REPETITIONS, seed=0,
                               env_kwargs={"budgets": budget, "item_order": order}, rotate=False)
            run(config, out, progress=False)
            for entry in read_episodes(out / "episodes.jsonl"):
                played.append(R.Game((budget, order), entry["seats"], entry["metrics"]["agents"]))
    assert len(played) == len(CHALLENGERS) * len(R.PAPER_SETTINGS) * R.PAPER_REPETITIONS
    return R.paper_metrics(played)


def test_the_docs_table_is_the_rule_run_of_the_paper_setting(tmp_path):
    table = R.markdown_table(rule_run_report(tmp_path))
    docs = DOCS.read_text(encoding="utf-8")
    shown = re.search(r"<!-- rule-run-table -->\n(.*?)\n<!-- /rule-run-table -->", docs, re.S)
    assert shown, "the docs page lost its rule-run table"
    assert shown.group(1) == table


def test_the_runners_repeat_marks_name_the_same_type():
    assert R.identities({"bidder_1": "rule#1", "bidder_2": "x", "bidder_3": "rule#2"}, "bidder_3") == {
        "bidder_1": "rule", "bidder_2": "x", "bidder_3": "rule (challenger)"}
