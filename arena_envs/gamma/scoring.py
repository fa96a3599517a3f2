"""γ-Bench scores (the paper's section 3, Appendix E): raw S1-S8, the 0-100 rescaling, the table row.

Pure functions of ``(params, history)`` in the schema of :mod:`arena_envs.gamma.history` (no
environment imported), so saved or imported logs can be rescored offline. ``variant=`` picks a
form per game; the first entry of :data:`VARIANTS` is the default, the one the paper's Table 1 and
Table 4 were computed with (``tests/test_gamma_reproduction.py`` rescores the published logs):

* ``guess_two_thirds_v0``: ``"paper"`` (R<1: (D-S1)/D, R=1: |2 S1 - D|/D) or ``"repo"`` (R<1:
  (MAX-S1)/D, over 100 when MIN>0; R=1: 100 minus the paper form, as the original code);
* ``divide_dollar_v0``: ``"paper"`` (clipped below at 0, as the original code) or ``"unclipped"``;
* ``sealed_bid_auction_v0``: ``"paper"`` (mean(v-b) / max v; first price), ``"repo_v2"`` (mean
  clipped relative underbid; first price) or ``"second_price_diagnostic"`` (not γ-Bench's);
* ``battle_royale_v0``: ``"paper"`` (divided by the turns k, as the data) or ``"per_player"`` (by N k,
  as the paper's printed formula);
* ``pirate_game_v0``: ``"paper"`` (NE for the actual G, L1 over 2G, votes pooled, the original
  code's vote rule: a 1-coin offer at an odd position behind the proposer credits neither vote, as
  every published Pirate number), ``"paper_text"`` (the paper text's rule: rejecting that offer is
  correct), ``"repo"`` (proposals rescaled to 100 coins against the 100-coin NE, as the original
  code; the paper's Table 8 cells with G ≠ 100 come from it) or ``"per_round_votes"`` (per-round means).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from statistics import fmean, stdev
from typing import Any

from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_choice
from arena_envs.gamma.battle_royale_rules import strongest_opponents
from arena_envs.gamma.history import GAMES
from arena_envs.gamma.pirate_rules import ne_proposal as pirate_ne_proposal
from arena_envs.gamma.pirate_rules import optimal_vote

Record = Mapping[str, Any]

#: Allowed ``variant`` values per game; the first is the default (the paper's tables' form).
VARIANTS: dict[str, tuple[str, ...]] = {
    "guess_two_thirds_v0": ("paper", "repo"),
    "el_farol_v0": ("paper",),
    "divide_dollar_v0": ("paper", "unclipped"),
    "public_goods_v0": ("paper",),
    "diners_dilemma_v0": ("paper",),
    "sealed_bid_auction_v0": ("paper", "repo_v2", "second_price_diagnostic"),
    "battle_royale_v0": ("paper", "per_player"),
    "pirate_game_v0": ("paper", "paper_text", "repo", "per_round_votes"),
}


def _decided(values: Sequence[Any]) -> list[Any]:
    return [v for v in values if v is not None]


def _mean_over_decisions(history: Sequence[Record], key: str, value: Callable[[Any], float] = float) -> float:
    """Mean of ``value(x)`` over every decided entry of ``record[key]`` in every round."""
    values = [value(x) for record in history for x in _decided(record[key])]
    if not values:
        raise ValueError(f"history has no decided {excerpt(key)} to score")
    return fmean(values)


def _nonempty(history: Sequence[Record]) -> None:
    if not history:
        raise ValueError("history is empty: a score needs at least one round record")


# --- 1. Guess 2/3 of the Average ---------------------------------------------------------------

def guess_raw(params: Mapping[str, Any], history: Sequence[Record]) -> float:
    """S1: mean over players and rounds of (choice - MIN)."""
    _nonempty(history)
    low = params["min_value"]
    return _mean_over_decisions(history, "choices", lambda c: c - low)


def _guess_of_raw(params: Mapping[str, Any], s1: float, variant: str) -> float:
    span = params["max_value"] - params["min_value"]
    ratio = float(params["ratio"])
    if math.isclose(ratio, 1.0):
        score = abs(2 * s1 - span) / span * 100
        return 100 - score if variant == "repo" else score
    if ratio > 1:
        return s1 / span * 100
    if variant == "repo":
        return (params["max_value"] - s1) / span * 100
    return (span - s1) / span * 100


# --- 2. El Farol Bar ---------------------------------------------------------------------------

def el_farol_raw(params: Mapping[str, Any], history: Sequence[Record]) -> float:
    """S2: mean over rounds of |go-rate - R|."""
    _nonempty(history)
    n, ratio = params["n_players"], params["capacity_ratio"]
    return fmean(abs(sum(bool(g) for g in _decided(r["go"])) / n - ratio) for r in history)


def _el_farol_of_raw(params: Mapping[str, Any], s2: float, variant: str) -> float:
    ratio = params["capacity_ratio"]
    worst = max(ratio, 1 - ratio)
    return (worst - s2) / worst * 100


# --- 3. Divide the Dollar ----------------------------------------------------------------------

def divide_dollar_raw(params: Mapping[str, Any], history: Sequence[Record]) -> float:
    """S3: mean over rounds of |sum of bids - G|."""
    _nonempty(history)
    golds = params["golds"]
    return fmean(abs(sum(_decided(r["bids"])) - golds) for r in history)


def _divide_dollar_of_raw(params: Mapping[str, Any], s3: float, variant: str) -> float:
    golds = params["golds"]
    score = (golds - s3) / golds * 100
    return score if variant == "unclipped" else max(score, 0.0)


# --- 4. Public Goods Game ----------------------------------------------------------------------

def public_goods_raw(params: Mapping[str, Any], history: Sequence[Record]) -> float:
    """S4: mean contribution over players and rounds."""
    _nonempty(history)
    return _mean_over_decisions(history, "contributions")


def _public_goods_of_raw(params: Mapping[str, Any], s4: float, variant: str) -> float:
    tokens = params["tokens"]
    return (tokens - s4) / tokens * 100


# --- 5. Diner's Dilemma ------------------------------------------------------------------------

def diners_raw(params: Mapping[str, Any], history: Sequence[Record]) -> float:
    """S5: fraction of cheap orders over players and rounds."""
    _nonempty(history)
    return _mean_over_decisions(history, "orders", lambda o: float(o == "cheap"))


def _diners_of_raw(params: Mapping[str, Any], s5: float, variant: str) -> float:
    return (1 - s5) * 100


# --- 6. Sealed-Bid Auction ---------------------------------------------------------------------

def _valuation_bid_pairs(history: Sequence[Record]) -> list[tuple[float, float]]:
    pairs = [(v, b) for r in history for v, b in zip(r["valuations"], r["bids"]) if b is not None]
    if not pairs:
        raise ValueError("history has no bids to score")
    return pairs


def sealed_bid_raw(params: Mapping[str, Any], history: Sequence[Record]) -> float:
    """S6: mean over players and rounds of (valuation - bid)."""
    _nonempty(history)
    return fmean(v - b for v, b in _valuation_bid_pairs(history))


def sealed_bid_score(params: Mapping[str, Any], history: Sequence[Record], variant: str = "paper") -> float:
    _nonempty(history)
    pairs = _valuation_bid_pairs(history)
    if variant != "second_price_diagnostic" and params["mode"] != "first":
        raise ValueError(
            f"the γ-Bench SBA score is defined for mode='first' only, got mode={params['mode']!r}; "
            "use variant='second_price_diagnostic' for second-price logs"
        )
    top = max(v for r in history for v in r["valuations"])
    if variant == "repo_v2":
        return fmean(max(0.0, (v - b) / max(v, 1)) for v, b in pairs) * 100
    if top <= 0:
        raise ValueError("all valuations are 0: the SBA score is undefined")
    if variant == "second_price_diagnostic":
        return (1 - fmean(abs(v - b) for v, b in pairs) / top) * 100
    return fmean(v - b for v, b in pairs) / top * 100


# --- 7. Battle Royale --------------------------------------------------------------------------

def battle_royale_raw(params: Mapping[str, Any], history: Sequence[Record], variant: str = "paper") -> float:
    """S7: share of turns whose shooter aimed at the strongest alive opponent (misses count 0)."""
    _nonempty(history)
    rates = params["hit_rates"]
    correct = sum(
        r["target"] is not None and r["target"] in strongest_opponents(rates, r["alive_before"], r["shooter"])
        for r in history
    )
    turns = len(history) * (params["n_players"] if variant == "per_player" else 1)
    return correct / turns


def _battle_royale_of_raw(params: Mapping[str, Any], s7: float, variant: str) -> float:
    return s7 * 100


# --- 8. Pirate Game ----------------------------------------------------------------------------

def pirate_vote_is_correct(position: int, offered: int, accept: bool, variant: str = "paper") -> bool:
    """Whether a vote is credited as correct; ``position`` >= 1 is behind the proposer.

    ``paper_text``: the vote follows the optimal rule (Stewart). Every other variant follows the
    original code, which credits neither vote on a one-coin offer at an odd position."""
    if variant != "paper_text" and offered == 1 and position % 2 == 1:
        return False
    return accept == optimal_vote(position, offered)


def _survivors(record: Record) -> list[int]:
    return [i for i, coins in enumerate(record["proposal"]) if coins is not None]


def pirate_round_stats(params: Mapping[str, Any], record: Record, variant: str = "paper") -> tuple[float, int, int]:
    """(L1 distance to the NE proposal, correct votes, votes) of one round."""
    golds = params["golds"]
    survivors = _survivors(record)
    offer = [record["proposal"][i] for i in survivors]
    if variant == "repo":
        offer_scaled = [c * 100 / golds for c in offer]
        l1 = sum(abs(a - b) for a, b in zip(offer_scaled, pirate_ne_proposal(len(offer), 100)))
    else:
        l1 = sum(abs(a - b) for a, b in zip(offer, pirate_ne_proposal(len(offer), golds)))
    start = survivors.index(record["proposer"])
    correct = votes = 0
    for position, player in enumerate(survivors[start + 1:], start=1):
        vote = record["votes"][player]
        if vote is None:
            continue
        votes += 1
        correct += pirate_vote_is_correct(position, record["proposal"][player], bool(vote), variant)
    return l1, correct, votes


def pirate_raw(params: Mapping[str, Any], history: Sequence[Record], variant: str = "paper") -> tuple[float, float]:
    """(S8P, S8V): mean L1 distance of the proposals to the NE, and the vote accuracy.

    S8V is pooled over all votes (``per_round_votes``: the mean of per-round accuracies over the
    rounds that had votes); with no votes at all it is 1.0 (no vote was wrong).
    """
    _nonempty(history)
    return pirate_raw_of_stats([pirate_round_stats(params, r, variant) for r in history], variant)


def pirate_raw_of_stats(stats: Sequence[tuple[float, int, int]], variant: str = "paper") -> tuple[float, float]:
    """:func:`pirate_raw` of the rounds' :func:`pirate_round_stats` (for callers that keep them)."""
    s8p = fmean(l1 for l1, _, _ in stats)
    if variant == "per_round_votes":
        per_round = [c / v for _, c, v in stats if v]
        return s8p, fmean(per_round) if per_round else 1.0
    votes = sum(v for _, _, v in stats)
    return s8p, (sum(c for _, c, _ in stats) / votes if votes else 1.0)


