"""The rules of AucArena's multi-item English auction, without PettingZoo.

Items are sold one at a time in a fixed order. Each round, every bidder who has not withdrawn from
the item and is not the standing leader decides once (simultaneously): bid or withdraw. A round with
no valid bid hammers the item to the leader at its own bid (or leaves it unsold if nobody ever bid).
The minimum raise is a percentage of the *starting* price; opening bids need only reach the starting
price. Withdrawal is final for the item. All money is integer dollars.

:class:`AuctionRules` keeps the state and appends the paper's log events (``item_open``,
``decision``, ``round_end``, ``hammer``, ``unsold``) to the list it is given.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from arena_envs.auction.items import Item

#: Decision value meaning "withdraw"; any int >= 0 is a bid of that many dollars.
WITHDRAW = -1

#: Tie-break: (tied seats in seat order, context) -> the chosen seat.
TieBreak = Callable[[list[int], dict[str, Any]], int]


def min_increment(price: int, markup_pct: int) -> int:
    """The minimum raise over a standing bid, ``price × pct // 100`` (spec §2.4), at least $1 so
    that every round with a bid raises the price (items priced below $10 would otherwise allow
    endless equal rebids)."""
    return max(1, price * markup_pct // 100)

class AuctionRules:
    """State and transitions of one auction (seats are 0-based ints)."""

    def __init__(
        self,
        items: Sequence[Item],
        budgets: Sequence[int],
        estimates: Sequence[Sequence[int]],
        tie_break: TieBreak,
        events: list[dict[str, Any]],
        agent_ids: Sequence[str],
        min_markup_pct: int = 10,
        auto_withdraw_unaffordable: bool = False,
        enable_discount: bool = False,
    ):
        self.items = tuple(items)
        self.n = len(budgets)
        self.budgets = tuple(int(b) for b in budgets)
        self.estimates = tuple(tuple(e) for e in estimates)
        self.tie_break = tie_break
        self.events = events
        self.ids = tuple(agent_ids)
        self.min_markup_pct = min_markup_pct
        self.auto_withdraw_unaffordable = auto_withdraw_unaffordable
        self.enable_discount = enable_discount

        self.remaining = list(self.budgets)
        self.profit = [0] * self.n
        self.won: list[list[tuple[int, int]]] = [[] for _ in range(self.n)]  # (item index, price)
        self.results: list[tuple[int, int] | None] = []  # per finished item: (winner, price) or None
        self.bid_counts = [[0] * len(self.items) for _ in range(self.n)]  # accepted bids per item
        self.finished = False
        self.item_index = -1
        self._open_next_item()

    # ------------------------------------------------------------------ queries

    @property
    def item(self) -> Item:
        return self.items[self.item_index]

    def current_seat(self) -> int | None:
        """The bidder to decide now, or None when the auction is over."""
        if self.finished:
            return None
        return self.eligible[self.cursor]

    def awaits(self, seat: int) -> bool:
        """Whether ``seat`` still has to decide in the current round."""
        return seat in self.eligible[self.cursor:]

    def min_valid_bid(self) -> int:
        return self.price if self.highest is None else self.highest + self.increment

    def bid_error(self, seat: int, amount: int) -> str | None:
        """Why a bid of ``amount`` by ``seat`` is invalid now (the first failing check), else None."""
        if amount > self.remaining[seat]:
            return f"your bid of ${amount} exceeds your remaining budget of ${self.remaining[seat]}"
        if amount < self.price:
            return f"your bid of ${amount} is below the starting price of ${self.price}"
        if self.highest is not None and amount < self.highest + self.increment:
            return (f"your bid of ${amount} must beat the previous highest bid ${self.highest} "
                    f"by at least ${self.increment}")
        return None

    # ------------------------------------------------------------------ transitions

    def decide(self, seat: int, decision: int, forced: bool = False) -> list[dict[str, Any]]:
        """Record ``seat``'s accepted decision (a valid bid or WITHDRAW); resolve the round when it
        is the last one. Returns the hammer/unsold events this produced (for rewards)."""
        if seat != self.current_seat():
            raise RuntimeError(f"seat {seat} is not the one to decide")
        item_idx = self.item_index
        event = {"type": "decision", "agent": self.ids[seat], "item": item_idx, "round": self.round,
                 "standing": self.highest, "amount": None if decision == WITHDRAW else decision}
        if forced:
            event["forced"] = True
        self.events.append(event)
        self.pending[seat] = decision
        if decision == WITHDRAW:
            self.withdrawn[seat] = True
        else:
            self.bid_counts[seat][item_idx] += 1
        self.cursor += 1
        if self.cursor < len(self.eligible):
            return []
        return self._resolve_round()

    def _resolve_round(self) -> list[dict[str, Any]]:
        bids = {seat: amount for seat, amount in self.pending.items() if amount != WITHDRAW}
        record: dict[str, Any] = {"type": "round_end", "item": self.item_index, "round": self.round,
                                  "decisions": {self.ids[s]: d for s, d in self.pending.items()}}
        self.item_rounds.append(self.pending)
        if bids:
            top = max(bids.values())
            tied = [seat for seat, amount in bids.items() if amount == top]
            record["tie_candidates"] = [self.ids[s] for s in tied] if len(tied) > 1 else []
            if len(tied) > 1:
                leader = self.tie_break(tied, {"item": self.item.name, "round": self.round, "bid": top})
                if leader not in tied:
                    raise ValueError(f"tie_break chose seat {leader}, not one of {tied}")
            else:
                leader = tied[0]
            self.highest, self.leader = top, leader
        record["leader"] = None if self.leader is None else self.ids[self.leader]
        record["highest"] = self.highest
        self.events.append(record)
        self.round_leaders.append(self.leader)
        if bids:
            self._start_round()
            if self.eligible:
                return []
            return self._hammer()
        if self.leader is None and self.enable_discount and self.discounts < 3:
            self.discounts += 1
            self.price //= 2
            self.increment = min_increment(self.price, self.min_markup_pct)
            self.withdrawn = [False] * self.n
            self.events.append({"type": "discount", "item": self.item_index, "price": self.price})
            self._start_round()
            if self.eligible:
                return []
        return self._hammer()

    def _hammer(self) -> list[dict[str, Any]]:
        item = self.item
        if self.leader is None:
            event = {"type": "unsold", "item": self.item_index, "name": item.name}
            self.results.append(None)
        else:
            winner, price = self.leader, self.highest
            self.remaining[winner] -= price
            self.profit[winner] += item.true_value - price
            self.won[winner].append((self.item_index, price))
            self.results.append((winner, price))
            event = {"type": "hammer", "item": self.item_index, "name": item.name,
                     "winner": self.ids[winner], "price": price, "true_value": item.true_value}
        self.events.append(event)
        self._open_next_item()
        return [event]

    def _open_next_item(self) -> None:
        self.item_index += 1
        if self.item_index >= len(self.items):
            self.finished = True
            self.eligible, self.cursor = [], 0
            self.round_withdrawn = tuple(self.withdrawn)
            return
        item = self.item
        self.price = item.start_price
        self.increment = min_increment(item.start_price, self.min_markup_pct)
        self.highest: int | None = None
        self.leader: int | None = None
        self.withdrawn = [False] * self.n
        self.round = 0
        self.discounts = 0
        self.item_rounds: list[dict[int, int]] = []  # accepted decisions per completed round
        self.round_leaders: list[int | None] = []
        self.events.append({"type": "item_open", "item": self.item_index, "name": item.name,
                            "start_price": item.start_price, "increment": self.increment})
        self._start_round()
        if not self.eligible:  # nobody can take part (only with auto-withdraw): unsold at once
            self._hammer()

    def _start_round(self) -> None:
        self.round += 1
        self.pending: dict[int, int] = {}
        self.cursor = 0
        eligible = [s for s in range(self.n) if not self.withdrawn[s] and s != self.leader]
        if self.auto_withdraw_unaffordable:
            floor = self.min_valid_bid()
            for seat in [s for s in eligible if self.remaining[s] < floor]:
                self.withdrawn[seat] = True
                self.events.append({"type": "auto_withdraw", "agent": self.ids[seat],
                                    "item": self.item_index, "round": self.round})
            eligible = [s for s in eligible if not self.withdrawn[s]]
        self.eligible = eligible
        self.round_withdrawn = tuple(self.withdrawn)  # what observers may know during this round
