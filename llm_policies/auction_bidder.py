"""The AucArena LLM bidder (the paper's section 3.2): plan, bid, belief update, replan — a BDI agent.

* **Plan** (before the first bid): strategy + JSON priorities 1-3 for every item
  (``env.record_plan(agent, priorities, "initial")``).
* **Bid** (each time the seat is asked): the plan, then with ``prompt="full"`` the env's text and
  the bidding instruction, with ``prompt="paper"`` the reference code's per-item conversation
  replayed as chat messages (``env.bid_turn`` and the model's replies), then the new turn; the
  reply gives reasons, then "I bid $xxx!" or "I'm out!" (``guided``: read under the env's
  constraint, by a follow-up guided call when the reasoning holds none; ``cot=False``: one call).
* **Belief update** (after each hammer, at the seat's next decision or in ``afinish``): the item's
  rounds, hammer, win/lose note and previous status; ``env.check_belief`` checks the status JSON
  against the state right after that item, with at most :data:`MAX_CORRECTIONS` correction
  requests (the last reply adopted unchecked; without ``correct_belief`` only malformed JSON is
  sent back). The status becomes the last reply's JSON.
* **Replan** (after each hammer but the last, ``plan="adaptive"``): new priorities for the
  remaining items. ``plan="static"`` plans once, ``plan="none"`` never (with ``prompt="paper"`` it
  then never sees the estimates, as in the original); both show the status JSON in each item's
  first bid prompt. Hammers are learnt from ``info["item_index"]``, round results from the env.
"""
from __future__ import annotations

import json
from typing import Any

from arena_envs.auction import metrics as auction_metrics
from arena_envs.auction import text as auction_text
from arena_envs.auction.rules import WITHDRAW
from arena_envs.core.answers import AnswerConstraint, excerpt
from arena_envs.core.arguments import check_choice
from arena_envs.core.json_answer import last_json_object
from llm_policies import auction_prompts as P
from llm_policies.base import LLMPolicyBase
from llm_policies.types import Backend, Message

PLAN_VARIANTS = ("adaptive", "static", "none")
DESIRES = tuple(P.DESIRE_DESC)
#: Correction requests after a wrong belief (the reference code's number); the reply to the last is not checked.
MAX_CORRECTIONS = 4


