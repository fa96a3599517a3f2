"""The ``agent:URL[?OPTIONS]`` policy spec: a seat played by an agent service (``docs/agents.md``).

    agent:http://127.0.0.1:9000                    the agent at that address
    agent:http://10.0.0.5:9000/wis?timeout=10&retries=2&token_env=WIS_TOKEN
    agent:http://127.0.0.1:9001?follow=1          an agent that plays its own copy of the game

Options (a URL query, ``key=value`` joined by ``&``): ``timeout`` (seconds for each attempt of a
request, the deadline the agent is told), ``retries`` (attempts in all, 1 to 100) and ``token_env``
(the name of an environment variable holding a bearer token; the token itself never appears in a
spec, a log or the results folder) and ``follow`` (1: send the agent the game's seed and every
move, which an agent that says it follows the game needs). Before the first episode the agent must
answer ``GET /health`` (once per process and agent; it is given :data:`HEALTH_TIMEOUT` seconds to
start listening); the policies of one agent share one client, so concurrent episodes share its
connections.
"""
from __future__ import annotations

import asyncio
import os
import time

from agent_service.spec_options import SPEC_OPTIONS
from arena_envs.core.answers import excerpt
from arena_envs.core.event_loops import run_to_end
from arena_envs.core.extras import needs_extra
from arena_envs.core.policy import Policy
from arena_envs.runner.policy_specs import option_number, query_options
from llm_policies.retry import MAX_ATTEMPTS, Backoff, Retryable
from llm_policies.server_settings import check_timeout, server_url
from llm_policies.types import BackendError

with needs_extra("agents", __name__):
    from agent_service.policy import AgentPolicy
    from agent_service.protocol import Health
    from agent_service.transport import AgentClient

#: The longest wait for the health answer before the first episode, in seconds (an agent started just
#: before the run may still be starting).
HEALTH_TIMEOUT = 10.0
#: The seconds between two health requests while the agent does not answer.
PROBE_INTERVAL = 0.2
#: The fewest seconds a health request is given (no request starts with less left).
MIN_PROBE = 0.5
_CLIENTS: dict[tuple[str, float, int, str], AgentClient] = {}
_HEALTH: dict[AgentClient, Health] = {}


class AgentUnavailable(ValueError):
    """The agent does not answer its health request: the run does not start (one line)."""


def policy_from_spec(spec: str, env_name: str | None = None) -> Policy:
    """The policy of an ``agent:`` spec, after the agent answered its health request."""
    kind, sep, rest = spec.partition(":")
    if kind.strip() != "agent" or not sep:
        raise ValueError(f"an agent spec must start with 'agent:', got {excerpt(spec)}")
    target, _, query = rest.partition("?")
    options = query_options(query, spec)
    unknown = sorted(set(options) - set(SPEC_OPTIONS["agent"]))
    if unknown:
        raise ValueError(f"unknown option(s) {excerpt(unknown)} in {excerpt(spec)}; allowed for agent: "
                         f"{sorted(SPEC_OPTIONS['agent'])}")
    url = server_url(target.strip())
    timeout = check_timeout(option_number(options, "timeout", float, 30.0), "option timeout")
    retries = option_number(options, "retries", int, 4)
    if not 1 <= retries <= MAX_ATTEMPTS:
        raise ValueError(f"option retries (attempts in all) must be from 1 to {MAX_ATTEMPTS}, got {retries}")
    token_env = options.get("token_env", "")
    client_key = (url, timeout, retries, token_env)
    client = _CLIENTS.get(client_key)
    if client is None:
        client = _CLIENTS[client_key] = AgentClient(url, timeout=timeout, backoff=Backoff(attempts=retries),
                                             headers=_token_headers(token_env))
    follow = option_number(options, "follow", int, int(SPEC_OPTIONS["agent"]["follow"]))
    if follow not in (0, 1):
        raise ValueError(f"option follow must be 0 or 1, got {follow}")
    told = health(client)
    if told.games and env_name is not None and env_name not in told.games:
        raise ValueError(f"agent at {url} plays {excerpt(told.games)}, not {env_name}")
    if told.follows and not follow:
        raise ValueError(f"agent at {url} plays its own copy of the game and needs its seed and every move, which tell "
                         "it everything the game knows (hidden information included): add ?follow=1 to send them")
    policy = AgentPolicy(client, provenance={"name": told.name, **told.provenance}, env_settings=told.env_settings,
                         follow=bool(follow))
    policy.name = spec
    return policy


def health(client: AgentClient, fresh: bool = False) -> Health:
    """The agent's answer to ``GET /health``, waiting up to :data:`HEALTH_TIMEOUT` seconds (at most the
    client's timeout) for it to listen (asked once per client unless ``fresh``); :class:`AgentUnavailable`
    in one line, with the last failure, when it gives none."""
    if fresh or client not in _HEALTH:
        try:
            _HEALTH[client] = _blocking(client, min(HEALTH_TIMEOUT, client.timeout))
        except BackendError as err:
            raise AgentUnavailable(f"agent at {client.url} does not answer GET /health: {err}") from None
    return _HEALTH[client]


def _blocking(client: AgentClient, seconds: float) -> Health:
    """The health probe, asked again every :data:`PROBE_INTERVAL` seconds while the agent is not there
    (refused, 5xx, malformed) for ``seconds`` in all (each request given at least :data:`MIN_PROBE`),
    run to its end from synchronous code on a fresh event loop (in a helper thread when this one runs a
    loop already)."""
    async def probe() -> Health:
        deadline = time.monotonic() + seconds
        last: Retryable | None = None
        while True:
            left = deadline - time.monotonic()
            if last is not None and left < MIN_PROBE:
                raise BackendError(str(last))
            try:
                return await client.probe("/health", Health, max(left, MIN_PROBE))
            except Retryable as err:
                last = err
            await asyncio.sleep(PROBE_INTERVAL)

    return run_to_end(probe)


def _token_headers(variable: str) -> dict[str, str]:
    """``Authorization: Bearer $variable`` when the option names a variable (it must be set, printable
    ASCII without spaces)."""
    if not variable:
        return {}
    token = os.environ.get(variable)
    if not token:
        raise ValueError(f"option token_env names the environment variable {excerpt(variable)}, which is not set "
                         "or empty; export the agent's token in it")
    if not (token.isascii() and token.isprintable()) or any(c.isspace() for c in token):
        raise ValueError(f"the token in ${variable} must be printable ASCII without spaces")
    return {"Authorization": f"Bearer {token}"}
