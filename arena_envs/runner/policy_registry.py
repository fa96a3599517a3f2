"""Which policy a spec name means: the one table that policy packages extend by adding lines.

The table names policies by strings only: ``arena_envs`` never imports the policy packages
(``baselines``, ``llm_policies`` depend on ``arena_envs``, never the reverse); the runner imports a
policy's module when a spec asks for it.

``POLICIES`` maps ``(environment, name)`` to ``"module:Class"``; the environment ``"*"`` means
every environment. ``PREFIXES`` maps a spec prefix (the text before the first ``:``) to a factory
``"module:function"``, called as ``function(spec, env_name)`` with the whole spec string and the
environment's name, that returns a policy; it serves specs
whose argument is not ``key=value`` pairs (``vllm:MODEL@URL``, ``sb3:PATH``). Modules are imported
only when a spec names them, so an optional package that is not installed costs nothing.
"""
from __future__ import annotations

#: (environment or "*", policy name) -> "module:Class"; the class is built with the spec's arguments.
POLICIES: dict[tuple[str, str], str] = {
    ("*", "random"): "baselines.random_policy:RandomPolicy",
    ("*", "human"): "baselines.human:HumanPolicy",
    ("auction_v0", "rule"): "baselines.auction_rule:RuleBidder",
    ("auction_v0", "always_withdraw"): "baselines.auction_rule:AlwaysWithdraw",
    ("auction_v0", "truthful_min_raise"): "baselines.auction_rule:TruthfulMinRaise",
    ("auction_v0", "random_valid"): "baselines.auction_rule:RandomValid",
    ("guess_two_thirds_v0", "fixed"): "baselines.gamma_fixed:FixedAnswer",
    ("el_farol_v0", "fixed"): "baselines.gamma_fixed:FixedAnswer",
    ("divide_dollar_v0", "fixed"): "baselines.gamma_fixed:FixedAnswer",
    ("public_goods_v0", "fixed"): "baselines.gamma_fixed:FixedAnswer",
    ("diners_dilemma_v0", "fixed"): "baselines.gamma_fixed:FixedAnswer",
    ("sealed_bid_auction_v0", "fixed"): "baselines.gamma_fixed:FixedAnswer",
    ("guess_two_thirds_v0", "equilibrium"): "baselines.gamma_equilibrium:GuessNash",
    ("el_farol_v0", "equilibrium"): "baselines.gamma_equilibrium:ElFarolMixed",
    ("divide_dollar_v0", "equilibrium"): "baselines.gamma_equilibrium:DivideFair",
    ("public_goods_v0", "equilibrium"): "baselines.gamma_equilibrium:PublicGoodsNash",
    ("diners_dilemma_v0", "equilibrium"): "baselines.gamma_equilibrium:DinersNash",
    ("sealed_bid_auction_v0", "equilibrium"): "baselines.gamma_equilibrium:SealedBidEquilibrium",
    ("battle_royale_v0", "equilibrium"): "baselines.gamma_sequential:StrongestShooter",
    ("battle_royale_v0", "strongest"): "baselines.gamma_sequential:StrongestShooter",
    ("battle_royale_v0", "weakest"): "baselines.gamma_sequential:WeakestShooter",
    ("battle_royale_v0", "random"): "baselines.gamma_sequential:RandomShooter",
    ("battle_royale_v0", "truel_miss"): "baselines.gamma_sequential:TruelMissShooter",
    ("pirate_game_v0", "equilibrium"): "baselines.gamma_sequential:NashPirate",
    ("pirate_game_v0", "nash"): "baselines.gamma_sequential:NashPirate",
    ("pirate_game_v0", "greedy"): "baselines.gamma_sequential:GreedyPirate",
    ("pirate_game_v0", "random"): "baselines.gamma_sequential:RandomPirate",
    ("el_farol_v0", "always_go"): "baselines.gamma_fixed:AlwaysGo",
    ("el_farol_v0", "always_stay"): "baselines.gamma_fixed:AlwaysStay",
    ("diners_dilemma_v0", "always_costly"): "baselines.gamma_fixed:AlwaysCostly",
    ("diners_dilemma_v0", "always_cheap"): "baselines.gamma_fixed:AlwaysCheap",
    ("public_goods_v0", "free_rider"): "baselines.gamma_fixed:FreeRider",
    ("sealed_bid_auction_v0", "truthful"): "baselines.gamma_equilibrium:Truthful",
    ("sealed_bid_auction_v0", "bne"): "baselines.gamma_equilibrium:BayesNash",
    ("sealed_bid_auction_v0", "zero"): "baselines.gamma_fixed:ZeroBid",
    ("sealed_bid_auction_v0", "half"): "baselines.gamma_adaptive:SealedBidHalf",
    ("guess_two_thirds_v0", "nash"): "baselines.gamma_equilibrium:GuessNash",
    ("guess_two_thirds_v0", "best_response_last"): "baselines.gamma_adaptive:GuessBestResponse",
    ("guess_two_thirds_v0", "level_k"): "baselines.gamma_adaptive:GuessLevelK",
    ("el_farol_v0", "mixed"): "baselines.gamma_equilibrium:ElFarolMixed",
    ("el_farol_v0", "contrarian"): "baselines.gamma_adaptive:ElFarolContrarian",
    ("divide_dollar_v0", "fair"): "baselines.gamma_equilibrium:DivideFair",
    ("divide_dollar_v0", "greedy"): "baselines.gamma_adaptive:DivideGreedy",
    ("divide_dollar_v0", "adaptive"): "baselines.gamma_adaptive:DivideAdaptive",
    ("public_goods_v0", "full"): "baselines.gamma_adaptive:PublicGoodsFull",
    ("public_goods_v0", "conditional"): "baselines.gamma_adaptive:PublicGoodsConditional",
    ("diners_dilemma_v0", "majority_tft"): "baselines.gamma_adaptive:DinersMajorityTFT",
}

#: spec prefix -> "module:function"; ``function(spec: str, env_name: str) -> Policy``.
PREFIXES: dict[str, str] = {
    "vllm": "llm_policies.specs:policy_from_spec",
    "vllm-local": "llm_policies.specs:policy_from_spec",
    "hf": "llm_policies.specs:policy_from_spec",
}

#: pip extra that provides each prefix's module, named in the error when it is missing.
PREFIX_EXTRAS: dict[str, str] = {"vllm": "llm", "vllm-local": "vllm", "hf": "llm"}

#: ``arena serve ARGS``: ``function(args) -> exit status`` (starts a local vLLM server).
SERVE = "llm_policies.serve:main"


def policy_names(env: str) -> list[str]:
    """Names usable for ``env``: its own policies, the generic ones, and the prefixes (``vllm:...``)."""
    names = {name for (scope, name) in POLICIES if scope in (env, "*")}
    return sorted(names) + [f"{prefix}:..." for prefix in sorted(PREFIXES)]


def lookup(env: str, name: str) -> str | None:
    """The ``module:Class`` of policy ``name`` for ``env`` (the env's own entry wins over ``*``)."""
    return POLICIES.get((env, name)) or POLICIES.get(("*", name))
