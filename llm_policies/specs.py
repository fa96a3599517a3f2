"""Policy spec strings for the CLI's ``--players`` (no commas, so they fit a comma-separated list).

    vllm:MODEL[@URL][?OPTIONS]     OpenAI-compatible server (default URL: $ARENA_VLLM_URL, else
                                   http://127.0.0.1:8000/v1; a URL is http(s)://HOST[:PORT][/PATH])
    vllm:MODEL@URL1@URL2[@...][?OPTIONS], vllm:MODEL?servers=FILE   several servers (a ServerPool)
    vllm-local:PATH[?OPTIONS]      in-process vllm.LLM
    hf:PATH[?OPTIONS]              transformers

OPTIONS is a URL query string, ``key=value`` joined by ``&`` (a comma as ``%2C``); the options and
their defaults are declared once, in :mod:`llm_policies.spec_options` (``arena policies ENV`` lists
them; their meanings: ``docs/llm_policies.md``). Backends are shared per process: policies built
from the same target reuse one HTTP client pool, ``vllm.LLM`` or loaded model, so their episodes
batch.
"""
from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena_envs.core.answers import excerpt
from arena_envs.core.extras import MissingExtra, needs_extra
from arena_envs.core.policy import Policy
from arena_envs.runner.policy_specs import option_number, query_options
from llm_policies.cpu_cores import check_threads
from llm_policies.retry import MAX_ATTEMPTS, Backoff
from llm_policies.server_settings import check_timeout, server_url
from llm_policies.spec_options import SPEC_OPTIONS
from llm_policies.types import DEFAULT_URL, Backend

_BOOL = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}
_POLICY_OPTIONS = set(SPEC_OPTIONS["*"])
#: The options each trading agent takes beyond the common ones.
_TRADING_OPTIONS: dict[str, dict[str, type]] = {
    "investor": {"top_k": int}, "tradeagent": {"debate_rounds": int, "risk_rounds": int},
    "hedgefund": {"functional_mode": str}, "deepfund": {"max_position_ratio": float}}
_TRADING_ENV = "trading_v0"
_TRADING_ONLY = {"max_retries", "seeded"} | {k for keys in _TRADING_OPTIONS.values() for k in keys}
_BACKEND_OPTIONS = {kind: set(options) for kind, options in SPEC_OPTIONS.items() if kind != "*"}
_BACKENDS: dict[tuple[Any, ...], Backend] = {}
_URL_START = re.compile(r"@(?=[A-Za-z][A-Za-z0-9+.-]*://)")  # "@" before a URL's scheme


@dataclass(frozen=True)
class LLMTarget:
    """What a spec names: the backend kind, the model, its server URLs (vllm: one or more, else
    empty) and the options."""

    kind: str
    model: str
    urls: tuple[str, ...]
    options: dict[str, str]


def parse_spec(spec: str) -> tuple[str, str, str | None, dict[str, str]]:
    """``(kind, model, url, options)`` of a spec string (``url``: the first server); ``ValueError``
    when malformed."""
    target = parse_target(spec)
    return target.kind, target.model, target.urls[0] if target.urls else None, target.options


