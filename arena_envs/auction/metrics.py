"""AucArena's metrics, computed from the episode's event log and recorded plans.

* failed-bid rate (CFR form) F / (C + F);
* Bid Increment Percentage bins: 100·(b − H)/p with H the standing bid at the start of the round
  (H = p before any bid), p the starting price; integer comparisons;
* belief checks of an LLM bidder's status JSON against the ground truth;
* engagement n_ij (accepted bids per item), wins x_ij, plan priorities and Spearman ρ.
"""
from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from arena_envs.auction.rules import AuctionView
from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_choice

#: Default BIP bin edges in percent of the starting price: [0,10) [10,11) [11,20) [20,50) [50,inf).
BIP_EDGES: tuple[float, ...] = (0, 10, 11, 20, 50)
#: The paper's coarse view: opening bids [0,10), minimum raises [10,11), aggressive [11,inf).
BIP_COARSE_EDGES: tuple[float, ...] = (0, 10, 11)


def cfr(failures: int, accepted: int) -> float:
    """F / (C + F); 0.0 when there was nothing to count."""
    total = failures + accepted
    return failures / total if total else 0.0


def _rate_or_none(failures: int, passes: int) -> float | None:
    """:func:`cfr`, or None when nothing was checked (a rate of nothing is not 0)."""
    return cfr(failures, passes) if failures + passes else None


def bip_bin_labels(edges: Sequence[float] = BIP_EDGES) -> list[str]:
    labels = [f"[{_fmt(a)},{_fmt(b)})" for a, b in itertools.pairwise(edges)]
    labels.append(f"[{_fmt(edges[-1])},inf)")
    return labels


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def bip_bin(bid: int, standing: int | None, start_price: int, edges: Sequence[float] = BIP_EDGES) -> int:
    """Index of the BIP bin of one accepted bid (bin k iff edge_k·p <= 100·(b − H) < edge_k+1·p)."""
    base = start_price if standing is None else standing
    scaled = 100 * (bid - base)
    index = 0
    for k, edge in enumerate(edges):
        if scaled >= edge * start_price:
            index = k
    return index


def bip_counts(bids: Iterable[tuple[int, int | None, int]], edges: Sequence[float] = BIP_EDGES) -> list[int]:
    """Counts per bin for ``(bid, standing, start_price)`` triples."""
    counts = [0] * len(edges)
    for bid, standing, price in bids:
        counts[bip_bin(bid, standing, price, edges)] += 1
    return counts


# ---------------------------------------------------------------------------------------------- beliefs


#: How belief keys and item names are matched: "exact" (the reference code: a key must be a bidder's
#: name exactly, item names compare case-sensitively) or "lenient" (any key containing the name, in
#: any case, as in "bidder 2 (you)"; item names compare case-insensitively).
BELIEF_MATCHES = ("exact", "lenient")


