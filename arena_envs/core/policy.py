"""The one policy interface shared by rule, random, human, RL and LLM policies (``docs/design.md``).

A policy plays one seat per episode. The runner calls ``bind(env)`` (optional, for policies that
use an environment's helper API such as AucArena's belief check), then ``reset(agent, seed)``,
then ``act`` or ``aact`` for every decision of that seat, and ``finish``/``afinish`` once when the
seat's episode is over (terminated or truncated), with its last observation. ``act`` returns a
native action or a string (raw text that the environment parses). ``trace()`` returns JSON-safe
details of the last decision, or of the finishing work, (raw LLM text, token counts...) for the
step log. A policy that needs the environment built in a certain way (a trained network: the
settings it was trained with) says so in ``env_settings``; a policy that cannot play as it is raises
:class:`PolicyFault`.

Two flags concern playing in another process (an agent service, ``docs/agents.md``): a policy that
reads the game's live state (the environment's changing attributes, or objects in ``info`` that
JSON does not carry) sets ``follows_game``; a policy that plays through its own copy of the game
sets ``watches_moves``, and the runner then calls :meth:`Policy.watch` after ``reset`` with the
episode's environment seed and the list it appends every step's ``(agent, action)`` to.
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pettingzoo import AECEnv


class PolicyFault(Exception):
    """Raised by a policy that cannot play this game or seat as it is (a trained model whose
    observation or action space is not the seat's): its own fault, which playing the same episodes
    again repeats, unlike a passing one (a server that did not answer)."""


class Policy:
    """Base class; subclasses override :meth:`act` (sync) or :meth:`aact` (async, LLM policies)."""

    #: Short label used in leaderboards when the runner has no spec string for the policy.
    name: str = "policy"

    #: False when the policy reads only ``observation`` and ``action_mask`` (an RL network): a
    #: driver that can skip building the text (:class:`arena_envs.rl.LearnerEnv`) then does.
    reads_text: bool = True

    #: Environment keyword arguments the policy needs (a trained model's training settings, such as
    #: the tank battle's ``action_mode="discrete"``): a runner builds the environment with them where
    #: its own arguments leave them out, and refuses, before any episode, a run that sets them otherwise.
    env_settings: Mapping[str, Any] = MappingProxyType({})

    #: True when the policy reads the game's live state through the bound environment or objects of
    #: ``info`` (the tank battle's ``env.world``, the trading game's ``info["snapshot"]``): served as an
    #: agent, its service must follow the game move by move.
    follows_game: bool = False

    #: True when the policy wants every move of the episode (:meth:`watch`).
    watches_moves: bool = False

    def bind(self, env: AECEnv) -> None:
        """Called once per episode before :meth:`reset`; ``env`` is the unwrapped environment."""

    def reset(self, agent: str, seed: int | None = None) -> None:
        """Start a new episode in seat ``agent``; all randomness must come from ``seed``."""

    def watch(self, env_seed: int | None, moves: list[tuple[str, Any]]) -> None:
        """Called after :meth:`reset` when ``watches_moves``: the episode's environment was reset with
        ``env_seed``, and the runner appends each step's ``(agent, action)`` to ``moves`` (``None``
        for a done agent's step) right after the environment took it."""

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        raise NotImplementedError(f"{type(self).__name__} implements neither act nor aact")

    async def aact(self, observation: Any, info: dict[str, Any]) -> Any:
        """Async decision; the default runs :meth:`act` (cheap policies need nothing else)."""
        return self.act(observation, info)

    def finish(self, observation: Any, info: dict[str, Any]) -> bool:
        """The seat's episode is over; ``observation`` is its last one. Policies that learn from the
        outcome (AucArena's belief update after the last hammer) work here. Returns True when it
        did work whose :meth:`trace` belongs in the step log."""
        return False

    async def afinish(self, observation: Any, info: dict[str, Any]) -> bool:
        """Async :meth:`finish`; the default runs :meth:`finish`."""
        return self.finish(observation, info)

    def trace(self) -> dict[str, Any]:
        """Details of the last decision for the step log (JSON-safe). ``"fallback": True`` says that
        the decision is the policy's own default, not its model's answer (the runner counts it as a
        fallback in the seat's validity)."""
        return {}

    def provenance(self) -> dict[str, Any]:
        """What the run's provenance records of this policy (JSON-safe): an LLM policy its backend,
        model, sampling settings and grammar engine; nothing by default."""
        return {}

    def close(self) -> None:
        """Release resources (connections, models)."""