def _pirate_of_raw(params: Mapping[str, Any], s8: tuple[float, float], variant: str) -> float:
    s8p, s8v = s8
    span = 2 * (100 if variant == "repo" else params["golds"])
    return (span - s8p) / span * 50 + s8v * 50


# --- dispatch and the table row ----------------------------------------------------------------

#: the 0-100 score from the raw statistic (the Sealed-Bid Auction's needs the valuations as well)
_OF_RAW: dict[str, Callable[[Mapping[str, Any], Any, str], float]] = {
    "guess_two_thirds_v0": _guess_of_raw,
    "el_farol_v0": _el_farol_of_raw,
    "divide_dollar_v0": _divide_dollar_of_raw,
    "public_goods_v0": _public_goods_of_raw,
    "diners_dilemma_v0": _diners_of_raw,
    "battle_royale_v0": _battle_royale_of_raw,
    "pirate_game_v0": _pirate_of_raw,
}

_RAW: dict[str, Callable[..., Any]] = {
    "guess_two_thirds_v0": guess_raw,
    "el_farol_v0": el_farol_raw,
    "divide_dollar_v0": divide_dollar_raw,
    "public_goods_v0": public_goods_raw,
    "diners_dilemma_v0": diners_raw,
    "sealed_bid_auction_v0": sealed_bid_raw,
    "battle_royale_v0": battle_royale_raw,
    "pirate_game_v0": pirate_raw,
}


