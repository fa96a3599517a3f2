"""Spec §3.5 / §8.3: the bidder-reply parser; it never raises on any string."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_envs import auction_v0
from arena_envs.auction.parser import parse_reply
from arena_envs.auction.rules import WITHDRAW
from arena_envs.core.answers import InvalidAnswer


@pytest.mark.parametrize("text,expected", [
    ("I bid $1,200!", 1200),
    ("I'm out!", WITHDRAW),
    ("I\u2019m out", WITHDRAW),
    ("I bid $1.2k", 1200),
    ("1500", 1500),
    ("-1", WITHDRAW),
    ('... Final Decision:\n"I bid $1050!"', 1050),
    ("I could bid $1500, but it is too risky. I'm out!", WITHDRAW),
    ("I might withdraw, but I bid $1100!", 1100),
    ("I bid $1000 since there is no bid yet.", 1000),
    ("I bid $1200.75!", 1200),
    ("I'd like to bid 2 thousand", 2000),
    ("My bid is $3,500.", 3500),
    ("I will withdraw.", WITHDRAW),
    ("I bid $0!", 0),
    ("I'm out of ideas, so I bid $1300!", 1300),
    ("\uff29 bid \uff04\uff11\uff12\uff10\uff10!", 1200),  # full-width characters (NFKC)
    ("My final decision: -1.", WITHDRAW),  # a lone -1 closing the reply
    ("I bid $1500, though my margin fell by -1 percent", 1500),  # a -1 inside reasoning is no marker
    ("I bid $-5", WITHDRAW),  # a negative amount, sign after the $ too
    ("I bid -$5", WITHDRAW),
    ("I bid $-5!", WITHDRAW),
    ("I bid -5!", WITHDRAW),
])
def test_parser_examples(text, expected):
    assert parse_reply(text) == expected


@pytest.mark.parametrize("text", ["The price is high.", "", "there is no bid yet", "I'm out of budget"])
def test_unparseable(text):
    with pytest.raises(InvalidAnswer) as err:
        parse_reply(text)
    assert err.value.kind == "unparseable"


def test_unparseable_counts_as_parse_failure_not_failed_bid():
    env = auction_v0.env()
    env.reset(seed=0)
    env.step("The price is high.")
    info = env.unwrapped.infos["bidder_1"]
    assert info["parse_failures"] == 1 and info["failed_bids"] == 0
    assert info["last_status"] == "unparseable"
    assert 'I bid $xxx!' in env.observe("bidder_1")["text"]


ADVERSARIAL = st.one_of(
    st.text(max_size=300),
    st.from_regex(r"(i bid|I'm out|final decision|my bid is|-1|\$|k|,|\.|\d{1,30}|\s|!|thousand|i withdraw)*",
                  fullmatch=True),
    st.builds(lambda a, b: f"I bid ${a}{b}", st.text(alphabet="0123456789.,-kK$ ", max_size=40), st.text(max_size=20)),
)


@settings(max_examples=2500, deadline=None)
@given(ADVERSARIAL)
def test_parser_never_raises_anything_but_invalid_answer(text):
    try:
        result = parse_reply(text)
    except InvalidAnswer as err:
        assert err.kind == "unparseable"
    else:
        assert isinstance(result, int) and result >= WITHDRAW


ENV = auction_v0.raw_env(max_retries=100)


@settings(max_examples=2000, deadline=None)
@given(ADVERSARIAL)
def test_env_step_accepts_any_text(text):
    env = ENV
    env.reset(seed=0)
    agent = env.agent_selection
    env.step(text)
    info = env.infos[agent]
    if info["invalid_action"] is None:
        decision = env.record.of_type("decision")[-1]
        assert decision["agent"] == agent
        said = parse_reply(text)  # an accepted answer is one the parser reads, recorded as read
        assert decision["amount"] == (None if said == WITHDRAW else said)
        assert said == WITHDRAW or env.game.items[0].start_price <= said <= 20000
    else:
        assert env.agent_selection == agent
        assert info["invalid_action"]["kind"] in ("unparseable", "illegal")
        assert env.record.events[-1]["type"] == "invalid" and env.record.events[-1]["answer"] == text


#: Near misses of the canonical answers: guided decoding must never produce them.
NOT_CANONICAL = ["I bid $-5!", "I bid $12x!", "I bid $0!", "I bid $0500!", "I bid $1,000!", "I bid $1000.5!",
                 "I bid $1k!", "I bid $1000", "I bid $1000!!", "i bid $1000!", "I bid 1000!", "I bid $ 1000!",
                 "I bid $$1000!", " I bid $1000!", "I bid $1000! I'm out!", "I'm out", "I'm out!!", "I\u2019m out!",
                 "I'm out! I bid $1000!", "maybe", "", "I bid $100000!"]


def test_answer_constraint_is_exactly_the_canonical_answers_the_parser_reads():
    env = auction_v0.raw_env(budgets=20000)
    env.reset(seed=0)
    constraint = env.answer_constraint()
    assert constraint.kind == "regex"
    assert constraint.structured_outputs() == {"regex": constraint.pattern}
    low = env.record.of_type("item_open")[0]["start_price"]
    for text, expected in [("I'm out!", WITHDRAW), (f"I bid ${low}!", low), ("I bid $20000!", 20000)]:
        assert constraint.accepts(text), text
        assert parse_reply(text) == expected
    for text in NOT_CANONICAL:
        assert not constraint.accepts(text), text


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_every_answer_guided_decoding_can_produce_parses_to_what_it_says(data):
    env = auction_v0.raw_env(budgets=data.draw(st.sampled_from([5000, 20000, 123456])))
    env.reset(seed=0)
    constraint = env.answer_constraint()
    text = data.draw(st.from_regex(constraint.pattern, fullmatch=True))
    if text == "I'm out!":
        assert parse_reply(text) == WITHDRAW
    else:
        digits = text.removeprefix("I bid $").removesuffix("!")
        assert digits.isdigit() and digits[0] != "0" and len(digits) <= len(str(env.config()["budgets"][0]))
        assert parse_reply(text) == int(digits)


def test_answer_constraint_follows_the_remaining_budget():
    env = auction_v0.raw_env(budgets=5000, items=[{"name": "Widget A", "start_price": 1000, "true_value": 2000},
                                                  {"name": "Gadget B", "start_price": 1000, "true_value": 2000}],
                             item_order="given")
    env.reset(seed=0)
    assert env.answer_constraint().accepts("I bid $5000!") and not env.answer_constraint().accepts("I bid $50000!")
    env.step("I bid $4500!")
    env.step("I'm out!")
    env.step("I'm out!")  # bidder_1 bought Widget A for $4500: $500 left, below Gadget B's $1000
    constraint = env.answer_constraint("bidder_1")
    assert constraint.kind == "choice" and constraint.choices == ("I'm out!",)
    assert not constraint.accepts("I bid $500!")
