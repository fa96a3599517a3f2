"""What a game's view draws, derived from one committed episode of a results folder.

:func:`view_data` is pure data: JSON-safe, bounded (strings cut to :data:`MAX_TEXT` characters, lists to
:data:`MAX_ITEMS`), built only for the registered environments it knows (a folder is data: any other name
gets None, nothing is imported or built from it). The auction, Who is Spy, trading and the γ-Bench games
are read from the episode's record; the tank battle is played again from the log
(:mod:`arena_envs.view.tank_data`). A record with missing or odd fields gives what can be read, never
an exception: ``{"kind": ..., "error": ...}`` when nothing can.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena_envs.registration import ENVIRONMENTS
from arena_envs.view.gamma_data import GAMMA_VIEWS
from arena_envs.view.shapes import MAX_ITEMS, MAX_TEXT, as_list, events_of, number, obj, seat_order, text
from arena_envs.view.tank_data import tank_view

__all__ = ["MAX_ITEMS", "MAX_TEXT", "view_data"]


def view_data(env: str, env_kwargs: dict[str, Any], entry: dict[str, Any], steps: list[dict[str, Any]],
              record: Any) -> dict[str, Any] | None:
    """The data ``static/games/*.js`` draws for episode ``entry`` (its ``episodes.jsonl`` line) of a run
    of ``env`` with ``env_kwargs``, from its decision lines ``steps`` and its ``record``: None where the
    game has no view beyond the transcript (an environment not registered, or not one of the twelve)."""
    if not isinstance(env, str) or env not in ENVIRONMENTS or env not in VIEWS:
        return None
    entry = entry if isinstance(entry, dict) else {}
    kwargs = env_kwargs if isinstance(env_kwargs, dict) else {}
    lines = [line for line in steps if isinstance(line, dict)] if isinstance(steps, list) else []
    kind, build = VIEWS[env]
    if build is None:
        return tank_view(kwargs, entry, lines, record)
    if not isinstance(record, dict):
        return {"kind": kind, "game": env, "error": "the episode has no record"}
    try:
        return build(env, record, entry)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError) as err:
        return {"kind": kind, "game": env, "error": f"the record cannot be read: {text(err, 300)}"}


# ------------------------------------------------------------------------------------------ auction

def auction_view(env: str, record: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """Items in sale order, each with its rounds (every bid; ``null`` a withdrawal), its result and
    every bidder's money left after it; the bidders' starting budgets and final profits."""
    events = events_of(record)
    bidders = seat_order(entry, record)
    setup = next((e for e in events if e.get("type") == "setup"), {})
    budgets = as_list(setup.get("budgets"))
    left: dict[str, float | int | None] = {b: number(budgets[k]) if k < len(budgets) else None
                                           for k, b in enumerate(bidders)}
    items: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for event in events:
        kind = event.get("type")
        if kind == "item_open":
            current = {"name": text(event.get("name")), "start_price": number(event.get("start_price")),
                       "increment": number(event.get("increment")), "rounds": [], "result": None,
                       "true_value": None}
            if len(items) < MAX_ITEMS:
                items.append(current)
        elif current is None:
            continue
        elif kind == "round_end" and len(current["rounds"]) < MAX_ITEMS:
            decisions = obj(event.get("decisions"))
            bids = {text(a, 80): (None if number(d) is None or number(d) == -1 else number(d))
                    for a, d in list(decisions.items())[:MAX_ITEMS]}
            current["rounds"].append({"round": number(event.get("round")), "bids": bids,
                                      "leader": text(event.get("leader"), 80) if event.get("leader") else None,
                                      "highest": number(event.get("highest"))})
        elif kind == "discount":
            current["rounds"].append({"discount": number(event.get("price"))})
        elif kind in ("hammer", "unsold"):
            winner = text(event.get("winner"), 80) if kind == "hammer" else None
            price = number(event.get("price"))
            current["true_value"] = number(event.get("true_value"))
            current["result"] = {"winner": winner, "price": price} if winner else {"unsold": True}
            money = left.get(winner or "")
            if winner is not None and money is not None and price is not None:
                left[winner] = money - price
            current["left"] = dict(left)
    agents = obj(obj(record.get("metrics")).get("agents"))
    profit = {b: number(obj(agents.get(b)).get("profit")) for b in bidders}
    return {"kind": "auction", "game": env, "bidders": bidders, "seats": _seats(entry),
            "budgets": {b: number(budgets[k]) if k < len(budgets) else None for k, b in enumerate(bidders)},
            "items": items, "profit": profit}


# --------------------------------------------------------------------------------------- who is spy

def who_is_spy_view(env: str, record: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """Rounds with each speech (quoted as said, its rule violation if any), each vote (voter, target),
    the tally and who was eliminated; the words, the spies, the winner and the scores."""
    game = obj(record.get("game"))
    names = [text(n, 80) for n in as_list(game.get("player_names"))[:MAX_ITEMS]] or seat_order(entry, record)
    spies = [names[s] for s in as_list(game.get("spy_seats")) if isinstance(s, int) and 0 <= s < len(names)]
    rounds = []
    for r in as_list(game.get("rounds"))[:MAX_ITEMS]:
        if not isinstance(r, dict):
            continue
        speeches = [{"speaker": text(d.get("speaker"), 80), "text": text(d.get("text")),
                     "violation": text(d.get("violation")) if d.get("violation") else None}
                    for d in as_list(r.get("descriptions"))[:MAX_ITEMS] if isinstance(d, dict)]
        votes = [{"voter": text(v.get("voter"), 80), "target": text(v.get("target"), 80) if v.get("target") else None}
                 for v in as_list(r.get("votes"))[:MAX_ITEMS] if isinstance(v, dict)]
        tally = obj(r.get("tally"))
        rounds.append({"round": number(r.get("round")), "speeches": speeches, "votes": votes,
                       "tally": {text(k, 80): number(n) for k, n in list(tally.items())[:MAX_ITEMS]},
                       "eliminated": text(r.get("eliminated_by_vote"), 80) if r.get("eliminated_by_vote") else None,
                       "violations": [text(p, 80) for p in as_list(r.get("eliminated_by_violation"))[:MAX_ITEMS]]})
    result = obj(game.get("outcome"))
    scores = obj(game.get("scores"))
    return {"kind": "who_is_spy", "game": env, "players": names, "seats": _seats(entry),
            "civilian_word": text(game.get("civilian_word"), 200), "spy_word": text(game.get("spy_word"), 200),
            "spies": spies, "rounds": rounds,
            "winner": text(result.get("winner"), 80) if result.get("winner") else None,
            "end": text(result.get("end_condition"), 80) if result.get("end_condition") else None,
            "scores": {text(k, 80): number(v) for k, v in list(scores.items())[:MAX_ITEMS]}}


# ------------------------------------------------------------------------------------------ trading

def trading_view(env: str, record: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """Per date: each asset's close, each trader's equity and position (exposure per asset after the
    day's orders) and orders; ``phase`` per day (``warmup`` or ``eval``). ``dates[0]`` is the first
    day's close (the start); every later entry is a day's ``next_date``, when its return is realised."""
    events = events_of(record)
    start = next((e for e in events if e.get("type") == "start"), {})
    assets = [text(a, 40) for a in as_list(start.get("assets"))[:64]]
    traders = seat_order(entry, record)
    capital = number(start.get("initial_capital"))
    first = as_list(start.get("dates"))
    dates = [text(first[0], 40)] if first else [""]
    closes = [[number(c) for c in as_list(start.get("closes0"))[:len(assets)]]]
    equity: dict[str, list[float | None]] = {t: [capital] for t in traders}
    exposure: dict[str, list[list[float | None]]] = {t: [] for t in traders}
    orders: dict[str, list[str]] = {t: [] for t in traders}
    phases: list[str] = []
    for day in (e for e in events if e.get("type") == "day"):
        if len(phases) >= MAX_ITEMS * 5:
            break
        dates.append(text(day.get("next_date"), 40))
        phases.append(text(day.get("phase"), 20))
        closes.append([number(c) for c in as_list(day.get("closes"))[:len(assets)]])
        decided = obj(day.get("decisions"))
        worth = obj(day.get("equity"))
        for t in traders:
            mine = obj(decided.get(t))
            exposure[t].append([number(x) for x in as_list(mine.get("exposure"))[:len(assets)]])
            orders[t].append(" ".join(text(p[0], 12) for p in as_list(mine.get("parsed"))[:len(assets)]
                                      if isinstance(p, list) and p))
            equity[t].append(number(worth.get(t)))
    return {"kind": "trading", "game": env, "assets": assets, "traders": traders, "seats": _seats(entry),
            "initial_capital": capital, "dates": dates, "closes": closes, "equity": equity,
            "exposure": exposure, "orders": orders, "phases": phases}


def _seats(entry: dict[str, Any]) -> dict[str, str]:
    """Agent -> player label, from the episode's entry."""
    seats = entry.get("seats")
    if not isinstance(seats, dict):
        return {}
    return {text(a, 80): text(label, 200) for a, label in list(seats.items())[:MAX_ITEMS]}


Builder = Callable[[str, dict[str, Any], dict[str, Any]], dict[str, Any]]

#: environment -> (view kind, builder from the record); the tank battle is played again (:func:`tank_view`)
VIEWS: dict[str, tuple[str, Builder | None]] = {
    "auction_v0": ("auction", auction_view),
    "who_is_spy_v0": ("who_is_spy", who_is_spy_view),
    "trading_v0": ("trading", trading_view),
    "tank_battle_v0": ("tank", None),
    **{name: ("gamma", build) for name, build in GAMMA_VIEWS.items()},
}
