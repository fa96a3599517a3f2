"""Which policy a spec name means, read from the installed packages' entry points.

Policy packages declare their policies as entry points (``pyproject.toml``), so ``arena_envs``
never imports them and a third-party package adds policies by declaring its own entries, without
editing this project:

* group ``arena_envs.policies``: ``"<environment>/<name>" = "module:Class"``; the environment
  ``*`` means every environment. The class is built with the spec's ``key=value`` arguments.
* group ``arena_envs.policy_prefixes``: ``"<prefix>" = "module:function"``, called as
  ``function(spec, env_name)`` with the whole spec string, for specs whose argument is not
  ``key=value`` pairs (``vllm:MODEL@URL``, ``sb3:PATH``).
* group ``arena_envs.policy_options``: ``"<prefix>" = "module:TABLE"``, the options of a prefix and
  their defaults as text, ``{"*": {...}, "<prefix>": {...}}`` (``"*"``: shared by the table's
  prefixes), in a module that imports nothing heavy: ``arena policies`` imports it to list them, so
  listing costs no torch or Ray import and works without the extra.
* group ``arena_envs.commands``: ``<name> = "module:function"`` runs ``arena <name> ARGS``
  (``serve``, ``train``); the function takes the argument list and returns the exit status.

Only the ``module:attribute`` strings are read here; a module is imported when a spec names it, so
an optional package that is not installed costs nothing.
"""
from __future__ import annotations

import importlib
import importlib.util
from importlib.metadata import entry_points
from typing import NamedTuple

POLICY_GROUP = "arena_envs.policies"
PREFIX_GROUP = "arena_envs.policy_prefixes"
OPTIONS_GROUP = "arena_envs.policy_options"
COMMAND_GROUP = "arena_envs.commands"


def _group(name: str) -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=name)}


def _policies() -> dict[tuple[str, str], str]:
    table: dict[tuple[str, str], str] = {}
    for key, target in _group(POLICY_GROUP).items():
        env, sep, name = key.partition("/")
        if not sep or not env or not name:
            raise ValueError(f"entry point {key!r} of group {POLICY_GROUP}: the name must be "
                             "'<environment>/<policy>' or '*/<policy>'")
        table[(env, name)] = target
    return table


#: (environment or "*", policy name) -> "module:Class".
POLICIES: dict[tuple[str, str], str] = _policies()

#: spec prefix -> "module:function"; ``function(spec: str, env_name: str) -> Policy``.
PREFIXES: dict[str, str] = _group(PREFIX_GROUP)


class Needs(NamedTuple):
    """The pip extra of this project that a prefix needs, and the modules (top-level) of it that the prefix imports."""

    extra: str
    modules: tuple[str, ...]


#: What the prefixes of this project need: the extra that a spec's MissingExtra names when a module is
#: missing, and the modules whose absence ``arena policies`` reports as "not installed".
PREFIX_NEEDS: dict[str, Needs] = {
    "vllm": Needs("llm", ("httpx",)), "hf": Needs("llm", ("torch", "transformers")),
    "vllm-local": Needs("vllm", ("vllm",)), "sb3": Needs("rl", ("torch", "stable_baselines3", "sb3_contrib")),
    "rllib": Needs("ray", ("ray", "torch")), "agent": Needs("agents", ("httpx",))}

#: spec prefix -> "module:TABLE" of its declared options (group ``arena_envs.policy_options``).
OPTIONS: dict[str, str] = _group(OPTIONS_GROUP)

#: command name -> "module:function"; ``function(args: list[str]) -> exit status`` runs ``arena NAME ARGS``.
COMMANDS: dict[str, str] = _group(COMMAND_GROUP)

#: pip extra of this project that a command needs, named when it is missing or its import fails.
COMMAND_EXTRAS: dict[str, str] = {"serve": "llm", "train": "rl", "train-rllib": "ray", "serve-agent": "agents"}


def policy_names(env: str) -> list[str]:
    """Names usable for ``env``: its own policies, the generic ones, and the prefixes (``vllm:...``)."""
    names = {name for (scope, name) in POLICIES if scope in (env, "*")}
    return sorted(names) + [f"{prefix}:..." for prefix in sorted(PREFIXES)]


def lookup(env: str, name: str) -> str | None:
    """The ``module:Class`` of policy ``name`` for ``env`` (the env's own entry wins over ``*``)."""
    return POLICIES.get((env, name)) or POLICIES.get(("*", name))


def missing_extra(prefix: str) -> str | None:
    """The pip extra that ``prefix`` needs when a module of it cannot be found (none is imported)."""
    needs = PREFIX_NEEDS.get(prefix)
    if needs is None or all(importlib.util.find_spec(module) for module in needs.modules):
        return None
    return needs.extra


def prefix_options(prefix: str) -> dict[str, str] | None:
    """The options (name -> default, as text) that ``prefix`` declares (group ``arena_envs.policy_options``;
    the table's ``"*"`` entry first); None when it declares none or its table cannot be loaded."""
    target = OPTIONS.get(prefix)
    if target is None:
        return None
    module, _, attribute = target.partition(":")
    try:
        table: dict[str, dict[str, str]] = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError):
        return None
    return {**table.get("*", {}), **table.get(prefix, {})}