def parse_target(spec: str) -> LLMTarget:
    """The :class:`LLMTarget` of a spec string; ``ValueError`` (one line) when malformed."""
    kind, sep, rest = spec.partition(":")
    kind = kind.strip()
    if not sep or kind not in _BACKEND_OPTIONS:
        raise ValueError(f"LLM policy spec must start with one of {sorted(_BACKEND_OPTIONS)} and ':', "
                         f"got {excerpt(spec)}")
    target, _, query = rest.partition("?")
    options = query_options(query, spec)
    allowed = _POLICY_OPTIONS | _BACKEND_OPTIONS[kind]
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ValueError(f"unknown option(s) {excerpt(unknown)} in {excerpt(spec)}; "
                         f"allowed for {kind}: {sorted(allowed)}")
    urls: tuple[str, ...] = ()
    if kind == "vllm":
        target, *listed = _URL_START.split(target)
        if "@" in target:
            raise ValueError(f"model {excerpt(target)} holds '@': a server URL goes after the model as "
                             "@http://HOST:PORT/v1")
        if listed and "servers" in options:
            raise ValueError(f"name the servers either with @URL or with servers=FILE, not both, in {excerpt(spec)}")
        urls = _server_urls(listed or (_read_servers(options["servers"]) if "servers" in options else [default_url()]),
                            excerpt(spec))
        _flag(options, "failover", True)
        _seconds(options, "probe", 60.0)
        _timeout(options)
        _retries(options)
    if not target:
        raise ValueError(f"LLM policy spec {excerpt(spec)} names no model")
    return LLMTarget(kind, target, urls, options)


def default_url() -> str:
    """The server of a ``vllm:MODEL`` spec without ``@URL``: ``$ARENA_VLLM_URL``, else the local default."""
    try:
        return server_url(os.environ.get("ARENA_VLLM_URL") or DEFAULT_URL)
    except ValueError as err:
        raise ValueError(f"$ARENA_VLLM_URL: {err}") from None


def _server_urls(urls: list[str], where: str) -> tuple[str, ...]:
    """``urls`` checked (:func:`~llm_policies.server_settings.server_url`) and without trailing slashes;
    a repeated one is an error (``where`` names the source)."""
    seen: list[str] = []
    for url in urls:
        url = server_url(url.strip())
        if url in seen:
            raise ValueError(f"server {url} is listed twice in {where}; list each server once")
        seen.append(url)
    return tuple(seen)


def _read_servers(path: str) -> list[str]:
    """The URLs of a servers file: one per line, ``#`` starts a comment, blank lines skipped."""
    try:
        lines = Path(path).expanduser().read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise ValueError(f"cannot read servers file {excerpt(path)}: {err.strerror or err}") from None
    urls = []
    for number, line in enumerate(lines, 1):
        url = line.split("#", 1)[0].strip()
        if not url:
            continue
        try:
            urls.append(server_url(url))
        except ValueError as err:
            raise ValueError(f"servers file {path}, line {number}: {err}") from None
    if not urls:
        raise ValueError(f"servers file {path} lists no server URL (one http://HOST:PORT/v1 a line, # comments)")
    return list(_server_urls(urls, f"servers file {path}"))


def policy_from_spec(spec: str, env_name: str | None = None) -> Policy:
    """The policy that ``spec`` describes (``env_name`` is the environment it will play)."""
    target = parse_target(spec)
    options = target.options
    check_local_model(target)
    guided = guided_mode(options)
    if guided == "1" and target.kind == "hf" and importlib.util.find_spec("xgrammar") is None:
        raise MissingExtra(f"{excerpt(spec)}: guided=1, answers decoded under the game's grammar (or guided=check: "
                           "checked after generation and asked again; guided=0: neither),", "llm", "xgrammar")
    backend = shared_backend(target.kind, target.model, target.urls, options)
    agent = options.get("agent", "generic")
    trading = agent in _TRADING_OPTIONS
    misplaced = sorted(k for k in _TRADING_ONLY if k in options) if not trading else []
    if misplaced:
        raise ValueError(f"option(s) {misplaced} apply to the trading agents only, not agent={agent}, "
                         f"in {excerpt(spec)}")
    common: dict[str, Any] = {
        "temperature": option_number(options, "temperature", float, 0.5 if trading else 0.0),
        "max_tokens": option_number(options, "max_tokens", int, 64 if trading else 256),
        "guided": guided != "0",
    }
    if agent == "generic":
        from llm_policies.policy import DEFAULT_SYSTEM_PROMPT, LLMPolicy

        policy: Policy = LLMPolicy(backend, system_prompt=options.get("system", DEFAULT_SYSTEM_PROMPT),
                                   persona=options.get("persona"), cot=_flag(options, "cot", False),
                                   cot_max_tokens=option_number(options, "cot_max_tokens", int, 512), **common)
    elif agent == "aucarena":
        if env_name not in (None, "auction_v0"):
            raise ValueError(f"agent=aucarena plays auction_v0 only, not {env_name}")
        from llm_policies.auction_bidder import AucArenaBidder

        policy = AucArenaBidder(backend, plan=options.get("plan", "adaptive"), desire=options.get("desire"),
                                cot=_flag(options, "cot", True),
                                cot_max_tokens=option_number(options, "cot_max_tokens", int, 384),
                                correct_belief=_flag(options, "belief", True), **common)
    elif trading:
        policy = _trading_agent(agent, backend, options, common, env_name, spec)
    else:
        raise ValueError(f"agent must be one of generic, aucarena, {', '.join(_TRADING_OPTIONS)}; "
                         f"got {excerpt(agent)} in {excerpt(spec)}")
    policy.name = spec
    return policy


