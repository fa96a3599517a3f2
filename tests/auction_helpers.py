"""Helpers shared by the auction tests: scripted replays and playing with baseline policies."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena_envs import auction_v0
from arena_envs.auction.items import POOL_ITEMS, TABLE1_ITEMS

FIXTURES = json.loads((Path(__file__).parent / "fixtures" / "auction_replays.json").read_text())
_ALL_ITEMS = {item.name: item for item in (*POOL_ITEMS, *TABLE1_ITEMS)}


def agent_of(display: str) -> str:
    return "bidder_" + display.split()[-1]


def replay(fixture: dict[str, Any], **env_kwargs: Any):
    """Play a fixture's scripted decisions; assert each round selects exactly its listed bidders."""
    items = [{"name": it["name"], "start_price": it["start_price"], "true_value": it["true_value"],
              "desc": ""} for it in fixture["items"]]
    budgets = list(fixture["budgets"].values())
    ties = [agent_of(name) for it in fixture["items"] for name in it["tie_breaks"]]
    env = auction_v0.env(items=items, item_order="given", n_bidders=len(budgets), budgets=budgets,
                         tie_break=ties, render_mode="ansi", **env_kwargs)
    env.reset(seed=0)
    for item in fixture["items"]:
        for round_ in item["rounds"]:
            for name in sorted(round_, key=lambda n: int(n.split()[-1])):
                agent = agent_of(name)
                assert env.agent_selection == agent, (item["name"], round_, env.agent_selection)
                decision = round_[name]
                env.step("I'm out!" if decision == "W" else f"I bid ${decision}!")
                assert env.infos[agent]["invalid_action"] is None, env.infos[agent]
    assert env.unwrapped.tie_breaks_used == len(ties), "unused tie-breaks"
    assert all(env.terminations.values())
    return env


