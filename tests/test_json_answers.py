"""Every game with JSON answers reads the model's top-level object, never one it quoted.

Per game, hypothesis builds answers from the game's own answer schema (its guided-decoding
constraint; the trading game's JSON decision by hand) whose explanation quotes another answer of
the same schema, escaped as JSON demands or pasted in unescaped (which breaks the JSON), before or
after the answer's keys, with prose or a fence around. Each must be read exactly as the same answer
written alone, ``json.dumps(answer)``: the same move, or the same kind of invalid answer. The
reader's own unit checks and its time bound are at the end.
"""
from __future__ import annotations

import gc
import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_envs.core import InvalidAnswer
from arena_envs.core.json_answer import (
    MAX_ANSWER_CHARS,
    answer_candidates,
    answer_objects,
    key_values,
    last_json_object,
)
from arena_envs.registration import make

CASES_PER_GAME = 2_000
#: The trading game's JSON decision (its guided answers are a decision line; its parser reads JSON first).
TRADING_SCHEMA = {"type": "object", "properties": {"action": {"enum": ["BUY", "SELL", "HOLD"]},
                                                   "size": {"type": "number", "minimum": 0, "maximum": 1}},
                  "required": ["action"]}
GAMES = ["guess_two_thirds_v0", "el_farol_v0", "divide_dollar_v0", "public_goods_v0", "diners_dilemma_v0",
         "sealed_bid_auction_v0", "battle_royale_v0", "pirate_game_v0:propose", "pirate_game_v0:vote", "trading_v0"]
#: prose around the quoted answer: no quote, brace or backslash, so only the quoted answer is JSON
PROSE = st.text(st.characters(codec="utf-8", exclude_characters='"{}\\', exclude_categories=("Cs", "Cc")),
                max_size=40)


def game_at_decision(game: str) -> tuple[Any, str, dict[str, Any]]:
    """The environment at a decision, the deciding agent and its answer schema."""
    name, _, phase = game.partition(":")
    env = make(name)
    env.reset(seed=0)
    if phase == "vote":  # the first pirate proposes everything to itself; the next decides
        ranks = env.answer_constraint(env.agent_selection).schema["properties"]["proposal"]["properties"]
        env.step(json.dumps({"proposal": {rank: (env.golds if rank == "1" else 0) for rank in ranks}}))
    agent = env.agent_selection
    schema = TRADING_SCHEMA if name == "trading_v0" else env.answer_constraint(agent).schema
    return env, agent, schema


