"""The pure rules of Who is Spy (spec §2, §4.7.3) and their §8 checkable facts."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_envs.who_is_spy.rules import contains_keyword, norm

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
@given(st.text())
def test_norm_never_raises(text: str) -> None:
    assert isinstance(norm(text), str)


@settings(max_examples=2000, deadline=None)
@given(st.text(), st.text(max_size=20), st.sampled_from(["en", "zh"]))
def test_contains_keyword_never_raises(text: str, word: str, language: str) -> None:
    assert contains_keyword(text, word, language) in (True, False)
