"""The reference agent service: any policy spec of one game behind the agent protocol (Starlette).

For each session (one seat of one episode) the server takes a policy built from the spec and its own
copy of the game, built from the registered game name and the settings the start announces (a request
is data: only the served game is built, and its settings go to its constructor, never to anything
that imports or runs). The policy is bound to that copy, then reset with the seat and the policy
seed of the start: so a rule policy that reads the game's fixed settings through ``bind`` (its
language, lexicon, action mode, feature names, sizes) sees what it sees in-process. An LLM policy's
answer constraint is the one the decision carries.

A policy that reads the game's live state (``Policy.follows_game``: the tank battle's players read
``env.world``) needs a copy that plays along: the health answer says ``follows``, and the arena (an
``agent:`` spec with ``follow=1``) then sends the seed it reset the game with and every move. Such a
session's copy is reset with that seed and steps each move; the policy gets the copy's own observation
and info, and a copy whose seat to move or text differs from the arena's is a 422 (they play different
games). Without the moves, a read of the live state is a 422 that stops the run. The calls of the game's
report methods (``REPORTS``: the AucArena bidder's plans and beliefs, which its metrics count) go back
with the answer, and the arena makes them on its own game.

A repeated step of a session is a retry: it gets the answer already given, never a second decision.
"""
from __future__ import annotations

import asyncio
import json
import secrets
import sys
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

from agent_service.protocol import (
    MAX_BODY_BYTES,
    MAX_HEALTH_NAME,
    PROTOCOL_VERSION,
    Answer,
    Decision,
    End,
    Finished,
    Health,
    ProtocolError,
    Start,
    decode,
    encode,
    jsonable,
    read,
)
from arena_envs.core.answers import AnswerConstraint, excerpt
from arena_envs.core.extras import needs_extra
from arena_envs.core.policy import Policy, PolicyFault
from arena_envs.registration import make
from arena_envs.runner.replay import native_action

with needs_extra("agents", __name__):
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

#: The most sessions the server keeps; the oldest is dropped to admit a new one (its client is gone).
MAX_SESSIONS = 4096
#: The most finished sessions whose end answer is kept for a repeated end.
MAX_ENDED = 4096


