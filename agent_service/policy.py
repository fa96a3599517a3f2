"""``AgentPolicy``: a seat played by an agent service over the agent protocol.

Per episode it announces the start (game, settings, seat, policy seed) before the seat's first
request, sends one :class:`~agent_service.protocol.Decision` per decision and announces the end with
the last observation. A malformed answer, a 5xx, a refused connection or a missed deadline is a
failed attempt, retried with backoff; when none succeeds the policy raises, and the run stops in one
line with its finished episodes kept, as with an LLM server. An answer whose action the game cannot
read is the game's invalid answer (asked again, then its fallback), never an exception. ``trace()``
gives the seat's telemetry: latency, attempts, the explanation and the served policy's own trace.

With ``follow`` the policy watches the episode's moves (:meth:`Policy.watch`): the start carries the
seed the game was reset with and each request the moves since the previous one, so that the agent
can play its own copy of the game in step with the arena's (an agent whose policy reads the game's
live state). The agent then knows everything the game knows, hidden information included.
"""
from __future__ import annotations

import itertools
import json
import secrets
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from agent_service.protocol import PROTOCOL_VERSION, Answer, Decision, End, Finished, Start, jsonable
from agent_service.transport import AgentClient
from arena_envs.core.answers import excerpt
from arena_envs.core.episode_context import current_episode
from arena_envs.core.policy import Policy, PolicyFault
from llm_policies.aio import run_sync


class AgentPolicy(Policy):
    """Plays a seat by asking the agent behind ``client``; ``provenance`` is what the agent's health
    answer told about it, ``env_settings`` the environment settings it needs."""

    name = "agent"

    def __init__(self, client: AgentClient, *, provenance: Mapping[str, Any] | None = None,
                 env_settings: Mapping[str, Any] | None = None, follow: bool = False):
        self.client = client
        self.watches_moves = follow  # sends the agent the game's seed and every move
        self.label = f"agent:{client.url}"
        self._provenance = dict(provenance or {})
        if env_settings:
            self.env_settings = dict(env_settings)
        self._token = secrets.token_hex(8)  # sessions of different policies and runs never collide
        self._count = itertools.count()
        self._env: Any = None
        self._game = ""
        self._kwargs: dict[str, Any] = {}
        self._seat = ""
        self._seed: int | None = None
        self._session = ""
        self._started = False
        self._step = 0
        self._trace: dict[str, Any] = {}
        self._env_seed: int | None = None
        self._moves: list[tuple[str, Any]] | None = None
        self._sent = 0  # the moves the agent has

    def bind(self, env: Any) -> None:
        if env is not self._env:
            self._game = str(env.metadata.get("name", ""))
            self._kwargs = _constructor_kwargs(env)
            self._env = env

    def reset(self, agent: str, seed: int | None = None) -> None:
        if self._env is None:
            raise RuntimeError("AgentPolicy needs bind(env) before reset(agent, seed): it announces the game")
        self._seat, self._seed = agent, seed
        self._session = f"{self._token}-{next(self._count)}"
        self._started = False
        self._step = 0
        self._trace = {}
        self._env_seed, self._moves, self._sent = None, None, 0

    def watch(self, env_seed: int | None, moves: list[tuple[str, Any]]) -> None:
        self._env_seed, self._moves = env_seed, moves

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        return run_sync(self.aact(observation, info))

    async def aact(self, observation: Any, info: dict[str, Any]) -> Any:
        await self._start()
        constraint = self._env.answer_constraint(self._seat) if hasattr(self._env, "answer_constraint") else None
        text, numeric, mask = _split(observation)
        decision = Decision(
            protocol=PROTOCOL_VERSION, session=self._session, game=self._game, seat=self._seat, step=self._step,
            info=jsonable(info), deadline_s=self.client.timeout, text=text, observation=numeric, action_mask=mask,
            constraint=None if constraint is None else constraint.to_dict(),
            choices=list(constraint.choices) if constraint is not None and constraint.kind == "choice" else None,
            episode=_episode(), **self._new_moves())
        self._step += 1
        answer, attempts, seconds = await self.client.call("/act", decision, Answer)
        self._report(answer.reports)
        self._trace = self._telemetry(seconds, attempts, answer.trace)
        if answer.explanation is not None:
            self._trace["explanation"] = answer.explanation
        return self._native(answer.action)

    async def afinish(self, observation: Any, info: dict[str, Any]) -> bool:
        await self._start()
        text, numeric, mask = _split(observation)
        end = End(protocol=PROTOCOL_VERSION, session=self._session, info=jsonable(info), text=text,
                  observation=numeric, action_mask=mask, **self._new_moves())
        finished, attempts, seconds = await self.client.call("/end", end, Finished)
        self._report(finished.reports)
        self._trace = self._telemetry(seconds, attempts, finished.trace)
        return finished.worked

    def finish(self, observation: Any, info: dict[str, Any]) -> bool:
        return run_sync(self.afinish(observation, info))

    def trace(self) -> dict[str, Any]:
        """The last request's telemetry: the agent, its latency in seconds, the attempts it took, the
        answer's explanation and the served policy's trace (``served``); ``fallback`` when that trace
        says the answer is the served policy's own default."""
        return self._trace

    def provenance(self) -> dict[str, Any]:
        return {"backend": "agent", "url": self.client.url, "timeout": self.client.timeout,
                "retries": self.client.backoff.attempts, "agent": self._provenance}

    def preflight(self) -> None:
        """Ask the agent's health again (``arena eval`` calls this before any game)."""
        from agent_service.specs import health

        health(self.client, fresh=True)

    def close(self) -> None:
        """The client is shared between the policies of one agent (:mod:`agent_service.specs`)."""

    async def _start(self) -> None:
        if self._started:
            return
        if self.watches_moves and self._moves is None:
            raise PolicyFault("an agent: seat with follow=1 sends the agent every move, which only the arena's runner "
                              "(arena run, eval, tournament) gives it")
        start = Start(protocol=PROTOCOL_VERSION, session=self._session, game=self._game, env_kwargs=self._kwargs,
                      seat=self._seat, seed=self._seed, episode=_episode(), env_seed=self._env_seed)
        await self.client.call("/start", start, dict)
        self._started = True

    def _report(self, reports: list[Any] | None) -> None:
        """Make the served policy's report calls on this game (only its ``REPORTS`` methods, for this seat, and
        only from an agent that follows the game: a trusted one)."""
        if reports and not self.watches_moves:
            raise PolicyFault(f"the agent sends reports to the game ({excerpt(reports)}), which only an agent that "
                              "follows the game (follow=1: one you trust) may")
        allowed: frozenset[str] = getattr(self._env, "REPORTS", frozenset())
        for report in reports or ():
            if not (isinstance(report, list) and len(report) == 3 and report[0] in allowed
                    and isinstance(report[1], list) and report[1][:1] == [self._seat] and isinstance(report[2], dict)):
                raise PolicyFault(f"the agent reports {excerpt(report)}; a report is [method, args, kwargs] with a "
                                  f"method of {sorted(allowed)} and this seat ({self._seat}) first in args")
            try:
                getattr(self._env, report[0])(*report[1], **report[2])
            except (TypeError, ValueError, KeyError) as err:
                raise PolicyFault(f"the agent's report {excerpt(report)} does not fit this game: "
                                  f"{excerpt(str(err), 200)}") from None

    def _new_moves(self) -> dict[str, Any]:
        """The moves the agent has not had (following only), as the fields of the next request."""
        if self._moves is None:
            return {}
        first, self._sent = self._sent, len(self._moves)
        return {"moves": [[seat, jsonable(action)] for seat, action in self._moves[first:]], "moves_from": first}

    def _telemetry(self, seconds: float, attempts: int, served: dict[str, Any] | None) -> dict[str, Any]:
        trace: dict[str, Any] = {"backend": self.label, "latency_s": round(seconds, 4), "attempts": attempts}
        if served is not None:
            trace["served"] = served
            if served.get("fallback") is True:
                trace["fallback"] = True
        return trace

    def _native(self, action: Any) -> Any:
        """A list answer for a vector action space (Box, MultiDiscrete, MultiBinary) as the space's array;
        anything else as it came (the game reads it, or rejects it as an invalid answer)."""
        if not isinstance(action, list):
            return action
        space = self._env.action_space(self._seat)
        if not isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
            return action
        try:
            array = np.asarray(action, dtype=space.dtype)
        except (ValueError, TypeError, OverflowError, RecursionError):
            return action
        return array if array.shape == space.shape else action


