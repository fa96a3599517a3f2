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


def header(game: AuctionView, desire: str, seat: int) -> str:
    """The stable prefix of ``seat``'s prompt (``desire``: its objective, a key of OBJECTIVES)."""
    names = ", ".join(display_name(s) for s in range(game.n))
    lines = [
        f"You are {display_name(seat)} in an English (ascending-price) auction against other bidders. "
        f"Bidders: {names}.",
        f"Your objective: {OBJECTIVES[desire]}.",
        "Rules: items are sold one at a time in the order below. Each item has a true (resale) value that "
        "you do not know; you only have your own estimate of it, which may be too high or too low. Each round, "
        "every bidder who has not withdrawn and does not hold the highest bid either bids higher or withdraws; "
        "all decisions of a round are made at the same time and shown afterwards. The first bid on an item must "
        "be at least its starting price; later bids must beat the highest bid by at least "
        f"{game.min_markup_pct}% of the starting price. Withdrawing is final for that item. When a round passes "
        "without a new bid, the highest bidder wins the item and pays its bid. Your profit on an item is its "
        "true value minus what you paid; bids may never exceed your remaining budget.",
        f"Your starting budget: ${game.budgets[seat]}.",
        f"Items in order ({len(game.items)}):",
    ]
    for k, item in enumerate(game.items, start=1):
        lines.append(f"  {k}. {item.name} - starting price ${item.start_price}; your estimated value "
                     f"${game.estimates[seat][k - 1]}.")
    return "\n".join(lines)


def round_summary(names: Sequence[str], decisions: Mapping[int, int], leader: int | None) -> str:
    parts = [f"{names[seat]} withdrew" if decisions[seat] == WITHDRAW else f"{names[seat]} ${decisions[seat]}"
             for seat in sorted(decisions)]
    lead = "none" if leader is None else names[leader]
    return "; ".join(parts) + f". Leader: {lead}."


def item_log(game: AuctionView, index: int, names: Sequence[str],
             rounds: Sequence[tuple[Mapping[int, int], int | None]]) -> str:
    """Item ``index`` in the auction's log as one viewer sees it: its heading, its completed
    ``rounds`` (decisions, leader) in order (the current item) and, once it is sold or passed, its
    result."""
    item = game.items[index]
    lines = [f"Item {index + 1}: {item.name} - \"{item.desc}\"; starting price ${item.start_price}."]
    lines += [f"  Round {r}: {round_summary(names, decisions, leader)}"
              for r, (decisions, leader) in enumerate(rounds, start=1)]
    if index < len(game.results):
        result = game.results[index]
        lines.append("  Result: unsold." if result is None else
                     f"  Result: sold to {names[result[0]]} at ${result[1]} (true value ${item.true_value}).")
    return "\n".join(lines)


def hammer_message(game: AuctionView, index: int, names: Sequence[str]) -> str:
    item = game.items[index]
    result = game.results[index]
    if result is None:
        return f"Nobody bid on {item.name}; moving on to the next item."
    winner, price = result
    return f"Sold! {item.name} to {names[winner]} at ${price}! The true value for {item.name} is ${item.true_value}."


def win_lose_note(game: AuctionView, seat: int, index: int) -> str:
    result = game.results[index]
    item = game.items[index]
    if result is not None and result[0] == seat:
        return f"Congratulations! You won {item.name} at ${result[1]}."
    return f"You did not win {item.name}."


def status(game: AuctionView, seat: int) -> str:
    won = ", ".join(game.items[i].name for i, _ in game.won[seat]) or "nothing yet"  # prices: in the log
    return (f"Your status: budget left ${game.remaining[seat]}; total profit ${game.profit[seat]}; "
            f"won: {won}.")


def discount_notice(game: AuctionView) -> str | None:
    """The auctioneer's notice of a lowered price (nobody bid and ``enable_discount`` is on), else None."""
    if not game.item_rounds or game.leader is not None:
        return None
    return f"Auctioneer: No bids, so the price of {game.item.name} is lowered to ${game.price}. Who bids first?"


def paper_auctioneer_message(game: AuctionView, names: Sequence[str]) -> str:
    """The auctioneer's message of the current round as the reference code words its content: the
    opening (items left, the item, its starting price), or the previous round's decisions, the
    standing bid, its holder and the minimum raise (or the lowered price after a discount)."""
    item = game.item
    if not game.item_rounds:
        upcoming = [i.name for i in game.items[game.item_index:]]
        return (f"{len(upcoming)} item(s) remain in this auction: {', '.join(upcoming)}.\n\n"
                f"Up now: {item.name}, starting at ${game.price}. Who wants to bid?")
    if game.leader is None:  # nobody bid and the price was discounted (enable_discount)
        return f"Nobody took {item.name} at its starting price, so it is lowered to ${game.price}. Who wants to bid?"
    last = game.item_rounds[-1]
    lines = [f"- {names[seat]} withdrew" if last[seat] == WITHDRAW else f"- {names[seat]}: ${last[seat]}"
             for seat in sorted(last)]
    return (f"Thanks! The bids of round {game.round - 1} of this item:\n" + "\n".join(lines) +
            f"\n\nThe highest bid is now ${game.highest}, from {names[game.leader]}, for {item.name}. "
            f"A new bid must beat it by at least ${game.increment}. Who bids more than ${game.highest}?")