def values(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of a JSON schema of the kinds the games use (object, integer, number, enum)."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if schema.get("type") == "integer":
        return st.integers(schema.get("minimum", -10**6), schema.get("maximum", 10**6))
    if schema.get("type") == "number":
        return st.floats(schema.get("minimum", -1e6), schema.get("maximum", 1e6)).map(lambda x: round(x, 3))
    if schema.get("type") == "object":
        return st.fixed_dictionaries({key: values(sub) for key, sub in schema["properties"].items()
                                      if key in schema.get("required", schema["properties"])})
    raise AssertionError(f"no strategy for {schema}")


def answers(schema: dict[str, Any]) -> st.SearchStrategy[tuple[str, str]]:
    """(the answer alone, the answer with an explanation that quotes another answer)."""
    return st.builds(_quoting, values(schema), values(schema), PROSE, PROSE, st.booleans(), st.booleans(),
                     st.sampled_from(["", "Answer:\n", "```json\n"]))


def _quoting(answer: dict[str, Any], quoted: dict[str, Any], before: str, after: str, escaped: bool,
             explanation_first: bool, lead: str) -> tuple[str, str]:
    explanation = f"{before} I could say {json.dumps(quoted)} {after}"
    alone = json.dumps(answer)
    if escaped:
        pairs = [("explanation", explanation), *answer.items()]
        text = json.dumps(dict(pairs if explanation_first else pairs[1:] + pairs[:1]))
    else:  # pasted in as it is: the explanation's quotes end its string early
        pair = f'"explanation": "{explanation}"'
        text = "{" + pair + ", " + alone[1:] if explanation_first else alone[:-1] + ", " + pair + "}"
    return alone, lead + text + ("\n```" if lead.startswith("```") else "")


def reading(env: Any, agent: str, text: str) -> Any:
    try:
        return env.unwrapped._parse_text(agent, text)
    except InvalidAnswer as error:
        return ("invalid", error.kind)


@pytest.mark.parametrize("game", GAMES)
def test_an_answer_quoting_another_is_read_as_its_own_top_level_value(game):
    env, agent, schema = game_at_decision(game)

    @settings(max_examples=CASES_PER_GAME, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(answers(schema))
    def check(pair: tuple[str, str]) -> None:
        alone, text = pair
        assert reading(env, agent, text) == reading(env, agent, alone), text

    check()


def test_the_example_of_a_quoted_number_is_read_as_the_answer():
    env, agent, _ = game_at_decision("guess_two_thirds_v0")
    text = '{"explanation": "I considered {\\"chosen_number\\": 99} but prefer lower", "chosen_number": 5}'
    assert reading(env, agent, text) == reading(env, agent, '{"chosen_number": 5}')


@pytest.mark.parametrize("text, objects", [
    ('{"a": 1} and {"b": {"c": 2}}', [{"a": 1}, {"b": {"c": 2}}]),  # nested objects come inside theirs
    ('{"a": "x {\\"b\\": 2} y"}', [{"a": 'x {"b": 2} y'}]),  # an object in a string value is text
    ('{\\"a\\": \\"1\\"}', [{"a": "1"}]),  # escaped JSON, read when nothing else parses
    ('{"a": "quoted {"b": 2} here", "c": 3}', []),  # broken: the quoted object is inside its span
    ('{not json} {"a": 1}', [{"a": 1}]),  # a closed non-JSON span ends before the object
    ('{not json {"a": 1}', []),  # an unclosed one never does
    ("```json\n{\"a\": 1}\n```", [{"a": 1}]),
    ("no JSON at all", []),
])
def test_top_level_objects(text, objects):
    assert answer_objects(text) == objects


@pytest.mark.parametrize("text, key, found", [
    ('{"a": "quoted {"k": 2} here", "k": 3}', "k", [3]),  # a pair inside a quoted object is skipped
    ('{"k": 1,}', "k", [1]),
    ("'K': 'x'", "k", ["x"]),
    ('"k": {"1": 2}, "k": null', "k", [{"1": 2}, None]),
    ('{"k": ' + "9" * 5000 + "}", "k", []),  # past int's digit limit: no value
])
def test_key_values(text, key, found):
    assert key_values(text, key) == found


def test_last_json_object_takes_the_last_top_level_object():
    assert last_json_object('{"plan": 1} then {"plan": 2, "note": "{\\"plan\\": 3}"}') == {"plan": 2,
                                                                                          "note": '{"plan": 3}'}
    assert last_json_object('{"a": 1} {"b": 2}', required_key="a") == {"a": 1}


def test_answer_candidates_are_the_last_first_and_nested_on_request():
    text = 'draft {"a": {"b": {"c": 1}}, "d": [{"e": 2}], "s": "{\\"q\\": 3}"} answer [{"f": 4}]'
    outer = {"a": {"b": {"c": 1}}, "d": [{"e": 2}], "s": '{"q": 3}'}
    assert answer_candidates(text) == [{"f": 4}, outer]  # a list is no opening here: its object is top-level
    assert answer_candidates(text, openings="{[") == [[{"f": 4}], outer]
    assert answer_candidates(text, openings="{[", nested=True) == [  # never into the string's object
        [{"f": 4}], {"f": 4}, outer, {"b": {"c": 1}}, {"c": 1}, [{"e": 2}], {"e": 2}]


@pytest.mark.parametrize("text", [
    "{" * MAX_ANSWER_CHARS, '{"a":' * (MAX_ANSWER_CHARS // 5), "{x}" * (MAX_ANSWER_CHARS // 3),
    '{"x}' * (MAX_ANSWER_CHARS // 4), "[" * MAX_ANSWER_CHARS, '{"a": [' * (MAX_ANSWER_CHARS // 7),
    '"a": ' * (MAX_ANSWER_CHARS // 5), '{"a": 1,,}' * (MAX_ANSWER_CHARS // 10),
])
def test_answers_of_twenty_thousand_braces_are_read_in_linear_time(text):
    """Loosely bounded here (a loaded test machine); benchmarks/bench_json_answer.py measures it. The
    collector is held off while it is timed: in a worker that ran hundreds of tests before, one full
    collection of their leftovers can take longer than the read itself."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        answer_objects(text)
        key_values(text, "a")
        spent = time.process_time() - start
    finally:
        gc.enable()
    assert spent < 0.5