def _trading_agent(agent: str, backend: Backend, options: dict[str, str], common: dict[str, Any],
                   env_name: str | None, spec: str) -> Policy:
    if env_name is not None and env_name.split(":")[0] != _TRADING_ENV:
        raise ValueError(f"agent={agent} plays {_TRADING_ENV} only, not {env_name}")
    extra = _TRADING_OPTIONS[agent]
    others = sorted(k for keys in _TRADING_OPTIONS.values() for k in keys if k not in extra and k in options)
    if others:
        raise ValueError(f"option(s) {others} do not apply to agent={agent} in {excerpt(spec)}")
    from llm_policies.trading import AGENTS

    kwargs: dict[str, Any] = {key: options[key] if kind is str else option_number(options, key, kind, None)
              for key, kind in extra.items() if key in options}
    return AGENTS[agent](backend, max_retries=option_number(options, "max_retries", int, 3),
                         seeded=_flag(options, "seeded", True), **common, **kwargs)


def shared_backend(kind: str, model: str, urls: tuple[str, ...], options: dict[str, str]) -> Backend:
    """The process-wide backend for this target (built on first use)."""
    own = tuple(sorted((k, v) for k, v in options.items() if k in _BACKEND_OPTIONS[kind] and k != "servers"))
    key = (kind, model, urls, own)
    if key not in _BACKENDS:
        _BACKENDS[key] = _BUILDERS[kind](model, urls, options)
    return _BACKENDS[key]


def check_local_model(target: LLMTarget) -> None:
    """Before any model loads: an ``hf:`` or ``vllm-local:`` model written as a path (``/``, ``.``, ``~``)
    must be an existing folder; a bad number or flag option is a ``ValueError`` too. (A missing vLLM or
    torch is :class:`~arena_envs.core.extras.MissingExtra` from the backend, before it loads anything.)"""
    if target.kind not in ("hf", "vllm-local"):
        return
    model = target.model
    if model.startswith(("/", ".", "~")) and not Path(model).expanduser().is_dir():
        raise ValueError(f"model folder {excerpt(model)} does not exist; {target.kind}: takes a local model folder "
                         "or a Hugging Face model id (org/name)")
    for key, kind in (("max_batch", int), ("window", float), ("max_model_len", int)):
        if key in _BACKEND_OPTIONS[target.kind]:
            option_number(target.options, key, kind, 0)
    if "enforce_eager" in _BACKEND_OPTIONS[target.kind]:
        _flag(target.options, "enforce_eager", False)
    if "threads" in _BACKEND_OPTIONS[target.kind]:
        _threads(target.options)


