"""Policy spec strings: what ``--players`` accepts and how each entry becomes a policy.

Grammar (documented in ``docs/runner.md``)::

    players  := spec ("," spec)*          commas inside quotes or brackets do not split
    spec     := entry ["*" COUNT]         "rule*9" is nine "rule" players
    entry    := NAME [":" args]           a policy of the arena_envs.policies entry points
              | PREFIX ":" REST           a factory of arena_envs.policy_prefixes (vllm:MODEL@URL)
    args     := KEY "=" VALUE ("+" KEY "=" VALUE)*    values are JSON when they parse, else strings

Examples: ``random``, ``rule:K=5``, ``rule:K=5+margin=0.1``, ``vllm:Qwen/Qwen2.5-7B@http://127.0.0.1:8000/v1``.
"""
from __future__ import annotations

import importlib
import inspect
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from arena_envs.core import Policy
from arena_envs.core.answers import EXCERPT_CHARS, excerpt
from arena_envs.core.arguments import MAX_SEATS
from arena_envs.core.extras import MissingExtra, install_command, needs_extra
from arena_envs.runner import policy_registry as registry

N = TypeVar("N", int, float)
_REPEAT = re.compile(r"^(?P<spec>.+)\*(?P<count>\d+)$")
_OPEN = {"[": "]", "{": "}", "(": ")"}


class SpecError(ValueError):
    """A policy spec string that cannot be turned into a policy (a user error)."""


def split_top_level(text: str, sep: str) -> list[str]:
    """Split ``text`` on ``sep`` except inside quotes or (), [], {} brackets; parts are stripped."""
    parts: list[str] = []
    current: list[str] = []
    closers: list[str] = []
    quote: str | None = None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in _OPEN:
            closers.append(_OPEN[ch])
        elif closers and ch == closers[-1]:
            closers.pop()
        elif ch == sep and not closers:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    if quote or closers:
        raise SpecError(f"unbalanced quotes or brackets in {excerpt(text)}")
    parts.append("".join(current).strip())
    return parts


def split_players(text: str) -> list[str]:
    """The specs of a ``--players`` value, with ``spec*N`` expanded; empty entries are an error, and
    so are more than :data:`~arena_envs.core.arguments.MAX_SEATS` seats in all."""
    specs: list[str] = []
    for part in split_top_level(text, ","):
        if not part:
            raise SpecError(f"empty player in --players {excerpt(text)}")
        match = _REPEAT.match(part)
        count = 1
        if match:
            count = int(match["count"]) if len(match["count"]) <= 9 else MAX_SEATS + 1
            if count < 1:
                raise SpecError(f"player count must be >= 1 in {excerpt(part)}")
        if len(specs) + count > MAX_SEATS:
            raise SpecError(f"--players lists more than {MAX_SEATS} seats (the limit) at {excerpt(part)}")
        specs.extend([match["spec"] if match else part] * count)
    return specs


def player_labels(specs: list[str]) -> list[str]:
    """Leaderboard labels: the spec itself, or ``spec#i`` (i = 1, 2... by position) when repeated."""
    counts = Counter(specs)
    seen: Counter[str] = Counter()
    labels = []
    for spec in specs:
        seen[spec] += 1
        labels.append(f"{spec}#{seen[spec]}" if counts[spec] > 1 else spec)
    return labels


def env_args(items: Sequence[str], option: str = "--env-arg") -> dict[str, Any]:
    """``["n_players=5", "order=[3,1]"]`` -> ``{"n_players": 5, "order": [3, 1]}`` (JSON, else string)."""
    kwargs: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise SpecError(f"{option} expects key=value, got {excerpt(item)}")
        kwargs[key.strip()] = parse_value(value)
    return kwargs