def _check(game: str, variant: str | None) -> str:
    check_choice("game", game, GAMES)
    if variant is None:
        return VARIANTS[game][0]
    if variant not in VARIANTS[game]:
        raise ValueError(f"variant for {game} must be one of {', '.join(VARIANTS[game])}; got {excerpt(variant)}")
    return variant


def raw_score(game: str, params: Mapping[str, Any], history: Sequence[Record], variant: str | None = None) -> Any:
    """The raw statistic S1..S7 (a float) or (S8P, S8V) for the Pirate Game."""
    variant = _check(game, variant)
    if game in ("battle_royale_v0", "pirate_game_v0"):
        return _RAW[game](params, history, variant)
    return _RAW[game](params, history)


def score(game: str, params: Mapping[str, Any], history: Sequence[Record], variant: str | None = None) -> float:
    """The 0-100 γ-Bench score of one played game (``variant=None``: the paper's form)."""
    return score_of_raw(game, params, history, None, variant)


def score_of_raw(game: str, params: Mapping[str, Any], history: Sequence[Record], raw: Any,
                 variant: str | None = None) -> float:
    """:func:`score`, given ``raw`` = ``raw_score(game, params, history, variant)`` (``None``:
    computed here), so that a caller who reports both computes the statistic once."""
    variant = _check(game, variant)
    if game == "sealed_bid_auction_v0":
        return float(sealed_bid_score(params, history, variant))
    if raw is None:
        raw = raw_score(game, params, history, variant)
    return float(_OF_RAW[game](params, raw, variant))


def table_row(runs: Sequence[Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """The γ-Bench row from per-run game scores: ``{column: {"mean", "std", "n"}}``.

    ``runs[i]`` maps game -> score of run i. Games are averaged over the runs that have them;
    "Overall" is, per run, the mean of that run's game scores, then mean and sample std (ddof=1)
    over runs, as the paper does. With a single run the std is 0.0.
    """
    if not runs:
        raise ValueError("runs is empty: the row needs at least one run")
    row: dict[str, dict[str, float]] = {}
    columns = [g for g in GAMES if any(g in run for run in runs)]
    for game in columns:
        row[game] = _mean_std([run[game] for run in runs if game in run])
    row["overall"] = _mean_std([fmean(run[g] for g in columns if g in run) for run in runs])
    return row


def _mean_std(values: Sequence[float]) -> dict[str, float]:
    return {"mean": fmean(values), "std": stdev(values) if len(values) > 1 else 0.0, "n": len(values)}