class AucArenaBidder(LLMPolicyBase):
    name = "aucarena"
    follows_game = True  # reads env.game and env.record

    def __init__(self, backend: Backend, *, plan: str = "adaptive", desire: str | None = None, cot: bool = True,
                 correct_belief: bool = True, temperature: float = 0.0, max_tokens: int = 256,
                 json_max_tokens: int = 400, cot_max_tokens: int = 384, guided: bool = True):
        super().__init__(backend, temperature=temperature, max_tokens=max_tokens, guided=guided)
        check_choice("plan", plan, PLAN_VARIANTS)
        if desire is not None and desire not in DESIRES:
            raise ValueError(f"desire must be one of {DESIRES} or None (the environment's), got {excerpt(desire)}")
        self.plan_variant = plan
        self.desire_override = desire
        self.cot = cot
        self.correct_belief = correct_belief
        self.json_max_tokens = json_max_tokens
        self.cot_max_tokens = cot_max_tokens

    # ------------------------------------------------------------------ episode state

    def reset(self, agent: str, seed: int | None = None) -> None:
        super().reset(agent, seed)
        env = self.env
        if env is None or not hasattr(env, "record_plan"):
            raise RuntimeError("AucArenaBidder plays auction_v0 only and must be bound to it (policy.bind(env))")
        self.seat = env.seat_of[agent]
        self.bidders = env.names()
        self.me = self.bidders[self.seat]
        self.paper = env.settings.prompt == "paper"
        self.desire = self.desire_override or env.settings.desires[self.seat]
        rules = env.game
        self.item_names = [item.name for item in rules.items]
        self.prices = [item.start_price for item in rules.items]
        self.estimates = list(rules.estimates[self.seat])
        self.budget = rules.budgets[self.seat]
        self.system = P.SYSTEM.format(name=self.me, desire=P.DESIRE_DESC[self.desire])
        self.status: dict[str, Any] = {"remaining_budget": self.budget,
                                       "total_profits": {b: 0 for b in self.bidders},
                                       "winning_bids": {b: {} for b in self.bidders}}
        self.plan_instruction: str | None = None
        self.plan_text: str | None = None
        self.priorities: dict[str, int] = {}
        self.items_seen = 0  # items whose hammer this bidder has processed
        self.status_shown_for: int | None = None
        self.conversation: list[Message] = []  # prompt="paper": this item's turns and replies
        self.conversation_item: int | None = None

    # ------------------------------------------------------------------ decisions

    async def aact(self, observation: Any, info: dict[str, Any]) -> str:
        self.start_decision()
        if self.plan_variant != "none" and self.plan_text is None:
            await self._plan()
        current = info.get("item_index")
        await self._catch_up(len(self.item_names) if current is None else current)
        return await self._bid(observation["text"] if isinstance(observation, dict) else str(observation), current)

    async def afinish(self, observation: Any, info: dict[str, Any]) -> bool:
        """The belief update after the last hammer(s), which no later decision triggers."""
        self.start_decision()
        await self._catch_up(len(self.env.game.results))
        return bool(self._calls)

    async def _catch_up(self, done: int) -> None:
        """Belief update (and replan) after every hammered item before ``done`` not processed yet."""
        while self.items_seen < done:
            index = self.items_seen
            await self._update_belief(index)
            if self.plan_variant == "adaptive" and index + 1 < len(self.item_names):
                await self._replan(index + 1)
            self.items_seen += 1

    async def _bid(self, observation: str, item: int | None) -> str:
        if self.paper:
            return await self._bid_in_conversation(item)
        status = ""
        if self.plan_variant != "adaptive" and self.status_shown_for != item:
            status = P.STATUS_NOTE.format(status=json.dumps(self.status))
            self.status_shown_for = item
        template = P.BID if self.cot else P.BID_GUIDED
        prompt = template.format(status=status, observation=observation)
        messages = self._plan_context() + [{"role": "user", "content": prompt}]
        constraint = self.constraint()
        if self.cot:
            return await self.think_then_answer(messages, constraint, purpose="bid", think_tokens=self.cot_max_tokens)
        return await self.ask(messages, constraint, purpose="bid")

    async def _bid_in_conversation(self, item: int | None) -> str:
        """prompt="paper": the new turn after this item's earlier turns and whole replies."""
        turn = self.env.bid_turn(self.agent)
        if item != self.conversation_item:
            self.conversation, self.conversation_item = [], item
            if self.plan_variant != "adaptive":
                turn = P.PAPER_STATUS_NOTE.format(status=json.dumps(self.status, indent=4)) + turn
        messages = self._plan_context() + self.conversation + [{"role": "user", "content": turn}]
        first_call = len(self._calls)
        constraint = self.constraint()
        if self.cot:
            answer = await self.think_then_answer(messages, constraint, purpose="bid", think_tokens=self.cot_max_tokens)
        else:
            answer = await self.ask(messages, constraint, purpose="bid")
        reply = "\n".join(call["text"] for call in self._calls[first_call:])
        self.conversation += [{"role": "user", "content": turn}, {"role": "assistant", "content": reply}]
        return answer

    def _plan_context(self) -> list[Message]:
        messages: list[Message] = [{"role": "system", "content": self.system}]
        if self.plan_variant != "none" and self.plan_instruction is not None and self.plan_text is not None:
            messages += [{"role": "user", "content": self.plan_instruction},
                         {"role": "assistant", "content": self.plan_text}]
        return messages

    async def _plan(self) -> None:
        instruction = P.PLAN.format(name=self.me, budget=self.budget, count=len(self.item_names),
                                    desire=P.DESIRE_DESC[self.desire],
                                    items=P.items_list(self.item_names, self.prices, self.estimates))
        messages = [{"role": "system", "content": self.system}, {"role": "user", "content": instruction}]
        text, plan = await self._json_answer(messages, P.priorities_schema(self.item_names), "plan",
                                             "a JSON object mapping every item name to 1, 2 or 3")
        self._adopt_plan(instruction, text, plan, "initial")

    async def _replan(self, first: int) -> None:
        names = self.item_names[first:]
        items = P.items_list(names, self.prices[first:], self.estimates[first:], start=first + 1)
        instruction = P.REPLAN.format(status=P.status_text(self.status), desire=P.DESIRE_DESC[self.desire], items=items)
        messages = self._plan_context() + [{"role": "user", "content": instruction}]
        text, plan = await self._json_answer(messages, P.priorities_schema(names), "replan",
                                             "a JSON object mapping every remaining item name to 1, 2 or 3")
        self._adopt_plan(instruction, text, plan, "replan")

    def _adopt_plan(self, instruction: str, text: str, plan: dict[str, Any] | None, kind: str) -> None:
        scores = self.env.record_plan(self.agent, plan or {}, kind)
        self.priorities = {self.item_names[i]: s for i, s in scores.items()}
        self.plan_instruction, self.plan_text = instruction, text

    async def _update_belief(self, index: int) -> None:
        env = self.env
        item = self.item_names[index]
        instruction = P.BELIEF.format(
            item=item, history=self._item_history(index),
            hammer=auction_text.hammer_message(env.game, index, self.bidders),
            win_lose=auction_text.win_lose_note(env.game, self.seat, index), status=P.status_text(self.status),
            example=P.belief_example(self.bidders, item))
        messages: list[Message] = [{"role": "system", "content": self.system}, {"role": "user", "content": instruction}]
        schema = P.belief_schema(self.bidders, self.item_names)
        description = "the status JSON with remaining_budget, total_profits and winning_bids"
        for correction in range(MAX_CORRECTIONS + 1):
            text, belief = await self._json_answer(messages, schema, "belief", description)
            if correction == MAX_CORRECTIONS:
                break  # the reference code adopts the reply to its last correction request unchecked
            errors = env.check_belief(self.agent, belief if belief is not None else text, item=index)
            malformed = belief is None or auction_metrics.belief_sanity_problem(belief) is not None
            if not errors or not (malformed or self.correct_belief):
                break
            correction_request = P.BELIEF_CORRECTION.format(errors="\n".join(f"- {e}" for e in errors))
            messages += [{"role": "assistant", "content": text}, {"role": "user", "content": correction_request}]
        self.status = belief if belief is not None else {}

    def _item_history(self, index: int) -> str:
        """The public rounds of item ``index``, every decision on its own line, plain bidder names."""
        display = dict(zip(self.env.possible_agents, self.bidders))
        lines = []
        for event in self.env.record.events:
            if event["type"] == "round_end" and event["item"] == index:
                lines.append(f"Round {event['round']}:")
                lines += [f"- {display[a]} withdrew" if d == WITHDRAW else f"- {display[a]}: ${d}"
                          for a, d in event["decisions"].items()]
        return "\n".join(lines) or "no rounds"

    async def _json_answer(self, messages: list[Message], schema: dict[str, Any], purpose: str,
                           description: str) -> tuple[str, dict[str, Any] | None]:
        """The reply and the JSON object in it (``None`` when it holds none)."""
        constraint = AnswerConstraint("json", description, schema=schema)
        if self.cot:
            text = await self.think_then_answer(messages, constraint, purpose=purpose, think_tokens=self.cot_max_tokens,
                                               max_tokens=self.json_max_tokens)
        else:
            text = await self.ask(messages, constraint, purpose=purpose, max_tokens=self.json_max_tokens)
        return text, last_json_object(text)

