"""The suite's environments, registered in PettingZoo's registry as ``arena_envs/<name>-v<N>``.

``ENVIRONMENTS`` maps the versioned module name (``auction_v0``) to its module path; it is the one
list the CLI, the docs and the registry read. ``make("auction_v0", **kwargs)`` builds an AEC env.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import pettingzoo
from pettingzoo import AECEnv

#: versioned name -> (entry module, whether it offers parallel_env()). Every entry module offers
#: env() and raw_env().
ENVIRONMENTS: dict[str, tuple[str, bool]] = {
    "auction_v0": ("arena_envs.auction_v0", False),
    "guess_two_thirds_v0": ("arena_envs.guess_two_thirds_v0", True),
    "el_farol_v0": ("arena_envs.el_farol_v0", True),
    "divide_dollar_v0": ("arena_envs.divide_dollar_v0", True),
    "public_goods_v0": ("arena_envs.public_goods_v0", True),
    "diners_dilemma_v0": ("arena_envs.diners_dilemma_v0", True),
    "sealed_bid_auction_v0": ("arena_envs.sealed_bid_auction_v0", True),
    "battle_royale_v0": ("arena_envs.battle_royale_v0", False),
    "pirate_game_v0": ("arena_envs.pirate_game_v0", False),
}

NAMESPACE = "arena_envs"


def registry_id(name: str) -> str:
    """``auction_v0`` -> ``arena_envs/auction-v0``."""
    base, _, version = name.rpartition("_v")
    return f"{NAMESPACE}/{base}-v{version}"


def env_module(name: str) -> ModuleType:
    """The entry module of a versioned environment name, with a clear error for unknown names."""
    if name not in ENVIRONMENTS:
        known = ", ".join(sorted(ENVIRONMENTS))
        raise KeyError(f"unknown environment {name!r}; known: {known}")
    return importlib.import_module(ENVIRONMENTS[name][0])


def make(name: str, **kwargs: Any) -> AECEnv:
    """Build the wrapped AEC environment ``name`` (``auction_v0`` or ``arena_envs/auction-v0``)."""
    for short in ENVIRONMENTS:
        if name == registry_id(short):
            name = short
    return env_module(name).env(**kwargs)


def register_all() -> None:
    """Register every environment in PettingZoo's AEC (and, where offered, parallel) registry."""
    for name, (module, parallel) in ENVIRONMENTS.items():
        env_id = registry_id(name)
        if env_id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", env_id, entry_point=f"{module}:env")
        if parallel and env_id not in pettingzoo.parallel_registry:
            pettingzoo.register("parallel", env_id, entry_point=f"{module}:parallel_env")
