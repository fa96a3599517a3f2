"""A bad answer is an invalid answer, never an exception (issue 32, rows 3, 4, 6 and 13's echoes).

Whatever a model or a caller sends as an action to any of the twelve games (any Unicode, lone
surrogates included; control characters; deep nesting; huge or non-finite numbers; JSON values of
any shape; NumPy values; floats and booleans where an index is expected) is a move or an invalid
answer recorded with its reason: ``step()`` never raises, the reason quotes at most ~200
characters of the answer, every text the game builds next encodes as UTF-8 and the episode record
survives the results folder's encoder. The same values as a model's reply go through the LLM
policy layer without raising, and a run whose policy answers with lone surrogates finishes and
resumes to what an uninterrupted run writes.
"""
from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_envs.core import Policy
from arena_envs.core.answers import EXCERPT_CHARS, InvalidAnswer, encodable, excerpt, native_index
from arena_envs.registration import ENVIRONMENTS, make
from arena_envs.runner import RunConfig, RunError, run
from arena_envs.runner.line_json import dumps, utf8
from arena_envs.runner.policy_specs import make_policy
from arena_envs.runner.results import read_steps
from llm_policies.auction_bidder import AucArenaBidder
from llm_policies.backends.openai_http import chat_payload, read_completion
from llm_policies.policy import LLMPolicy
from llm_policies.types import BackendError, ChatRequest, ChatResponse
from tests.results_helpers import folder_content

GAMES = sorted(ENVIRONMENTS)
KINDS = ("unparseable", "illegal")
#: The longest reason a game gives: its fixed words plus an excerpt of the answer.
MAX_REASON_CHARS = 3 * EXCERPT_CHARS
HYPOTHESIS = settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))

DEPTH = 3000
DEEP_LIST: Any = 0
for _ in range(DEPTH):
    DEEP_LIST = [DEEP_LIST]
DEEP_DICT: Any = 0
for _ in range(DEPTH):
    DEEP_DICT = {"a": DEEP_DICT}
DEEP_TEXTS = ["[" * DEPTH + "]" * DEPTH, '{"a": ' * DEPTH + "1" + "}" * DEPTH,
              '{"proposal": "' + "[" * DEPTH + "]" * DEPTH + '"}', '{"proposal": ' + "[" * DEPTH + "]" * DEPTH + "}"]
HUGE_INTS = [10**400, -(10**400), 10**5000]


class Named:
    """A value hypothesis can show: its ``repr`` is its name (10**5000 and deep nesting have none)."""

    def __init__(self, name: str, value: Any):
        self.name, self.value = name, value

    def __repr__(self) -> str:
        return self.name


UNPRINTABLE = st.sampled_from([Named("10**5000", 10**5000), Named("DEEP_LIST", DEEP_LIST),
                               Named("DEEP_DICT", DEEP_DICT),
                               Named("deep object array", np.array([DEEP_LIST], dtype=object))])
#: Natives that no game takes as a decision: floats, booleans, non-finite and huge numbers.
JUNK_NATIVES = [1.5, True, False, np.array(1.5), np.bool_(True), np.float64(2.0), float("inf"), float("-inf"),
                float("nan"), *HUGE_INTS, DEEP_LIST]

#: Any code point (nothing excluded), with lone surrogates, control and JSON characters drawn often.
ANY_CHAR = st.one_of(st.characters(codec=None, exclude_categories=()), st.characters(categories=["Cs"]),
                     st.sampled_from('\x00\x1b\n{}[]"\\$0123456789'))
TEXT = st.lists(ANY_CHAR, max_size=40).map("".join)  # st.text() would seldom draw a surrogate
SCALARS = (st.none() | st.booleans() | st.integers() | st.sampled_from(HUGE_INTS[:2]) | st.floats() | TEXT)
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(TEXT, inner, max_size=4), max_leaves=12)
NUMPY_VALUES = st.sampled_from([np.array(1.5), np.float64("inf"), np.int64(3), np.array([1, 2]), np.bool_(True),
                                np.array(["\ud800"]), np.array(5), np.uint8(1), np.array([[1.0]])])
