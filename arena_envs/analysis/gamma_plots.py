"""Figures of a γ-Bench suite run, in the spirit of the paper's Figures 2 and 3 (PNG, Agg backend).

* ``rounds.png``: per game, the round-by-round statistic the score is built from (one thin line
  per run, their mean bold, the equilibrium or target as a dashed line);
* ``guess_choices.png``: every player's number per round, the average, 2/3 of it and the winning
  number (run 1);
* ``battle_royale_actions.png``: per turn, who shot at whom (hit, missed, intentional miss), with
  the turns that aimed at the strongest opponent marked (one panel per run);
* ``scores.png``: the row, mean ± std per game and overall, with every model's score in the
  paper's Table 1 marked per game (and overall, for a row of all eight games), one marker and
  colour per model, named in the legend.

Every value axis holds all that is drawn on it: the limits come from the data, the references and
the nominal range (a score below 0 or above 100 is shown, not cut off).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

import matplotlib

from arena_envs.core.answers import excerpt

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from arena_envs.gamma.history import GAME_LABELS, GAMES
from arena_envs.gamma.paper_table import table_1_scores
from arena_envs.gamma.scoring import pirate_round_stats, strongest_opponents

Log = Mapping[str, Any]  # {"params": ..., "history": [...]}


#: the share of the span added below and above the drawn values
MARGIN = 0.08
#: the hollow marker of each paper model in ``scores.png`` (in Table 1's order; colours from tab10)
PAPER_MARKERS = ("o", "s", "D", "^", "v", "<", ">", "p", "h", "*", "P", "X")


def value_limits(values: Iterable[float], nominal: tuple[float, float] | None = None) -> tuple[float, float]:
    """Axis limits holding every one of ``values`` and the ``nominal`` range (when given), with a
    margin of :data:`MARGIN` of the span on either side."""
    drawn = [float(v) for v in values]
    if nominal is not None:
        drawn += nominal
    lo, hi = min(drawn), max(drawn)
    pad = (hi - lo) * MARGIN or 1.0
    return lo - pad, hi + pad


def _decided(values: Sequence[Any]) -> list[Any]:
    return [v for v in values if v is not None]


def round_series(game: str, params: Mapping[str, Any],
                 history: Sequence[Mapping[str, Any]]) -> tuple[str, list[float], float | None]:
    """(y label, one value per round, reference line or None) of the game's per-round statistic."""
    if game == "guess_two_thirds_v0":
        return "average number", [r["average"] for r in history], float(params["min_value"])
    if game == "el_farol_v0":
        n = params["n_players"]
        return "go rate", [sum(bool(g) for g in _decided(r["go"])) / n for r in history], params["capacity_ratio"]
    if game == "divide_dollar_v0":
        return "sum of bids", [sum(_decided(r["bids"])) for r in history], params["golds"]
    if game == "public_goods_v0":
        return "mean contribution", [fmean(_decided(r["contributions"])) for r in history], 0.0
    if game == "diners_dilemma_v0":
        return "share of costly orders", [fmean(o == "costly" for o in _decided(r["orders"])) for r in history], 1.0
    if game == "sealed_bid_auction_v0":
        return "mean valuation - bid", [fmean(v - b for v, b in zip(r["valuations"], r["bids"]) if b is not None)
                                        for r in history], None
    if game == "battle_royale_v0":
        rates = params["hit_rates"]
        correct, shares = 0, []
        for k, r in enumerate(history, start=1):
            strongest = strongest_opponents(rates, r["alive_before"], r["shooter"])
            correct += r["target"] is not None and r["target"] in strongest
            shares.append(correct / k)
        return "share aimed at strongest (cumulative)", shares, 1.0
    if game == "pirate_game_v0":
        return "L1 distance to NE proposal", [pirate_round_stats(params, r)[0] for r in history], 0.0
    raise ValueError(f"game must be one of {', '.join(GAMES)}; got {excerpt(game)}")


