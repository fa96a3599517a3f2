"""The shared γ-Bench JSON answer parser (spec §1.4): parsing steps, coercion, and robustness."""
from __future__ import annotations

import importlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_envs.core import InvalidAnswer
from arena_envs.gamma.answer import (
    ChoiceField,
    IntField,
    answer_object,
    answer_value,
    canonical_json,
    format_instruction,
    json_constraint,
    to_int,
    to_vote,
)

NUMBER = IntField("chosen_number", 0, 100)


@pytest.mark.parametrize("text, value", [
    ('{"chosen_number": "33"}', 33),
    ('{"chosen_number": 33}', 33),
    ('{"chosen_number": 33.0}', 33),
    ('{"chosen_number": " 17 "}', 17),
    ('```json\n{"chosen_number": "5"}\n```', 5),
    ('{\\"chosen_number\\": \\"8\\"}', 8),  # backslash-escaped quotes
    ('I think 50. {"x": 1} Final: {"chosen_number": "21"}', 21),  # last object with the key
    ('{"explanation": "a {b} c", "chosen_number": "9"}', 9),  # CoT form
    ('{"chosen_number": "4"} {"chosen_number": "6"}', 6),
    ('{"chosen_number": "3",}', 3),  # broken JSON: the regex fallback
    ("'chosen_number': 44", 44),
    ('{"Chosen_Number": "12"}', 12),
])
def test_parses_the_answer(text, value):
    assert NUMBER.parse(text) == value


@pytest.mark.parametrize("text, kind", [
    ('{"chosen_number": "33.5"}', "illegal"), ('{"chosen_number": 33.5}', "illegal"),
    ('{"chosen_number": "101"}', "illegal"), ('{"chosen_number": -1}', "illegal"),
    ('{"chosen_number": "abc"}', "unparseable"), ('{"chosen_number": null}', "unparseable"),
    ('{"chosen_number": true}', "unparseable"), ("I pick 33", "unparseable"), ("", "unparseable"),
    ('{"chosen_number": ' + "9" * 5000 + "}", "unparseable"), ('{"chosen_number": "' + "9" * 5000 + '"}', "illegal"),
])
def test_rejects_bad_answers_with_a_kind(text, kind):
    with pytest.raises(InvalidAnswer) as err:
        NUMBER.parse(text)
    assert err.value.kind == kind and err.value.reason


@pytest.mark.parametrize("text, value", [
    ("I pick 33", 33), ("I pick 33.", 33), ("**42**", 42), ("My bid: $45", 45), ("+7", 7),
    ('"chosen_number": 12 and then 50', 12),  # a key-value pair is still read first
    ('{"chosen_number": "21"} 50', 21),  # and so is a JSON answer
])
def test_plain_numbers_reads_one_number_in_plain_words(text, value):
    assert NUMBER.parse(text, plain_numbers=True) == value


@pytest.mark.parametrize("text, kind, reason", [
    ("between 0 and 100, I pick 33", "unparseable", "3 numbers ('0, 100, 33') in plain words"),
    ("I pick 30-35", "unparseable", "2 numbers ('30, 35')"),
    ("I pick thirty-three", "unparseable", "no number in plain words"),
    ('{"number": 33}', "unparseable", 'no JSON object with a "chosen_number" value was found'),
    ("I pick 33.5", "illegal", "whole number"), ("I pick 300", "illegal", "between 0 and 100"),
])
def test_plain_numbers_refuses_what_is_not_one_number(text, kind, reason):
    with pytest.raises(InvalidAnswer) as err:
        NUMBER.parse(text, plain_numbers=True)
    assert err.value.kind == kind and reason in err.value.reason


def test_plain_numbers_is_an_env_option_off_by_default_that_reads_number_answers():
    guess = importlib.import_module("arena_envs.guess_two_thirds_v0")
    strict = guess.raw_env(n_players=2, n_rounds=1)
    strict.reset(seed=0)
    strict.step("I pick 33")
    assert strict.infos["player_0"]["invalid_action"]["kind"] == "unparseable"  # the paper's protocol: JSON
    assert "plain_numbers" not in strict.config()
    lenient = guess.raw_env(n_players=2, n_rounds=1, plain_numbers=True)
    lenient.reset(seed=0)
    lenient.step("I pick 33")
    lenient.step("Then 30.")
    assert lenient.history[0]["choices"] == [33, 30] and lenient.config()["plain_numbers"] is True
    assert not lenient.record.of_type("invalid")
    farol = importlib.import_module("arena_envs.el_farol_v0").raw_env(n_players=2, plain_numbers=True)
    farol.reset(seed=0)  # a word game reads its answers as before: one setting serves a whole suite
    farol.step("I go")
    assert farol.infos["player_0"]["invalid_action"]["kind"] == "unparseable"
    with pytest.raises(ValueError, match="plain_numbers must be True or False, got 'yes'"):
        guess.raw_env(plain_numbers="yes")


