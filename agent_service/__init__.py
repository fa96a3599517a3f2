"""Agents as HTTP services: the versioned agent protocol (:mod:`agent_service.protocol`), the
``agent:URL`` policy that calls such a service from a seat (:mod:`agent_service.client`) and
``arena serve-agent``, which serves any policy spec over it (:mod:`agent_service.server`).

It depends on :mod:`arena_envs`, never the reverse; the client needs the ``agents`` extra (httpx),
the server too (Starlette, uvicorn). See ``docs/agents.md``.
"""
