"""The papers' published figures for their own models, per game, typed once from the papers' tables;
``tests/test_eval_report.py`` checks every one against a second transcription of those tables.

Each :class:`Figure` names the paper table, the row (its leading cells) and the column it comes
from, so the report can cite it. :class:`GamePapers` says which quantity is comparable to the
evaluation's headline metric (``None`` where the paper published none, with the reason in ``note``).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from arena_envs.evaluation.paper_metrics import WIS_GAMES
from arena_envs.gamma.paper_table import TABLE_1, TABLE_1_GAMES, table_1_cell


@dataclass(frozen=True)
class Figure:
    """One number of a paper's table."""

    quantity: str  #: what it measures, in the report's words (``"Score (0-100)"``, ``"FDis"``)
    table: str  #: the paper's table, e.g. ``"Table 1"``
    row: tuple[str, ...]  #: the leading cells of the table's row
    column: str  #: the table's column header
    value: float
    spread: float | None = None  #: the ``±`` part of the cell, where the paper gives one


@dataclass(frozen=True)
class PublishedModel:
    model: str
    figures: tuple[Figure, ...]
    baseline: bool = False  #: the paper's own random player, not a model


#: A quantity computed from a published model's figures (quantity -> value); None when one is missing.
Derivation = Callable[[Mapping[str, float]], "float | None"]


