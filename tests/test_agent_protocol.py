"""The agent protocol's messages (issue 36): checked field by field in one line, bounded, and the
published OpenAPI description equal to the one generated from the code."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agent_service.openapi import openapi, openapi_json
from agent_service.protocol import (
    MAX_BODY_BYTES,
    PROTOCOL_VERSION,
    Answer,
    Decision,
    End,
    Health,
    ProtocolError,
    Start,
    decode,
    encode,
    jsonable,
    read,
)

DOCS = Path(__file__).resolve().parents[1] / "docs"
DECISION = {"protocol": 1, "session": "s-0", "game": "who_is_spy_v0", "seat": "player_0", "step": 0, "info": {},
            "deadline_s": 30, "text": "Describe your word.", "choices": None}


def test_the_published_openapi_description_is_the_generated_one() -> None:
    assert (DOCS / "agent_openapi.json").read_text(encoding="utf-8") == openapi_json()


def test_the_description_names_every_endpoint_and_required_field() -> None:
    document = openapi()
    assert set(document["paths"]) == {"/health", "/start", "/act", "/end"}
    schemas = document["components"]["schemas"]
    assert schemas["Decision"]["required"] == ["protocol", "session", "game", "seat", "step", "info", "deadline_s"]
    assert schemas["Answer"]["required"] == ["action"]
    assert schemas["Decision"]["properties"]["session"]["maxLength"] == 128
    assert schemas["Start"]["properties"]["seed"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]


def test_a_message_survives_the_wire() -> None:
    start = Start(protocol=PROTOCOL_VERSION, session="s", game="who_is_spy_v0", env_kwargs={"n_players": 6},
                  seat="player_1", seed=2**32 - 1, episode=3)
    assert read(Start, decode(encode(start), "start")) == start
    assert read(Decision, DECISION).choices is None
    assert read(Health, {"protocol": 1}) == Health(protocol=1)


BAD: list[tuple[type, Any, str]] = [
    (Decision, [], "Decision must be a JSON object, got []"),
    (Decision, {**DECISION, "protocol": 2}, "Decision.protocol is 2; this side speaks protocol version 1"),
    (Decision, {k: v for k, v in DECISION.items() if k != "seat"}, "Decision has no field 'seat'"),
    (Decision, {**DECISION, "step": True}, "Decision.step must be an integer, got True"),
    (Decision, {**DECISION, "step": 10**30}, "Decision.step must be an integer"),
    (Decision, {**DECISION, "deadline_s": "soon"}, "Decision.deadline_s must be a finite number, got 'soon'"),
    (Decision, {**DECISION, "session": "x" * 129}, "Decision.session is longer than 128 (got 129)"),
    (Decision, {**DECISION, "choices": ["a", 1]}, "Decision.choices must be a list of strings, got ['a', 1]"),
    (Decision, {**DECISION, "info": "phase=vote"}, "Decision.info must be an object"),
    (Answer, {"explanation": "why"}, "Answer has no field 'action'"),
    (Answer, {"action": 1, "explanation": 5}, "Answer.explanation must be a string, got 5"),
    (Answer, {"action": 1, "trace": [1]}, "Answer.trace must be an object"),
    (End, {"protocol": 1, "session": None, "info": {}}, "End.session must be a string, got None"),
]


@pytest.mark.parametrize("cls, data, expected", BAD, ids=[e for _, _, e in BAD])
def test_a_malformed_message_is_one_line_naming_the_field(cls: type, data: Any, expected: str) -> None:
    with pytest.raises(ProtocolError) as err:
        read(cls, data)
    assert str(err.value).startswith(expected) and "\n" not in str(err.value)


@pytest.mark.parametrize("body, expected", [
    (b"\xff\xfe", "is not UTF-8"), (b"<html>502</html>", "is not JSON: '<html>502</html>'"),
    (b'{"action": NaN}', "is not JSON"), (b"[" * 100_000, "is not JSON"),
    (b" " * (MAX_BODY_BYTES + 1), f"is longer than {MAX_BODY_BYTES} bytes"),
], ids=["utf-16", "html", "nan", "deep", "huge"])
def test_a_body_that_is_not_json_is_one_line(body: bytes, expected: str) -> None:
    with pytest.raises(ProtocolError, match="^the answer " + expected.replace("[", r"\[").replace("(", r"\(")):
        decode(body, "the answer")


def test_what_a_game_holds_becomes_json_values() -> None:
    value = {1: (np.int8(3), np.float32(0.5)), "mask": np.array([[1, 0]], dtype=np.int8), "x": float("nan"),
             "deep": [[[[]]]], "other": Path("/tmp")}
    assert jsonable(value) == {"1": [3, 0.5], "mask": [[1, 0]], "x": None, "deep": [[[[]]]], "other": "/tmp"}
    json.dumps(jsonable(value), allow_nan=False)
    nested: list[Any] = []
    for _ in range(100):
        nested = [nested]
    assert "null" in json.dumps(jsonable(nested))  # cut at 64 levels, never a RecursionError


def test_a_float32_observation_comes_back_bit_for_bit() -> None:
    features = np.random.default_rng(0).standard_normal(50).astype(np.float32)
    back = np.asarray(json.loads(json.dumps(jsonable(features))), dtype=np.float32)
    assert back.tobytes() == features.tobytes()
