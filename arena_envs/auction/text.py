"""Text of the auction: each bidder's prompt, the auctioneer's messages and the paper's log layout.

``prompt="full"``: a bidder's successive prompts grow by appending (for an LLM server's prefix
cache): the stable header (identity, objective, rules, budget, the item list with the bidder's
own estimates), then the auction's log (every finished item's one-line result, the current item's
rounds so far), last the changing state (round, status, answer instruction). A bidder's own name
reads "You (Bidder k)".

``prompt="paper"``: what the reference code's bidder sees and nothing more (our wording, the same
information and answer format): a system message (identity, objective, how values and the winning
bid work), then the current item's conversation: the auctioneer's opening (items left, the item,
its starting price) with the bidding instruction, each later round's message (the decisions, the
standing bid, its holder, the minimum raise) and the answer to a rejected or unreadable reply. No
estimate, minimum valid bid, budget or earlier result is shown: the reference bidder knows those
only through its own plan and beliefs (``llm_policies.auction_bidder``).

The texts read the game through :class:`~arena_envs.auction.rules.AuctionView` (read-only) and the
episode's events; :class:`AuctionTexts` holds one episode's prompt settings and caches.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena_envs.auction.rules import WITHDRAW, AuctionView

ANSWER_INSTRUCTION = 'Think it through if you like, then end your reply with your decision: "I bid $X!" or "I\'m out!".'

OBJECTIVES = {
    "maximize_profit": "secure the highest total profit among all bidders by the end of the auction",
    "maximize_items": "win the highest number of items among all bidders by the end of the auction",
}


#: prompt="paper": the system message of the reference bidder ({name}: "Bidder k"; {desire}: an OBJECTIVES value).
PAPER_SYSTEM = (
    "You are {name}, taking part in an ascending-bid auction against other bidders. The price goes up "
    "round by round, bidders drop out, and the last bidder left wins the item at the final price. "
    "Your objective: {desire}.\n"
    "Know these facts: each item's true value is what it can be resold for, and you do not know it; "
    "you have your own estimate of it, which may be too high or too low. The highest bid wins. Your "
    "profit on an item is its true value minus your winning bid, so win items as cheaply as you can."
)

#: prompt="paper": the first turn of an item, around the auctioneer's opening message.
PAPER_BID_INSTRUCTION = (
    'The auctioneer says: "{message}"\n---\n'
    "As {name}, decide whether to bid on this item or to withdraw, and explain why, following your plan. "
    "Your objective: {desire}.\n"
    "Common bidding practice:\n"
    "1. Show your interest by bidding the starting price or a little above it, then raise your bid gradually.\n"
    "2. Think step by step about the pros and cons of your move and its consequences (such as the budget "
    "left for later items) for your objective.\n"
    'Give your reasons first, then state your final decision clearly: either withdraw, saying "I\'m out!", '
    'or bid higher, saying "I bid $xxx!".'
)

#: prompt="paper": a later round's turn, around the auctioneer's message.
PAPER_NEXT_ROUND = 'The auctioneer now says: "{message}"'


def display_name(seat: int) -> str:
    return f"Bidder {seat + 1}"


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def name_table(n: int, viewer: int | None) -> tuple[str, ...]:
    """Display names of the ``n`` seats as ``viewer`` sees them (its own as "You (Bidder k)")."""
    return tuple(f"You ({display_name(s)})" if s == viewer else display_name(s) for s in range(n))


def header(rules: AuctionView, desire: str, seat: int) -> str:
    """The stable prefix of ``seat``'s prompt (``desire``: its objective, a key of OBJECTIVES)."""
    names = ", ".join(display_name(s) for s in range(rules.n))
    lines = [
        f"You are {display_name(seat)} in an English (ascending-price) auction against other bidders. "
        f"Bidders: {names}.",
        f"Your objective: {OBJECTIVES[desire]}.",
        "Rules: items are sold one at a time in the order below. Each item has a true (resale) value that "
        "you do not know; you only have your own estimate of it, which may be too high or too low. Each round, "
        "every bidder who has not withdrawn and does not hold the highest bid either bids higher or withdraws; "
        "all decisions of a round are made at the same time and shown afterwards. The first bid on an item must "
        "be at least its starting price; later bids must beat the highest bid by at least "
        f"{rules.min_markup_pct}% of the starting price. Withdrawing is final for that item. When a round passes "
        "without a new bid, the highest bidder wins the item and pays its bid. Your profit on an item is its "
        "true value minus what you paid; bids may never exceed your remaining budget.",
        f"Your starting budget: ${rules.budgets[seat]}.",
        f"Items in order ({len(rules.items)}):",
    ]
    for k, item in enumerate(rules.items, start=1):
        lines.append(f"  {k}. {item.name} - starting price ${item.start_price}; your estimated value "
                     f"${rules.estimates[seat][k - 1]}.")
    return "\n".join(lines)


