"""The auction's options: :class:`AuctionConfig` holds every argument of
:class:`~arena_envs.auction.env.AuctionEnv` but the core's ``render_mode`` and ``max_cycles``, with
its default, checks them once when it is built (one-line ValueErrors) and gives the record of them
the env's ``config()`` returns."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from arena_envs.auction.items import ITEM_ORDERS, MAX_MONEY, TABLE1_ITEMS, Item, coerce_items
from arena_envs.auction.metrics import BELIEF_MATCHES
from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import MAX_RETRIES, check_int, check_real

DESIRES = ("maximize_profit", "maximize_items")
REWARD_MODES = ("by_desire", "profit", "items")
ACTION_MODES = ("discrete", "amount")
TIE_BREAKS = ("random", "repo", "lowest_seat")
PROMPTS = ("full", "paper")
#: The most bidders (the paper: 3) and the most bid levels of the discrete action space (default 21).
MAX_BIDDERS = 100
MAX_DISCRETE_LEVELS = 1_000

#: A tie-break rule: a name of :data:`TIE_BREAKS`, the agents chosen one per tie, or
#: ``(tied agents, context) -> agent``.
TieBreak = str | Sequence[str] | Callable[[list[str], dict[str, Any]], str]


def per_bidder(value: Any, n: int, name: str) -> list[Any]:
    """``value`` for each of the ``n`` bidders: a list or tuple of ``n`` as given, else ``n`` times."""
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} needs {n} entries (one per bidder), got {len(value)}")
        return list(value)
    return [value] * n


def amounts(value: Any, n: int, name: str, low: int, high: int) -> list[int]:
    """One integer in ``low..high`` per bidder, from one value for all or a list of ``n``."""
    return [check_int(name, v, low, high) for v in per_bidder(value, n, name)]


@dataclass(frozen=True)
class AuctionConfig:
    """The env's arguments (see ``docs/envs/auction.md``). Once checked, each field holds the value
    played: ``items`` the :class:`Item` objects (the paper's Table 1 when None), ``budgets``,
    ``desires`` and ``overestimate_percent`` one entry per bidder, a scripted ``tie_break`` a tuple
    of agents (a callable is kept by reference), the numbers as ints and floats."""

    items: Sequence[Item | dict] | None = None
    item_order: str = "random"
    n_bidders: int = 3
    budgets: int | Sequence[int] = 20000
    desires: str | Sequence[str] = "maximize_profit"
    overestimate_percent: int | Sequence[int] = 10
    min_markup_pct: int = 10
    action_mode: str = "discrete"
    max_retries: int = 3
    reveal_status: bool = True
    prompt: str = "full"
    belief_match: str = "exact"
    tie_break: TieBreak = "random"
    enable_discount: bool = False
    auto_withdraw_unaffordable: bool = False
    reward_mode: str = "by_desire"
    invalid_action_penalty: float = 0.0
    discrete_levels: int = 21
    max_steps: int | None = None

    def __post_init__(self) -> None:
        put = self._put
        n = check_int("n_bidders", self.n_bidders, 2, MAX_BIDDERS)
        put("n_bidders", n)
        choices = (("item_order", ITEM_ORDERS), ("prompt", PROMPTS), ("belief_match", BELIEF_MATCHES),
                   ("action_mode", ACTION_MODES), ("reward_mode", REWARD_MODES))
        for name, accepted in choices:
            value = getattr(self, name)
            if value not in accepted:
                raise ValueError(f"{name} must be one of {accepted}, got {excerpt(value)}")
        tie_break = self.tie_break
        if isinstance(tie_break, (list, tuple)):
            unknown = [a for a in tie_break if a not in self.agents]
            if unknown:
                raise ValueError(f"a scripted tie_break lists agents bidder_1..bidder_{n}, got {excerpt(unknown)}")
            put("tie_break", tuple(tie_break))
        elif not callable(tie_break) and tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {TIE_BREAKS}, a list of agents or a callable, "
                             f"got {excerpt(tie_break)}")
        put("min_markup_pct", check_int("min_markup_pct", self.min_markup_pct, 1, 100))
        put("discrete_levels", check_int("discrete_levels", self.discrete_levels, 1, MAX_DISCRETE_LEVELS))
        if self.max_steps is not None:
            put("max_steps", check_int("max_steps", self.max_steps, 1))
        put("items", coerce_items(TABLE1_ITEMS if self.items is None else self.items))
        put("budgets", tuple(amounts(self.budgets, n, "budgets", 0, MAX_MONEY)))
        desires = tuple(per_bidder(self.desires, n, "desires"))
        if any(d not in DESIRES for d in desires):
            raise ValueError(f"desires must be among {DESIRES}, got {excerpt(list(desires))}")
        put("desires", desires)
        put("overestimate_percent",
            tuple(amounts(self.overestimate_percent, n, "overestimate_percent", -100, 100)))
        put("max_retries", check_int("max_retries", self.max_retries, 0, MAX_RETRIES))
        put("invalid_action_penalty", check_real("invalid_action_penalty", self.invalid_action_penalty, high=0))

    def _put(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)

    @property
    def agents(self) -> list[str]:
        """The bidders' agent names in seat order: ``bidder_1 … bidder_{n_bidders}``."""
        return [f"bidder_{i + 1}" for i in range(self.n_bidders)]

    def record(self) -> dict[str, Any]:
        """The arguments as a run records them (the env's ``config()``, JSON-safe): the items as dicts,
        the per-bidder values as lists, a callable ``tie_break`` as ``"callable"``."""
        tie_break = self.tie_break
        return {
            "items": [item.to_dict() for item in cast(tuple[Item, ...], self.items)], "item_order": self.item_order,
            "n_bidders": self.n_bidders, "budgets": list(cast(tuple[int, ...], self.budgets)),
            "desires": list(self.desires),
            "overestimate_percent": list(cast(tuple[int, ...], self.overestimate_percent)),
            "min_markup_pct": self.min_markup_pct, "action_mode": self.action_mode, "max_retries": self.max_retries,
            "reveal_status": self.reveal_status, "prompt": self.prompt, "belief_match": self.belief_match,
            "tie_break": tie_break if isinstance(tie_break, str) else
            list(tie_break) if isinstance(tie_break, tuple) else "callable",
            "enable_discount": self.enable_discount, "auto_withdraw_unaffordable": self.auto_withdraw_unaffordable,
            "reward_mode": self.reward_mode, "invalid_action_penalty": self.invalid_action_penalty,
            "discrete_levels": self.discrete_levels, "max_steps": self.max_steps,
        }
