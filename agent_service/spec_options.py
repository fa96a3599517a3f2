"""The options of the ``agent:URL`` spec and their defaults, as text (``arena policies`` lists them
through the ``arena_envs.policy_options`` entry point without importing httpx);
:mod:`agent_service.specs` reads the same table to accept or refuse an option."""
from __future__ import annotations

SPEC_OPTIONS: dict[str, dict[str, str]] = {
    "agent": {"timeout": "30", "retries": "4", "token_env": "none", "follow": "0"},
}
