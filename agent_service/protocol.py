"""The agent protocol, version 1: what the arena sends an agent service and what it takes back.

One JSON object per HTTP request, each message a frozen dataclass whose fields and their types are
the contract (the OpenAPI description, :mod:`agent_service.openapi`, is generated from them):

* ``GET /health`` -> :class:`Health` (asked before the first episode);
* ``POST /start`` :class:`Start` -> any JSON object (an episode begins in one seat);
* ``POST /act`` :class:`Decision` -> :class:`Answer` (one per decision; a repeated step is a retry
  and must get the same answer);
* ``POST /end`` :class:`End` -> :class:`Finished` (the seat's episode is over).

:func:`read` checks a received object against a message class, field by field, and raises
:class:`ProtocolError` with one line naming the field; unknown fields are ignored (a newer peer may
send more). Every size has a bound: a body at most :data:`MAX_BODY_BYTES`, texts their
``max_length``. :func:`jsonable` turns what a game holds (NumPy arrays and scalars, tuples) into
JSON values.
"""
from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TypeVar, Union

import numpy as np

from arena_envs.core.answers import excerpt

PROTOCOL_VERSION = 1
#: The longest request or answer body either side reads (a trading game's text is up to a million characters).
MAX_BODY_BYTES = 16 * 1024 * 1024
#: The longest short name (a session, game, seat) in characters.
MAX_NAME_CHARS = 128
#: The longest observation text in characters.
MAX_TEXT_CHARS = 4_000_000
#: The longest name an agent gives itself in its health answer, in characters.
MAX_HEALTH_NAME = 200
#: The longest explanation an answer may carry, in characters.
MAX_EXPLANATION_CHARS = 100_000
#: The largest magnitude of an integer field (seeds are 32-bit; steps and episodes far below).
MAX_INT = 2**63 - 1

M = TypeVar("M")


class ProtocolError(ValueError):
    """A message that is not what the protocol says (not an object, a field missing, of the wrong type
    or too long); the message is one line naming the field and quoting a short excerpt."""


def _doc(text: str, max_length: int | None = None) -> dict[str, Any]:
    """A message field's metadata: its description and, for texts and lists, its longest length."""
    return {"doc": text, "max_length": max_length}


_PROTOCOL = _doc("the protocol version of the sender (this is version 1)")
_SESSION = _doc("the arena's id of one seat in one episode, chosen anew for each", MAX_NAME_CHARS)
_EPISODE = _doc("the episode's number in the run, where the arena knows it")
_MOVES = _doc("following only: the episode's moves from number moves_from on, each [seat, action as JSON] (a null "
              "action: a done seat's step), up to this request")
_REPORTS = _doc("the calls of the game's report methods the served policy made (an AucArena bidder's plan and "
                "beliefs), each [method, args, kwargs]; the arena makes them on its game, for the seat's own")
_MOVES_FROM = _doc("following only: the number of the first move in moves (the episode's first is 0)")


@dataclass(frozen=True)
class Health:
    """The answer to ``GET /health``: the agent is up and speaks this protocol version."""

    protocol: int = field(metadata=_PROTOCOL)
    name: str = field(default="agent", metadata=_doc("what the agent calls itself (for the run's provenance)",
                                                     MAX_HEALTH_NAME))
    games: list[str] = field(default_factory=list, metadata=_doc("the games it plays; empty: any", 100))
    env_settings: dict[str, Any] = field(default_factory=dict, metadata=_doc(
        "environment keyword arguments it needs (a trained model's settings)"))
    provenance: dict[str, Any] = field(default_factory=dict, metadata=_doc(
        "what the run records about it (model, version...)"))
    follows: bool = field(default=False, metadata=_doc(
        "it needs the game's seed and every move (it plays a copy of the game); the arena sends them only to an "
        "agent: spec with follow=1"))


@dataclass(frozen=True)
class Start:
    """``POST /start``: seat ``seat`` of episode ``episode`` begins, with policy seed ``seed``."""

    protocol: int = field(metadata=_PROTOCOL)
    session: str = field(metadata=_SESSION)
    game: str = field(metadata=_doc("the registered game (who_is_spy_v0...)", MAX_NAME_CHARS))
    env_kwargs: dict[str, Any] = field(metadata=_doc("the game's constructor arguments (its settings), JSON values"))
    seat: str = field(metadata=_doc("the seat's agent name (player_0...)", MAX_NAME_CHARS))
    seed: int | None = field(metadata=_doc(
        "the seat's policy seed for this episode: all its randomness should come from it"))
    episode: int | None = field(default=None, metadata=_EPISODE)
    env_seed: int | None = field(default=None, metadata=_doc(
        "following only: the seed the arena reset the game with (with it the game's hidden state is known)"))


