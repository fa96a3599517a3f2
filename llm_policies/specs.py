"""Policy spec strings for the CLI's ``--players`` (no commas, so they fit a comma-separated list).

    vllm:MODEL[@URL][?OPTIONS]     OpenAI-compatible server (default URL http://127.0.0.1:8000/v1)
    vllm-local:PATH[?OPTIONS]      in-process vllm.LLM
    hf:PATH[?OPTIONS]              transformers

OPTIONS is a URL query string, ``key=value`` joined by ``&`` (percent-encode a comma as ``%2C``):

    agent=generic|aucarena   generic LLMPolicy (default) or the AucArena bidder (auction_v0)
    agent=investor|tradeagent|hedgefund|deepfund   the trading_v0 agents (llm_policies.trading;
                             temperature 0.5, max_tokens 64 for the decision line by default)
    temperature=0.0  max_tokens=256  guided=1  cot=0 (aucarena: 1)  cot_max_tokens=512 (aucarena: 384)
    system=TEXT  persona=TEXT                          (generic policy)
    plan=adaptive|static|none  desire=maximize_profit|maximize_items  belief=1  (aucarena)
    max_retries=3  seeded=1                            (trading agents; seeded=0: no request seeds)
    top_k=5 (investor)  debate_rounds=1  risk_rounds=1 (tradeagent)  functional_mode=rule|llm
    (hedgefund)  max_position_ratio=1.0 (deepfund)
    timeout=120  retries=4                             (vllm: per-request timeout s, attempts)
    max_batch=64  window=0.02  max_model_len=8192  enforce_eager=0   (vllm-local; eager skips
                                                       torch.compile: faster start, slower steps)
    device=cpu  dtype=auto  max_batch=16  window=0.02  (hf; concurrent requests generated together)

Backends are shared per process: every policy built from the same target reuses one HTTP client
pool, one ``vllm.LLM`` or one loaded model, so concurrent episodes batch together.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from arena_envs.core.policy import Policy
from llm_policies.backends.openai_http import DEFAULT_URL
from llm_policies.types import Backend

_BOOL = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}
_POLICY_OPTIONS = {"agent", "temperature", "max_tokens", "guided", "cot", "cot_max_tokens", "system", "persona",
                   "plan", "desire", "belief", "max_retries", "seeded", "top_k", "debate_rounds", "risk_rounds",
                   "functional_mode", "max_position_ratio"}
#: The options each trading agent takes beyond the common ones.
_TRADING_OPTIONS: dict[str, dict[str, type]] = {
    "investor": {"top_k": int}, "tradeagent": {"debate_rounds": int, "risk_rounds": int},
    "hedgefund": {"functional_mode": str}, "deepfund": {"max_position_ratio": float}}
_TRADING_ENV = "trading_v0"
_TRADING_ONLY = {"max_retries", "seeded"} | {k for keys in _TRADING_OPTIONS.values() for k in keys}
_BACKEND_OPTIONS = {"vllm": {"timeout", "retries"},
                    "vllm-local": {"max_batch", "window", "max_model_len", "enforce_eager"},
                    "hf": {"device", "dtype", "max_batch", "window"}}
_BACKENDS: dict[tuple[Any, ...], Backend] = {}


def parse_spec(spec: str) -> tuple[str, str, str | None, dict[str, str]]:
    """``(kind, model, url, options)`` of a spec string; ``ValueError`` when malformed."""
    kind, sep, rest = spec.partition(":")
    kind = kind.strip()
    if not sep or kind not in _BACKEND_OPTIONS:
        raise ValueError(f"LLM policy spec must start with one of {sorted(_BACKEND_OPTIONS)} and ':', got {spec!r}")
    target, _, query = rest.partition("?")
    options: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)):
        if key in options:
            raise ValueError(f"option {key!r} given twice in {spec!r}")
        options[key] = value
    allowed = _POLICY_OPTIONS | _BACKEND_OPTIONS[kind]
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} in {spec!r}; allowed for {kind}: {sorted(allowed)}")
    url = None
    if kind == "vllm":
        model, at, url_part = target.rpartition("@")
        if at and url_part.startswith(("http://", "https://")):
            target, url = model, url_part
        else:
            url = DEFAULT_URL
    if not target:
        raise ValueError(f"LLM policy spec {spec!r} names no model")
    return kind, target, url, options


def policy_from_spec(spec: str, env_name: str | None = None) -> Policy:
    """The policy that ``spec`` describes (``env_name`` is the environment it will play)."""
    kind, model, url, options = parse_spec(spec)
    backend = shared_backend(kind, model, url, options)
    agent = options.get("agent", "generic")
    trading = agent in _TRADING_OPTIONS
    misplaced = sorted(k for k in _TRADING_ONLY if k in options) if not trading else []
    if misplaced:
        raise ValueError(f"option(s) {misplaced} apply to the trading agents only, not agent={agent}, in {spec!r}")
    common: dict[str, Any] = {
        "temperature": _number(options, "temperature", float, 0.5 if trading else 0.0),
        "max_tokens": _number(options, "max_tokens", int, 64 if trading else 256),
        "guided": _flag(options, "guided", True),
    }
    if agent == "generic":
        from llm_policies.policy import DEFAULT_SYSTEM_PROMPT, LLMPolicy

        policy: Policy = LLMPolicy(backend, system_prompt=options.get("system", DEFAULT_SYSTEM_PROMPT),
                                   persona=options.get("persona"), cot=_flag(options, "cot", False),
                                   cot_max_tokens=_number(options, "cot_max_tokens", int, 512), **common)
    elif agent == "aucarena":
        if env_name not in (None, "auction_v0"):
            raise ValueError(f"agent=aucarena plays auction_v0 only, not {env_name}")
        from llm_policies.auction_bidder import AucArenaBidder

        policy = AucArenaBidder(backend, plan=options.get("plan", "adaptive"), desire=options.get("desire"),
                                cot=_flag(options, "cot", True),
                                cot_max_tokens=_number(options, "cot_max_tokens", int, 384),
                                correct_belief=_flag(options, "belief", True), **common)
    elif trading:
        policy = _trading_agent(agent, backend, options, common, env_name, spec)
    else:
        raise ValueError(f"agent must be one of generic, aucarena, {', '.join(_TRADING_OPTIONS)}; "
                         f"got {agent!r} in {spec!r}")
    policy.name = spec
    return policy


def _trading_agent(agent: str, backend: Backend, options: dict[str, str], common: dict[str, Any],
                   env_name: str | None, spec: str) -> Policy:
    if env_name is not None and env_name.split(":")[0] != _TRADING_ENV:
        raise ValueError(f"agent={agent} plays {_TRADING_ENV} only, not {env_name}")
    extra = _TRADING_OPTIONS[agent]
    others = sorted(k for keys in _TRADING_OPTIONS.values() for k in keys if k not in extra and k in options)
    if others:
        raise ValueError(f"option(s) {others} do not apply to agent={agent} in {spec!r}")
    from llm_policies.trading import AGENTS

    kwargs: dict[str, Any] = {key: options[key] if kind is str else _number(options, key, kind, None)
              for key, kind in extra.items() if key in options}
    return AGENTS[agent](backend, max_retries=_number(options, "max_retries", int, 3),
                         seeded=_flag(options, "seeded", True), **common, **kwargs)


def shared_backend(kind: str, model: str, url: str | None, options: dict[str, str]) -> Backend:
    """The process-wide backend for this target (built on first use)."""
    own = tuple(sorted((k, v) for k, v in options.items() if k in _BACKEND_OPTIONS[kind]))
    key = (kind, model, url, own)
    if key not in _BACKENDS:
        _BACKENDS[key] = _BUILDERS[kind](model, url, options)
    return _BACKENDS[key]


def _vllm(model: str, url: str | None, options: dict[str, str]) -> Backend:
    from llm_policies.backends.openai_http import OpenAIHTTPBackend
    from llm_policies.retry import Backoff

    return OpenAIHTTPBackend(model, url or DEFAULT_URL, timeout=_number(options, "timeout", float, 120.0),
                             backoff=Backoff(attempts=_number(options, "retries", int, 4)))


def _vllm_local(model: str, url: str | None, options: dict[str, str]) -> Backend:
    from llm_policies.backends.vllm_local import VLLMLocalBackend

    return VLLMLocalBackend(model, max_batch=_number(options, "max_batch", int, 64),
                            window=_number(options, "window", float, 0.02),
                            max_model_len=_number(options, "max_model_len", int, 8192),
                            enforce_eager=_flag(options, "enforce_eager", False))


def _hf(model: str, url: str | None, options: dict[str, str]) -> Backend:
    from llm_policies.backends.hf_transformers import TransformersBackend

    return TransformersBackend(model, device=options.get("device", "cpu"), dtype=options.get("dtype", "auto"),
                               max_batch=_number(options, "max_batch", int, 16),
                               window=_number(options, "window", float, 0.02))


_BUILDERS: dict[str, Callable[[str, str | None, dict[str, str]], Backend]] = {
    "vllm": _vllm, "vllm-local": _vllm_local, "hf": _hf}


def _flag(options: dict[str, str], key: str, default: bool) -> bool:
    if key not in options:
        return default
    value = options[key].strip().lower()
    if value not in _BOOL:
        raise ValueError(f"option {key} must be one of {sorted(_BOOL)}, got {options[key]!r}")
    return _BOOL[value]


def _number(options: dict[str, str], key: str, kind: type, default: Any) -> Any:
    if key not in options:
        return default
    try:
        return kind(options[key])
    except ValueError:
        raise ValueError(f"option {key} must be {kind.__name__}, got {options[key]!r}") from None
