"""AucArena's items: the paper's 10-item set (Table 1), the reference 26-item pool, and orderings.

Every item's true value is twice its starting price. Item data always comes from the configured
list: the same names carry different prices in Table 1 and in the pool.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena_envs.core.answers import excerpt
from arena_envs.core.arguments import check_int

#: The largest amount of money (a budget, a starting price, a true value; the paper's budget is
#: 20,000): the amount action space is Discrete(largest budget + 2).
MAX_MONEY = 1_000_000
#: The most items of an auction (the paper: 10; the reference pool: 26).
MAX_ITEMS = 100


@dataclass(frozen=True)
class Item:
    name: str
    desc: str
    start_price: int
    true_value: int

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("an item needs a name")
        for field, low in (("start_price", 1), ("true_value", 0)):
            object.__setattr__(self, field, check_int(f"item {excerpt(self.name)}: {field}", getattr(self, field),
                                                      low, MAX_MONEY))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "desc": self.desc, "start_price": self.start_price, "true_value": self.true_value}


def _item(name: str, desc: str, price: int) -> Item:
    return Item(name, desc, price, 2 * price)


_DESCRIPTIONS = {
    "Widget A": "A widget for all your needs",
    "Gadget B": "A gadget with all the latest features",
    "Thingamajig C": "A little thing that is sure to impress",
    "Doodad D": "A durable doodad that will last for years",
    "Equipment E": "A piece of equipment for any tough job",
    "Gizmo F": "A gizmo that will surprise and delight",
    "Implement G": "An implement for everyday tasks",
    "Apparatus H": "An apparatus for specialized operations",
    "Contraption I": "A contraption that sparks creativity",
    "Mechanism J": "A mechanism for repetitive tasks",
    # pool ids 11-26: written for this project (flavour text without information, like the ones above)
    "Tool K": "A sturdy tool that handles a wide range of repairs",
    "Device L": "A compact device that packs many functions into one",
    "Instrument M": "A precise instrument for careful measurements",
    "Utensil N": "A handy utensil for a busy kitchen",
    "Appliance O": "A household appliance that saves hours of chores",
    "Machine P": "A heavy machine built for round-the-clock production",
    "Unit Q": "A self-contained unit that slots into larger setups",
    "Element R": "A core element that larger systems depend on",
    "Component S": "A spare component that keeps equipment running",
    "Piece T": "A finely crafted piece for collectors",
    "Object U": "A curious object of uncertain origin",
    "Item V": "A practical item for everyday use",
    "Product W": "A popular product with a loyal following",
    "Accessory X": "An accessory that completes any setup",
    "Module Y": "A plug-in module that adds new capabilities",
    "Entity Z": "A mysterious entity that defies description",
}

#: Paper Table 1: ten items, two per starting price 1000..5000 (row order).
TABLE1_ITEMS: tuple[Item, ...] = tuple(
    _item(name, _DESCRIPTIONS[name], price)
    for name, price in [
        ("Widget A", 1000), ("Gadget B", 3000), ("Thingamajig C", 4000), ("Doodad D", 2000),
        ("Equipment E", 5000), ("Gizmo F", 3000), ("Implement G", 2000), ("Apparatus H", 4000),
        ("Contraption I", 1000), ("Mechanism J", 5000),
    ]
)

_POOL_NAMES = [
    "Widget A", "Gadget B", "Thingamajig C", "Doodad D", "Equipment E", "Gizmo F", "Implement G",
    "Apparatus H", "Contraption I", "Mechanism J", "Tool K", "Device L", "Instrument M", "Utensil N",
    "Appliance O", "Machine P", "Unit Q", "Element R", "Component S", "Piece T", "Object U", "Item V",
    "Product W", "Accessory X", "Module Y", "Entity Z",
]
_POOL_EXPENSIVE = {5, 10, 16, 18}  # 1-based ids priced 5000; all others 1000

#: The reference repository's 26-item pool (ids 1..26 in order); ids 1-20 are the niche experiment's set.
POOL_ITEMS: tuple[Item, ...] = tuple(
    _item(name, _DESCRIPTIONS[name], 5000 if i in _POOL_EXPENSIVE else 1000)
    for i, name in enumerate(_POOL_NAMES, start=1)
)

ITEM_ORDERS = ("random", "ascending", "descending", "given")


def coerce_items(items: Iterable[Item | Mapping[str, Any]]) -> tuple[Item, ...]:
    """Items from ``Item`` objects or dicts with name/start_price/true_value (desc optional)."""
    result = []
    for entry in items:
        if isinstance(entry, Item):
            result.append(entry)
            continue
        try:
            price = entry["start_price"]
            result.append(Item(str(entry["name"]), str(entry.get("desc", "")), price,
                               entry.get("true_value", 2 * price)))
        except (KeyError, TypeError) as err:
            raise ValueError(f"bad item {excerpt(entry)}: need name and start_price ({excerpt(err)})") from None
        if len(result) > MAX_ITEMS:
            raise ValueError(f"items must hold at most {MAX_ITEMS} items")
    if not result:
        raise ValueError("items must not be empty")
    names = [item.name.lower() for item in result]
    if len(set(names)) != len(names):
        raise ValueError("item names must be unique")
    return tuple(result)


def order_items(items: Sequence[Item], order: str, rng: np.random.Generator) -> tuple[Item, ...]:
    """The auction order; equal starting prices keep the configured order (a stable sort)."""
    if order == "given":
        return tuple(items)
    if order == "ascending":
        return tuple(sorted(items, key=lambda item: item.start_price))
    if order == "descending":
        return tuple(sorted(items, key=lambda item: -item.start_price))
    if order == "random":
        return tuple(items[i] for i in rng.permutation(len(items)))
    raise ValueError(f"item_order must be one of {ITEM_ORDERS}, got {excerpt(order)}")
