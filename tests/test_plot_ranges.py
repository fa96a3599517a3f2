"""Every plot shows what it draws: the value axis of each figure holds every plotted value and every
reference, read back from the matplotlib Axes the figure functions build (before saving).

The γ-Bench figures are drawn from a real suite of random players with the paper's protocol (eight
games, ten players, five runs; about 3 s), whose sealed-bid auction score is negative (the paper's
scale is 0-100, random play falls below it).
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.patches import Rectangle

from arena_envs.analysis.gamma_plots import (
    battle_royale_figure,
    guess_choices_figure,
    rounds_figure,
    scores_figure,
    value_limits,
)
from arena_envs.analysis.trading_plots import drawdown_figure, equity_figure
from arena_envs.evaluation.bootstrap import Interval
from arena_envs.evaluation.plots import Dot, draw_dots
from arena_envs.gamma.history import GAMES
from arena_envs.gamma.paper_table import TABLE_1, table_1_cell, table_1_scores
from arena_envs.runner.gamma_suite import SuiteResult, play_suite
from arena_envs.runner.results import read_record
from arena_envs.runner.runner import RunConfig, run


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> SuiteResult:
    """The paper's protocol played by random players, no figures written."""
    return play_suite(["random"], tmp_path_factory.mktemp("gamma"), runs=5, seed=0, plots=False)


def drawn(ax: Any, axis: str) -> Iterator[float]:
    """Every data coordinate on ``axis`` ("x" or "y") of what ``ax`` draws in data coordinates: bars,
    lines, error bars and markers (a line spanning the axes gives its one data coordinate: axhline its
    y, axvline its x)."""
    k = 0 if axis == "x" else 1
    for patch in ax.patches:
        if isinstance(patch, Rectangle):
            y0, y1 = patch.get_y(), patch.get_y() + patch.get_height()
            x0, x1 = patch.get_x(), patch.get_x() + patch.get_width()
            yield from (x0, x1) if k == 0 else (y0, y1)
    in_data = (ax.transData, ax.get_xaxis_transform() if axis == "x" else ax.get_yaxis_transform())
    for line in ax.lines:
        if any(line.get_transform() == t for t in in_data):
            yield from (float(v) for v in np.asarray(line.get_xydata())[:, k] if np.isfinite(v))
    for collection in ax.collections:
        if isinstance(collection, PathCollection):
            yield from (float(v) for v in np.asarray(collection.get_offsets())[:, k])
        elif isinstance(collection, LineCollection):
            yield from (float(p[k]) for segment in collection.get_segments() for p in segment)


def assert_shown(ax: Any, axis: str, values: list[float]) -> None:
    lo, hi = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    hidden = [v for v in values if not lo <= v <= hi]
    assert not hidden, f"{ax.get_title()!r}: {axis} limits {lo:.3g}..{hi:.3g} hide {hidden[:5]}"


def test_scores_plot_shows_the_negative_auction_score_and_every_paper_reference(suite: SuiteResult) -> None:
    row = suite.row
    assert row["sealed_bid_auction_v0"]["mean"] < 0  # random play falls below the paper's 0-100 scale
    fig = scores_figure(row)
    ax = fig.axes[0]
    values = list(drawn(ax, "y"))
    papers = [v for g in ["overall", *GAMES] for _, v in table_1_scores(g)]
    assert len(papers) == 12 * 9
    for expected in [row["sealed_bid_auction_v0"]["mean"], *papers]:
        assert any(v == pytest.approx(expected) for v in values), f"{expected} is not drawn"
    assert_shown(ax, "y", values)
    assert ax.get_ylim()[0] < row["sealed_bid_auction_v0"]["mean"] - row["sealed_bid_auction_v0"]["std"]
    # every paper model has its own marker, named in the legend
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert [t for t in legend if t.startswith("paper Table 1: ")] == [f"paper Table 1: {m}" for m in TABLE_1]
    marks = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len({(str(c.get_paths()[0].vertices.tolist()), str(c.get_edgecolor().tolist())) for c in marks}) == 12
    plt.close(fig)


