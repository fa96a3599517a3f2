"""The JSON lines of a results folder, written fast.

Contract: :func:`dumps`, :func:`to_json`, :func:`dumps_with` and :class:`EpisodeLines` write, for
the same value, what ``json.dumps(finite(value), default=to_jsonable, ensure_ascii=False)`` writes
(tests/test_runner.py checks them against it). They stand for it because a decision line is
written at every step: one C encoder for every call, scalars written directly, and the names of
seats and keys encoded once per run.
"""
from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from arena_envs.core.records import jsonable


def to_jsonable(value: Any) -> Any:
    """``json.dumps`` fallback: numpy scalars and arrays become Python values, a dataclass (a native
    action such as the trading game's ``Order``, which the game reads back) its fields, anything else
    its repr."""
    if isinstance(value, np.ndarray):  # the usual case: an action of a Box or MultiDiscrete space
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return repr(value)


def finite(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, ±inf) replaced by ``None``: JSON has no such
    numbers, so a JSON file of this project holds ``null`` where a metric has no value."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return finite(to_jsonable(value))
    return value


def _make_dumps() -> Callable[[Any], str]:
    """``json.dumps(finite(value), default=to_jsonable, ensure_ascii=False)``, with one C encoder
    built for every call (``JSONEncoder.encode`` builds one per call, a microsecond that a step
    line pays for each container it holds). The encoder refuses non-finite numbers, and only a
    value that holds one is copied by :func:`finite` and encoded again. That encoder keeps no state
    between calls: it has no circular check, so a cyclic value raises ``RecursionError`` rather
    than ``ValueError``. Without the C accelerator (``c_make_encoder`` is private and may be
    ``None``) it is ``JSONEncoder.encode``."""
    make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if make_encoder is None:
        encoder = json.JSONEncoder(default=to_jsonable, ensure_ascii=False, allow_nan=False)

        def encode(value: Any, level: int) -> Iterable[str]:
            return [encoder.encode(value)]
    else:
        encode = make_encoder(None, to_jsonable, json.encoder.encode_basestring, None, ": ", ", ", False, False,
                              False)

    def dumps(value: Any) -> str:
        try:
            return "".join(encode(value, 0))
        except ValueError:  # a NaN or an infinity
            return "".join(encode(finite(value), 0))

    return dumps


#: the encoder of every line
dumps = _make_dumps()


def utf8(text: str) -> bytes:
    """JSON ``text`` as UTF-8 bytes; a surrogate code point (a model's lone one: only a JSON string
    can hold it) is written as its JSON escape (``\\ud800``), which reads back as the same text."""
    return text.encode("utf-8", "backslashreplace")


_quote = json.encoder.encode_basestring  # the string encoder of ensure_ascii=False


def to_json(value: Any) -> str:
    """``dumps(value)``, with fast paths for the scalars that make up most of a step line."""
    kind = type(value)
    if value is None:
        return "null"
    if kind is int:
        return int.__repr__(value)
    if kind is str:
        return _quote(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is float and math.isfinite(value):
        return float.__repr__(value)
    return dumps(value)


def dumps_with(value: dict[str, Any], encoded: Mapping[str, str]) -> str:
    """``dumps(value)`` given ``encoded[key]`` = ``dumps(value[key])`` for some keys, which are not
    encoded again (an episode's metrics go into both its record and its ``episodes.jsonl`` entry)."""
    parts = []
    for k, v in value.items():
        if type(k) is not str:
            return dumps(value)
        known = encoded.get(k)
        parts.append(f"{_quote(k)}: {to_json(v) if known is None else known}")
    return "{" + ", ".join(parts) + "}"


class Seats:
    """The player label of every seat of an episode (``labels``: agent -> label), with the JSON
    its lines and its entry hold. Episodes with the same seat rotation share one: a run encodes
    them once per rotation rather than once per episode."""

    def __init__(self, labels: dict[str, str]):
        self.labels = labels
        self.json = dumps(labels)
        self.parts = {agent: f', "agent": {_quote(agent)}, "policy": {_quote(label)}'
                      for agent, label in labels.items()}
        self.keys = {agent: _quote(agent) for agent in labels}


class EpisodeLines:
    """The ``log.jsonl`` block of one episode, built a line at a time.

    A decision line costs a few string joins rather than one JSON encoding of a ten-key dict: the
    keys and the agent and policy names are encoded beforehand (:class:`Seats`); the output is
    what ``dumps`` writes for the same dict.
    """

    def __init__(self, episode: int, seats: Seats):
        self.episode = episode
        self.lines: list[str] = []
        self._head = f'{{"episode": {episode}, "step": '
        self._seat = seats.parts
        self._key = seats.keys

    def decision(self, step: int, agent: str, action: Any, parsed: Any, invalid: Any, fallback: bool,
                 retries: Any, rewards: dict[str, Any], trace: dict[str, Any] | None) -> None:
        """A decision's line; of ``rewards`` only the non-zero ones are written (a ten-seat game
        would otherwise write ten zeros a step)."""
        if any(rewards.values()):
            key = self._key
            rewards_json = ", ".join([f"{key.get(a) or _quote(a)}: {to_json(r)}" for a, r in rewards.items() if r])
        else:
            rewards_json = ""
        try:
            action_json = to_json(action)
        except (TypeError, ValueError, RecursionError):  # a caller's action JSON cannot hold as it is
            action_json = to_json(jsonable(action))
        self.lines.append(
            f'{self._head}{step}{self._seat[agent]}, "action": {action_json}, "parsed": {to_json(parsed)}, '
            f'"invalid_action": {"null" if invalid is None else to_json(invalid)}, '
            f'"fallback": {"true" if fallback else "false"}, "retries": {to_json(retries)}, '
            f'"rewards": {{{rewards_json}}}, "trace": {to_json(trace) if trace else "{}"}}}\n')

    def finish(self, step: int, agent: str, trace: dict[str, Any]) -> None:
        """The line of a seat's end-of-episode work (no action)."""
        self.lines.append(f'{self._head}{step}{self._seat[agent]}, "action": null, "finish": true, '
                          f'"trace": {to_json(trace)}}}\n')

    def block(self, record: Any, encoded: Mapping[str, str] | None = None) -> bytes:
        """Every line, then the record line that closes the block; ``encoded``: values of the
        record (a dict) already encoded, as :func:`dumps_with` takes them."""
        text = dumps(record) if encoded is None else dumps_with(record, encoded)
        self.lines.append(f'{{"episode": {self.episode}, "record": {text}}}\n')
        return utf8("".join(self.lines))