@dataclass(frozen=True)
class Decision:
    """``POST /act``: the seat's current observation; the answer is its action."""

    protocol: int = field(metadata=_PROTOCOL)
    session: str = field(metadata=_SESSION)
    game: str = field(metadata=_doc("the registered game", MAX_NAME_CHARS))
    seat: str = field(metadata=_doc("the seat's agent name", MAX_NAME_CHARS))
    step: int = field(metadata=_doc("the seat's decision number in this episode, from 0; a repeated one is a retry"))
    info: dict[str, Any] = field(metadata=_doc("the game's structured state for the seat (what rule players read)"))
    deadline_s: float = field(metadata=_doc("the seconds the arena waits for the whole answer"))
    text: str | None = field(default=None, metadata=_doc(
        "the complete prompt of the decision (rules, state, answer format)", MAX_TEXT_CHARS))
    observation: list[Any] | None = field(default=None, metadata=_doc("the numeric observation (float32 features)"))
    action_mask: list[Any] | None = field(default=None, metadata=_doc("1 for each legal discrete action, else 0"))
    constraint: dict[str, Any] | None = field(default=None, metadata=_doc(
        "the answers valid now: kind (choice, regex or json), description, and choice, regex or json (a JSON "
        "schema)"))
    choices: list[str] | None = field(default=None, metadata=_doc(
        "every valid text answer, where they are finitely many"))
    episode: int | None = field(default=None, metadata=_EPISODE)
    moves: list[Any] | None = field(default=None, metadata=_MOVES)
    moves_from: int = field(default=0, metadata=_MOVES_FROM)


@dataclass(frozen=True)
class Answer:
    """The answer to a :class:`Decision`."""

    action: Any = field(metadata=_doc(
        "the action: a text the game parses (like an LLM's reply) or a native value (an integer index, a list for "
        "a vector action, an object for a JSON answer)"))
    explanation: str | None = field(default=None, metadata=_doc("why, for the step log", MAX_EXPLANATION_CHARS))
    trace: dict[str, Any] | None = field(default=None, metadata=_doc(
        'details of the decision for the step log (a served policy\'s trace; "fallback": true marks the policy\'s '
        "own default)"))
    reports: list[Any] | None = field(default=None, metadata=_REPORTS)


@dataclass(frozen=True)
class End:
    """``POST /end``: the seat's episode is over; its last observation."""

    protocol: int = field(metadata=_PROTOCOL)
    session: str = field(metadata=_SESSION)
    info: dict[str, Any] = field(metadata=_doc("the game's structured state for the seat at the end"))
    text: str | None = field(default=None, metadata=_doc("the seat's last prompt text", MAX_TEXT_CHARS))
    observation: list[Any] | None = field(default=None, metadata=_doc("the last numeric observation"))
    action_mask: list[Any] | None = field(default=None, metadata=_doc("the last action mask"))
    moves: list[Any] | None = field(default=None, metadata=_MOVES)
    moves_from: int = field(default=0, metadata=_MOVES_FROM)


@dataclass(frozen=True)
class Finished:
    """The answer to an :class:`End`."""

    worked: bool = field(default=False, metadata=_doc(
        "whether the agent did end-of-episode work whose trace belongs in the step log"))
    trace: dict[str, Any] | None = field(default=None, metadata=_doc("that work's details"))
    reports: list[Any] | None = field(default=None, metadata=_REPORTS)


#: path -> (method, request message or None, answer message), the protocol's endpoints.
ENDPOINTS: dict[str, tuple[str, type | None, type]] = {
    "/health": ("GET", None, Health), "/start": ("POST", Start, dict), "/act": ("POST", Decision, Answer),
    "/end": ("POST", End, Finished)}


def to_json(message: Any) -> dict[str, Any]:
    """``message``'s fields as a JSON object (shallow: the values are JSON values already)."""
    return {f.name: getattr(message, f.name) for f in dataclasses.fields(message)}


