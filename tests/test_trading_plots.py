"""Equity and drawdown figures of trading episodes (``arena_envs.analysis.trading_plots``) and the
run hook that writes them into a results folder (``arena_envs.runner.figures``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tomllib

from arena_envs import trading_v0
from arena_envs.analysis.trading_plots import (
    drawdown_figure,
    drawdown_percent,
    episode_curves,
    equity_figure,
    write_episode_figures,
    write_figures,
)
from arena_envs.cli import main
from arena_envs.core import Policy
from arena_envs.registration import ENVIRONMENTS
from arena_envs.runner.figures import write_run_figures
from arena_envs.runner.policy_specs import load_object, parse_arguments
from arena_envs.runner.results import read_record
from arena_envs.runner.runner import RunConfig, run
from baselines.trading.rules import BuyAndHold, Cash, Momentum
from tests.play_helpers import play

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
    summary = run(RunConfig(env="tests._tiny_game:env", players=("random",) * 3, episodes=1), tmp_path / "r")
    assert write_run_figures("tests._tiny_game:env", summary.out) == []
    assert not (summary.out / "figures").exists()


# --- runs of trading_v0 ------------------------------------------------------------------------------

PLAYERS = ("buy_and_hold", "cash", "momentum", "mean_reversion")


def checkout_policy(spec: str, env: str) -> Policy:
    """What ``arena run`` builds for ``spec``, read from this checkout's pyproject (the installed
    entry points may be older)."""
    with open(Path(__file__).parents[1] / "pyproject.toml", "rb") as f:
        table = tomllib.load(f)["project"]["entry-points"]["arena_envs.policies"]
    name, _, rest = spec.partition(":")
    return load_object(table[f"{env}/{name}"])(**parse_arguments(rest, spec))


def test_a_trading_run_writes_the_figures_of_its_episodes(tmp_path):
    config = RunConfig(env="trading_v0", players=PLAYERS, episodes=2)
    summary = run(config, tmp_path / "run", policy_factory=checkout_policy)
    assert pngs(summary.out) == ["drawdown_ep0000.png", "drawdown_ep0001.png", "equity_ep0000.png",
                                 "equity_ep0001.png"]
    assert sorted(p.name for p in summary.figures) == pngs(summary.out)
    for name in pngs(summary.out):
        assert (summary.out / "figures" / name).read_bytes()[:8] == PNG_MAGIC
    # the plotted curves are the episode's: each agent's eval-window growth is its CR
    entry = summary.episodes[1]
    record = read_record(summary.out, 1)
    curves = episode_curves(record)
    assert curves.eval_start == np.datetime64("2018-08-01")
    at = int(np.searchsorted(curves.dates, curves.eval_start))
    for agent, values in curves.equity.items():
        assert values[-1] / values[at] - 1 == pytest.approx(entry["metrics"]["agents"][agent]["cr"], abs=1e-9)
    assert curves.buy_and_hold["SPX"][-1] / curves.buy_and_hold["SPX"][at] - 1 == pytest.approx(
        entry["metrics"]["game"]["buy_and_hold"]["SPX"]["cr"], abs=1e-9)
    labels = [line.get_label() for line in equity_figure(record, entry["seats"], 1).axes[0].get_lines()]
    assert {f"{agent}: {label}" for agent, label in entry["seats"].items()} <= set(labels)


def test_no_plots_writes_none(tmp_path):
    config = RunConfig(env="trading_v0", players=PLAYERS, episodes=1)
    summary = run(config, tmp_path / "run", policy_factory=checkout_policy, plots=False)
    assert summary.finished == 1 and pngs(summary.out) == [] and summary.figures == []


def test_the_cli_writes_figures_unless_no_plots(tmp_path, capsys):
    """Through ``arena run`` (``random`` is a policy of every install: the trading one when this
    checkout's entry points are installed, else the generic one)."""
    args = ["run", "trading_v0", "--players", "random*4", "--episodes", "1", "--out"]
    assert main([*args, str(tmp_path / "plots")]) == 0
    assert pngs(tmp_path / "plots") == ["drawdown_ep0000.png", "equity_ep0000.png"]
    assert f"figures: 2 written to {tmp_path / 'plots' / 'figures'}" in capsys.readouterr().out
    assert main([*args, str(tmp_path / "none"), "--no-plots"]) == 0
    assert "figures:" not in capsys.readouterr().out
    assert (tmp_path / "none" / "episodes.jsonl").exists() and pngs(tmp_path / "none") == []


def test_curves_of_a_two_asset_synthetic_episode():
    """Two books per agent (per_asset mode): the starting equity is twice the capital; each curve's
    eval-window growth is the agent's CR; the title says SYNTHETIC."""
    raw = play(trading_v0.env(**ENVIRONMENTS["trading_v0"].variants["two_assets_weights"]),
               [BuyAndHold(), Cash(), Momentum()])
    record, metrics = raw.episode_record(), raw.episode_metrics()
    curves = episode_curves(record)
    assert list(curves.buy_and_hold) == ["SYS", "SYC"]
    assert list(curves.equity["trader_1"]) == [200000.0] * len(curves.dates)  # cash, two books of 100000
    at = int(np.searchsorted(curves.dates, curves.eval_start))
    for agent, values in curves.equity.items():
        assert values[-1] / values[at] - 1 == pytest.approx(metrics["agents"][agent]["cr"], abs=1e-9)
    # buy and hold in both books: the mean of the two assets' curves
    both = (curves.buy_and_hold["SYS"] + curves.buy_and_hold["SYC"]) / 2
    assert curves.equity["trader_0"] == pytest.approx(both, rel=1e-12)
    assert "SYNTHETIC" in equity_figure(record).axes[0].get_title()