def test_scores_plot_holds_scores_above_the_nominal_range() -> None:
    row = {"overall": {"mean": 60.0, "std": 5.0, "n": 2},
           "el_farol_v0": {"mean": 130.0, "std": 12.0, "n": 2},
           "public_goods_v0": {"mean": -40.0, "std": 3.0, "n": 2}}
    fig = scores_figure(row)
    ax = fig.axes[0]
    assert_shown(ax, "y", [*drawn(ax, "y"), 142.0, -43.0, 0.0, 100.0])
    # the paper's Overall averages eight games: not marked beside the Overall of two
    marks = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(marks) == 12 and all(np.asarray(m.get_offsets()).shape == (2, 2) for m in marks)
    plt.close(fig)


def test_the_paper_overall_is_the_mean_of_its_eight_games() -> None:
    overall = dict(table_1_scores("overall"))
    assert list(overall) == list(TABLE_1)
    for model in TABLE_1:
        assert overall[model] == pytest.approx(sum(table_1_cell(model, g)[0] for g in GAMES) / 8, abs=0.051)


def test_round_and_choice_plots_hold_every_value_and_reference(suite: SuiteResult) -> None:
    fig = rounds_figure(suite.logs)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == len(GAMES)
    for ax in panels:
        assert_shown(ax, "y", list(drawn(ax, "y")))
        assert_shown(ax, "x", list(drawn(ax, "x")))
    plt.close(fig)
    fig = guess_choices_figure(suite.logs["guess_two_thirds_v0"][0])
    ax = fig.axes[0]
    params = suite.logs["guess_two_thirds_v0"][0]["params"]
    assert_shown(ax, "y", [*drawn(ax, "y"), params["min_value"], params["max_value"]])
    plt.close(fig)
    fig = battle_royale_figure(suite.logs["battle_royale_v0"])
    for ax in fig.axes:
        players = suite.logs["battle_royale_v0"][0]["params"]["n_players"]
        assert_shown(ax, "y", [*drawn(ax, "y"), 0, players - 1])
        assert_shown(ax, "x", list(drawn(ax, "x")))
    plt.close(fig)


def test_value_limits_hold_the_values_and_the_nominal_range() -> None:
    assert value_limits([-2.3, 40.0], (0, 100)) == pytest.approx((-2.3 - 8.184, 100 + 8.184))
    lo, hi = value_limits([5.0])
    assert lo < 5.0 < hi


def test_report_card_dots_hold_every_interval_and_paper_figure() -> None:
    dots = [Dot("model", Interval(-2.3, -9.0, 4.0, 10), "tab:blue"),
            Dot("random", Interval(-30.0, -41.0, -20.0, 10), "tab:gray"),
            Dot("GPT-4 (paper)", Interval(8.7, 8.7, 8.7, 0, "published"), "black", paper=True)]
    fig, ax = plt.subplots()
    draw_dots(ax, dots, "Sealed-Bid Auction", "score")
    assert_shown(ax, "x", [*drawn(ax, "x"), -41.0, 8.7])
    plt.close(fig)


def test_trading_figures_hold_every_curve(tmp_path: Path) -> None:
    """The equity and drawdown figures of a real episode of four random traders (the drawdown axis
    is inverted: its limits are read in either order)."""
    summary = run(RunConfig(env="trading_v0", players=("random",) * 4, episodes=1), tmp_path, plots=False)
    record = read_record(summary.out, 0)
    assert record is not None
    for draw in (equity_figure, drawdown_figure):
        fig = draw(record)
        ax = fig.axes[0]
        assert len(ax.get_lines()) >= 5  # four traders and buy & hold
        assert_shown(ax, "y", list(drawn(ax, "y")))
        assert_shown(ax, "x", list(drawn(ax, "x")))