def encode(message: Any) -> bytes:
    """``message`` as the UTF-8 JSON body of a request or answer (no NaN or infinity: not JSON)."""
    return json.dumps(to_json(message), ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def decode(body: bytes, what: str) -> Any:
    """The JSON value of a body at most :data:`MAX_BODY_BYTES` long; :class:`ProtocolError` when it is
    longer, not UTF-8 or not JSON (``what`` names it)."""
    if len(body) > MAX_BODY_BYTES:
        raise ProtocolError(f"{what} is longer than {MAX_BODY_BYTES} bytes")
    try:
        return json.loads(body.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise ProtocolError(f"{what} is not UTF-8: {excerpt(body[:100])}") from None
    except (ValueError, RecursionError):
        raise ProtocolError(f"{what} is not JSON: {excerpt(body[:200].decode('utf-8', 'replace'))}") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@cache
def field_types(cls: Any) -> dict[str, tuple[Any, bool]]:
    """Field name -> (its type without ``None``, whether ``null`` is allowed), from the annotations."""
    hints = typing.get_type_hints(cls)
    table = {}
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        args = typing.get_args(hint)
        nullable = typing.get_origin(hint) in (Union, types.UnionType) and type(None) in args
        if nullable:
            hint = next(a for a in args if a is not type(None))
        table[f.name] = (hint, nullable)
    return table


def read(cls: type[M], data: Any, what: str | None = None) -> M:
    """``data`` (a decoded JSON value) as a ``cls`` message, checked field by field; :class:`ProtocolError`
    in one line otherwise. ``what`` names the message in errors (default: the class name)."""
    what = what or cls.__name__
    if not isinstance(data, dict):
        raise ProtocolError(f"{what} must be a JSON object, got {excerpt(data)}")
    values = {}
    types_of = field_types(typing.cast(Any, cls))
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ProtocolError(f"{what} has no field {f.name!r}")
            continue
        hint, nullable = types_of[f.name]
        value = data[f.name]
        if not (value is None and nullable):
            _check(value, hint, f.metadata.get("max_length"), f"{what}.{f.name}")
        values[f.name] = value
    message = cls(**values)
    if "protocol" in values and values["protocol"] != PROTOCOL_VERSION:
        raise ProtocolError(f"{what}.protocol is {excerpt(values['protocol'])}; this side speaks protocol "
                            f"version {PROTOCOL_VERSION}")
    return message


def _check(value: Any, hint: Any, max_length: int | None, where: str) -> None:
    origin = typing.get_origin(hint) or hint
    if hint is Any:
        return
    if hint is bool:
        ok = isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_INT
    elif hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    elif hint is str:
        ok = isinstance(value, str)
    elif origin is dict:
        ok = isinstance(value, dict)
    elif origin is list:
        item = typing.get_args(hint)[0]
        ok = isinstance(value, list) and (item is Any or all(isinstance(v, item) for v in value))
    else:  # pragma: no cover - a message field of a type this checker does not know
        raise TypeError(f"{where}: unsupported field type {hint!r}")
    if not ok:
        raise ProtocolError(f"{where} must be {_json_type(hint)}, got {excerpt(value)}")
    if max_length is not None and len(value) > max_length:
        raise ProtocolError(f"{where} is longer than {max_length} (got {len(value)})")


def _json_type(hint: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a finite number", str: "a string", dict: "an object"}
    origin = typing.get_origin(hint) or hint
    if origin is list:
        item = typing.get_args(hint)[0]
        return "a list" if item is Any else f"a list of {_json_type(item)[2:]}s"
    return names[origin]


def jsonable(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON values: NumPy arrays and tuples as lists, NumPy scalars as numbers, mapping keys
    as strings, a non-finite float as ``None`` (not JSON), an object with a ``to_dict()`` as what that gives,
    a dataclass (a native action such as the trading game's ``Order``) as its fields, any other object as its
    ``str``; nesting
    deeper than 64 levels as ``None``."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist(), depth)
    if isinstance(value, np.generic):
        return jsonable(value.item(), depth)
    if depth >= 64:
        return None
    if isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, depth + 1) for v in value]
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):  # a game's structured view (the trading game's snapshot)
        return jsonable(to_dict(), depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a game's native action (an Order)
        return {f.name: jsonable(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}
    return str(value)