def round_summary(names: Sequence[str], decisions: Mapping[int, int], leader: int | None) -> str:
    parts = [f"{names[seat]} withdrew" if decisions[seat] == WITHDRAW else f"{names[seat]} ${decisions[seat]}"
             for seat in sorted(decisions)]
    lead = "none" if leader is None else names[leader]
    return "; ".join(parts) + f". Leader: {lead}."


def item_log(rules: AuctionView, index: int, names: Sequence[str],
             rounds: Sequence[tuple[Mapping[int, int], int | None]]) -> str:
    """Item ``index`` in the auction's log as one viewer sees it: its heading, its completed
    ``rounds`` (decisions, leader) in order (the current item) and, once it is sold or passed, its
    result."""
    item = rules.items[index]
    lines = [f"Item {index + 1}: {item.name} - \"{item.desc}\"; starting price ${item.start_price}."]
    lines += [f"  Round {r}: {round_summary(names, decisions, leader)}"
              for r, (decisions, leader) in enumerate(rounds, start=1)]
    if index < len(rules.results):
        result = rules.results[index]
        lines.append("  Result: unsold." if result is None else
                     f"  Result: sold to {names[result[0]]} at ${result[1]} (true value ${item.true_value}).")
    return "\n".join(lines)


def hammer_message(rules: AuctionView, index: int, names: Sequence[str]) -> str:
    item = rules.items[index]
    result = rules.results[index]
    if result is None:
        return f"Nobody bid on {item.name}; moving on to the next item."
    winner, price = result
    return f"Sold! {item.name} to {names[winner]} at ${price}! The true value for {item.name} is ${item.true_value}."


def win_lose_note(rules: AuctionView, seat: int, index: int) -> str:
    result = rules.results[index]
    item = rules.items[index]
    if result is not None and result[0] == seat:
        return f"Congratulations! You won {item.name} at ${result[1]}."
    return f"You did not win {item.name}."


def status(rules: AuctionView, seat: int) -> str:
    won = ", ".join(rules.items[i].name for i, _ in rules.won[seat]) or "nothing yet"  # prices: in the log
    return (f"Your status: budget left ${rules.remaining[seat]}; total profit ${rules.profit[seat]}; "
            f"won: {won}.")


def discount_notice(rules: AuctionView) -> str | None:
    """The auctioneer's notice of a lowered price (nobody bid and ``enable_discount`` is on), else None."""
    if not rules.item_rounds or rules.leader is not None:
        return None
    return f"Auctioneer: No bids, so the price of {rules.item.name} is lowered to ${rules.price}. Who bids first?"


def paper_auctioneer_message(rules: AuctionView, names: Sequence[str]) -> str:
    """The auctioneer's message of the current round as the reference code words its content: the
    opening (items left, the item, its starting price), or the previous round's decisions, the
    standing bid, its holder and the minimum raise (or the lowered price after a discount)."""
    item = rules.item
    if not rules.item_rounds:
        upcoming = [i.name for i in rules.items[rules.item_index:]]
        return (f"{len(upcoming)} item(s) remain in this auction: {', '.join(upcoming)}.\n\n"
                f"Up now: {item.name}, starting at ${rules.price}. Who wants to bid?")
    if rules.leader is None:  # nobody bid and the price was discounted (enable_discount)
        return f"Nobody took {item.name} at its starting price, so it is lowered to ${rules.price}. Who wants to bid?"
    last = rules.item_rounds[-1]
    lines = [f"- {names[seat]} withdrew" if last[seat] == WITHDRAW else f"- {names[seat]}: ${last[seat]}"
             for seat in sorted(last)]
    return (f"Thanks! The bids of round {rules.round - 1} of this item:\n" + "\n".join(lines) +
            f"\n\nThe highest bid is now ${rules.highest}, from {names[rules.leader]}, for {item.name}. "
            f"A new bid must beat it by at least ${rules.increment}. Who bids more than ${rules.highest}?")