class Refused(Exception):
    """A request the server refuses: ``status`` and one line."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


#: The attributes that hold a game's live state (docs/design.md: "what changes during an episode"), which
#: the service's copy does not follow.
LIVE_STATE = frozenset({"game", "world", "history", "record"})


class ServedEnv:
    """What the served policy is bound to: the server's copy of the game (``made``, as built; ``env``,
    unwrapped), whose ``answer_constraint`` is the one of the decision at hand. Unless it follows the
    arena's game (:meth:`follow`) the copy is not stepped, so reading its live state
    (:data:`LIVE_STATE`) is a :class:`PolicyFault`: such a policy cannot be served without the moves."""

    def __init__(self, made: Any):
        self.made = made
        self.env = made.unwrapped
        self.constraint: AnswerConstraint | None = None
        self.following = False
        self.applied = 0  # the moves of the episode the copy took
        self.reports: list[list[Any]] = []  # the calls of the game's report methods since the last answer
        self._report_methods: frozenset[str] = frozenset(getattr(self.env, "REPORTS", ()))

    def follow(self, seed: int) -> None:
        """Reset the copy with the arena's seed; from now on it steps the arena's moves."""
        self.made.reset(seed=seed)
        self.following, self.applied = True, 0

    def catch_up(self, moves: list[Any] | None, first: int, seat: str,
                 text: str | None) -> tuple[Any, dict[str, Any]]:
        """Step the copy with the moves it has not taken (``moves`` numbered from ``first``) and give its own
        observation and info of ``seat``, which must be the seat to move (or to finish), with ``text`` (the
        arena's prompt, where sent) its observation's text."""
        if moves is None:
            raise ProtocolError("a followed session's request must carry its moves")
        if first > self.applied:
            raise Refused(409, f"the moves start at {first}, but this copy of the game has taken {self.applied}")
        for move in moves[self.applied - first:]:
            if not (isinstance(move, list) and len(move) == 2 and isinstance(move[0], str)):
                raise ProtocolError(f"a move must be [seat, action], got {excerpt(move)}")
            self._agrees(move[0], f"move {self.applied}")
            try:
                self.made.step(native_action(move[1]))
            except Exception as err:
                raise PolicyFault(f"its copy of the game cannot take move {self.applied} ({excerpt(move)}): "
                                  f"{type(err).__name__}: {excerpt(str(err), 200)}") from None
            self.applied += 1
        self._agrees(seat, f"the decision after move {self.applied}")
        observation, _, _, _, info = self.made.last()
        own = observation.get("text") if isinstance(observation, dict) else observation
        if text is not None and isinstance(own, str) and own != text:
            raise PolicyFault(f"its copy of the game shows {seat} another text than the arena after move "
                              f"{self.applied}: the two play different games (other data or code?)")
        return observation, info

    def _agrees(self, seat: str, where: str) -> None:
        """The copy has ``seat`` to move, as the arena has."""
        selected = self.env.agent_selection
        if selected != seat:
            raise PolicyFault(f"at {where} the arena has {excerpt(seat)} to move, its copy of the game "
                              f"{excerpt(selected)}: the two play different games")

    def answer_constraint(self, agent: str | None = None) -> AnswerConstraint | None:
        return self.constraint

    @property
    def unwrapped(self) -> ServedEnv:
        """Itself: a policy that unwraps its environment still sees this view."""
        return self

    def __getattr__(self, name: str) -> Any:
        if name in LIVE_STATE and not self.following:
            raise PolicyFault(f"it reads env.{name}, the game's live state, which an agent service's copy of the "
                              "game follows only with the moves: give the agent: spec follow=1")
        value = getattr(self.env, name)
        if name in self._report_methods:
            return self._reported(name, value)
        return value

    def _reported(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        """``method`` (a report to the game), noting each call for the answer."""
        def report(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            self.reports.append([name, jsonable(list(args)), jsonable(kwargs)])
            return result
        return report

    def take_reports(self) -> list[list[Any]] | None:
        """The report calls since the last answer (None: none), forgotten here."""
        reports, self.reports = self.reports, []
        return reports or None


class Session:
    """One seat of one episode: its policy, its copy of the game and its last answer."""

    def __init__(self, policy: Policy, view: ServedEnv, kwargs_key: str, seat: str):
        self.policy, self.view, self.kwargs_key, self.seat = policy, view, kwargs_key, seat
        self.lock = asyncio.Lock()
        self.last: tuple[int, bytes] | None = None


class AgentService:
    """Serves ``spec`` for game ``game``; ``build`` makes a policy from the spec (the runner's
    ``make_policy``); ``token``: the bearer token every request must carry (None: none)."""

    def __init__(self, game: str, spec: str, build: Callable[[str, str], Policy], token: str | None = None):
        self.game, self.spec, self.build, self.token = game, spec, build, token
        first = build(spec, game)
        name = spec if len(spec) <= MAX_HEALTH_NAME else spec[:MAX_HEALTH_NAME - 3] + "..."
        self.health = Health(protocol=PROTOCOL_VERSION, name=name, games=[game],
                             env_settings=jsonable(dict(first.env_settings)), provenance=jsonable(first.provenance()),
                             follows=bool(first.follows_game))
        self._policies: list[Policy] = [first]
        self._views: dict[str, list[ServedEnv]] = {}
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._ended: OrderedDict[str, bytes] = OrderedDict()

    def app(self) -> Starlette:
        routes = [Route("/health", self._endpoint(self._health), methods=["GET"]),
                  Route("/start", self._endpoint(self._start), methods=["POST"]),
                  Route("/act", self._endpoint(self._act), methods=["POST"]),
                  Route("/end", self._endpoint(self._end), methods=["POST"])]
        return Starlette(routes=routes)

    def _endpoint(self, handler: Callable[[Any], Any]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                self._authorize(request)
                body = await _body(request) if request.method == "POST" else b""
                answer: bytes = await handler(body)
            except Refused as err:
                return JSONResponse({"error": str(err)}, status_code=err.status)
            except ProtocolError as err:
                return JSONResponse({"error": str(err)}, status_code=400)
            except PolicyFault as err:  # the served policy cannot play here: not retried
                return JSONResponse({"error": f"the served policy cannot play here: {err}"}, status_code=422)
            except Exception as err:  # the served policy's failure: a 500, retried by the arena
                line = f"the served policy raised: {type(err).__name__}: {excerpt(str(err), 300)}"
                print(f"arena serve-agent: {line}", file=sys.stderr, flush=True)
                return JSONResponse({"error": line}, status_code=500)
            return Response(answer, media_type="application/json")
        return endpoint

    def _authorize(self, request: Request) -> None:
        if self.token is None:
            return
        given = request.headers.get("authorization", "")
        if not secrets.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
            raise Refused(401, "missing or wrong bearer token")

    async def _health(self, body: bytes) -> bytes:
        return encode(self.health)

    async def _start(self, body: bytes) -> bytes:
        start = read(Start, decode(body, "the start"))
        if start.game != self.game:
            raise Refused(400, f"this agent plays {self.game}, not {excerpt(start.game)}")
        if start.session in self._sessions:  # a repeated start (its answer was lost): already begun
            return b"{}"
        key = json.dumps(start.env_kwargs, sort_keys=True)
        free = self._views.setdefault(key, [])
        view = free.pop() if free else ServedEnv(self._game_copy(start.env_kwargs))
        policy = self._policies.pop() if self._policies else self.build(self.spec, self.game)
        try:
            if start.env_seed is not None:
                view.follow(start.env_seed)
            policy.bind(view)
            policy.reset(start.seat, start.seed)
        except Exception:
            self._release(Session(policy, view, key, start.seat))
            raise
        while len(self._sessions) >= MAX_SESSIONS:
            self._release(self._sessions.popitem(last=False)[1])
        self._sessions[start.session] = Session(policy, view, key, start.seat)
        return b"{}"

    async def _act(self, body: bytes) -> bytes:
        decision = read(Decision, decode(body, "the decision"))
        session = self._session(decision.session)
        async with session.lock:
            if session.last is not None and session.last[0] == decision.step:
                return session.last[1]  # a retry: the same answer
            if session.last is not None and decision.step < session.last[0]:
                raise Refused(409, f"step {decision.step} of session {excerpt(decision.session)} is past")
            session.view.constraint = _constraint(decision.constraint)
            if session.view.following:
                observation, info = session.view.catch_up(decision.moves, decision.moves_from, session.seat,
                                                          decision.text)
            else:
                observation, info = _observation(session.view, session.seat, decision.text, decision.observation,
                                                 decision.action_mask), decision.info
            session.view.reports.clear()
            action = await session.policy.aact(observation, info)
            trace = session.policy.trace()
            answer = encode(Answer(action=jsonable(action), trace=jsonable(trace) if trace else None,
                                   reports=session.view.take_reports()))
            session.last = (decision.step, answer)
            return answer

    async def _end(self, body: bytes) -> bytes:
        end = read(End, decode(body, "the end"))
        if end.session in self._ended:
            return self._ended[end.session]
        session = self._session(end.session)
        async with session.lock:
            if session.view.following:
                observation, info = session.view.catch_up(end.moves, end.moves_from, session.seat, end.text)
            else:
                observation, info = _observation(session.view, session.seat, end.text, end.observation,
                                                 end.action_mask), end.info
            session.view.reports.clear()
            worked = await session.policy.afinish(observation, info)
            trace = session.policy.trace() if worked else None
            answer = encode(Finished(worked=bool(worked), trace=jsonable(trace) if trace else None,
                                     reports=session.view.take_reports()))
        if self._sessions.pop(end.session, None) is session:  # not dropped meanwhile (then released already)
            self._release(session)
        self._ended[end.session] = answer
        while len(self._ended) > MAX_ENDED:
            self._ended.popitem(last=False)
        return answer

    def _session(self, name: str) -> Session:
        session = self._sessions.get(name)
        if session is None:
            raise Refused(409, f"unknown session {excerpt(name)} (never started here, or dropped)")
        return session

    def _release(self, session: Session) -> None:
        session.view.following = False
        self._policies.append(session.policy)
        self._views.setdefault(session.kwargs_key, []).append(session.view)

    def _game_copy(self, kwargs: dict[str, Any]) -> Any:
        """The served game built with the announced settings and reset once; a bad setting is a 400."""
        try:
            env = make(self.game, **kwargs)
            env.reset(seed=0)
        except (TypeError, ValueError, KeyError) as err:
            raise Refused(400, f"cannot build {self.game} with {excerpt(kwargs)}: {excerpt(str(err), 300)}") from None
        return env

    def close(self) -> None:
        for session in self._sessions.values():
            self._release(session)
        self._sessions.clear()
        for policy in self._policies:
            policy.close()


async def _body(request: Request) -> bytes:
    """The request's body, at most :data:`MAX_BODY_BYTES` (else a 413)."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise Refused(413, f"the body is longer than {MAX_BODY_BYTES} bytes")
    return bytes(body)


def _constraint(data: dict[str, Any] | None) -> AnswerConstraint | None:
    """The decision's answer constraint, rebuilt; a malformed one is a :class:`ProtocolError`."""
    if data is None:
        return None
    kind, description = data.get("kind"), data.get("description", "")
    try:
        if kind == "choice" and isinstance(data.get("choice"), list) and all(
                isinstance(c, str) for c in data["choice"]):
            return AnswerConstraint("choice", str(description), choices=tuple(data["choice"]))
        if kind == "regex" and isinstance(data.get("regex"), str):
            return AnswerConstraint("regex", str(description), pattern=data["regex"])
        if kind == "json" and isinstance(data.get("json"), dict):
            return AnswerConstraint("json", str(description), schema=data["json"])
    except (ValueError, RecursionError) as err:  # a regex that does not compile
        raise ProtocolError(f"Decision.constraint is malformed: {excerpt(str(err))}") from None
    raise ProtocolError(f"Decision.constraint must have kind choice, regex or json with its value, got {excerpt(data)}")


def _observation(view: ServedEnv, seat: str, text: str | None, numeric: list[Any] | None,
                 mask: list[Any] | None) -> dict[str, Any]:
    """The observation as the game gives it: the text, and the arrays in the dtypes of the seat's
    observation space."""
    try:
        space = view.env.observation_space(seat)
    except Exception:
        raise ProtocolError(f"the game has no seat {excerpt(seat)}") from None
    observation: dict[str, Any] = {}
    if text is not None:
        observation["text"] = text
    for key, value in (("observation", numeric), ("action_mask", mask)):
        if value is None:
            continue
        part = space[key] if isinstance(space, spaces.Dict) and key in space.spaces else None
        try:
            observation[key] = np.asarray(value, dtype=part.dtype if part is not None else np.float32)
        except (ValueError, TypeError, OverflowError):
            raise ProtocolError(f"Decision.{key} is not an array of numbers: {excerpt(value)}") from None
    return observation