def rounds_figure(logs: Mapping[str, Sequence[Log]]) -> Any:
    """The per-round panels of ``rounds.png`` (one per game with logs)."""
    games = [g for g in GAMES if logs.get(g)]
    cols = min(4, len(games))
    rows = -(-len(games) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False)
    for ax in axes.flat[len(games):]:
        ax.set_visible(False)
    for ax, game in zip(axes.flat, games):
        series = [round_series(game, log["params"], log["history"]) for log in logs[game]]
        label, _, reference = series[0]
        for k, (_, values, _) in enumerate(series, start=1):
            ax.plot(range(1, len(values) + 1), values, color="tab:blue", alpha=0.35, lw=1, marker=".",
                    label="runs" if k == 1 else None)
        longest = max(len(v) for _, v, _ in series)
        mean = [fmean(v[j] for _, v, _ in series if j < len(v)) for j in range(longest)]
        ax.plot(range(1, longest + 1), mean, color="tab:red", lw=2, label="mean")
        if reference is not None:
            ax.axhline(reference, color="black", ls="--", lw=1, label="equilibrium / target")
        ax.set_title(GAME_LABELS[game])
        ax.set_xlabel("turn" if game == "battle_royale_v0" else "round")
        ax.set_ylabel(label)
        ax.set_xlim(0.5, longest + 0.5)
        ax.set_ylim(value_limits([x for _, v, _ in series for x in v] + ([] if reference is None else [reference])))
        ax.set_xticks(range(1, longest + 1, -(-longest // 10)))
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize=8, loc="best")
    fig.suptitle("γ-Bench: per-round play (thin: runs, bold: mean)")
    return fig


def plot_rounds(logs: Mapping[str, Sequence[Log]], path: Path) -> Path:
    return _save(rounds_figure(logs), path)


def guess_choices_figure(log: Log) -> Any:
    """The figure of ``guess_choices.png`` for one run's log."""
    history = log["history"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for r in history:
        choices = _decided(r["choices"])
        ax.scatter([r["round"]] * len(choices), choices, s=14, color="tab:gray", alpha=0.5)
    rounds = [r["round"] for r in history]
    ax.scatter([], [], s=14, color="tab:gray", label="chosen numbers")
    ax.plot(rounds, [r["average"] for r in history], color="tab:blue", marker="o", label="average")
    ax.plot(rounds, [r["target"] for r in history], color="tab:orange", marker="s", label="target (R x average)")
    ax.plot(rounds, [min(r["winning_numbers"]) for r in history], color="tab:green", marker="*", ms=10, ls=":",
            label="winning number")
    drawn = [x for r in history for x in [*_decided(r["choices"]), r["average"], r["target"], *r["winning_numbers"]]]
    ax.set(xlabel="round", ylabel="number", title="Guess 2/3 of the Average: choices, average, winners (run 1)",
           ylim=value_limits(drawn, (log["params"]["min_value"], log["params"]["max_value"])))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def plot_guess_choices(log: Log, path: Path) -> Path:
    return _save(guess_choices_figure(log), path)


def battle_royale_figure(logs: Sequence[Log]) -> Any:
    """The figure of ``battle_royale_actions.png``: one panel per run."""
    fig, axes = plt.subplots(len(logs), 1, figsize=(9, 2.8 * len(logs)), squeeze=False)
    for k, (ax, log) in enumerate(zip(axes.flat, logs), start=1):
        params, history = log["params"], log["history"]
        n = params["n_players"]
        for r in history:
            t, shooter, target = r["round"], r["shooter"], r["target"]
            ax.scatter(t, shooter, marker="o", color="black", s=18, zorder=3)
            if target is None:
                ax.scatter(t, shooter, marker="x", color="tab:gray", s=60, zorder=4)
                continue
            good = target in strongest_opponents(params["hit_rates"], r["alive_before"], shooter)
            ax.annotate("", xy=(t, target), xytext=(t, shooter),
                        arrowprops={"arrowstyle": "->", "color": "tab:green" if good else "tab:red", "lw": 1.5})
            ax.scatter(t, target, marker="*" if r["hit"] else "o", s=90 if r["hit"] else 25, zorder=4,
                       color="tab:red" if r["hit"] else "white", edgecolors="tab:red")
        ax.set(xlabel="turn", ylabel="player", yticks=range(n), ylim=(-0.5, n - 0.5), title=f"Battle Royale, run {k}")
        ax.set_yticklabels([f"{i} ({params['hit_rates'][i]:g}%)" for i in range(n)], fontsize=7)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    handles = [
        plt.Line2D([], [], color="tab:green", label="aimed at strongest"),
        plt.Line2D([], [], color="tab:red", label="aimed elsewhere"),
        plt.Line2D([], [], marker="*", color="tab:red", ls="", ms=10, label="hit (eliminated)"),
        plt.Line2D([], [], marker="x", color="tab:gray", ls="", ms=8, label="intentional miss"),
    ]
    axes.flat[0].legend(handles=handles, fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.12), ncol=4)
    return fig


def plot_battle_royale(logs: Sequence[Log], path: Path) -> Path:
    return _save(battle_royale_figure(logs), path)


def scores_figure(row: Mapping[str, Mapping[str, float]]) -> Any:
    """The figure of ``scores.png``: the row's bars (mean ± std), each model of the paper's Table 1
    as its own hollow marker beside each game's bar (and beside Overall when the row holds all eight
    games), every model named in the legend."""
    columns = ["overall"] + [g for g in GAMES if g in row]
    names = ["Overall" if c == "overall" else GAME_LABELS[c] for c in columns]
    means = [row[c]["mean"] for c in columns]
    stds = [row[c]["std"] for c in columns]
    fig, ax = plt.subplots(figsize=(1.1 * len(columns) + 3, 4.4))
    bars = ax.bar(names, means, width=0.55, yerr=stds, capsize=4, color=["tab:red"] + ["tab:blue"] * (len(columns) - 1),
                  label="this run (mean ± std)")
    ax.bar_label(bars, labels=[f"{m:.1f}" for m in means], fontsize=8, padding=2)
    # the paper's Overall averages all eight games: comparable only with a row of all eight
    marked = [c for c in columns if c != "overall" or set(GAMES) <= set(row)]
    papers: dict[str, list[tuple[int, float]]] = {}
    for c in marked:
        for model, value in table_1_scores(c):
            papers.setdefault(model, []).append((columns.index(c), value))
    for k, (model, marks) in enumerate(papers.items()):
        ax.scatter([x + 0.42 for x, _ in marks], [v for _, v in marks], marker=PAPER_MARKERS[k % len(PAPER_MARKERS)],
                   s=18, facecolors="none", edgecolors=plt.get_cmap("tab10")(k % 10), linewidths=0.9, zorder=3,
                   label=f"paper Table 1: {model}")
    ax.axhline(0, color="black", lw=0.8)
    drawn = [m + sign * s for m, s in zip(means, stds) for sign in (-1, 1)] + [v for ms in papers.values()
                                                                             for _, v in ms]
    ax.set(ylim=value_limits(drawn, (0, 100)), ylabel="score (0-100 scale; can fall outside)",
           title="γ-Bench row (mean ± std over runs)")
    ax.tick_params(axis="x", labelrotation=30)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def plot_scores(row: Mapping[str, Mapping[str, float]], path: Path) -> Path:
    return _save(scores_figure(row), path)


def save_figures(logs: Mapping[str, Sequence[Log]], row: Mapping[str, Mapping[str, float]],
                 out: str | Path) -> list[Path]:
    """Draw every figure that the played games allow into ``out``; returns the PNG paths."""
    out = Path(out)
    logs = {g: [log for log in logs.get(g, ()) if log["history"]] for g in GAMES}
    paths = [plot_scores(row, out / "scores.png")]
    if any(logs.get(g) for g in GAMES):
        paths.append(plot_rounds(logs, out / "rounds.png"))
    if logs.get("guess_two_thirds_v0"):
        paths.append(plot_guess_choices(logs["guess_two_thirds_v0"][0], out / "guess_choices.png"))
    if logs.get("battle_royale_v0"):
        paths.append(plot_battle_royale(logs["battle_royale_v0"], out / "battle_royale_actions.png"))
    return paths


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