def paper_turn(rules: AuctionView, seat: int, desire: str, names: Sequence[str], note: str | None) -> str:
    """``seat``'s new message in the reference code's per-item conversation: the bidding instruction
    around the opening (an item's first round), the next round's message, or, after a rejected or
    unreadable reply (``note``), the auctioneer's answer to it."""
    if note:
        return f"{note[0].upper()}{note[1:]}. You must reconsider your decision."
    message = paper_auctioneer_message(rules, names)
    if rules.item_rounds:
        return PAPER_NEXT_ROUND.format(message=message)
    return PAPER_BID_INSTRUCTION.format(message=message, name=display_name(seat), desire=OBJECTIVES[desire])


@dataclass(frozen=True)
class PromptConfig:
    """The environment's settings of the bidders' texts."""

    desires: tuple[str, ...]  #: per seat, a key of OBJECTIVES
    reveal_status: bool  #: show each bidder its own budget, profit and items (prompt="full")
    prompt: str = "full"  #: "full" (self-contained) or "paper" (what the reference bidder sees)


class AuctionTexts:
    """The bidders' prompts of one episode, read from the game's read-only view.

    The body of a prompt (everything but the correction and the answer instruction) stays fixed
    during a round and is cached per seat until :meth:`new_round`; the public results, until the
    next hammer.
    """

    def __init__(self, rules: AuctionView, config: PromptConfig):
        self.rules = rules
        self.config = config
        self.names_seen_by = tuple(name_table(rules.n, seat) for seat in range(rules.n))
        self.headers = tuple(header(rules, config.desires[seat], seat) for seat in range(rules.n))
        self._logs: dict[int, list[str]] = {}  # per seat, the lines of the finished items
        self._bodies: dict[int, str] = {}

    def new_round(self) -> None:
        """Forget the cached bodies (a round resolved or an item opened)."""
        self._bodies = {}

    def finished_log(self, seat: int) -> str:
        """The result of every finished item as ``seat`` sees it (each item's text built once)."""
        logs = self._logs.setdefault(seat, [])
        for index in range(len(logs), len(self.rules.results)):
            logs.append(item_log(self.rules, index, self.names_seen_by[seat], ()))
        return "\n".join(logs)

    def body(self, seat: int) -> str:
        """Everything of ``seat``'s prompt that stays fixed during a round."""
        body = self._bodies.get(seat)
        if body is None:
            body = self._bodies[seat] = self._body(seat)
        return body

    def _body(self, seat: int) -> str:
        """The stable header, the auction's log (finished items, then the current item's rounds)
        and, last, the changing state: so that a seat's successive prompts grow by appending."""
        rules = self.rules
        names = self.names_seen_by[seat]
        out = [self.headers[seat], "Auction log:"]
        if rules.results:
            out.append(self.finished_log(seat))
        if rules.finished:
            out += ["The auction is over.", status(rules, seat)]
            return "\n".join(out)
        out.append(item_log(rules, rules.item_index, names, list(zip(rules.item_rounds, rules.round_leaders))))
        item = rules.item
        leader = rules.leader
        highest = "no bids yet" if rules.highest is None or leader is None else f"${rules.highest} by {names[leader]}"
        out.append(f"Now: {item.name}, round {rules.round}. Price ${rules.price}; minimum raise ${rules.increment}; "
                   f"your estimated value ${rules.estimates[seat][rules.item_index]}. Highest bid: {highest}. "
                   f"Your minimum valid bid: ${rules.min_valid_bid()}.")
        if self.config.reveal_status:
            out.append(status(rules, seat))
        notice = discount_notice(rules)
        if notice:
            out.append(notice)
        return "\n".join(out)

    def paper_turn(self, seat: int, note: str | None) -> str:
        """``seat``'s new message of the current turn in the reference code's conversation."""
        return paper_turn(self.rules, seat, self.config.desires[seat], self.names_seen_by[seat], note)

    def paper_prompt(self, seat: int, note: str | None, exchanges: Sequence[tuple[str, str]]) -> str:
        """prompt="paper": the system message, this item's earlier turns with ``seat``'s replies
        (``exchanges``) and the current turn."""
        out = [PAPER_SYSTEM.format(name=display_name(seat), desire=OBJECTIVES[self.config.desires[seat]])]
        if self.rules.finished:
            return out[0] + "\n---\nThe auction is over."
        for turn, reply in exchanges:
            out.append(f"{turn}\nYour reply: {reply}")
        out.append(self.paper_turn(seat, note) if self.rules.awaits(seat) else "You have no decision to make now.")
        return "\n---\n".join(out)

    def prompt(self, seat: int, note: str | None) -> str:
        """``seat``'s complete prompt for its current decision: the round's body, any correction,
        the answer instruction when it is this bidder's turn."""
        body = self.body(seat)
        if self.rules.finished:
            return body
        tail = ANSWER_INSTRUCTION if self.rules.awaits(seat) else "You have no decision to make now."
        if note:
            return f"{body}\nAuctioneer: your last reply was not accepted: {note}. Please reconsider.\n{tail}"
        return f"{body}\n{tail}"