@dataclass(frozen=True)
class GamePapers:
    game: str
    paper: str  #: the paper the figures come from, as the report names it (``"γ-Bench"``)
    headline: str | None  #: the quantity in the unit of the evaluation's headline; None: none published
    note: str  #: how the figures compare with the evaluation's
    models: tuple[PublishedModel, ...]
    derived: Mapping[str, Derivation] = field(default_factory=dict)  #: computed from the figures
    #: quantity -> (the setting's metric, the parts it is computed on) where the quantity is that
    #: metric on some parts only; any other quantity is the setting's metric of the same name
    subsets: Mapping[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    digits: int = 1  #: decimals the paper prints
    derived_digits: int = 2  #: decimals of a derived quantity

    def values(self, model: PublishedModel) -> dict[str, float]:
        """Quantity -> value of ``model``, derived quantities included (where they can be)."""
        values = {f.quantity: f.value for f in model.figures}
        for name, derive in self.derived.items():
            value = derive(values)
            if value is not None:
                values[name] = value
        return values

    def digits_of(self, quantity: str) -> int:
        return self.derived_digits if quantity in self.derived else self.digits

    def quantities(self) -> list[str]:
        """The derived quantities, then the published ones, in table order."""
        return [*self.derived, *dict.fromkeys(f.quantity for m in self.models for f in m.figures)]

    def citation(self, figures: Sequence[Figure] | None = None) -> str:
        """Where ``figures`` (default: all of the game's) come from, in the paper's own terms, e.g.
        ``"the γ-Bench paper, Table 1"``."""
        if figures is None:
            figures = [f for m in self.models for f in m.figures]
        tables = list(dict.fromkeys(f.table for f in figures))
        return f"the {self.paper} paper, {', '.join(tables)}"

    def headline_figures(self, include_baselines: bool = False) -> list[tuple[str, float]]:
        """(model, figure comparable to the headline) for each model that has one."""
        if self.headline is None:
            return []
        found = []
        for m in self.models:
            value = self.values(m).get(self.headline)
            if value is not None and (include_baselines or not m.baseline):
                found.append((m.model, value))
        return found


# -- γ-Bench: paper Table 1 (rows are games, columns models; mean±std of 5 runs)

GAMMA_SCORE = "Score (0-100)"


def _gamma(row: str, game: str) -> GamePapers:
    models = []
    for model in TABLE_1:
        mean, std = table_1_cell(model, game)
        models.append(PublishedModel(model, (Figure(GAMMA_SCORE, "Table 1", (row,), model, mean, std),)))
    return GamePapers(game, "γ-Bench", GAMMA_SCORE,
                      "the paper's default ten-player setting; mean±std over its 5 runs", tuple(models))


# -- Tank battle: paper Tables 2 (Level 1), 3 (Level 2), 4 (Level 3, with cooperation)

TANK_SCORE = "Avg. Score (stages 3-7)"
TANK_DIS = "Avg.Dis (stages 1-2)"
_TANK_STAGES = ("S3 Score", "S4 Score", "S5 Score", "S6 Score", "S7 Score")
#: model -> S1 FDis, S2 FDis, Avg.Dis (Table 2), S3 and S4 Score (Table 3), S5, S6 and S7 Score (Table 4)
_TANK_TABLES = {
    "claude3.5-sonnet-0620": (13.7, 12.0, 12.8, 5.3, 4.3, 6.3, 7.0, 8.3),
    "gpt-4o-mini": (12.3, 10.7, 11.5, 3.3, 1.3, 5.7, 4.7, 2.0),
    "gpt-3.5-turbo-0125": (10.7, 5.7, 8.2, 0.3, 0.3, 1.0, 1.3, 2.3),
    "glm-4-flash": (4.3, 5.0, 4.7, 0.3, 0.7, 0.7, 2.0, 0.3),
    "internlm2.5-7b-chat": (6.7, 4.7, 5.7, 1.8, 0.2, 0.6, 2.2, 3.2),
    "mistral-7b-instruct": (3.3, 5.8, 4.6, 0.3, 0.0, 0.2, 0.0, 0.2),
    "glm-4-9b-chat": (3.8, 4.2, 4.0, 0.4, 0.4, 1.0, 0.6, 1.0),
    "qwen2-7b-instruct": (3.7, 2.1, 2.9, 0.4, 0.2, 0.0, 1.4, 1.2),
    "yi-1.5-9b-chat-16k": (1.9, 1.9, 1.9, 1.4, 0.4, 1.0, 1.8, 2.2),
    "gemma2-9b-it": (2.8, 0.7, 1.8, 0.4, 0.0, 1.8, 0.6, 1.8),
    "llama3-8b-instruct": (-1.4, -1.1, -1.3, 0.4, 0.4, 1.0, 0.8, 1.2),
    "random": (1.0, 1.4, 1.2, 0.2, 0.0, 0.2, 0.4, 0.6),
}


def _stage_mean(values: Mapping[str, float]) -> float | None:
    """Avg. Score of stages 3-7: the mean of the five stage Scores (the paper averages per level only)."""
    scores = [values.get(stage) for stage in _TANK_STAGES]
    return None if None in scores else sum(v for v in scores if v is not None) / len(scores)


def _tank() -> GamePapers:
    models = []
    for model, (fdis1, fdis2, dis, *scores) in _TANK_TABLES.items():
        figures = [Figure("S1 FDis", "Table 2", (model,), "S1 FDis", fdis1),
                   Figure("S2 FDis", "Table 2", (model,), "S2 FDis", fdis2),
                   Figure(TANK_DIS, "Table 2", (model,), "Avg.Dis", dis)]
        for stage, score in zip(_TANK_STAGES, scores):
            figures.append(Figure(stage, "Table 3" if stage in ("S3 Score", "S4 Score") else "Table 4",
                                  (model,), stage, score))
        models.append(PublishedModel(model, tuple(figures), baseline=model == "random"))
    return GamePapers("tank_battle_v0", "BattleAgentBench", TANK_SCORE,
                      "Avg. Score (stages 3-7) is the mean of the five stage Scores of Tables 3 and 4 "
                      "(the paper averages per level only); the secondary tanks were the paper's yi-1.5-9b, "
                      "here the rule tank", tuple(models), {TANK_SCORE: _stage_mean})


# -- Who is Spy: paper Table 2 (90 games per model, roles balanced)

WIS_SCORE = "Avg. score"
WIS_RATING = "WiS rating (90 games)"
_WIS_COLUMNS = ("Spy WR %", "Civilian WR %", "Overall WR %", "Avg score")
_WIS_QUANTITIES = ("Spy win rate (%)", "Civilian win rate (%)", "Win rate (%)", WIS_SCORE)
_WIS_TABLE_2 = {
    "Doubao": (7.69, 66.23, 57.78, 1.04),
    "Gemini-1.5-pro": (30.77, 68.83, 63.33, 1.29),
    "ERNIE": (27.27, 63.29, 58.89, 1.54),
    "Claude-3-5-Sonnet": (22.22, 73.61, 63.33, 1.58),
    "Llama-3-70B-Instruct": (16.67, 68.18, 54.44, 1.71),
    "GPT4": (21.43, 71.05, 63.33, 1.99),
    "Qwen2.5-72B-Instruct": (46.60, 74.67, 70.00, 2.47),
    "Kimi": (40.00, 73.33, 67.78, 2.48),
    "O1Mini": (30.00, 76.25, 71.11, 2.66),
    "GPT4o": (41.18, 84.93, 76.67, 3.24),
}


def _wis_rating(values: Mapping[str, float]) -> float | None:
    """The WiS platform rating after the paper's games at the published average score."""
    score = values.get(WIS_SCORE)
    return None if score is None else 100 + WIS_GAMES * (score - 1)


def _who_is_spy() -> GamePapers:
    models = tuple(PublishedModel(model, tuple(Figure(q, "Table 2", (model,), c, v)
                                               for q, c, v in zip(_WIS_QUANTITIES, _WIS_COLUMNS, cells)))
                   for model, cells in _WIS_TABLE_2.items())
    return GamePapers("who_is_spy_v0", "WiS", WIS_SCORE,
                      f"six players with one spy, about 1 game in 6 as the spy; the other players were the same "
                      f"model, here the rule agent; the rating is the platform's 100 + sum of scores - games of "
                      f"a model that played the paper's {WIS_GAMES} games with its Avg. score",
                      models, {WIS_RATING: _wis_rating}, digits=2, derived_digits=1)


# -- Auction: paper Table 2, Appendix B.1 (budget 20 000, 10 items, vs GPT-4-Turbo and GPT-3.5-Turbo)

_AUCTION_ORDERS = ("Random", "Ascending", "Descending")
_AUCTION_TABLE_2 = {  # bidder -> (profit, items) per order of _AUCTION_ORDERS
    "GPT-4-Turbo": ((8712.5, 5.0), (7525.0, 5.0), (8287.5, 4.3)),
    "GPT-3.5-Turbo": ((3325.0, 1.0), (2875.0, 1.3), (950.0, 0.5)),
    "Human": ((7237.5, 3.8), (10862.5, 3.8), (10025.0, 5.0)),
}


def _auction() -> GamePapers:
    models = []
    for model, cells in _AUCTION_TABLE_2.items():
        figures = []
        for order, (profit, items) in zip(_AUCTION_ORDERS, cells):
            figures.append(Figure(f"Profit ($), {order.lower()}", "Table 2", (model,), f"{order} profit ($)", profit))
            figures.append(Figure(f"Items won, {order.lower()}", "Table 2", (model,), f"{order} items", items))
        models.append(PublishedModel(model, tuple(figures)))
    return GamePapers("auction_v0", "AucArena", None,
                      "no comparable published figure for TrueSkill μ: a rating only means something inside "
                      "its own pool, and the paper's TrueSkill figures are images. Comparable instead: its "
                      "Table 2 (human comparison: profit and items per order at budget 20 000, the third bidder "
                      "against GPT-4-Turbo and GPT-3.5-Turbo; here against two Rule bidders)",
                      tuple(models), subsets={
                          f"{metric}, {order.lower()}": (metric, (f"budget20000_{order.lower()}",))
                          for order in _AUCTION_ORDERS for metric in ("Profit ($)", "Items won")})


# -- Trading: the paper's live results, 2025-08-01 .. 2025-09-30 (cited without a table number)

_TRADING_ROWS = (  # (agent, backbone, asset) -> CR %, AV %, SR (None: not reported)
    (("DeepFundAgent", "(not stated)", "TSLA"), 8.61, 36.68, 1.39),
    (("DeepFundAgent", "(not stated)", "BMRN"), 9.45, 22.82, 1.96),
    (("InvestorAgent", "GPT-4.1", "TSLA"), 40.83, None, 6.47),
    (("InvestorAgent", "GPT-4.1", "BMRN"), 3.79, None, None),
    (("InvestorAgent", "Claude-sonnet-4", "BMRN"), -6.89, None, None),
    (("TradeAgent", "GPT-4.1", "TSLA"), -38.72, None, None),
    (("TradeAgent", "Gemini-2.0-flash", "TSLA"), 21.91, None, None),
    (("HedgeFundAgent", "(best)", "ETH"), 39.66, None, None),
    (("HedgeFundAgent", "(not stated)", "BMRN"), 23.70, None, None),
)


def _trading() -> GamePapers:
    models = []
    for row, cr, av, sr in _TRADING_ROWS:
        figures = [Figure(q, "results table (unnumbered)", row, c, v) for q, c, v in
                   (("CR (%)", "CR", cr), ("AV (%)", "AV", av), ("SR", "SR", sr)) if v is not None]
        agent, backbone, asset = row
        backbone = {"(not stated)": "", "(best)": " (best backbone)"}.get(backbone, f" ({backbone})")
        models.append(PublishedModel(f"{agent}{backbone} on {asset}", tuple(figures)))
    return GamePapers("trading_v0", "Agent Market Arena", None,
                      "no comparable published figure: the paper traded other assets (TSLA, BMRN, ETH, BTC) "
                      "live in 2025-08/09, the evaluation replays its own default window; same units, "
                      "shown for scale only", tuple(models), digits=2)


PAPER_FIGURES: dict[str, GamePapers] = {
    **{game: _gamma(row, game) for row, game in TABLE_1_GAMES.items()},
    "auction_v0": _auction(),
    "tank_battle_v0": _tank(),
    "who_is_spy_v0": _who_is_spy(),
    "trading_v0": _trading(),
}