SPECIAL_TEXTS = st.sampled_from([*DEEP_TEXTS, "\ud800", "I bid $10\udfff!", "9" * 4000, '{"bid_amount": ' + "9" * 4000
                                 + "}", "\x00\x1b[2J\r\n\t", "Infinity", "-1e999", "\u202e\ufeff\u200b", ""])


def as_json_text(value: Any, ascii_only: bool) -> str:
    """``value`` written as JSON (surrogates raw or escaped, arrays as lists); past int's digit limit
    a 5,000-digit number, past the encoder's depth the brackets of :data:`DEEP_LIST`."""
    try:
        return json.dumps(value, ensure_ascii=ascii_only, default=lambda array: array.tolist())
    except RecursionError:
        return "[" * DEPTH + "0" + "]" * DEPTH
    except ValueError:
        return "9" * 5000


#: an action: ("native", value), ("text", str), ("json", value, ascii_only) or ("keyed", value):
#: a JSON object holding the value under each key the current decision's JSON schema requires
ACTIONS = st.one_of(
    st.tuples(st.just("text"), TEXT | SPECIAL_TEXTS),
    st.tuples(st.just("json"), JSON_VALUES, st.booleans()),
    st.tuples(st.just("keyed"), JSON_VALUES | UNPRINTABLE),
    st.tuples(st.just("native"), JSON_VALUES | NUMPY_VALUES | UNPRINTABLE),
)


@functools.cache
def built(game: str) -> Any:
    """``game``, built once, re-asking once after an invalid answer."""
    return make(game, max_retries=1)


def fresh(game: str) -> Any:
    """``game`` at its first decision."""
    env = built(game)
    env.reset(seed=0)
    return env


def resolve(action: tuple[Any, ...], raw: Any, agent: str) -> Any:
    kind, value = action[0], action[1]
    if isinstance(value, Named):
        value = value.value
    if kind == "json":
        return as_json_text(value, action[2])
    if kind == "keyed":
        constraint = raw.answer_constraint(agent)
        keys = constraint.schema.get("required", ["answer"]) if constraint and constraint.kind == "json" else ["action"]
        return "{" + ", ".join(f"{json.dumps(key)}: {as_json_text(value, True)}" for key in keys) + "}"
    return value


def echoes(answer: Any, text: str, run: int = EXCERPT_CHARS + 20) -> bool:
    """Whether ``text`` holds ``run`` or more consecutive characters of the text ``answer``
    (every such run contains one of the aligned windows of half its length)."""
    if not isinstance(answer, str):
        return False
    half = run // 2
    return any(answer[i:i + half] in text for i in range(0, len(answer) - half + 1, half))


def step_checked(env: Any, action: Any) -> dict[str, Any] | None:
    """Step the selected agent with ``action``; check what the game recorded; the invalid answer, if any."""
    raw = env.unwrapped
    agent = raw.agent_selection
    env.step(action)
    bad = raw.infos[agent]["invalid_action"]
    if bad is not None:
        reason = bad["reason"]
        assert bad["kind"] in KINDS and isinstance(reason, str) and reason
        assert len(reason) <= MAX_REASON_CHARS and not echoes(action, reason), reason[:300]
        reason.encode("utf-8")
    if raw.agents:
        env.observe(raw.agent_selection)["text"].encode("utf-8")
    return bad


def play(env: Any, actions: list[tuple[Any, ...]]) -> None:
    raw = env.unwrapped
    for action in actions:
        if not raw.agents:
            break
        agent = raw.agent_selection
        if raw.terminations[agent] or raw.truncations[agent]:
            env.step(None)
            continue
        step_checked(env, resolve(action, raw, agent))
    assert_record_survives(raw)


