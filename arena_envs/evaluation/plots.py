"""The report card's PNGs: one dot chart per game, the overview across games, and the comparison of
several cards. matplotlib (Agg) is imported inside the functions that draw.

Every chart is a horizontal dot plot in the game's own unit: a dot per player with its bootstrap
95 % interval as a bar (a hollow dot, labelled "flagged", where more than a tenth of the player's
decisions fell back: not its own play), the papers' models as hollow diamonds. The overview puts the twelve games
side by side as small panels rather than on one normalised axis, because the units differ (0-100
scores, TrueSkill μ, WiS points, Sharpe ratios) and two games have no comparable published figure
to normalise against.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena_envs.evaluation.bootstrap import Interval

if TYPE_CHECKING:
    from arena_envs.evaluation.card import Card, GameCard

COLORS = {"model": "tab:blue", "random": "tab:gray", "rule": "tab:orange"}
PAPER_COLOR = "black"
EXTRA_COLORS = ("tab:blue", "tab:green", "tab:purple", "tab:red", "tab:brown", "tab:pink", "tab:olive", "tab:cyan")


@dataclass(frozen=True)
class Dot:
    label: str
    interval: Interval | None  #: None: missing (not played yet)
    color: str
    paper: bool = False  #: a paper's published figure (no interval)
    flagged: bool = False  #: mostly not the subject's own play (too many fallbacks): drawn hollow


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def subject_dots(game: GameCard, label: dict[str, str] | None = None) -> list[Dot]:
    """The evaluated subjects of ``game``, then its papers' models (best first, a paper's own random
    player among them)."""
    label = label or {}
    dots = [Dot(label.get(s, s), r.headline, COLORS.get(s, "tab:blue"), flagged=r.validity.flagged)
            for s, r in game.results.items()]
    dots += [Dot(model, Interval(value, value, value, 0, "published"), PAPER_COLOR, paper=True)
             for model, value in game.published(include_baselines=True)]
    return dots


def draw_dots(ax: Any, dots: Sequence[Dot], title: str, metric: str, small: bool = False, rows: int = 0,
              note: str = "") -> None:
    """One dot per row, top to bottom, with the interval as a horizontal bar; a missing one is
    written as such at the left edge. ``rows``: the height in rows (panels of one figure share it);
    ``note``: a line written under the last dot."""
    size = 7 if small else 9
    rows = max(rows, len(dots) + (1 if note else 0))
    ys = list(range(rows - 1, rows - 1 - len(dots), -1))
    known = [d.interval for d in dots if d.interval is not None and not math.isnan(d.interval.point)]
    lo = min((i.low for i in known), default=0.0)
    hi = max((i.high for i in known), default=1.0)
    for y, dot in zip(ys, dots):
        iv = dot.interval
        if iv is None or math.isnan(iv.point):
            ax.text(lo, y, " missing", va="center", ha="left", fontsize=size - 1, color=dot.color, style="italic")
            continue
        if dot.paper:
            ax.plot([iv.point], [y], marker="D", markersize=4 if small else 5, markerfacecolor="none",
                    markeredgecolor=PAPER_COLOR, linestyle="none")
        else:
            ax.errorbar([iv.point], [y], xerr=[[iv.point - iv.low], [iv.high - iv.point]], fmt="o",
                        color=dot.color, capsize=3, markersize=5 if small else 6,
                        markerfacecolor="white" if dot.flagged else dot.color)
    subjects = sum(1 for d in dots if not d.paper)
    if 0 < subjects < len(dots):
        ax.axhline(ys[subjects - 1] - 0.5, color="0.6", linewidth=0.8, linestyle="--")
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{d.label} (flagged)" if d.flagged else d.label for d in dots], fontsize=size)
    ax.set_ylim(-0.6, rows - 0.4)
    if hi > lo:
        pad = (hi - lo) * 0.08
        ax.set_xlim(lo - pad, hi + pad)
    if note:
        ax.text(0.98, ys[-1] - 1, note, transform=ax.get_yaxis_transform(), ha="right", va="center",
                fontsize=size - 1, style="italic", color="0.35")
    ax.set_title(title, fontsize=size + 1)
    ax.set_xlabel(metric, fontsize=size)
    ax.tick_params(axis="x", labelsize=size - 1)
    ax.grid(axis="x", alpha=0.3)


def write_game_plot(game: GameCard, path: Path, model: str) -> Path:
    """``report_<game>.png``: model, random and rule with their 95 % intervals, the papers' models
    as reference marks."""
    plt = _pyplot()
    dots = subject_dots(game, {"model": f"model ({model})"})
    fig, ax = plt.subplots(figsize=(7.5, 1.2 + 0.32 * len(dots)))
    arrow = "higher is better" if game.setting.higher_is_better else "lower is better"
    draw_dots(ax, dots, f"{game.setting.label} ({game.setting.paper})", f"{game.setting.metric} ({arrow})",
              note=_no_figure(game))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _no_figure(game: GameCard) -> str:
    return "" if game.published() else "no comparable published figure"


def _published_ends(game: GameCard) -> list[Dot]:
    """The best and the worst published model only (a panel stays small)."""
    published = game.published()
    ends = [published[0], published[-1]] if len(published) > 1 else published
    return [Dot(f"{m} (paper)", Interval(v, v, v, 0, "published"), PAPER_COLOR, paper=True) for m, v in ends]


def _overview_dots(game: GameCard, label: dict[str, str]) -> list[Dot]:
    """The subjects, then the best and the worst published model."""
    return [d for d in subject_dots(game, label) if not d.paper] + _published_ends(game)


def write_panels(games: Sequence[tuple[GameCard, list[Dot]]], path: Path, suptitle: str) -> Path:
    """One small panel per game, four to a row."""
    plt = _pyplot()
    cols = min(4, max(1, len(games)))
    rows = math.ceil(len(games) / cols)
    height = max(len(dots) + (1 if _no_figure(game) else 0) for game, dots in games) if games else 1
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, (0.9 + 0.27 * height) * rows + 0.6), squeeze=False)
    for ax, (game, dots) in zip(axes.flat, games):
        arrow = "↑" if game.setting.higher_is_better else "↓"
        draw_dots(ax, dots, game.setting.label, f"{game.setting.metric} {arrow}", small=True, rows=height,
                  note=_no_figure(game))
    for ax in list(axes.flat)[len(games):]:
        ax.axis("off")
    fig.suptitle(suptitle, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write_overview(card: Card, path: Path) -> Path:
    """``report_overview.png``: every game as a panel with model, random, rule and the best and worst
    published model."""
    label = {"model": "model"}
    return write_panels([(g, _overview_dots(g, label)) for g in card.games], path,
                        f"{card.model}: headline per game, 95 % bootstrap intervals (◇ paper figures)")


def write_compare_plot(cards: Sequence[Card], path: Path) -> Path:
    """``compare.png``: per game, each card's model with its interval, the first card's random and
    rule, and the best and the worst published model."""
    panels = []
    for i, game in enumerate(cards[0].games):
        models = [card.games[i].results.get("model") for card in cards]
        dots = [Dot(card.model, None if model is None else model.headline, EXTRA_COLORS[k % len(EXTRA_COLORS)],
                    flagged=model is not None and model.validity.flagged)
                for k, (card, model) in enumerate(zip(cards, models))]
        dots += [Dot(f"{s} (baseline)", r.headline, COLORS[s], flagged=r.validity.flagged)
                 for s, r in game.results.items() if s != "model" and s in COLORS]
        panels.append((game, dots + _published_ends(game)))
    return write_panels(panels, path, "models compared: headline per game, 95 % bootstrap intervals (◇ paper figures)")