def test_choice_votes_echo_and_instruction():
    field = ChoiceField("decision", ("go", "stay"), {"stay home": "stay"})
    assert field.parse('{"decision": "Stay Home."}') == "stay"
    assert to_vote("I Accept") == "accept" and to_vote("reject, then accept") == "accept"
    assert to_vote("REJECT") == "reject"
    with pytest.raises(InvalidAnswer):
        to_vote("maybe")
    assert canonical_json({"bid": 40}) == '{"bid": "40"}'
    assert format_instruction({"bid": "an integer"}, cot=True).endswith(
        '{"explanation": "your step-by-step reasoning", "bid": "an integer"}')
    c = json_constraint({"action": {"enum": ["shoot", "miss"]}, "target": {"type": ["string", "null"]}}, "shot",
                        cot=True)
    assert c.schema["required"] == ["explanation", "action", "target"]
    shot = {"action": "shoot", "target": "player_3"}
    assert answer_object(json.dumps(shot), "action") == shot
    assert answer_value('x "target": null, "action": "miss"', "action") == "miss"
    assert to_int("$1,000", "bid", 0, 2000) == 1000


# ------------------------------------------------------------------ hypothesis: never raises

KEYS = ("chosen_number", "decision", "bid_amount", "tokens_contributed", "chosen_dish", "bid")
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8)
numbers_as_text = st.one_of(
    st.integers(-500, 500).map(str), st.floats(-1e3, 1e3).map(repr),
    st.sampled_from(["1e400", "NaN", "Infinity", "-0", "0x10", "1_000", "٣", "３３", "33 tokens", "$12"]))


@st.composite
def adversarial(draw) -> str:
    key = draw(st.sampled_from(KEYS))
    words = st.sampled_from(["go", "stay", "cheap", "costly", "GO ", "expensive"])
    value = draw(st.one_of(json_values, numbers_as_text, words))
    body = json.dumps({key: value}) if draw(st.booleans()) else f'"{key}": {value}'
    noise = draw(st.text(alphabet='{}[]":,\\`\n abc0123456789', max_size=30))
    shape = draw(st.sampled_from(["{body}", "{noise}{body}{noise}", "```json\n{body}\n```", "{body}{noise}{{",
                                  "{{{noise}{body}", "{noise}"]))
    return shape.format(body=body, noise=noise)


any_text = st.one_of(st.text(max_size=200), adversarial())


#: Seat player_0 of every game; the auction forbids overbids and player_0 values the item at 10.
ENVS = {"guess_two_thirds_v0": {}, "el_farol_v0": {}, "divide_dollar_v0": {}, "public_goods_v0": {},
        "diners_dilemma_v0": {}, "sealed_bid_auction_v0": {"allow_overbid": False, "valuation_seed": 43}}


@pytest.mark.parametrize("name", sorted(ENVS))
def test_env_step_turns_any_string_into_a_legal_action_or_a_recorded_invalid_answer(name):
    retries = 100  # the most a game allows: the seat is reset long before it runs out of them
    env = importlib.import_module(f"arena_envs.{name}").raw_env(max_retries=retries, **ENVS[name])
    env.reset(seed=0)
    mask = env.observe("player_0")["action_mask"].copy()

    @settings(max_examples=2000 // len(ENVS) + 1, deadline=None, suppress_health_check=list(HealthCheck))
    @given(any_text)
    def check(text: str) -> None:
        if env.agent_selection != "player_0" or len(env.record.of_type("invalid")) >= retries // 2:
            env.reset(seed=0)
        invalid_events = len(env.record.of_type("invalid"))
        env.step(text)
        info = env.infos["player_0"]
        if info["invalid_action"] is None:
            assert env.agent_selection == "player_1" and len(env._phase.moves) == 1 and mask[env._phase.moves[0]] == 1
        else:
            assert info["invalid_action"]["kind"] in ("unparseable", "illegal") and info["invalid_action"]["reason"]
            assert len(env.record.of_type("invalid")) == invalid_events + 1
            assert env.agent_selection == "player_0"

    check()


@settings(max_examples=2000, deadline=None)
@given(any_text)
def test_parser_never_raises_anything_but_invalid_answer(text):
    for field, plain in ((NUMBER, False), (NUMBER, True), (ChoiceField("decision", ("go", "stay")), False),
                         (IntField("bid", 0, 200), True)):
        try:
            value = field.parse(text, plain_numbers=True) if plain else field.parse(text)
        except InvalidAnswer as err:
            assert err.kind in ("unparseable", "illegal")
        else:
            assert (field.low <= value <= field.high) if isinstance(field, IntField) else value in field.choices
