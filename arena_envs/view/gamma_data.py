"""The γ-Bench games' views: each round's choices beside the game's equilibrium, from the record.

Every view is ``{"kind": "gamma", "game", "label", "players", "seats", "params", "rounds",
"equilibrium", "score"}``. ``equilibrium`` holds what the games' modules state (:mod:`arena_envs.gamma`
and docs/gamma): Guess 2/3 the Nash number (:meth:`GuessRules.nash_choice`); El Farol the capacity
floor(R N) (at most R N goers is fun: pure equilibria have exactly that many); Divide the Dollar bids
summing to G, fair share G/N; Public Goods contributing 0 (dominant when R < N); Diner's Dilemma
everyone costly; Sealed-Bid truthful b = v in second price, (N - 1)/N v in first price; Battle
Royale shooting a strongest living opponent (``aims_at_strongest``, the paper's proxy); the Pirate
Game the proposal :func:`ne_proposal` and votes :func:`optimal_vote`.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from arena_envs.gamma.battle_royale_rules import aims_at_strongest
from arena_envs.gamma.guess_rules import GuessRules, as_fraction
from arena_envs.gamma.history import GAME_LABELS
from arena_envs.gamma.pirate_rules import ne_proposal, optimal_vote
from arena_envs.view.shapes import MAX_ITEMS, as_list, events_of, number, obj, seat_order, text


def _base(env: str, record: dict[str, Any], entry: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    config = obj(record.get("config"))
    metrics = obj(record.get("metrics"))
    game = obj(metrics.get("game"))
    seats = obj(entry.get("seats"))
    return {"kind": "gamma", "game": env, "label": GAME_LABELS.get(env, env), "players": seat_order(entry, record),
            "seats": {text(a, 80): text(s, 200) for a, s in list(seats.items())[:MAX_ITEMS]},
            "params": {k: _plain(config.get(k)) for k in keys if k in config},
            "score": number(game.get("score")), "rounds": [], "equilibrium": {}}


def _plain(value: Any) -> Any:
    """A parameter as data: numbers, short strings, bools, None, lists of numbers."""
    if isinstance(value, (bool, type(None))):
        return value
    if isinstance(value, list):
        return [number(v) for v in value[:MAX_ITEMS]]
    return number(value) if not isinstance(value, str) else text(value, 80)


def _rounds(record: dict[str, Any], kind: str = "round") -> list[dict[str, Any]]:
    return [e for e in events_of(record) if e.get("type") == kind][:MAX_ITEMS]


def _numbers(value: Any) -> list[Any]:
    return [number(v) for v in as_list(value)[:MAX_ITEMS]]


def guess(env: str, record: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    view = _base(env, record, entry, ("n_players", "n_rounds", "min_value", "max_value", "ratio", "ratio_text"))
    view["rounds"] = [{"round": number(r.get("round")), "choices": _numbers(r.get("choices")),
                       "average": number(r.get("average")), "target": number(r.get("target")),
                       "winners": _numbers(r.get("winners"))} for r in _rounds(record)]
    p = view["params"]
    try:
        rules = GuessRules(2, 1, p.get("min_value", 0), p.get("max_value", 100),
                           as_fraction("ratio", p.get("ratio", Fraction(2, 3))))
        view["equilibrium"] = {"choice": rules.nash_choice(),
                               "text": "R < 1: everyone picks MIN; R > 1: everyone picks MAX"}
    except (TypeError, ValueError):
        pass
    return view


def el_farol(env: str, record: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    view = _base(env, record, entry, ("n_players", "n_rounds", "capacity_ratio", "max_utility", "min_utility",
                                      "home_utility", "mode"))
    view["rounds"] = [{"round": number(r.get("round")), "go": [v if isinstance(v, bool) else None
                                                              for v in as_list(r.get("go"))[:MAX_ITEMS]],
                       "attendance": number(r.get("attendance")), "crowded": bool(r.get("crowded"))}
                      for r in _rounds(record)]
    n, ratio = number(view["params"].get("n_players")), number(view["params"].get("capacity_ratio"))
    if n is not None and ratio is not None:
        view["equilibrium"] = {"capacity": math.floor(ratio * n + 1e-9),
                               "text": "fun when at most R·N go; pure equilibria: exactly floor(R·N) goers"}
    return view


def divide_dollar(env: str, record: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    view = _base(env, record, entry, ("n_players", "n_rounds", "golds"))
    view["rounds"] = [{"round": number(r.get("round")), "bids": _numbers(r.get("bids")),
                       "total": number(r.get("total")), "exceeded": bool(r.get("exceeded"))} for r in _rounds(record)]
    n, golds = number(view["params"].get("n_players")), number(view["params"].get("golds"))
    if golds is not None:
        view["equilibrium"] = {"total": golds, "fair": golds / n if n else None,
                               "text": "every profile summing to exactly G; the fair one: G/N each"}
    return view


def public_goods(env: str, record: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    view = _base(env, record, entry, ("n_players", "n_rounds", "ratio", "tokens", "reset"))
    view["rounds"] = [{"round": number(r.get("round")), "contributions": _numbers(r.get("contributions")),
                       "tokens": _numbers(r.get("tokens")), "pot": number(r.get("pot")),
                       "share": number(r.get("share"))} for r in _rounds(record)]
    view["equilibrium"] = {"contribution": 0, "text": "contributing nothing is dominant when R < N"}
    return view


def diners(env: str, record: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    view = _base(env, record, entry, ("n_players", "n_rounds", "costly_price", "cheap_price", "costly_utility",
                                      "cheap_utility"))
    view["rounds"] = [{"round": number(r.get("round")),
                       "orders": [o if o in ("costly", "cheap") else None
                                  for o in as_list(r.get("orders"))[:MAX_ITEMS]],
                       "n_costly": number(r.get("n_costly")), "bill_share": number(r.get("bill_share"))}
                      for r in _rounds(record)]
    view["equilibrium"] = {"n_costly": number(view["params"].get("n_players")),
                           "text": "everyone orders the costly dish (dominant), although all-cheap pays more"}
    return view


def sealed_bid(env: str, record: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    view = _base(env, record, entry, ("n_players", "n_rounds", "valuation_min", "valuation_max", "interval", "mode"))
    view["rounds"] = [{"round": number(r.get("round")), "valuations": _numbers(r.get("valuations")),
                       "bids": _numbers(r.get("bids")), "winner": number(r.get("winner")),
                       "price": number(r.get("price"))} for r in _rounds(record)]
    n = number(view["params"].get("n_players"))
    if view["params"].get("mode") == "second":
        view["equilibrium"] = {"bid_share": 1, "text": "second price: bidding the valuation (b = v) is weakly dominant"}
    elif n:
        view["equilibrium"] = {"bid_share": (n - 1) / n,
                               "text": "first price: the symmetric Bayes-Nash bid (N−1)/N · v"}
    return view


def battle_royale(env: str, record: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    view = _base(env, record, entry, ("n_players", "hit_rates", "max_turns"))
    rates = [r if r is not None else 0 for r in view["params"].get("hit_rates") or []]
    turns = []
    for r in _rounds(record, "turn"):
        shooter, target = number(r.get("shooter")), number(r.get("target"))
        alive = [a for a in _numbers(r.get("alive_before")) if isinstance(a, int)]
        try:
            aimed = target if isinstance(target, int) else None
            strongest = aims_at_strongest(rates, alive, shooter, aimed) if isinstance(shooter, int) else None
        except (IndexError, TypeError):
            strongest = None
        turns.append({"round": number(r.get("round")), "shooter": shooter, "target": target, "hit": bool(r.get("hit")),
                      "alive_before": alive, "alive_after": _numbers(r.get("alive_after")),
                      "strongest": strongest})
    view["rounds"] = turns
    view["equilibrium"] = {"text": "the paper's proxy: shoot the strongest living opponent"}
    return view


def pirate(env: str, record: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    view = _base(env, record, entry, ("n_players", "golds"))
    golds = number(view["params"].get("golds"))
    rounds = []
    for r in _rounds(record):
        proposer, proposal = number(r.get("proposer")), _numbers(r.get("proposal"))
        votes = [v if isinstance(v, bool) else None for v in as_list(r.get("votes"))[:MAX_ITEMS]]
        survivors = [k for k, share in enumerate(proposal) if share is not None]
        entry_ = {"round": number(r.get("round")), "proposer": proposer, "proposal": proposal, "votes": votes,
                  "accepted": bool(r.get("accepted")), "ne_proposal": None, "ne_votes": None}
        if isinstance(proposer, int) and isinstance(golds, int) and survivors and survivors[0] == proposer:
            try:
                entry_["ne_proposal"] = [None] * proposer + ne_proposal(len(survivors), golds)
                entry_["ne_votes"] = [None if k <= proposer or proposal[k] is None else
                                      optimal_vote(k - proposer, int(proposal[k])) for k in range(len(proposal))]
            except (ValueError, TypeError):
                pass
        rounds.append(entry_)
    view["rounds"] = rounds
    view["equilibrium"] = {"text": "the proposer keeps G − floor((n−1)/2) and offers 1 coin to each survivor "
                                   "at an even distance; a voter accepts 2+ coins, and 1 only at an even distance"}
    return view


GAMMA_VIEWS: dict[str, Callable[[str, dict[str, Any], dict[str, Any]], dict[str, Any]]] = {
    "guess_two_thirds_v0": guess, "el_farol_v0": el_farol, "divide_dollar_v0": divide_dollar,
    "public_goods_v0": public_goods, "diners_dilemma_v0": diners, "sealed_bid_auction_v0": sealed_bid,
    "battle_royale_v0": battle_royale, "pirate_game_v0": pirate,
}
