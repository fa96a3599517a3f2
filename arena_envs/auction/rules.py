"""The rules of AucArena's multi-item English auction, without PettingZoo.

Items are sold one at a time in a fixed order. Each round, every bidder who has not withdrawn from
the item and is not the standing leader decides once (simultaneously): bid or withdraw. A round with
no valid bid hammers the item to the leader at its own bid (or leaves it unsold if nobody ever bid).
The minimum raise is a percentage of the *starting* price; opening bids need only reach the starting
price. Withdrawal is final for the item. All money is integer dollars.

:class:`AuctionRules` keeps the state and produces the paper's log events (``item_open``,
``decision``, ``round_end``, ``hammer``, ``unsold``...): :meth:`AuctionRules.decide` returns the
events of a decision, :meth:`AuctionRules.take_events` those not yet taken (the first item's
opening); the environment appends them to its record. :class:`AuctionView` is the read-only face of
the state that the texts and metrics use.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from arena_envs.auction.items import Item

#: Decision value meaning "withdraw"; any int >= 0 is a bid of that many dollars.
WITHDRAW = -1

#: Tie-break: (tied seats in seat order, context) -> the chosen seat.
TieBreak = Callable[[list[int], dict[str, Any]], int]


def min_increment(price: int, markup_pct: int) -> int:
    """The minimum raise over a standing bid, ``price × pct // 100`` of the item's starting (or
    discounted) price (the paper's default: 10 %), at least $1 so that every round with a bid
    raises the price (items priced below $10 would otherwise allow endless equal rebids)."""
    return max(1, price * markup_pct // 100)


def repo_tie_break(decisions: Sequence[tuple[int, int]], coin: Callable[[], int]) -> int:
    """The leader of a round with tied top bids, as the reference code picks it.

    ``decisions`` are the round's (seat, bid or WITHDRAW) in the order they were recorded (seat
    order). The reference auctioneer, after recording each decision, scans the round's decisions
    recorded so far: a higher bid takes the lead, and a bid equal to the standing top replaces the
    leader with a fair coin (``coin()`` returns 0 to keep the leader, 1 to take the scanned bidder;
    a bidder may toss against itself). Later seats and rounds with more decisions recorded after
    the tie are therefore favoured: a two-way tie followed by one more decision ends 3/8 : 5/8, a
    three-way tie 3/16 : 5/16 : 1/2.
    """
    leader: int | None = None
    top: int | None = None
    for recorded in range(1, len(decisions) + 1):
        for seat, amount in decisions[:recorded]:
            if amount == WITHDRAW:
                continue
            if top is None or amount > top:
                top, leader = amount, seat
            elif amount == top and coin():
                leader = seat
    if leader is None:
        raise ValueError("repo_tie_break needs at least one bid")
    return leader


class AuctionView(Protocol):
    """What the texts and metrics may read of an auction's state (no writes): :class:`AuctionRules`."""

    @property
    def n(self) -> int: ...
    @property
    def ids(self) -> Sequence[str]: ...
    @property
    def items(self) -> Sequence[Item]: ...
    @property
    def budgets(self) -> Sequence[int]: ...
    @property
    def estimates(self) -> Sequence[Sequence[int]]: ...
    @property
    def min_markup_pct(self) -> int: ...
    @property
    def remaining(self) -> Sequence[int]: ...
    @property
    def profit(self) -> Sequence[int]: ...
    @property
    def won(self) -> Sequence[Sequence[tuple[int, int]]]: ...
    @property
    def results(self) -> Sequence[tuple[int, int] | None]: ...
    @property
    def bid_counts(self) -> Sequence[Sequence[int]]: ...
    @property
    def finished(self) -> bool: ...
    @property
    def item_index(self) -> int: ...
    @property
    def item(self) -> Item: ...
    @property
    def price(self) -> int: ...
    @property
    def increment(self) -> int: ...
    @property
    def round(self) -> int: ...
    @property
    def highest(self) -> int | None: ...
    @property
    def leader(self) -> int | None: ...
    @property
    def item_rounds(self) -> Sequence[Mapping[int, int]]: ...
    @property
    def round_leaders(self) -> Sequence[int | None]: ...

    def min_valid_bid(self) -> int: ...
    def awaits(self, seat: int) -> bool: ...