def _vllm(model: str, urls: tuple[str, ...], options: dict[str, str]) -> Backend:
    """One server: :class:`OpenAIHTTPBackend`; several: a :class:`ServerPool`, whose tie-break
    rotation is this process's id (so that many workers do not all start on the first server)."""
    with needs_extra("llm", "the vllm: player"):
        from llm_policies.backends.openai_http import OpenAIHTTPBackend

    timeout = _timeout(options)
    backoff = Backoff(attempts=_retries(options))
    if len(urls) == 1:
        return OpenAIHTTPBackend(model, urls[0], timeout=timeout, backoff=backoff)
    from llm_policies.backends.server_pool import ServerPool

    return ServerPool(model, urls, timeout=timeout, backoff=backoff, failover=_flag(options, "failover", True),
                      probe_after=_seconds(options, "probe", 60.0), rank=os.getpid())


def _vllm_local(model: str, urls: tuple[str, ...], options: dict[str, str]) -> Backend:
    from llm_policies.backends.vllm_local import VLLMLocalBackend

    return VLLMLocalBackend(model, max_batch=option_number(options, "max_batch", int, 64),
                            window=option_number(options, "window", float, 0.02),
                            max_model_len=option_number(options, "max_model_len", int, 8192),
                            enforce_eager=_flag(options, "enforce_eager", False))


def _hf(model: str, urls: tuple[str, ...], options: dict[str, str]) -> Backend:
    from llm_policies.backends.hf_transformers import TransformersBackend

    threads = _threads(options)
    try:
        return TransformersBackend(model, device=options.get("device", "cpu"), dtype=options.get("dtype", "auto"),
                                   max_batch=option_number(options, "max_batch", int, 16),
                                   window=option_number(options, "window", float, 0.02), threads=threads)
    except (OSError, ValueError) as err:  # transformers' "not found / cannot download / not a model" errors
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"model {excerpt(model)} cannot be loaded ({reason}); hf: takes a local model folder or a "
                         "Hugging Face model id (org/name) that is cached or can be downloaded") from None


_BUILDERS: dict[str, Callable[[str, tuple[str, ...], dict[str, str]], Backend]] = {
    "vllm": _vllm, "vllm-local": _vllm_local, "hf": _hf}


def guided_mode(options: dict[str, str]) -> str:
    """``"1"`` (decode under the grammar, the default), ``"check"`` (check after generation) or ``"0"``."""
    value = options.get("guided", "1").strip().lower()
    if value == "check":
        return value
    if value not in _BOOL:
        raise ValueError(f"option guided must be one of {sorted(_BOOL)} or check, got {excerpt(options['guided'])}")
    return "1" if _BOOL[value] else "0"


def _flag(options: dict[str, str], key: str, default: bool) -> bool:
    if key not in options:
        return default
    value = options[key].strip().lower()
    if value not in _BOOL:
        raise ValueError(f"option {key} must be one of {sorted(_BOOL)}, got {excerpt(options[key])}")
    return _BOOL[value]


def _timeout(options: dict[str, str]) -> float:
    """The ``timeout`` option: seconds > 0, at most a day."""
    return check_timeout(option_number(options, "timeout", float, 120.0), "option timeout")


def _retries(options: dict[str, str]) -> int:
    """The ``retries`` option: the attempts in all, from 1 to ``MAX_ATTEMPTS``."""
    value: int = option_number(options, "retries", int, 4)
    if not 1 <= value <= MAX_ATTEMPTS:
        raise ValueError(f"option retries (attempts in all) must be from 1 to {MAX_ATTEMPTS}, "
                         f"got {excerpt(options['retries'])}")
    return value


def _threads(options: dict[str, str]) -> int | None:
    """The ``threads`` option (hf): 1 to the cores this process may run on; None when not given."""
    value = option_number(options, "threads", int, None)
    return None if value is None else check_threads(value, "option threads")


def _seconds(options: dict[str, str], key: str, default: float) -> float:
    value = option_number(options, key, float, default)
    if not value > 0:
        raise ValueError(f"option {key} must be a number of seconds > 0, got {excerpt(options[key])}")
    return float(value)
