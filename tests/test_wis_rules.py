"""The pure rules of Who is Spy (spec §2, §4.7.3) and their §8 checkable facts."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_envs.core.answers import InvalidAnswer
from arena_envs.who_is_spy.rules import (
    VIOLATIONS,
    WINNERS,
    check_end,
    contains_keyword,
    judge_utterance,
    max_vote_note_chars,
    norm,
    parse_vote,
    read_ballot,
    speaking_order,
    split_analysis,
    tally,
    truncate,
    vote_counts,
)

# Arbitrary Unicode (lone surrogates included) and texts built from the pieces the parsers look for.
_PIECES = st.sampled_from(["player_3", "Player 1", "PLAYER-5", "vote for ", "Vote:", "\n", " ", "\t", "#", "4",
                           "abstain", "弃权", "tea", "Teas", "茶", "ANALYSIS:", "'s", "-", "...", "“", "」", "Ann"])
UNICODE = st.one_of(st.text(), st.text(st.characters(exclude_categories=())),
                    st.lists(_PIECES | st.text(max_size=5), max_size=12).map("".join))


# ---- norm (§2.6) -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, ""),
        ("", ""),
        ("   ", ""),
        ("...", ""),
        ("…", ""),
        ("！？", ""),
        ("  Found   on\tevery\nbeach.  ", "found on every beach"),
        ("“Found on every beach!”", "found on every beach"),
        ("「沙滩上到处都是。」", "沙滩上到处都是"),
        ("ＦＵＬＬ width", "full width"),
        ("Straße", "strasse"),
    ],
)
def test_norm(text: str | None, expected: str) -> None:
    assert norm(text) == expected


# ---- contains_keyword (§2.6, §8.3 facts 10-11) ---------------------------------------------------

@pytest.mark.parametrize(
    ("word", "text", "hit"),
    [
        ("tea", "I drink tea daily.", True),
        ("tea", "Teas from China", True),
        ("tea", "TEA-time!", True),
        ("tea", "Tea's aroma", True),
        ("tea", "Tea’s aroma", True),
        ("tea", "Great for a team", False),
        ("tea", "Use it instead", False),
        ("ice cream", "ice-cream", True),
        ("ice cream", "icecream", True),
        ("ice cream", "ICE CREAMS", True),
        ("ice cream", "ice  -  cream on a cone", True),
        ("ice cream", "nice cream", False),
        ("ice-cream", "ice cream", True),
        ("berry", "berries", True),
        ("berry", "berrys", True),
        ("berry", "strawberry", False),
        ("box", "boxes", True),
        ("sand", "sandcastles", False),
        ("sand", "Sand!", True),
        ("coffee", "Better than any coffee.", True),
        ("tea", "", False),
        ("", "anything", False),
        ("  ", "anything", False),
    ],
)
def test_contains_keyword_english(word: str, text: str, hit: bool) -> None:
    assert contains_keyword(text, word, "en") is hit


@pytest.mark.parametrize(
    ("word", "text", "language", "hit"),
    [
        ("茶", "我喜欢喝茶", "zh", True),
        ("奶茶", "奶 茶", "zh", True),
        ("奶茶", "奶\u3000茶很甜", "zh", True),
        ("咖啡", "我喜欢喝茶", "zh", False),
        ("茶", "我喜欢喝茶", "en", True),  # a CJK word switches to Chinese mode in any language
        ("tea", "I like TEAM sports", "zh", True),  # Chinese mode is a plain substring test
    ],
)
def test_contains_keyword_chinese(word: str, text: str, language: str, hit: bool) -> None:
    assert contains_keyword(text, word, language) is hit


def test_contains_keyword_rejects_unknown_language() -> None:
    with pytest.raises(ValueError, match="language"):
        contains_keyword("tea", "tea", "fr")


# ---- never raise on arbitrary Unicode --------------------------------------------------------------

@settings(max_examples=2000, deadline=None)
@given(UNICODE)
def test_norm_never_raises(text: str) -> None:
    assert isinstance(norm(text), str)


@settings(max_examples=2000, deadline=None)
@given(UNICODE, UNICODE, st.sampled_from(["en", "zh"]))
def test_contains_keyword_never_raises(text: str, word: str, language: str) -> None:
    assert contains_keyword(text, word, language) in (True, False)


# ---- truncation and the foul judge (§2.5, §2.6, §8.3 facts 12-15) -------------------------------------

def test_truncate_english_and_chinese_limits() -> None:
    assert len(truncate("x" * 500, "en")) == 400
    assert truncate("  " + "y" * 401 + "  ", "en") == "y" * 400
    assert len(truncate("字" * 200, "zh")) == 120
    assert truncate("  short  ", "en") == "short"
    assert truncate(None, "en") == ""
    assert truncate("abcdef", "en", limit=3) == "abc"
    with pytest.raises(ValueError, match="limit"):
        truncate("abc", "en", limit=0)


def test_keyword_after_the_cut_is_no_foul() -> None:
    text = truncate("a" * 398 + " tea is here", "en")
    assert len(text) == 400
    assert judge_utterance(text, "tea", set(), "en") is None


@pytest.mark.parametrize("text", ["", "   ", "...", None, "“…”", "!?", "---", "( )", "。", "\u200b", "\x00 \u2060"])
def test_empty_fouls(text: str | None) -> None:
    assert judge_utterance(text, "tea", set(), "en") == "empty"


@pytest.mark.parametrize("text", ["$", "😀", "3", "no", "x."])
def test_symbols_digits_and_short_words_are_answers(text: str) -> None:
    assert judge_utterance(text, "tea", set(), "en") is None


def test_only_the_own_word_is_a_keyword_foul() -> None:
    assert judge_utterance("Goes well with tea and biscuits.", "coffee", set(), "en") is None
    assert judge_utterance("Less bitter than coffee.", "tea", set(), "en") is None
    assert judge_utterance("Better than any coffee.", "coffee", set(), "en") == "keyword"


def test_repeat_is_by_normal_form_against_the_earlier_set() -> None:
    earlier = {norm("Found on every beach.")}
    assert judge_utterance("found on every beach", "sand", earlier, "en") == "repeat"
    assert judge_utterance("  “Found on  every beach!” ", "sand", earlier, "en") == "repeat"
    assert judge_utterance("Found on most beaches.", "sand", earlier, "en") is None


def test_foul_precedence_empty_keyword_repeat() -> None:
    earlier = {norm("tea"), ""}
    assert judge_utterance("...", "tea", earlier, "en") == "empty"
    assert judge_utterance("Tea!", "tea", earlier, "en") == "keyword"


def test_split_analysis() -> None:
    assert split_analysis("Brewed in a pot.\nAnalysis: player_3 is odd.") == (
        "Brewed in a pot.\n", " player_3 is odd.")
    assert split_analysis("  ANALYSIS:x") == ("", "x")
    assert split_analysis("No marker; analysis: inline") == ("No marker; analysis: inline", None)


# ---- votes (§2.7, §4.7.3, §8.4 facts 19-22) -----------------------------------------------------------

NAMES = [f"player_{i}" for i in range(6)]
ALL = set(range(6))


@pytest.mark.parametrize(
    "ballot", ["player_3", "Player 3", "PLAYER3", "3", "I vote for player_3.",
               "I suspect player_1.\nFinal answer: player_3"])
def test_lenient_forms_mean_player_3(ballot: str) -> None:
    assert parse_vote(ballot, NAMES, 0, ALL) == (3, None)


@pytest.mark.parametrize("ballot", ["player_3", "Player 3", "PLAYER3", "3"])
def test_strict_accepts_the_four_plain_forms(ballot: str) -> None:
    assert parse_vote(ballot, NAMES, 0, ALL, mode="strict") == (3, None)


@pytest.mark.parametrize("ballot", ["I vote for player_3.", "I suspect player_1.\nFinal answer: player_3",
                                    "player_1 or player_3?"])
def test_strict_rejects_sentences(ballot: str) -> None:
    target, note = parse_vote(ballot, NAMES, 0, ALL, mode="strict")
    assert target is None and note is not None


def test_two_names_without_a_vote_pattern_abstain() -> None:
    target, note = parse_vote("player_1 or player_3?", NAMES, 0, ALL)
    assert target is None and note is not None and "abstain" in note


def test_last_vote_pattern_wins_and_separators() -> None:
    assert parse_vote("vote: player_1 ... no wait, vote for player-4", NAMES, 0, ALL)[0] == 4
    assert parse_vote(" #2. ", NAMES, 0, ALL)[0] == 2
    assert parse_vote("my pick is #5.", NAMES, 0, ALL)[0] is None  # numbers only as the whole ballot
    assert parse_vote("player_1 is odd", [f"player_{i}" for i in range(12)], 0, set(range(12)))[0] == 1
    assert parse_vote("player_11 is odd", [f"player_{i}" for i in range(12)], 0, set(range(12)))[0] == 11


@pytest.mark.parametrize("ballot", [None, "abstain", "Pass", "none", "SKIP", "no vote", "弃权"])
def test_explicit_abstentions_have_no_note(ballot: str | None) -> None:
    assert parse_vote(ballot, NAMES, 0, ALL) == (None, None)


@pytest.mark.parametrize(
    ("ballot", "voter", "alive"),
    [("player_2", 2, ALL),                 # self-vote, off by default
     ("player_5", 0, ALL - {5}),           # eliminated target
     ("player_9", 0, ALL),                 # unknown name
     ("I am not sure", 0, ALL),
     ("", 0, ALL),
     (9, 0, ALL),
     ("9" * 5000, 0, ALL)],
)
def test_ballots_read_as_abstentions(ballot: object, voter: int, alive: set[int]) -> None:
    target, note = parse_vote(ballot, NAMES, voter, alive)
    assert target is None and note is not None and note.startswith("vote parsed as abstain")


@pytest.mark.parametrize(
    ("ballot", "voter", "alive", "kind"),
    [("player_2", 2, ALL, "illegal"), ("player_5", 0, ALL - {5}, "illegal"), ("player_9", 0, ALL, "unparseable"),
     ("", 0, ALL, "unparseable"), (9, 0, ALL, "unparseable"), ("9" * 5000, 0, ALL, "unparseable")],
)
def test_read_ballot_raises_the_note_of_an_invalid_ballot(ballot: object, voter: int, alive: set[int],
                                                        kind: str) -> None:
    with pytest.raises(InvalidAnswer) as invalid:
        read_ballot(ballot, NAMES, voter, alive)
    assert (invalid.value.kind, invalid.value.reason) == (kind, parse_vote(ballot, NAMES, voter, alive)[1])
    assert read_ballot("abstain", NAMES, voter, alive) is None and read_ballot(None, NAMES, voter, alive) is None


def test_self_vote_allowed_by_option() -> None:
    assert parse_vote("player_2", NAMES, 2, ALL, allow_self_vote=True) == (2, None)


def test_integer_actions_and_other_types() -> None:
    assert parse_vote(np.int64(4), NAMES, 0, ALL) == (4, None)
    assert parse_vote(6, NAMES, 0, ALL) == (None, None)  # index n: the discrete abstain action
    target, note = parse_vote(["player_4"], NAMES, 0, ALL)
    assert target == 4 and note is not None and "list" in note
    assert parse_vote(True, NAMES, 0, ALL)[0] is None


class ABallotTypeWhoseNameIsLongerThanAnyNoteQuotesIt:
    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


OBJECT_BALLOT = UNICODE.map(ABallotTypeWhoseNameIsLongerThanAnyNoteQuotesIt)


@settings(max_examples=500, deadline=None)
@given(ballot=UNICODE | st.integers() | st.integers().map(str) | OBJECT_BALLOT,
       names=st.sampled_from([NAMES, [f"{'Ñandú ' * 12}{i}" for i in range(6)]]), alive=st.sets(st.integers(0, 5)),
       mode=st.sampled_from(["lenient", "strict"]))
def test_a_vote_note_never_exceeds_its_bound(ballot: object, names: list[str], alive: set[int], mode: str) -> None:
    """Whatever a caller passes (huge seat numbers, long type names), the note stays within
    max_vote_note_chars, which bounds the retry line of the observation text."""
    _, note = parse_vote(ballot, names, 0, alive, mode=mode)
    assert note is None or len(note) <= max_vote_note_chars(names)
    longest = parse_vote(ABallotTypeWhoseNameIsLongerThanAnyNoteQuotesIt("999999999"), names, 0, alive)[1]
    assert longest is not None and len(longest) <= max_vote_note_chars(names)


def test_custom_names() -> None:
    names = ["Alice", "Bob", "Carol Ann", "Dan", "Eve", "Frank"]
    alive = set(range(6))
    assert parse_vote("carol-ann", names, 0, alive) == (2, None)
    assert parse_vote("I think Bob.", names, 0, alive) == (1, None)
    assert parse_vote("Bobby is fine, Dan is odd", names, 0, alive) == (3, None)
    assert parse_vote("vote for Eve", names, 0, alive, mode="strict")[0] is None


def test_bad_mode_is_one_line_error() -> None:
    with pytest.raises(ValueError, match="vote_parsing"):
        parse_vote("player_1", NAMES, 0, ALL, mode="fuzzy")


def test_tally_plurality_ties_and_no_votes() -> None:
    assert tally([3, None, None, None, None, None]) == 3          # one vote against 5 abstentions
    assert tally([1, 2, 1, 2, None]) is None                       # tie for the top
    assert tally([None] * 6) is None                               # no valid votes
    assert tally([]) is None
    assert tally([2, 2, 2, 3, 1, 3]) == 2
    assert vote_counts([2, None, 3, 2]) == {2: 2, 3: 1}


# ---- order and end (§2.5, §2.9, §8.2 facts 6-7) ---------------------------------------------------------

def test_speaking_order() -> None:
    assert speaking_order(4, set(range(6)), 6) == [4, 5, 0, 1, 2, 3]
    assert speaking_order(4, {0, 1, 2, 3, 5}, 6) == [5, 0, 1, 2, 3]
    assert speaking_order(4, {0, 1, 2, 3}, 6) == [0, 1, 2, 3]
    assert speaking_order(3, {0, 1, 2, 4, 5}, 6) == [4, 5, 0, 1, 2]


@pytest.mark.parametrize(
    ("spies_alive", "n_alive", "round_no", "after_vote", "expected"),
    [(0, 5, 1, False, "E1"), (0, 2, 3, True, "E1"), (1, 3, 1, False, "E2"), (1, 4, 3, False, None),
     (1, 4, 3, True, "E3"), (1, 3, 3, True, "E2"), (1, 5, 2, True, None), (1, 6, 1, False, None)],
)
def test_check_end(spies_alive: int, n_alive: int, round_no: int, after_vote: bool,
                   expected: str | None) -> None:
    assert check_end(spies_alive, n_alive, round_no, 3, 3, after_vote) == expected
    if expected:
        assert WINNERS[expected] == ("civilians" if spies_alive == 0 else "spy")


# ---- never raise on arbitrary Unicode (judge and parser) ------------------------------------------------

@settings(max_examples=2000, deadline=None)
@given(UNICODE, UNICODE, st.sampled_from(["en", "zh"]))
def test_judge_utterance_never_raises(text: str, word: str, language: str) -> None:
    assert judge_utterance(text, word, {"x", norm(text[:3])}, language) in (None, *VIOLATIONS)


@settings(max_examples=2000, deadline=None)
@given(UNICODE, st.sampled_from(["lenient", "strict"]), st.booleans())
def test_parse_vote_never_raises(text: str, mode: str, self_ok: bool) -> None:
    target, note = parse_vote(text, NAMES, 1, {0, 1, 3, 4}, allow_self_vote=self_ok, mode=mode)
    assert target is None or target in ({0, 3, 4} | ({1} if self_ok else set()))
    assert note is None or isinstance(note, str)


@settings(max_examples=500, deadline=None)
@given(UNICODE | st.integers(), st.sampled_from(["lenient", "strict"]), st.booleans())
def test_read_ballot_is_parse_vote_with_invalid_ballots_raised(ballot: object, mode: str, self_ok: bool) -> None:
    target, note = parse_vote(ballot, NAMES, 1, {0, 1, 3, 4}, allow_self_vote=self_ok, mode=mode)
    try:
        assert read_ballot(ballot, NAMES, 1, {0, 1, 3, 4}, allow_self_vote=self_ok, mode=mode) == target
        assert note is None
    except InvalidAnswer as invalid:
        assert target is None and invalid.reason == note


@settings(max_examples=2000, deadline=None)
@given(UNICODE)
def test_parse_vote_custom_names_never_raises(text: str) -> None:
    names = ["Ann", "李雷", "o'Neil", "X-Æ", "ｆｕｌｌ", "a.b"]
    target, _ = parse_vote(text, names, 0, set(range(6)))
    assert target is None or 1 <= target <= 5