def assert_record_survives(raw: Any) -> None:
    """The record goes through the results folder's encoder and reads back (escaped surrogates included)."""
    record = raw.episode_record()
    assert json.loads(utf8(dumps(record)))["events"] is not None


# ---------------------------------------------------------------------------------------------- the shared helpers

@pytest.mark.parametrize("value", [DEEP_LIST, DEEP_DICT, np.array([DEEP_LIST], dtype=object), 10**5000, -(10**400),
                                   "x" * 10**6, "\ud800" * 500, {"k": ["\udfff" * 300]}, float("nan"), object()],
                         ids=["deep_list", "deep_dict", "deep_array", "10**5000", "-10**400", "long_text",
                              "surrogates", "surrogates_inside", "nan", "object"])
def test_an_excerpt_is_short_encodable_and_never_raises(value):
    quote = excerpt(value)
    assert len(quote) <= EXCERPT_CHARS
    quote.encode("utf-8")


def test_an_excerpt_describes_a_huge_integer_and_keeps_small_values():
    assert excerpt(10**5000) == "<an integer of about 5001 digits>"
    assert excerpt(12) == "12" and excerpt("ab") == "'ab'" and excerpt([1.5, None]) == "[1.5, None]"


def test_encodable_replaces_only_surrogates():
    assert encodable("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    same = "plain ascii"
    assert encodable(same) is same and encodable("é€😀") == "é€😀"


@pytest.mark.parametrize("action, kind", [
    (3, None), (np.int64(3), None), (np.array(3), None), (1.5, "unparseable"), (True, "unparseable"),
    (np.array(1.5), "unparseable"), (np.bool_(False), "unparseable"), (float("inf"), "unparseable"),
    ("3", "unparseable"), ([3], "unparseable"), (10**400, "illegal"), (-1, "illegal"), (5, "illegal"),
], ids=str)
def test_native_index_takes_integers_only(action, kind):
    if kind is None:
        assert native_index(action, 5) == 3
        return
    with pytest.raises(InvalidAnswer) as caught:
        native_index(action, 5)
    assert caught.value.kind == kind and len(caught.value.reason) <= MAX_REASON_CHARS


# ---------------------------------------------------------------------------------------------- every game

@pytest.mark.parametrize("game", GAMES)
def test_any_text_or_value_is_a_move_or_a_recorded_invalid_answer(game):
    """Hypothesis: texts (any code point), JSON values (as text, under the decision's keys, as
    natives), NumPy values and deep nesting, a few in a row from the first decision."""

    @HYPOTHESIS
    @given(st.lists(ACTIONS, min_size=1, max_size=4))
    def check(actions: list[tuple[Any, ...]]) -> None:
        play(fresh(game), actions)

    check()


@pytest.mark.parametrize("game", GAMES)
def test_floats_booleans_huge_and_non_finite_numbers_are_invalid_answers(game):
    for value in JUNK_NATIVES:
        bad = step_checked(fresh(game), value)
        assert bad is not None, (game, excerpt(value))


@pytest.mark.parametrize("game", GAMES)
def test_a_whole_episode_of_hostile_answers_finishes(game):
    """Every decision of an episode (every phase: proposals and votes, descriptions and ballots)
    answered with hostile values in turn; the game goes on through re-asks and fallbacks."""
    hostile: list[tuple[Any, ...]] = [("text", t) for t in [*DEEP_TEXTS, "\ud800", "9" * 4000, "\x00\x1b"]]
    hostile += [("native", v) for v in JUNK_NATIVES] + [("keyed", v) for v in (10**400, "\ud800", DEEP_LIST, None)]
    env = fresh(game)
    play(env, (hostile * 40)[:300])


@pytest.mark.parametrize("game", GAMES)
def test_a_long_number_is_quoted_in_a_few_characters(game):
    """Row 13: a 4,000-digit number, alone or under the decision's keys, is never echoed back."""
    for action in (("text", "9" * 4000), ("keyed", int("9" * 4000)), ("text", "I bid $" + "9" * 4000 + "!")):
        env = fresh(game)
        raw = env.unwrapped
        bad = step_checked(env, resolve(action, raw, raw.agent_selection))
        if bad is not None:
            assert "9" * (EXCERPT_CHARS + 1) not in bad["reason"]
            assert "9" * (EXCERPT_CHARS + 1) not in env.observe(raw.agent_selection)["text"]


def test_the_auction_takes_integer_bids_only():
    """Row 6: 1.5, True and np.array(1.5) were bids; inf and 10**400 raised OverflowError."""
    for value in (1.5, True, np.array(1.5), float("inf"), 10**400, np.float32(1.0)):
        assert step_checked(fresh("auction_v0"), value) is not None
    env = fresh("auction_v0")
    assert step_checked(env, np.array(1)) is None and env.unwrapped.last_move is not None


def test_a_pirate_proposal_nested_3000_deep_is_unparseable():
    """Row 3: ``{"proposal": "[[[...]]]"}`` raised RecursionError out of step()."""
    for text in DEEP_TEXTS[2:]:
        bad = step_checked(fresh("pirate_game_v0"), text)
        assert bad is not None and bad["kind"] == "unparseable"
    for proposal in ([10**400, 0, 0, 0, 0], [float("inf")] * 5, [float("nan")] * 5, DEEP_LIST):
        assert step_checked(fresh("pirate_game_v0"), {"proposal": proposal}) is not None


# ---------------------------------------------------------------------------------------------- lone surrogates

def test_a_lone_surrogate_in_who_is_spy_never_reaches_a_prompt():
    """Row 3: every later prompt carried the speech; now each encodes, and the record keeps the raw text."""
    env = fresh("who_is_spy_v0")
    raw = env.unwrapped
    spoken = "it is sweet \ud800 and round"
    while raw.agents:
        agent = raw.agent_selection
        if raw.terminations[agent] or raw.truncations[agent]:
            env.step(None)
            continue
        for seat in raw.agents:
            env.observe(seat)["text"].encode("utf-8")
        env.step(spoken if raw.game.phase == "describe" else f"{raw.agents[-1]} \udfff")
    read_back = json.loads(utf8(dumps(raw.episode_record())))["events"]
    assert spoken in [e["text"] for e in read_back if e["type"] == "describe"]


@pytest.mark.parametrize("prompt", ["full", "paper"])
def test_a_lone_surrogate_in_an_auction_reply_is_recorded_and_the_game_finishes(prompt):
    """Row 3: the run stopped with UnicodeEncodeError; the paper prompt repeats the bidder's replies."""
    env = make("auction_v0", prompt=prompt)
    env.reset(seed=1)
    raw = env.unwrapped
    replies = ["I'm out! \ud800", "\udfff", "I bid $1000! \ud83d"]
    k = 0
    while raw.agents:
        agent = raw.agent_selection
        if raw.terminations[agent] or raw.truncations[agent]:
            env.step(None)
            continue
        env.observe(agent)["text"].encode("utf-8")
        env.step(replies[k % len(replies)])
        k += 1
    record = json.loads(utf8(dumps(raw.episode_record())))
    assert any(e.get("answer") == "\udfff" for e in record["events"])


# ---------------------------------------------------------------------------------------------- the policy layer

class ContentBackend:
    """A named fake backend standing in for a model's output: it replies with ``content`` whatever it
    is asked (any text, or a value that is no text at all, as a broken server or wrapper might pass
    on), and keeps the requests it was sent."""

    label = "content"

    def __init__(self, content: Any):
        self.content = content
        self.requests: list[ChatRequest] = []

    async def generate(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return ChatResponse(text=self.content)

    def close(self) -> None:
        pass


def wire_bytes(request: ChatRequest) -> bytes:
    """What an HTTP client sends for ``request`` (httpx writes JSON with ``ensure_ascii=False``)."""
    return json.dumps(chat_payload(request, "m"), ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("game", GAMES)
def test_any_model_content_through_an_llm_policy_never_raises(game):
    """Hypothesis: the policy answers text (a non-text reply is the empty answer, never an action)
    and the game records it; every request the policy sent encodes."""

    @HYPOTHESIS
    @given(st.one_of(TEXT, SPECIAL_TEXTS, JSON_VALUES, NUMPY_VALUES, UNPRINTABLE), st.booleans())
    def check(content: Any, cot: bool) -> None:
        content = content.value if isinstance(content, Named) else content
        env = fresh(game)
        raw = env.unwrapped
        backend = ContentBackend(content)
        policy = LLMPolicy(backend, cot=cot)
        policy.bind(raw)
        agent = raw.agent_selection
        policy.reset(agent, seed=0)
        for _ in range(2):
            answer = policy.act(env.observe(agent), raw.infos[agent])
            assert isinstance(answer, str)
            if not isinstance(content, str):
                assert answer == ""
            step_checked(env, answer)
            if raw.agent_selection != agent:
                break
        for request in backend.requests:
            wire_bytes(request)
        json.loads(utf8(dumps(policy.trace())))

    check()


def test_a_server_content_of_21_is_a_malformed_reply_not_a_bid():
    """Row 4: ``"content": 21`` made the auction take action 21, a $15,000 bid."""
    with pytest.raises(BackendError):
        read_completion({"choices": [{"message": {"role": "assistant", "content": 21}, "finish_reason": "stop"}]})
    env = fresh("auction_v0")
    raw = env.unwrapped
    policy = LLMPolicy(ContentBackend(21))
    policy.bind(raw)
    policy.reset(raw.agent_selection, seed=0)
    bad = step_checked(env, policy.act(env.observe(raw.agent_selection), {}))
    assert bad is not None and bad["kind"] == "unparseable"
    assert policy.trace()["calls"][0]["text"] == "21"


def belief_text(value: Any) -> str:
    """A belief reply of the AucArena bidder's shape holding ``value`` everywhere."""
    return as_json_text({"remaining_budget": value, "total_profits": {"Bidder 1": value},
                         "winning_bids": {"Bidder 1": {"item": value}}}, False)


def test_any_model_content_through_the_aucarena_bidder_never_raises():
    """Hypothesis: the bidder's plans, bids and belief updates read any reply; the auction goes on."""

    @HYPOTHESIS
    @given(st.one_of(TEXT, SPECIAL_TEXTS, JSON_VALUES, JSON_VALUES.map(belief_text)), st.booleans())
    def check(content: Any, cot: bool) -> None:
        env = fresh("auction_v0")
        raw = env.unwrapped
        backend = ContentBackend(content)
        bidder = AucArenaBidder(backend, cot=cot)
        bidder.bind(raw)
        bidder.reset("bidder_1", seed=0)
        for _ in range(12):
            agent = raw.agent_selection
            if not raw.agents or raw.terminations[agent] or raw.truncations[agent]:
                break
            obs, _, _, _, info = env.last()
            step_checked(env, asyncio.run(bidder.aact(obs, info)) if agent == "bidder_1" else "I'm out!")
        for request in backend.requests:
            wire_bytes(request)

    check()


def test_the_aucarena_bidder_keeps_surrogates_out_of_its_requests():
    """The bidder's history holds its own replies; every request it sends still encodes."""
    env = make("auction_v0", n_bidders=2)
    env.reset(seed=0)
    raw = env.unwrapped
    backend = ContentBackend("I bid $1000! \ud800 {\"remaining_budget\": \udfff}")
    bidder = AucArenaBidder(backend)
    bidder.bind(raw)
    bidder.reset("bidder_1", seed=0)
    for _ in range(30):
        if not raw.agents:
            break
        agent = raw.agent_selection
        if raw.terminations[agent] or raw.truncations[agent]:
            env.step(None)
            continue
        obs, _, _, _, info = env.last()
        env.step(asyncio.run(bidder.aact(obs, info)) if agent == "bidder_1" else "I'm out!")
    assert backend.requests
    for request in backend.requests:
        wire_bytes(request)


# ---------------------------------------------------------------------------------------------- the runner

class SurrogateAnswers(Policy):
    """Answers every decision with the next of a few texts holding lone surrogates, control
    characters and deep nesting (a model's worst replies), in a fixed order per seat."""

    name = "surrogates"
    TEXTS = ("I'm out! \ud800", "\udfff", '{"a": ' * 50 + "}", "I bid $900! \ud83d", "player_1 \ud800\x00",
             "sweet \udfff and round")

    def reset(self, agent: str, seed: int | None = None) -> None:
        self.k = 0

    def act(self, observation: Any, info: dict[str, Any]) -> Any:
        self.k += 1
        return self.TEXTS[self.k % len(self.TEXTS)]


class Interrupted(Exception):
    pass


def factory(stop_after: int | None) -> Callable[[str, str], Policy]:
    """Policies of the specs, ``surrogates`` the hostile one; with ``stop_after``, the hostile seats
    raise after that many decisions between them (a killed run)."""
    count = [0]

    class Stopping(SurrogateAnswers):
        def act(self, observation: Any, info: dict[str, Any]) -> Any:
            count[0] += 1
            if stop_after is not None and count[0] > stop_after:
                raise Interrupted("stopped")
            return super().act(observation, info)

    def build(spec: str, env: str) -> Policy:
        return Stopping() if spec == "surrogates" else make_policy(spec, env)

    return build


@pytest.mark.parametrize("game, players", [
    ("auction_v0", ("surrogates", "rule", "surrogates")),
    ("who_is_spy_v0", ("surrogates",) * 6),
])
def test_a_run_with_lone_surrogate_answers_finishes_and_resumes_exactly(tmp_path, game, players):
    config = RunConfig(game, players, episodes=3, seed=2)
    whole = tmp_path / "whole"
    run(config, whole, policy_factory=factory(None), plots=False, sync_interval=0)
    log = (whole / "log.jsonl").read_bytes()
    assert b"\\ud800" in log or b"\\udfff" in log  # escaped in the JSON, so the file is UTF-8
    log.decode("utf-8")
    steps = read_steps(whole, 0)
    assert any(isinstance(s["action"], str) and encodable(s["action"]) != s["action"] for s in steps)  # read back

    cut = tmp_path / "cut"
    first_episode = len([s for s in steps if s["policy"].startswith("surrogates")])
    with pytest.raises(RunError, match="Interrupted"):
        run(config, cut, policy_factory=factory(first_episode + 5), plots=False, sync_interval=0)
    summary = run(config, cut, policy_factory=factory(None), plots=False, sync_interval=0)
    assert summary.resumed >= 1 and summary.finished == 3
    assert folder_content(cut) == folder_content(whole)


def test_the_runner_logs_a_native_action_that_json_cannot_hold(tmp_path):
    """A caller's deep or huge native action is logged as its excerpt; the run goes on."""
    class Deep(Policy):
        name = "deep"

        def act(self, observation: Any, info: dict[str, Any]) -> Any:
            return DEEP_LIST

    config = RunConfig("guess_two_thirds_v0", ("deep", "random", "random", "random", "random"), episodes=1,
                       env_kwargs={"n_players": 5, "n_rounds": 2})
    out = tmp_path / "out"
    run(config, out, policy_factory=lambda spec, env: Deep() if spec == "deep" else make_policy(spec, env),
        plots=False)
    steps = read_steps(out, 0)
    deep = [s for s in steps if s["policy"] == "deep"]
    assert deep and all(isinstance(s["action"], list) for s in deep)
    assert Path(out / "episodes.jsonl").read_text(encoding="utf-8")