def parse_value(text: str) -> Any:
    """A JSON value when ``text`` parses as one (``5``, ``[1, 2]``, ``true``), else the string itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def game_env_arg(item: str, games: Sequence[str], *, prefixed: bool) -> tuple[str | None, str, Any]:
    """``"GAME.KEY=VALUE"`` -> ``(GAME, KEY, parsed VALUE)`` for a command that plays ``games``; unless
    ``prefixed`` (the prefix required), ``"KEY=VALUE"`` -> ``(None, KEY, VALUE)``."""
    key, eq, value = item.partition("=")
    game, dot, name = key.strip().rpartition(".")
    if not eq or not name or (prefixed and not dot):
        raise ValueError(f"--env-arg expects {'GAME.' if prefixed else '[GAME.]'}KEY=VALUE, got {excerpt(item)}")
    if dot and game not in games:
        raise ValueError(f"--env-arg {excerpt(item)}: unknown game {excerpt(game)}; known: {', '.join(games)}")
    return (game if dot else None), name, parse_value(value)


def parse_arguments(text: str, what: str) -> dict[str, Any]:
    """``"K=5+margin=0.1"`` -> ``{"K": 5, "margin": 0.1}``; ``what`` names the spec in errors."""
    kwargs: dict[str, Any] = {}
    if not text:
        return kwargs
    for item in split_top_level(text, "+"):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key.isidentifier():
            raise SpecError(f"bad argument {excerpt(item)} in policy spec {excerpt(what)}: expected key=value, "
                            "joined by '+'")
        if key in kwargs:
            raise SpecError(f"argument {excerpt(key)} given twice in policy spec {excerpt(what)}")
        kwargs[key] = parse_value(value.strip())
    return kwargs


def query_options(query: str, spec: str) -> dict[str, str]:
    """A prefix spec's ``?OPTIONS`` (``key=value`` joined by ``&``, URL-encoded) as a dict; a malformed
    query, or an option given twice (naming ``spec``), is a ``ValueError``."""
    options: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)):
        if key in options:
            raise ValueError(f"option {excerpt(key)} given twice in {excerpt(spec)}")
        options[key] = value
    return options


def option_number(options: dict[str, str], key: str, kind: type[N], default: Any) -> N | Any:
    """Option ``key`` of a prefix spec read as ``kind`` (``int`` or ``float``; a float must be finite), or
    ``default`` when it is not given; a bad value is a ``ValueError`` naming the option."""
    if key not in options:
        return default
    try:
        value = kind(options[key])
    except ValueError:
        raise ValueError(f"option {key} must be {kind.__name__}, got {excerpt(options[key])}") from None
    if kind is float and not math.isfinite(float(value)):  # type: ignore[arg-type]
        raise ValueError(f"option {key} must be a finite number, got {excerpt(options[key])}")
    return value


def load_object(path: str) -> Any:
    """Import ``"package.module:attribute"``."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def make_policy(spec: str, env: str) -> Policy:
    """Build the policy that ``spec`` names for environment ``env`` (a name of ``arena list``)."""
    name, _, rest = spec.partition(":")
    name = name.strip()
    if name in registry.PREFIXES:  # a module of its extra missing, on import or when building: MissingExtra
        needs = registry.PREFIX_NEEDS.get(name)
        extra = needs.extra if needs else None
        with needs_extra(extra, f"the {name}: player"):
            factory = _import(registry.PREFIXES[name], spec, extra)
            try:
                return factory(spec, env)
            except ValueError as err:
                raise SpecError(f"policy spec {excerpt(spec)}: {err}") from err
    found = registry.lookup(env, name)
    if found is None:
        known = ", ".join(registry.policy_names(env))
        if not registry.POLICIES:
            known += (" (no policy entry points are installed: pip install -e . in the repository "
                      f"declares them, group {registry.POLICY_GROUP})")
        raise SpecError(f"unknown policy {excerpt(name)} for {env}; available: {known}")
    cls: Callable[..., Policy] = _import(found, spec, None)
    kwargs = parse_arguments(rest, spec)
    check_keywords(cls, kwargs, f"policy spec {excerpt(spec)}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as err:
        raise SpecError(f"policy spec {excerpt(spec)} ({found}): {err}") from err


def check_keywords(func: Callable[..., Any], kwargs: dict[str, Any], what: str) -> None:
    """Raise :class:`SpecError` (one line, naming the argument, its value and what is accepted) when
    ``kwargs`` holds a name ``func`` does not take, or a string where its default is a number or a flag."""
    named = keyword_parameters(func)
    if named is None:  # no signature to check against, or any keyword taken: the call itself decides
        return
    for key, value in kwargs.items():
        if key not in named:
            raise SpecError(f"{what}: unknown argument {key[:EXCERPT_CHARS]}={excerpt(value)}; "
                            f"accepted: {describe_keywords(named)}")
        expected = _expected(named[key])
        if expected and isinstance(value, str):
            raise SpecError(f"{what}: argument {key}={excerpt(value)} must be {expected} "
                            f"(default {named[key].default!r})")


def keyword_parameters(func: Callable[..., Any]) -> dict[str, inspect.Parameter] | None:
    """The parameters ``func`` takes by keyword, in order; None when it has no signature to read or
    takes any keyword (``**kwargs``). A class's ``**kwargs`` is followed up its bases' ``__init__``
    (which it is passed on to), so a subclass that only says what differs still lists them all."""
    try:
        if isinstance(func, type):
            return _class_parameters(func)
        named, takes_any = _keywords(func)
    except (TypeError, ValueError):
        return None
    return None if takes_any else named


def _class_parameters(cls: type) -> dict[str, inspect.Parameter] | None:
    """The keyword parameters of ``cls(...)`` along its ``__init__`` chain, the subclass's first; None
    when the last ``__init__`` reached still takes any keyword."""
    found: dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if klass is object:  # takes no arguments of its own
            return found
        if init is None:
            continue
        named, takes_any = _keywords(init)
        for key, param in named.items():
            if key != "self":
                found.setdefault(key, param)
        if not takes_any:
            return found
    return None


def _keywords(func: Callable[..., Any]) -> tuple[dict[str, inspect.Parameter], bool]:
    """``func``'s parameters passable by keyword, in order, and whether it also takes ``**kwargs``."""
    params = inspect.signature(func).parameters
    named = {n: p for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return named, any(p.kind is p.VAR_KEYWORD for p in params.values())


def describe_keywords(params: dict[str, inspect.Parameter]) -> str:
    """``K=4, margin=0.05`` (a parameter without a default: its bare name); ``none`` when there is none."""
    return ", ".join(_describe(n, p) for n, p in params.items()) or "none"


def policy_options(env: str, name: str) -> str:
    """What ``arena policies`` shows of a name of :func:`~policy_registry.policy_names`: the options with
    their defaults (the class's keyword parameters, or a prefix factory's declared options), or why not."""
    prefix = name.removesuffix(":...")
    if prefix in registry.PREFIXES:
        missing = registry.missing_extra(prefix)
        declared = registry.prefix_options(prefix)
        text = ("options not declared (no arena_envs.policy_options entry)" if declared is None
                else ", ".join(f"{key}={default}" for key, default in declared.items()) or "none")
        return f"{text} (not installed: {install_command(missing)})" if missing else text
    target = registry.lookup(env, name)
    if target is None:
        raise SpecError(f"unknown policy {excerpt(name)} for {env}")
    try:
        params = keyword_parameters(load_object(target))
    except (ImportError, AttributeError) as err:
        return f"(cannot import {target}: {err})"
    if params is None:
        return "any key=value (not checked before the call)"
    return describe_keywords(params) if params else "no options"


def _expected(param: inspect.Parameter) -> str | None:
    """What a parameter whose default is a number or a flag accepts, unless its annotation also allows text."""
    default, note = param.default, str(param.annotation)
    if "str" in note or "Any" in note or default is param.empty or default is None:
        return None
    if isinstance(default, bool):
        return "true or false"
    return "a number" if isinstance(default, (int, float)) else None


def _describe(name: str, param: inspect.Parameter) -> str:
    return name if param.default is param.empty else f"{name}={param.default!r}"


def _import(target: str, spec: str, extra: str | None) -> Any:
    """The object ``target`` names; a :class:`SpecError` when it cannot be imported, except for a module
    that is not installed where an extra should have installed it: ``extra`` is known (the caller's
    :func:`~arena_envs.core.extras.needs_extra` names it), or the module raised :class:`MissingExtra`."""
    try:
        return load_object(target)
    except ImportError as err:
        if isinstance(err, ModuleNotFoundError) and (extra or isinstance(err, MissingExtra)):
            raise
        raise SpecError(f"policy spec {excerpt(spec)} needs {target}, which cannot be imported: {err}") from err
    except AttributeError as err:
        raise SpecError(f"policy spec {excerpt(spec)}: {target} does not exist: {err}") from err