def _bidder_for_key(key: str, names: Sequence[str], match: str = "exact") -> int | None:
    """The bidder a belief key refers to, else None (see BELIEF_MATCHES)."""
    if match == "exact":
        return names.index(key) if key in names else None
    lowered = str(key).strip().lower()
    for seat, name in enumerate(names):
        if re.search(rf"\b{re.escape(name.lower())}\b", lowered):
            return seat
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_belief(belief: Mapping[str, Any] | str, truth: Mapping[str, Any], seat: int,
                 names: Sequence[str], match: str = "exact") -> tuple[list[str], list[tuple[str, bool]]]:
    """Compare a status JSON with the ground truth (``match``: one of BELIEF_MATCHES).

    Returns ``(errors, checks)``: human-readable error messages, and one ``(scope, passed)`` per
    belief check with scope ``"self"`` or ``"other"``. A sanity failure gives one error and no
    checks. ``truth`` is :meth:`AuctionEnv.ground_truth_status` (keyed by display names).
    """
    if isinstance(belief, str):
        try:
            parsed: Any = json.loads(belief)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than Python's stack
            return ["your status is not valid JSON; reply with the status JSON only"], []
    else:
        parsed = belief
    check_choice("match", match, BELIEF_MATCHES)
    problem = belief_sanity_problem(parsed)
    if problem:
        return [f"your status JSON is malformed: {problem}"], []
    me = names[seat]
    errors: list[str] = []
    checks: list[tuple[str, bool]] = []

    true_budget = truth["remaining_budget"][me]
    ok = parsed["remaining_budget"] == true_budget
    checks.append(("self", ok))
    if not ok:
        errors.append(f"your belief of budget is wrong: you have ${true_budget} left, you think "
                      f"${excerpt(parsed['remaining_budget'])}")

    def check_each(section: str, truth_of: Any, matches: Any, describe: Any) -> None:
        for key, value in parsed[section].items():
            other = _bidder_for_key(key, names, match)
            if other is None:
                continue
            true_value = truth_of(names[other])
            ok = matches(value, true_value)
            checks.append(("self" if other == seat else "other", ok))
            if not ok:
                errors.append(describe(names[other], value, true_value))

    check_each("total_profits", lambda name: truth["total_profits"][name], lambda got, want: got == want,
               lambda name, got, want: f"your belief of the total profit of {name} is wrong: it is ${want}, "
                                       f"you think ${excerpt(got)}")
    if match == "exact":
        def same_items(got: Any, want: list[str]) -> bool:
            return set(got) == set(want)
    else:
        def same_items(got: Any, want: list[str]) -> bool:
            return {str(n).strip().lower() for n in got} == {n.lower() for n in want}
    check_each("winning_bids", lambda name: list(truth["winning_bids"][name]), same_items,
               lambda name, got, want: f"your belief of the items won by {name} is wrong: {name} won "
                                       f"{', '.join(want) or 'nothing'}")
    return errors, checks


def belief_sanity_problem(belief: Any) -> str | None:
    """Why ``belief`` is not a well-formed status JSON object, else None (no checks are made then)."""
    if not isinstance(belief, dict):
        return "it must be a JSON object"
    for key in ("remaining_budget", "total_profits", "winning_bids"):
        if key not in belief:
            return f"the key {key!r} is missing"
    if not _is_number(belief["remaining_budget"]):
        return "remaining_budget must be a number"
    if not isinstance(belief["total_profits"], dict) or not isinstance(belief["winning_bids"], dict):
        return "total_profits and winning_bids must be objects"
    if not all(_is_number(v) for v in belief["total_profits"].values()):
        return "every total profit must be a plain number"
    for bids in belief["winning_bids"].values():
        if not isinstance(bids, dict) or not all(_is_number(v) for v in bids.values()):
            return "every bidder's winning_bids must be an object of item -> number"
    return None


# ---------------------------------------------------------------------------------------------- plans


def parse_priorities(priorities: Mapping[str, Any], item_names: Sequence[str]) -> dict[int, int]:
    """Item index -> priority in {1, 2, 3}; names matched case-insensitively, the rest ignored."""
    index = {name.strip().lower(): i for i, name in enumerate(item_names)}
    result = {}
    for key, value in priorities.items():
        i = index.get(str(key).strip().lower())
        if i is None or isinstance(value, bool):
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, int) and value in (1, 2, 3):
            result[i] = value
    return result


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's ρ with average ranks for ties; ``None`` when undefined (constant input, n < 2)."""
    if len(xs) != len(ys):
        raise ValueError("spearman needs sequences of equal length")
    if len(xs) < 2:
        return None
    rx, ry = _average_ranks(xs), _average_ranks(ys)
    if np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])