class AuctionRules:
    """State and transitions of one auction (seats are 0-based ints)."""

    def __init__(
        self,
        items: Sequence[Item],
        budgets: Sequence[int],
        estimates: Sequence[Sequence[int]],
        tie_break: TieBreak,
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
        # the current item and round (set by _open_next_item and _start_round)
        self.price = self.increment = self.round = self.discounts = 0
        self.highest: int | None = None
        self.leader: int | None = None
        self.withdrawn = [False] * self.n
        self.item_rounds: list[dict[int, int]] = []  # accepted decisions per completed round
        self.round_leaders: list[int | None] = []
        self.pending: dict[int, int] = {}
        self.eligible: list[int] = []
        self.cursor = 0
        self.round_withdrawn: tuple[bool, ...] = ()  # what observers may know during this round
        self._events: list[dict[str, Any]] = []  # produced, not yet taken
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

    def take_events(self) -> list[dict[str, Any]]:
        """The log events produced since the last call, in order (the caller keeps them)."""
        events, self._events = self._events, []
        return events

    def decide(self, seat: int, decision: int, forced: bool = False) -> list[dict[str, Any]]:
        """Apply ``seat``'s accepted decision (a valid bid or WITHDRAW); resolve the round when it
        is the last one. Returns the events this produced, its ``decision`` event first."""
        if seat != self.current_seat():
            raise RuntimeError(f"seat {seat} is not the one to decide")
        item_idx = self.item_index
        event = {"type": "decision", "agent": self.ids[seat], "item": item_idx, "round": self.round,
                 "standing": self.highest, "amount": None if decision == WITHDRAW else decision}
        if forced:
            event["forced"] = True
        self._events.append(event)
        self.pending[seat] = decision
        if decision == WITHDRAW:
            self.withdrawn[seat] = True
        else:
            self.bid_counts[seat][item_idx] += 1
        self.cursor += 1
        if self.cursor == len(self.eligible):
            self._resolve_round()
        return self.take_events()

    def _resolve_round(self) -> None:
        bids = {seat: amount for seat, amount in self.pending.items() if amount != WITHDRAW}
        record: dict[str, Any] = {"type": "round_end", "item": self.item_index, "round": self.round,
                                  "decisions": {self.ids[s]: d for s, d in self.pending.items()}}
        self.item_rounds.append(self.pending)
        if bids:
            top = max(bids.values())
            tied = [seat for seat, amount in bids.items() if amount == top]
            record["tie_candidates"] = [self.ids[s] for s in tied] if len(tied) > 1 else []
            if len(tied) > 1:
                leader = self.tie_break(tied, {"item": self.item.name, "round": self.round, "bid": top,
                                               "decisions": [[self.ids[s], d] for s, d in self.pending.items()]})
                if leader not in tied:
                    raise ValueError(f"tie_break chose seat {leader}, not one of {tied}")
            else:
                leader = tied[0]
            self.highest, self.leader = top, leader
        record["leader"] = None if self.leader is None else self.ids[self.leader]
        record["highest"] = self.highest
        self._events.append(record)
        self.round_leaders.append(self.leader)
        if bids:
            self._start_round()
            if not self.eligible:
                self._hammer()
            return
        if self.leader is None and self.enable_discount and self.discounts < 3:
            self.discounts += 1
            self.price //= 2
            self.increment = min_increment(self.price, self.min_markup_pct)
            self.withdrawn = [False] * self.n
            self._events.append({"type": "discount", "item": self.item_index, "price": self.price})
            self._start_round()
            if self.eligible:
                return
        self._hammer()

    def _hammer(self) -> None:
        item = self.item
        event: dict[str, Any]
        if self.leader is None or self.highest is None:
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
        self._events.append(event)
        self._open_next_item()

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
        self.highest = None
        self.leader = None
        self.withdrawn = [False] * self.n
        self.round = 0
        self.discounts = 0
        self.item_rounds = []
        self.round_leaders = []
        self._events.append({"type": "item_open", "item": self.item_index, "name": item.name,
                            "start_price": item.start_price, "increment": self.increment})
        self._start_round()
        if not self.eligible:  # nobody can take part (only with auto-withdraw): unsold at once
            self._hammer()

    def _start_round(self) -> None:
        self.round += 1
        self.pending = {}
        self.cursor = 0
        eligible = [s for s in range(self.n) if not self.withdrawn[s] and s != self.leader]
        if self.auto_withdraw_unaffordable:
            floor = self.min_valid_bid()
            for seat in [s for s in eligible if self.remaining[s] < floor]:
                self.withdrawn[seat] = True
                self._events.append({"type": "auto_withdraw", "agent": self.ids[seat],
                                    "item": self.item_index, "round": self.round})
            eligible = [s for s in eligible if not self.withdrawn[s]]
        self.eligible = eligible
        self.round_withdrawn = tuple(self.withdrawn)