def paper_turn(game: AuctionView, seat: int, desire: str, names: Sequence[str], note: str | None) -> str:
    """``seat``'s new message in the reference code's per-item conversation: the bidding instruction
    around the opening (an item's first round), the next round's message, or, after a rejected or
    unreadable reply (``note``), the auctioneer's answer to it."""
    if note:
        return f"{note[0].upper()}{note[1:]}. You must reconsider your decision."
    message = paper_auctioneer_message(game, names)
    if game.item_rounds:
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

    def __init__(self, game: AuctionView, config: PromptConfig):
        self.game = game
        self.config = config
        self.names_seen_by = tuple(name_table(game.n, seat) for seat in range(game.n))
        self.headers = tuple(header(game, config.desires[seat], seat) for seat in range(game.n))
        self._logs: dict[int, list[str]] = {}  # per seat, the lines of the finished items
        self._bodies: dict[int, str] = {}

    def new_round(self) -> None:
        """Forget the cached bodies (a round resolved or an item opened)."""
        self._bodies = {}

    def finished_log(self, seat: int) -> str:
        """The result of every finished item as ``seat`` sees it (each item's text built once)."""
        logs = self._logs.setdefault(seat, [])
        for index in range(len(logs), len(self.game.results)):
            logs.append(item_log(self.game, index, self.names_seen_by[seat], ()))
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
        game = self.game
        names = self.names_seen_by[seat]
        out = [self.headers[seat], "Auction log:"]
        if game.results:
            out.append(self.finished_log(seat))
        if game.finished:
            out += ["The auction is over.", status(game, seat)]
            return "\n".join(out)
        out.append(item_log(game, game.item_index, names, list(zip(game.item_rounds, game.round_leaders))))
        item = game.item
        leader = game.leader
        highest = "no bids yet" if game.highest is None or leader is None else f"${game.highest} by {names[leader]}"
        out.append(f"Now: {item.name}, round {game.round}. Price ${game.price}; minimum raise ${game.increment}; "
                   f"your estimated value ${game.estimates[seat][game.item_index]}. Highest bid: {highest}. "
                   f"Your minimum valid bid: ${game.min_valid_bid()}.")
        if self.config.reveal_status:
            out.append(status(game, seat))
        notice = discount_notice(game)
        if notice:
            out.append(notice)
        return "\n".join(out)

    def paper_turn(self, seat: int, note: str | None) -> str:
        """``seat``'s new message of the current turn in the reference code's conversation."""
        return paper_turn(self.game, seat, self.config.desires[seat], self.names_seen_by[seat], note)

    def paper_prompt(self, seat: int, note: str | None, exchanges: Sequence[tuple[str, str]]) -> str:
        """prompt="paper": the system message, this item's earlier turns with ``seat``'s replies
        (``exchanges``) and the current turn."""
        out = [PAPER_SYSTEM.format(name=display_name(seat), desire=OBJECTIVES[self.config.desires[seat]])]
        if self.game.finished:
            return out[0] + "\n---\nThe auction is over."
        for turn, reply in exchanges:
            out.append(f"{turn}\nYour reply: {reply}")
        out.append(self.paper_turn(seat, note) if self.game.awaits(seat) else "You have no decision to make now.")
        return "\n---\n".join(out)

    def prompt(self, seat: int, note: str | None) -> str:
        """``seat``'s complete prompt for its current decision: the round's body, any correction,
        the answer instruction when it is this bidder's turn."""
        body = self.body(seat)
        if self.game.finished:
            return body
        tail = ANSWER_INSTRUCTION if self.game.awaits(seat) else "You have no decision to make now."
        if note:
            return f"{body}\nAuctioneer: your last reply was not accepted: {note}. Please reconsider.\n{tail}"
        return f"{body}\n{tail}"


def final_report(game: AuctionView) -> dict[str, Any]:
    """Per bidder its budget, profit and items won, and every item's hammer (display names)."""
    bidders = []
    for s in range(game.n):
        items = [{"name": game.items[i].name, "price": p, "start_price": game.items[i].start_price,
                  "true_value": game.items[i].true_value} for i, p in game.won[s]]
        bidders.append({"bidder": display_name(s), "starting_budget": game.budgets[s],
                        "remaining_budget": game.remaining[s], "profit": game.profit[s], "items": items})
    hammers = [None if r is None else {"item": game.items[i].name, "winner": display_name(r[0]), "price": r[1]}
               for i, r in enumerate(game.results)]
    return {"bidders": bidders, "hammers": hammers}


def render_log(game: AuctionView, events: Sequence[Mapping[str, Any]]) -> str:
    """The paper's log layout: per item its rounds, the hammer price, then the personal report."""
    seat_of = {agent: seat for seat, agent in enumerate(game.ids)}
    lines: list[str] = []
    rounds: dict[int, list[Mapping[str, Any]]] = {}
    for event in events:
        if event["type"] == "round_end":
            rounds.setdefault(event["item"], []).append(event)
    for index in range(len(game.results)):
        item = game.items[index]
        lines.append(f"{index + 1}. {item.name}, starting at ${item.start_price}.")
        for r, event in enumerate(rounds.get(index, []), start=1):
            lines.append(f"{ordinal(r)} bid:")
            for agent, amount in sorted(event["decisions"].items(), key=lambda kv: seat_of[kv[0]]):
                name = display_name(seat_of[agent])
                lines.append(f"  {name}: Withdrew" if amount == WITHDRAW else f"  {name}: ${amount}")
        lines.append("Hammer price (true value):")
        result = game.results[index]
        if result is None:
            lines.append("  None bid")
        else:
            lines.append(f"  {display_name(result[0])}: ${result[1]} (${item.true_value})")
        lines.append("")
    lines.append("Personal Report")
    for seat, report in enumerate(final_report(game)["bidders"]):
        lines.append(f"  {display_name(seat)}: starting budget ${report['starting_budget']}, "
                     f"{len(report['items'])} item(s) won, total profit ${report['profit']}")
        for won in report["items"]:
            lines.append(f"    {won['name']}: paid ${won['price']} (starting price ${won['start_price']}, "
                         f"true value ${won['true_value']})")
    return "\n".join(lines)