def final_report(rules: AuctionView) -> dict[str, Any]:
    """Per bidder its budget, profit and items won, and every item's hammer (display names)."""
    bidders = []
    for s in range(rules.n):
        items = [{"name": rules.items[i].name, "price": p, "start_price": rules.items[i].start_price,
                  "true_value": rules.items[i].true_value} for i, p in rules.won[s]]
        bidders.append({"bidder": display_name(s), "starting_budget": rules.budgets[s],
                        "remaining_budget": rules.remaining[s], "profit": rules.profit[s], "items": items})
    hammers = [None if r is None else {"item": rules.items[i].name, "winner": display_name(r[0]), "price": r[1]}
               for i, r in enumerate(rules.results)]
    return {"bidders": bidders, "hammers": hammers}


def render_log(rules: AuctionView, events: Sequence[Mapping[str, Any]]) -> str:
    """The paper's log layout: per item its rounds, the hammer price, then the personal report."""
    seat_of = {agent: seat for seat, agent in enumerate(rules.ids)}
    lines: list[str] = []
    rounds: dict[int, list[Mapping[str, Any]]] = {}
    for event in events:
        if event["type"] == "round_end":
            rounds.setdefault(event["item"], []).append(event)
    for index in range(len(rules.results)):
        item = rules.items[index]
        lines.append(f"{index + 1}. {item.name}, starting at ${item.start_price}.")
        for r, event in enumerate(rounds.get(index, []), start=1):
            lines.append(f"{ordinal(r)} bid:")
            for agent, amount in sorted(event["decisions"].items(), key=lambda kv: seat_of[kv[0]]):
                name = display_name(seat_of[agent])
                lines.append(f"  {name}: Withdrew" if amount == WITHDRAW else f"  {name}: ${amount}")
        lines.append("Hammer price (true value):")
        result = rules.results[index]
        if result is None:
            lines.append("  None bid")
        else:
            lines.append(f"  {display_name(result[0])}: ${result[1]} (${item.true_value})")
        lines.append("")
    lines.append("Personal Report")
    for seat, report in enumerate(final_report(rules)["bidders"]):
        lines.append(f"  {display_name(seat)}: starting budget ${report['starting_budget']}, "
                     f"{len(report['items'])} item(s) won, total profit ${report['profit']}")
        for won in report["items"]:
            lines.append(f"    {won['name']}: paid ${won['price']} (starting price ${won['start_price']}, "
                         f"true value ${won['true_value']})")
    return "\n".join(lines)
