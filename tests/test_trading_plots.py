"""Equity and drawdown figures of trading episodes (``arena_envs.analysis.trading_plots``) and the
run hook that writes them into a results folder (``arena_envs.runner.figures``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arena_envs.analysis.trading_plots import (
    drawdown_figure,
    drawdown_percent,
    episode_curves,
    equity_figure,
    write_episode_figures,
    write_figures,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
DATES = ["2025-08-01", "2025-08-04", "2025-08-05", "2025-08-06", "2025-08-07"]
R = [0.1, -0.2, 0.05, 0.3]  # the asset's return realised on each date after the first


def two_agent_record(synthetic: bool = True) -> dict[str, Any]:
    """A hand-built record: trader_0 is long all along, trader_1 flat; the second cycle is the
    first of the evaluation window."""
    capital = 1000.0
    long_equity = capital * np.cumprod(1 + np.array(R))
    days = [{"type": "day", "date": DATES[k], "phase": "warmup" if k == 0 else "eval",
             "decisions": {"trader_0": {"raw": None, "parsed": [["BUY", 1.0]], "exposure": [1.0]},
                           "trader_1": {"raw": None, "parsed": [["HOLD", None]], "exposure": [0.0]}},
             "equity": {"trader_0": float(long_equity[k]), "trader_1": capital},
             "step_return": {"trader_0": R[k], "trader_1": 0.0}, "asset_returns": [R[k]],
             "closes": [100.0]} for k in range(len(R))]
    start = {"type": "start", "dates": DATES, "assets": ["SYS"], "closes0": [100.0], "initial_capital": capital,
             "label": "synthetic gbm seed 0" if synthetic else "S&P 500 (arch)", "synthetic": synthetic}
    return {"env": "trading_v0", "seed": 0, "config": {}, "events": [start, *days], "metrics": {}}


SEATS = {"trader_0": "buy_and_hold", "trader_1": "cash"}


def test_curves_of_a_hand_built_record():
    curves = episode_curves(two_agent_record())
    assert list(curves.dates) == list(np.array(DATES, dtype="datetime64[D]"))
    assert curves.equity["trader_0"] == pytest.approx([1000.0, 1100.0, 880.0, 924.0, 1201.2])
    assert curves.equity["trader_1"] == pytest.approx([1000.0] * 5)
    assert curves.buy_and_hold["SYS"] == pytest.approx(curves.equity["trader_0"])  # long all along = B&H
    assert curves.eval_start == np.datetime64("2025-08-04")
    assert curves.synthetic is True


def test_a_closed_asset_does_not_move_its_buy_and_hold_curve():
    record = two_agent_record()
    record["events"][2]["asset_returns"] = [None]
    record["events"][3]["asset_returns"] = [float("nan")]
    assert episode_curves(record).buy_and_hold["SYS"] == pytest.approx([1000.0, 1100.0, 1100.0, 1100.0, 1430.0])


def test_drawdown_is_a_positive_percentage_from_the_running_peak():
    assert drawdown_percent(np.array([1000.0, 1100.0, 880.0, 924.0, 1201.2])) == pytest.approx([0, 0, 20, 16, 0])
    assert drawdown_percent(np.array([100.0, 50.0])) == pytest.approx([0, 50])  # the start is a peak


def test_figures_name_the_seats_and_say_synthetic():
    record = two_agent_record()
    for draw in (equity_figure, drawdown_figure):
        fig = draw(record, SEATS, 3)
        ax = fig.axes[0]
        assert "SYNTHETIC" in ax.get_title()
        assert "episode 3" in ax.get_title()
        labels = [line.get_label() for line in ax.get_lines()]
        assert "trader_0: buy_and_hold" in labels and "trader_1: cash" in labels
        assert "buy & hold SYS" in labels and "evaluation start" in labels
    fig = drawdown_figure(record, SEATS)
    drawn = {line.get_label(): line.get_ydata() for line in fig.axes[0].get_lines()}
    assert list(drawn["trader_0: buy_and_hold"]) == pytest.approx([0, 0, 20, 16, 0])
    labelled = two_agent_record()
    labelled["events"][0]["label"] = "SYNTHETIC gbm seed 0"  # a label that says it already: said once
    assert equity_figure(labelled).axes[0].get_title().count("SYNTHETIC") == 1
    real = equity_figure(two_agent_record(synthetic=False), SEATS).axes[0].get_title()
    assert "SYNTHETIC" not in real and "S&P 500 (arch)" in real


def test_episode_figures_are_png_files(tmp_path):
    paths = write_episode_figures(two_agent_record(), tmp_path / "figures", 7, SEATS)
    assert [p.name for p in paths] == ["equity_ep0007.png", "drawdown_ep0007.png"]
    for path in paths:
        assert path.read_bytes()[:8] == PNG_MAGIC
    assert write_figures([(0, None, SEATS), (2, two_agent_record(), SEATS)], tmp_path / "f2") == [
        tmp_path / "f2" / "equity_ep0002.png", tmp_path / "f2" / "drawdown_ep0002.png"]


def test_a_record_that_is_not_a_trading_record_is_refused():
    with pytest.raises(ValueError, match="one 'start' event, got 0"):
        episode_curves({"events": []})
    record = two_agent_record()
    record["events"][0]["dates"] = DATES[:-1]
    with pytest.raises(ValueError, match="lists 4 dates for 4 day events"):
        episode_curves(record)


def pngs(folder: Path) -> list[str]:
    return sorted(p.name for p in (folder / "figures").glob("*.png")) if (folder / "figures").exists() else []


def test_a_run_of_an_environment_without_figures_writes_none(tmp_path):
    from arena_envs.runner.figures import write_run_figures
    from arena_envs.runner.runner import RunConfig, run

    summary = run(RunConfig(env="tests._tiny_game:env", players=("random",) * 3, episodes=1), tmp_path / "r")
    assert write_run_figures("tests._tiny_game:env", summary.out) == []
    assert not (summary.out / "figures").exists()
