"""Equity curves and drawdowns of ``trading_v0`` episodes (PNG, rendered with Agg).

Everything is read from an episode record (``TradingEnv.episode_record()``): its ``start`` event
(dates, assets, initial capital, data label, synthetic flag) and one ``day`` event per decision
cycle (each agent's equity after the advance, the assets' returns, the phase). Per episode:

* ``equity_ep{N:04d}.png``: every agent's equity (all its books), the buy-and-hold equity of each
  asset (the same starting equity held fully long in that asset), a vertical line where the
  evaluation window starts;
* ``drawdown_ep{N:04d}.png``: the same series as drawdowns from their running peak, in percent.

The title names the data; synthetic data says SYNTHETIC there. Figures are built on
:class:`matplotlib.figure.Figure` (no pyplot state, no backend switch for the caller).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.dates import date2num
from matplotlib.figure import Figure

from arena_envs.trading.metrics import wealth_curve

Record = Mapping[str, Any]


@dataclass(frozen=True)
class EpisodeCurves:
    """The plotted series of one episode: point 0 is the start (the starting equity), point k the
    close after the k-th decision cycle's advance."""

    dates: np.ndarray  #: datetime64[D], one per point
    equity: dict[str, np.ndarray]  #: agent -> equity (USD) per point
    buy_and_hold: dict[str, np.ndarray]  #: asset -> the starting equity held fully long in it, per point
    eval_start: np.datetime64 | None  #: the date of the first evaluation decision
    label: str  #: the data label of the start event
    synthetic: bool


def _event(record: Record, kind: str) -> list[Mapping[str, Any]]:
    return [e for e in record.get("events", ()) if e.get("type") == kind]


def episode_curves(record: Record) -> EpisodeCurves:
    """The series of ``record`` (a trading episode record), or ValueError when it is not one."""
    starts, days = _event(record, "start"), _event(record, "day")
    if len(starts) != 1:
        raise ValueError(f"a trading episode record has one 'start' event, got {len(starts)}")
    start = starts[0]
    dates = np.asarray(start["dates"], dtype="datetime64[D]")
    if len(dates) != len(days) + 1:
        raise ValueError(f"the start event lists {len(dates)} dates for {len(days)} day events; "
                         f"expected one date per decision day plus the last day ({len(days) + 1})")
    assets = list(start["assets"])
    # the start event's capital is per book: per_asset mode (the default) keeps one book per asset
    books = len(assets) if record.get("config", {}).get("book_mode", "per_asset") == "per_asset" else 1
    capital = float(start["initial_capital"]) * books
    agents = list(days[0]["equity"]) if days else []
    equity = {agent: np.array([capital] + [float(d["equity"][agent]) for d in days]) for agent in agents}
    returns = np.array([[np.nan if r is None else r for r in d["asset_returns"]] for d in days],
                       dtype=np.float64).reshape(len(days), len(assets))
    returns[~np.isfinite(returns)] = 0.0  # a closed asset's book does not move
    buy_and_hold = {sym: capital * wealth_curve(returns[:, j]) for j, sym in enumerate(assets)}
    first_eval = next((d["date"] for d in days if d.get("phase") == "eval"), None)
    return EpisodeCurves(dates, equity, buy_and_hold, None if first_eval is None else np.datetime64(first_eval, "D"),
                         str(start.get("label", "")), bool(start.get("synthetic", False)))


def drawdown_percent(equity: np.ndarray) -> np.ndarray:
    """``100 · (M_t − W_t) / M_t`` with ``M_t`` the running peak (the first point included), ≥ 0."""
    peak = np.maximum.accumulate(equity)
    return 100.0 * (peak - equity) / peak


def _title(what: str, curves: EpisodeCurves, episode: int | None) -> str:
    label = curves.label
    if curves.synthetic and "SYNTHETIC" not in label:
        label = f"SYNTHETIC data: {label}"
    where = "" if episode is None else f", episode {episode}"
    return f"trading_v0 {what}{where} ({label})"


_BH_STYLES = ("--", "-.", (0, (1, 1)), (0, (5, 1, 1, 1, 1, 1)))  # one per asset, grey


def _draw(curves: EpisodeCurves, seats: Mapping[str, str] | None, transform: Any, what: str, ylabel: str,
          episode: int | None) -> Figure:
    fig = Figure(figsize=(10, 5.2), layout="constrained")
    ax = fig.subplots()
    for agent, values in curves.equity.items():
        name = f"{agent}: {seats[agent]}" if seats and agent in seats else agent
        ax.plot(curves.dates, transform(values), lw=1.6, label=name)
    for j, (sym, values) in enumerate(curves.buy_and_hold.items()):
        ax.plot(curves.dates, transform(values), lw=1.2, ls=_BH_STYLES[j % len(_BH_STYLES)], color="0.35", alpha=0.8,
                label=f"buy & hold {sym}")
    if curves.eval_start is not None:
        ax.axvline(float(date2num(curves.eval_start)), color="tab:red", ls=":", lw=1.2, label="evaluation start")
    ax.set_title(_title(what, curves, episode))
    ax.set_xlabel("date")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.autofmt_xdate()
    return fig


def equity_figure(record: Record, seats: Mapping[str, str] | None = None, episode: int | None = None) -> Figure:
    """The equity curves of one episode record; ``seats`` (agent -> policy label) names the lines."""
    return _draw(episode_curves(record), seats, lambda v: v, "equity", "equity (USD)", episode)


def drawdown_figure(record: Record, seats: Mapping[str, str] | None = None, episode: int | None = None) -> Figure:
    """The drawdowns from the running peak (percent) of the same series as :func:`equity_figure`."""
    fig = _draw(episode_curves(record), seats, drawdown_percent, "drawdown", "drawdown from peak (%)", episode)
    fig.axes[0].invert_yaxis()  # deeper falls lower, as under an equity curve
    return fig


def write_episode_figures(record: Record, out: str | Path, episode: int,
                          seats: Mapping[str, str] | None = None) -> list[Path]:
    """Write ``out/equity_ep{N:04d}.png`` and ``out/drawdown_ep{N:04d}.png`` for one record."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, draw in (("equity", equity_figure), ("drawdown", drawdown_figure)):
        path = out / f"{name}_ep{episode:04d}.png"
        draw(record, seats, episode).savefig(path, dpi=110)
        paths.append(path)
    return paths


def write_figures(episodes: Iterable[tuple[int, Record | None, Mapping[str, str]]], out: str | Path) -> list[Path]:
    """The figures of every ``(episode id, record, seats)`` into folder ``out``; an episode without
    a record (None) gets none."""
    paths: list[Path] = []
    for episode, record, seats in episodes:
        if record is not None:
            paths += write_episode_figures(record, out, episode, seats)
    return paths