def _split(observation: Any) -> tuple[str | None, list[Any] | None, list[Any] | None]:
    """The text, the numeric observation and the action mask of an observation, as JSON values."""
    if not isinstance(observation, Mapping):
        if isinstance(observation, str):
            return observation, None, None
        numeric = jsonable(observation)
        return None, numeric if isinstance(numeric, list) else [numeric], None
    text = observation.get("text")
    numeric = jsonable(observation.get("observation"))
    mask = jsonable(observation.get("action_mask"))
    return (text if isinstance(text, str) else None, numeric if isinstance(numeric, list) else None,
            mask if isinstance(mask, list) else None)


def _episode() -> int | None:
    """The episode number of the runner's episode scope (its key is ``(run token, episode)``)."""
    key = current_episode()
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], int):
        return key[1]
    return None


def _constructor_kwargs(env: Any) -> dict[str, Any]:
    """The keyword arguments ``env`` was built with (every game keeps them for pickling), which must be
    JSON values: the agent builds its own copy of the game from them."""
    args = getattr(env, "_ezpickle_args", ())
    kwargs = dict(getattr(env, "_ezpickle_kwargs", {}))
    if args:
        raise PolicyFault(f"{type(env).__name__} was built with positional arguments {excerpt(args)}; an agent: "
                          "seat announces the game's settings as keyword arguments only")
    try:
        json.dumps(kwargs, allow_nan=False)
    except (TypeError, ValueError):
        raise PolicyFault(f"the game's settings {excerpt(kwargs)} are not all JSON values; an agent: seat "
                          "announces them to the agent as JSON") from None
    return kwargs