def _average_ranks(values: Sequence[float]) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    order = np.argsort(arr, kind="stable")
    ranks = np.empty(len(arr))
    sorted_vals = arr[order]
    i = 0
    while i < len(arr):
        j = i
        while j + 1 < len(arr) and sorted_vals[j + 1] == sorted_vals[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def plan_rows(plans: Sequence[Mapping[str, Any]], n_items: int, bids: Sequence[int],
              wins: Sequence[int]) -> list[dict[str, Any]]:
    """Per item j: r^(1) (initial plan), r^(j) (plan in force before item j), n_j, x_j.

    ``plans`` are ``{"kind", "stamp", "priorities": {item index: score}}`` in the order recorded;
    a plan stamped t applies from item t on. Items without a score are left out.
    """
    if not plans:
        return []
    initial = plans[0]["priorities"]
    rows = []
    for j in range(n_items):
        current = None
        for plan in plans:
            if plan["stamp"] <= j:
                current = plan["priorities"]
        r_j = None if current is None else current.get(j)
        rows.append({"item": j, "r1": initial.get(j), "rj": r_j, "n": bids[j], "x": wins[j]})
    return rows


def spearman_table(rows: Iterable[Mapping[str, Any]]) -> dict[str, float | None]:
    """ρ(r1, n), ρ(r1, x), ρ(rj, n), ρ(rj, x) pooled over ``rows`` (the paper's Figure 6 table)."""
    rows = list(rows)
    table = {}
    for plan_key in ("r1", "rj"):
        usable = [r for r in rows if r[plan_key] is not None]
        for outcome in ("n", "x"):
            table[f"rho({plan_key},{outcome})"] = spearman([r[plan_key] for r in usable], [r[outcome] for r in usable])
    return table


# ---------------------------------------------------------------------------------------------- episode


def episode_metrics(rules: AuctionView, events: Sequence[Mapping[str, Any]], desires: Sequence[str],
                    invalid_counts: Mapping[str, Mapping[str, int]], belief_checks: Mapping[str, Mapping[str, int]],
                    plans: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """Per-bidder and game metrics of an auction episode: its state, log events and the
    environment's counts (invalid answers, belief checks per agent) and recorded plans."""
    starts = {e["item"]: e["start_price"] for e in events if e["type"] == "item_open"}
    decisions = [e for e in events if e["type"] == "decision"]
    agents: dict[str, dict[str, Any]] = {}
    for seat, agent in enumerate(rules.ids):
        mine = [e for e in decisions if e["agent"] == agent]
        bids = [(e["amount"], e["standing"], starts[e["item"]]) for e in mine if e["amount"] is not None]
        counts = invalid_counts[agent]
        accepted = len(mine)
        beliefs = belief_checks[agent]
        passed = beliefs["self_pass"] + beliefs["other_pass"]
        failed = beliefs["self_fail"] + beliefs["other_fail"]
        profit = rules.profit[seat]
        items_won = len(rules.won[seat])
        n_items = len(rules.items)
        wins = [0] * n_items
        for i, _ in rules.won[seat]:
            wins[i] = 1
        agents[agent] = {
            "score": items_won if desires[seat] == "maximize_items" else profit,
            "profit": profit,
            "items_won": items_won,
            "money_left": rules.remaining[seat],
            "bids": len(bids),
            "withdrawals": accepted - len(bids),
            "accepted_decisions": accepted,
            "failed_bids": counts["illegal"],
            "parse_failures": counts["unparseable"],
            "forced_withdrawals": sum(1 for e in mine if e.get("forced")),
            "failed_bid_rate": cfr(counts["illegal"], accepted),
            "bip_bins": dict(zip(bip_bin_labels(), bip_counts(bids))),
            "bip_coarse": dict(zip(bip_bin_labels(BIP_COARSE_EDGES), bip_counts(bids, BIP_COARSE_EDGES))),
            "belief_checks": passed + failed,
            "belief_errors": failed,
            "belief_error_rate": _rate_or_none(failed, passed),
            "belief_error_rate_self": _rate_or_none(beliefs["self_fail"], beliefs["self_pass"]),
            "belief_error_rate_other": _rate_or_none(beliefs["other_fail"], beliefs["other_pass"]),
            "belief_sanity_errors": beliefs["sanity_errors"],
            "plan_rows": plan_rows(plans[agent], n_items, rules.bid_counts[seat][:n_items], wins),
        }
    rounds = [e for e in events if e["type"] == "round_end"]
    return {
        "agents": agents,
        "game": {
            "items": len(rules.items),
            "sold": sum(1 for r in rules.results if r is not None),
            "unsold": sum(1 for r in rules.results if r is None),
            "rounds_total": len(rounds),
            "accepted_decisions": len(decisions),
            "accepted_bids": sum(1 for e in decisions if e["amount"] is not None),
            "order": [item.name for item in rules.items],
        },
    }
