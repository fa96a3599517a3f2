"""The Who is Spy state machine (spec §2, §4.10) and its §8 checkable facts without PettingZoo."""
from __future__ import annotations

import json
from collections.abc import Mapping
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_envs.core.answers import InvalidAnswer
from arena_envs.who_is_spy.game import WisConfig, WisGame, draw_setup

PAIRS = [("tea", "coffee"), ("sand", "soil"), ("violin", "cello"), ("pen", "pencil"), ("lion", "tiger")]


def new_game(words: tuple[str, str] = ("tea", "coffee"), spy: int = 2, first: int = 4,
             **config: object) -> WisGame:
    cfg = WisConfig(**config)  # type: ignore[arg-type]
    options = {"civilian_word": words[0], "spy_word": words[1], "spy_seat": spy, "first_speaker": first}
    return WisGame(cfg, draw_setup(cfg, PAIRS, np.random.default_rng(0), options), seed=0)


def describe_round(game: WisGame, clues: Mapping[int, str | None] | None = None) -> list[int]:
    """Every speaker of the phase says its clue in ``clues`` or a fresh neutral one; the order."""
    clues = clues or {}
    order = []
    r = game.round
    while game.phase == "describe" and game.round == r:
        seat = game.actor
        assert seat is not None
        order.append(seat)
        game.describe(seat, clues.get(seat, f"Clue number {r}.{seat}"))
    return order


def vote_round(game: WisGame, votes: Mapping[int, object]) -> list[int]:
    """Every voter casts ``votes[seat]`` (absent: abstain); the order."""
    order = []
    r = game.round
    assert game.phase == "vote"
    while game.phase == "vote" and game.round == r:
        seat = game.actor
        assert seat is not None
        order.append(seat)
        game.vote(seat, votes.get(seat))
    return order


def approx(scores: Mapping[str, object], expected: Mapping[int, float]) -> None:
    for seat, value in expected.items():
        assert abs(float(scores[f"player_{seat}"]) - value) < 1e-9, (seat, scores)  # type: ignore[arg-type]


# ---- setup (§2.3, §8.1 facts 1, 2, 4) -------------------------------------------------------------------

def test_setup_one_spy_five_civilians() -> None:
    cfg = WisConfig()
    for seed in range(20):
        game = WisGame(cfg, draw_setup(cfg, PAIRS, np.random.default_rng(seed)), seed=seed)
        words = [game.word_of(s) for s in range(6)]
        assert len(game.spy_seats) == 1
        assert words.count(game.civilian_word) == 5 and words.count(game.spy_word) == 1
        assert game.civilian_word != game.spy_word
        assert (game.civilian_word, game.spy_word) in PAIRS  # pair_order="dataset": the dataset's spy word


def test_forced_setup_selects_first_speaker_and_words() -> None:
    game = new_game(spy=2, first=4)
    assert game.actor == 4 and game.phase == "describe" and game.round == 1
    assert game.word_of(2) == "coffee"
    assert all(game.word_of(s) == "tea" for s in range(6) if s != 2)


def test_draw_order_forced_values_still_consume_draws() -> None:
    cfg = WisConfig()
    base = draw_setup(cfg, PAIRS, np.random.default_rng(7))
    assert draw_setup(cfg, PAIRS, np.random.default_rng(7)) == base
    forced_spy = draw_setup(cfg, PAIRS, np.random.default_rng(7), {"spy_seat": (base.spy_seats[0] + 1) % 6})
    assert (forced_spy.pair_index, forced_spy.civilian_word, forced_spy.first_speaker) == (
        base.pair_index, base.civilian_word, base.first_speaker)
    forced_first = draw_setup(cfg, PAIRS, np.random.default_rng(7), {"first_speaker": 0})
    assert forced_first.spy_seats == base.spy_seats and forced_first.pair_index == base.pair_index
    forced_words = draw_setup(cfg, PAIRS, np.random.default_rng(7), {"civilian_word": "x", "spy_word": "y"})
    assert (forced_words.spy_seats, forced_words.first_speaker) == (base.spy_seats, base.first_speaker)
    assert (forced_words.civilian_word, forced_words.spy_word) == ("x", "y")
    # the draws themselves, in the §2.3 order
    rng = np.random.default_rng(7)
    assert (base.pair_index, base.spy_seats[0], base.first_speaker) == (
        int(rng.integers(len(PAIRS))), int(rng.integers(6)), int(rng.integers(6)))


def test_random_pair_order_draws_an_orientation_bit() -> None:
    cfg = WisConfig(pair_order="random")
    setups = [draw_setup(cfg, PAIRS, np.random.default_rng(s)) for s in range(40)]
    assert {s.swapped for s in setups} == {True, False}
    for s in setups:
        civ, spy = PAIRS[s.pair_index]
        assert (s.civilian_word, s.spy_word) == ((spy, civ) if s.swapped else (civ, spy))
    rng = np.random.default_rng(3)
    s3 = setups[3]
    assert (s3.pair_index, s3.swapped, s3.spy_seats[0], s3.first_speaker) == (
        int(rng.integers(len(PAIRS))), bool(rng.integers(2)), int(rng.integers(6)), int(rng.integers(6)))


def test_unknown_or_non_mapping_options_are_ignored() -> None:
    cfg = WisConfig()
    base = draw_setup(cfg, PAIRS, np.random.default_rng(1))
    assert draw_setup(cfg, PAIRS, np.random.default_rng(1), 1) == base
    assert draw_setup(cfg, PAIRS, np.random.default_rng(1), {"colour": "red"}) == base


@pytest.mark.parametrize(
    ("options", "match"),
    [({"civilian_word": "tea"}, "civilian_word"), ({"civilian_word": "Tea", "spy_word": "tea."}, "different"),
     ({"spy_seat": 6}, "spy_seat"), ({"first_speaker": -1}, "first_speaker"),
     ({"spy_seat": True}, "spy_seat"), ({"spy_seats": [1, 2]}, "spy_seats")],
)
def test_bad_options_are_one_line_errors(options: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match) as err:
        draw_setup(WisConfig(), PAIRS, np.random.default_rng(0), options)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"n_players": 3}, "n_players"), ({"n_players": 13}, "n_players"), ({"n_spies": 3}, "n_spies"),
     ({"n_spies": 0}, "n_spies"), ({"language": "fr"}, "language"), ({"vote_parsing": "fuzzy"}, "vote_parsing"),
     ({"pair_order": "shuffle"}, "pair_order"), ({"max_rounds": 0}, "max_rounds"),
     ({"end_alive_threshold": 6}, "end_alive_threshold"), ({"max_description_chars": 0}, "max_description"),
     ({"player_names": ["a", "A", "b", "c", "d", "e"]}, "player_names"),
     ({"player_names": ["a", "b", "c", "d", "e", "Pass"]}, "player_names"),
     ({"player_names": ["a", "b"]}, "player_names")],
)
def test_bad_config_is_one_line_error(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match) as err:
        WisConfig(**kwargs)  # type: ignore[arg-type]
    assert "\n" not in str(err.value)


def test_config_defaults_and_spy_range() -> None:
    cfg = WisConfig()
    assert (cfg.n_players, cfg.n_spies, cfg.max_rounds, cfg.end_alive_threshold, cfg.language) == (6, 1, 3, 3, "en")
    assert cfg.description_limit == 400 and WisConfig(language="zh").description_limit == 120
    assert (cfg.allow_self_vote, cfg.vote_parsing, cfg.allow_public_analysis, cfg.analysis_max_chars) == (
        False, "lenient", False, 1200)
    assert cfg.names == tuple(f"player_{i}" for i in range(6))
    assert WisConfig(n_players=6, n_spies=2).n_spies == 2
    assert WisConfig(n_players=12, n_spies=5).n_spies == 5
    with pytest.raises(ValueError, match="n_spies"):
        WisConfig(n_players=4, n_spies=2)  # not fewer than half the table


# ---- turn order (§2.5, §8.2 facts 6-9) -----------------------------------------------------------------

def test_round_one_order_and_vote_order() -> None:
    game = new_game(first=4)
    assert describe_round(game) == [4, 5, 0, 1, 2, 3]
    assert vote_round(game, {}) == [4, 5, 0, 1, 2, 3]


def test_next_round_starts_after_an_eliminated_first_speaker() -> None:
    game = new_game(spy=2, first=4)
    describe_round(game)
    vote_round(game, {4: 0, 5: 4, 0: 4, 1: 4, 2: 4, 3: 0})
    assert not game.is_alive(4) and game.actor == 5
    assert describe_round(game) == [5, 0, 1, 2, 3]

    game = new_game(spy=2, first=4)
    describe_round(game, {4: "", 5: None})  # both foul: eliminated at adjudication
    assert vote_round(game, {}) == [0, 1, 2, 3]  # a tie of nobody: zero valid votes
    assert game.round == 2 and game.actor == 0
    assert describe_round(game) == [0, 1, 2, 3]


def test_ballots_are_secret_until_the_tally() -> None:
    game = new_game()
    describe_round(game)
    game.vote(4, "player_2")
    game.vote(5, "player_2")
    assert game.ballots == [] and game.rounds[-1].ballots == [] and game.rounds[-1].tally is None
    vote_round(game, {0: 1})
    assert [(b.voter, b.target) for b in game.ballots] == [(4, 2), (5, 2), (0, 1), (1, None), (2, None), (3, None)]
    assert game.rounds[0].tally == {2: 2, 1: 1} and game.rounds[0].voted_out == 2


def test_read_vote_previews_without_recording() -> None:
    game = new_game(spy=2, first=0)
    describe_round(game)
    assert game.read_vote(0, "I vote for player_3") == 3
    with pytest.raises(InvalidAnswer, match="self-vote not allowed") as invalid:
        game.read_vote(0, "player_0")
    assert invalid.value.kind == "illegal"
    assert game.actor == 0 and game.ballots == [] and game.record()["rounds"][0]["votes"] == []


def test_setup_must_fit_the_config() -> None:
    setup = draw_setup(WisConfig(n_players=8), PAIRS, np.random.default_rng(0), {"spy_seat": 7})
    with pytest.raises(ValueError, match="spy seats"):
        WisGame(WisConfig(), setup)
    with pytest.raises(ValueError, match="spy seats"):
        WisGame(WisConfig(n_players=8, n_spies=2), setup)


def test_acting_out_of_turn_is_an_error() -> None:
    game = new_game(first=4)
    with pytest.raises(ValueError, match="turn"):
        game.describe(0, "hello")
    with pytest.raises(ValueError, match="turn"):
        game.vote(4, 1)
    with pytest.raises(ValueError, match="description must be a str or None"):
        game.describe(4, 42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="analysis must be a str or None"):
        game.describe(4, "hi", analysis=["x"])  # type: ignore[arg-type]


# ---- violations (§2.6, §8.3 facts 12-18) -------------------------------------------------------------------

def test_other_word_is_legal_own_word_is_a_foul() -> None:
    game = new_game(spy=2, first=0)
    describe_round(game, {2: "Goes well with tea and biscuits.", 0: "Less bitter than coffee."})
    assert game.phase == "vote" and game.eliminations == []

    game = new_game(spy=2, first=0)
    describe_round(game, {2: "Better than any coffee."})
    assert [(e.seat, e.cause, e.violation) for e in game.eliminations] == [(2, "violation", "keyword")]


@pytest.mark.parametrize("text", ["", "   ", "...", None])
def test_empty_descriptions_are_fouls(text: str | None) -> None:
    game = new_game(spy=2, first=0)
    describe_round(game, {3: text})
    assert [(e.seat, e.violation) for e in game.eliminations] == [(3, "empty")]


def test_repeat_in_the_same_and_a_later_round_and_of_oneself() -> None:
    game = new_game(("sand", "soil"), spy=5, first=0)
    describe_round(game, {0: "Found on every beach.", 2: "found on every beach"})
    assert [(e.seat, e.violation) for e in game.eliminations] == [(2, "repeat")]
    vote_round(game, {})
    describe_round(game, {1: "Found on every beach!", 3: "Clue number 1.3"})
    assert [(e.seat, e.violation) for e in game.eliminations][1:] == [(1, "repeat"), (3, "repeat")]


def test_empty_utterances_are_not_remembered_for_repeats() -> None:
    game = new_game(spy=2, first=0)
    describe_round(game, {0: "...", 1: "..."})
    assert [(e.seat, e.violation) for e in game.eliminations] == [(0, "empty"), (1, "empty")]


def test_truncation_en_and_zh() -> None:
    game = new_game(spy=2, first=0)
    describe_round(game, {0: "x" * 500, 1: "b" * 398 + " tea"})
    assert len(game.descriptions[0].text) == 400 and game.descriptions[0].raw_text == "x" * 500
    assert game.eliminations == []  # own word only after character 400

    game = new_game(("茶", "咖啡"), spy=2, first=0, language="zh")
    describe_round(game, {0: "好" * 200, 1: "甲" * 119 + "茶"})
    assert len(game.descriptions[0].text) == 120
    assert [(e.seat, e.violation) for e in game.eliminations] == [(1, "keyword")]
    game = new_game(spy=2, first=0, max_description_chars=10)
    describe_round(game, {0: "a" * 20})
    assert game.descriptions[0].text == "a" * 10


def test_fouls_are_judged_after_the_phase_and_foulers_do_not_vote() -> None:
    game = new_game(spy=2, first=0)
    game.describe(0, "I drink tea daily.")
    assert game.actor == 1 and game.is_alive(0) and game.descriptions[0].violation is None
    assert game.eliminations == []
    describe_round(game)
    assert game.descriptions[0].violation == "keyword"
    assert [(e.seat, e.round, e.cause, e.violation) for e in game.eliminations] == [(0, 1, "violation", "keyword")]
    assert game.order == (1, 2, 3, 4, 5)
    assert vote_round(game, {}) == [1, 2, 3, 4, 5]


def test_spy_foul_ends_the_game_before_the_vote() -> None:  # §8.3 fact 17
    game = new_game(spy=4, first=0)
    describe_round(game)
    vote_round(game, {0: "player_4", 1: "player_2", 2: "player_1", 3: "player_2", 4: "player_1", 5: "player_3"})
    assert game.rounds[0].voted_out is None and game.round == 2
    describe_round(game, {4: "I love coffee in the morning."})
    assert game.over and game.end_condition == "E1" and game.winner == "civilians"
    assert game.rounds[1].tally is None and len(game.ballots) == 6
    approx(game.scores, {0: 2.6, 1: 1.6, 2: 1.6, 3: 1.6, 4: 3.0, 5: 1.6})
    assert sum(game.scores.values()) == 12


def test_fouls_end_the_game_before_voting() -> None:  # §8.3 fact 18
    game = new_game(spy=1, first=0)
    describe_round(game, {2: "tea", 3: "tea", 4: "tea"})
    assert game.over and game.end_condition == "E2" and game.winner == "spy"
    assert game.alive_seats == [0, 1, 5] and game.ballots == []
    approx(game.scores, {0: 0, 1: 12, 2: 0, 3: 0, 4: 0, 5: 0})


# ---- voting (§2.7, §8.4 facts 19-22) ---------------------------------------------------------------------

def test_one_vote_against_abstentions_eliminates() -> None:
    game = new_game(spy=2, first=0)
    describe_round(game)
    vote_round(game, {3: "player_1"})
    assert game.rounds[0].voted_out == 1 and not game.is_alive(1)


def test_ties_and_zero_valid_votes_eliminate_nobody() -> None:
    game = new_game(spy=2, first=0)
    describe_round(game)
    vote_round(game, {0: 1, 1: 0})
    assert game.rounds[0].voted_out is None and game.rounds[0].tally == {1: 1, 0: 1}
    describe_round(game)
    vote_round(game, {0: "I am not sure", 1: "player_9", 2: "player_2", 3: None})
    assert game.rounds[1].voted_out is None and game.rounds[1].tally == {}
    assert len(game.alive_seats) == 6


def test_invalid_ballots_are_abstentions_with_notes() -> None:
    game = new_game(spy=2, first=0)
    describe_round(game, {5: ""})  # p5 eliminated by a foul
    notes = {}
    for seat, action in [(0, "player_0"), (1, "player_5"), (2, "player_9"), (3, "I am not sure"), (4, 17)]:
        notes[seat] = game.vote(seat, action)
    assert all(b.target is None for b in game.ballots)
    assert all(note and note.startswith("vote parsed as abstain") for note in notes.values())


def test_lenient_and_strict_parsing_through_the_game() -> None:
    for mode, expected in [("lenient", 3), ("strict", None)]:
        game = new_game(spy=2, first=0, vote_parsing=mode)
        describe_round(game)
        vote_round(game, {0: "I suspect player_1.\nFinal answer: player_3"})
        assert game.ballots[0].target == expected
        assert game.ballots[0].raw_action == "I suspect player_1.\nFinal answer: player_3"


def test_self_vote_option() -> None:
    game = new_game(spy=2, first=0, allow_self_vote=True)
    describe_round(game)
    assert game.legal_targets(0) == [0, 1, 2, 3, 4, 5]
    vote_round(game, {0: "player_0"})
    assert game.rounds[0].voted_out == 0
    assert new_game().legal_targets(3) == [0, 1, 2, 4, 5]


def test_custom_player_names() -> None:
    names = ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay")
    game = new_game(spy=2, first=0, player_names=names)
    describe_round(game)
    vote_round(game, {0: "Cy", 1: "I vote for cy", 3: "cy", 4: "Bob"})
    assert game.rounds[0].voted_out == 2 and game.winner == "civilians"
    rec = game.record()
    assert rec["player_names"] == list(names) and set(rec["scores"]) == set(names)


# ---- worked games (§8.5 facts 24-29) ----------------------------------------------------------------------

def test_spy_caught_in_round_one() -> None:  # fact 24
    game = new_game(spy=2, first=4)
    describe_round(game)
    order = vote_round(game, {4: "player_2", 5: "player_2", 0: "player_2", 1: "player_3", 2: "player_3",
                              3: "player_2"})
    assert order == [4, 5, 0, 1, 2, 3]
    assert game.rounds[0].voted_out == 2 and game.rounds[0].tally == {2: 4, 3: 2}
    assert game.end_condition == "E1" and game.winner == "civilians"
    approx(game.scores, {0: 3.4, 1: 2.4, 2: -4, 3: 3.4, 4: 3.4, 5: 3.4})
    assert sum(game.scores.values()) == 12


def play_fact_25() -> WisGame:
    game = new_game(("sand", "soil"), spy=5, first=0)
    describe_round(game, {0: "Found on every beach.", 1: "Kids play with it.", 2: "Found on every beach.",
                          3: "Grainy and golden.", 4: "It fills an hourglass.", 5: "Plants grow in it."})
    assert [e.seat for e in game.eliminations] == [2]
    vote_round(game, {0: "player_5", 1: "player_4", 3: "player_5", 4: "player_1", 5: "player_1"})
    assert game.rounds[0].voted_out is None
    describe_round(game)
    vote_round(game, {0: "player_5", 1: "player_5", 3: "player_5", 4: "player_5", 5: "player_0"})
    return game


def test_repeat_tie_then_spy_caught_in_round_two() -> None:  # fact 25 (its metrics: test_wis_scoring)
    game = play_fact_25()
    assert game.end_condition == "E1" and game.rounds[1].voted_out == 5
    approx(game.scores, {0: 4, 1: 3, 2: 0, 3: 4, 4: 3, 5: -2})
    assert game.survival_rounds == {"player_0": 2, "player_1": 2, "player_2": 0, "player_3": 2,
                                    "player_4": 2, "player_5": 1}


def test_spy_survives_three_rounds() -> None:  # fact 26
    game = new_game(("violin", "cello"), spy=0, first=3)
    describe_round(game)
    vote_round(game, {3: "player_1", 4: "player_1", 5: "player_0", 0: "player_1", 1: "player_3", 2: "player_1"})
    assert describe_round(game) == [3, 4, 5, 0, 2]
    vote_round(game, {3: "player_2", 4: "player_2", 5: "player_2", 0: "player_2", 2: "player_0"})
    assert describe_round(game) == [3, 4, 5, 0]
    vote_round(game, {3: "player_4", 4: "player_3", 5: "player_4", 0: "player_4"})
    assert game.over and game.winner == "spy" and game.end_condition == "E2"  # E2 is checked before E3
    assert game.alive_seats == [0, 3, 5] and game.round == 3
    approx(game.scores, {0: 10, 1: 0, 2: 1, 3: 0, 4: 0, 5: 1})


def test_ties_every_round_spy_wins_by_round_limit() -> None:  # fact 27
    game = new_game(spy=2, first=0)
    for _ in range(3):
        describe_round(game)
        vote_round(game, {0: 1, 1: 0})
    assert game.over and game.end_condition == "E3" and game.winner == "spy"
    assert len(game.alive_seats) == 6 and game.round == 3
    approx(game.scores, {2: 12 - 0, 0: 0, 1: 0})
    assert sum(game.scores.values()) == 12


def test_fouls_plus_vote() -> None:  # fact 28
    game = new_game(spy=1, first=0)
    describe_round(game, {2: "I drink tea daily.", 4: ""})
    assert [(e.seat, e.violation) for e in game.eliminations] == [(2, "keyword"), (4, "empty")]
    assert game.phase == "vote" and game.order == (0, 1, 3, 5)
    vote_round(game, {0: "player_3", 1: "player_3", 3: "player_1", 5: "player_3"})
    assert game.end_condition == "E2" and game.winner == "spy"
    approx(game.scores, {0: 0, 1: 11, 2: 0, 3: 1, 4: 0, 5: 0})


def random_play(game: WisGame, rng: np.random.Generator) -> int:
    """Play to the end with random clues (legal, own word, empty, repeats) and random ballots;
    checks that eliminated seats never act. Returns the number of live steps."""
    pool = ["Clue A", "Clue B", "Clue C", "", "tea", "coffee", "sand", "soil", "Clue D", None]
    steps = 0
    while not game.over:
        seat = game.actor
        assert seat is not None and game.is_alive(seat)
        if game.phase == "describe":
            clue = pool[int(rng.integers(len(pool)))]
            if clue == "Clue D" or rng.random() < 0.5:
                clue = f"Fresh clue {rng.integers(10**6)}"
            game.describe(seat, clue)
        else:
            choice = int(rng.integers(game.n + 3))
            game.vote(seat, choice if choice <= game.n else ("garbage" if choice == game.n + 1 else None))
        steps += 1
    return steps


def test_random_play_is_bounded() -> None:  # fact 29 (and 8)
    for seed in range(300):
        rng = np.random.default_rng(seed)
        cfg = WisConfig()
        pairs = [("tea", "coffee"), ("sand", "soil")]
        game = WisGame(cfg, draw_setup(cfg, pairs, rng), seed=seed)
        steps = random_play(game, rng)
        assert steps <= 36 and game.round <= 3 and game.actor is None


# ---- public analysis (§2.11.1) -------------------------------------------------------------------------

def test_public_analysis_is_exempt_and_truncated() -> None:
    game = new_game(spy=2, first=0, allow_public_analysis=True, analysis_max_chars=50)
    game.describe(0, "Brewed in a pot.", analysis="player_2 said coffee-ish things; my word is tea. " * 3)
    game.describe(1, "Nice when it rains.\nANALYSIS: I suspect player_2 (tea drinker here).")
    game.describe(2, "Something else", analysis="   ")
    describe_round(game, {3: "Brewed in a pot"})
    d0, d1, d2 = game.descriptions[:3]
    assert d0.text == "Brewed in a pot." and d0.analysis is not None and len(d0.analysis) == 50
    assert d1.text == "Nice when it rains." and d1.analysis == "I suspect player_2 (tea drinker here)."
    assert d2.analysis is None
    assert [(e.seat, e.violation) for e in game.eliminations] == [(3, "repeat")]


def test_analysis_is_dropped_with_a_note_when_off() -> None:
    game = new_game(spy=2, first=0)
    note = game.describe(0, "Brewed in a pot.", analysis="anything")
    assert note is not None and "analysis" in note and game.descriptions[0].analysis is None
    assert game.describe(1, "Nice when it rains.\nANALYSIS: x") is None
    assert game.descriptions[1].text == "Nice when it rains.\nANALYSIS: x"


# ---- several spies ---------------------------------------------------------------------------------------

def test_two_spies_civilians_win_only_when_both_are_out() -> None:
    cfg = WisConfig(n_players=8, n_spies=2)
    setup = draw_setup(cfg, PAIRS, np.random.default_rng(0),
                       {"civilian_word": "tea", "spy_word": "coffee", "spy_seats": [6, 1], "first_speaker": 0})
    game = WisGame(cfg, setup)
    assert setup.spy_seats == (1, 6) and [game.word_of(s) for s in range(8)].count("coffee") == 2
    describe_round(game)
    vote_round(game, {0: 1, 2: 1, 3: 1})
    assert not game.over and game.round == 2
    describe_round(game, {6: "Coffee, black."})  # the second spy fouls in round 2
    assert game.over and game.end_condition == "E1" and game.winner == "civilians"
    # pot 16, each spy's share 8: caught in round 1 -> 0, in round 2 -> 8/3; bonus 3 votes from the spy p1
    scores = game.scores
    assert scores["player_1"] == -3 and scores["player_6"] * 3 == 8
    civ_pot = 16 - scores["player_6"]
    assert scores["player_0"] == civ_pot / 6 + 1 and scores["player_4"] == civ_pot / 6
    assert sum(scores.values()) == 16
    rec = game.record()
    assert rec["spy_seats"] == [1, 6] and rec["outcome"]["spy_elimination_round"] == 2
    assert rec["outcome"]["spy_elimination_rounds"] == {"player_1": 1, "player_6": 2}


def test_two_spies_one_alive_wins() -> None:
    cfg = WisConfig(n_players=8, n_spies=2)
    setup = draw_setup(cfg, PAIRS, np.random.default_rng(0), {"spy_seats": [1, 6], "first_speaker": 0})
    game = WisGame(cfg, setup)
    describe_round(game)
    vote_round(game, {0: 1, 2: 1})
    for _ in range(2):
        describe_round(game)
        vote_round(game, {})
    assert game.end_condition == "E3" and game.winner == "spy"
    scores = game.scores
    assert scores["player_6"] == 8 and scores["player_1"] == -2
    assert scores["player_0"] == Fraction(8, 6) + 1  # p1's unspent share, split by the six civilians
    assert sum(scores.values()) == 16


# ---- record (§4.10) -------------------------------------------------------------------------------------

def test_record_is_json_safe_and_complete() -> None:
    game = play_fact_25()
    rec = json.loads(json.dumps(game.record()))
    assert set(rec) >= {"version", "seed", "language", "civilian_word", "spy_word", "spy_seat", "first_speaker",
                        "player_names", "rounds", "outcome", "scores", "survival_rounds"}
    assert (rec["civilian_word"], rec["spy_word"], rec["spy_seat"], rec["first_speaker"]) == ("sand", "soil", 5, 0)
    assert rec["outcome"] == {"winner": "civilians", "spy_elimination_round": 2, "end_condition": "E1",
                              "spy_elimination_rounds": {"player_5": 2}}
    r1 = rec["rounds"][0]
    assert set(r1) == {"round", "speaking_order", "descriptions", "votes", "tally", "eliminated_by_vote",
                       "eliminated_by_violation"}
    assert r1["speaking_order"] == [f"player_{i}" for i in range(6)]
    assert r1["descriptions"][2] == {"speaker": "player_2", "raw_text": "Found on every beach.",
                                     "text": "Found on every beach.", "analysis": None, "violation": "repeat"}
    assert r1["votes"][0] == {"voter": "player_0", "raw_action": "player_5", "target": "player_5"}
    assert r1["tally"] == {"player_5": 2, "player_4": 1, "player_1": 2}
    assert r1["eliminated_by_violation"] == ["player_2"] and r1["eliminated_by_vote"] is None
    assert rec["rounds"][1]["eliminated_by_vote"] == "player_5"
    assert rec["scores"]["player_5"] == -2.0 and rec["survival_rounds"]["player_2"] == 0


def test_record_mid_game_and_odd_raw_actions() -> None:
    game = new_game(spy=2, first=0)
    describe_round(game, {1: "tea"})
    game.vote(0, np.int64(3))
    game.vote(2, {"vote": "player_3"})
    rec = json.loads(json.dumps(game.record()))
    assert rec["outcome"] is None and rec["scores"] == {}
    assert rec["rounds"][0]["descriptions"][1]["violation"] == "keyword"
    assert [v["raw_action"] for v in rec["rounds"][0]["votes"]] == [3, "{'vote': 'player_3'}"]
    assert game.ballots == []  # the public history still hides the current ballots


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(), st.text(st.characters(exclude_categories=())),
                          st.integers(-3, 9)), min_size=1, max_size=40),
       st.sampled_from(["en", "zh"]), st.sampled_from(["lenient", "strict"]), st.booleans())
def test_any_text_actions_play_to_a_valid_end(actions: list[object], language: str, parsing: str,
                                              analysis: bool) -> None:
    game = new_game(spy=1, first=3, language=language, vote_parsing=parsing, allow_public_analysis=analysis)
    i = 0
    while not game.over:
        seat = game.actor
        assert seat is not None
        action = actions[i % len(actions)]
        i += 1
        if game.phase == "describe":
            game.describe(seat, action if action is None or isinstance(action, str) else str(action))
        else:
            game.vote(seat, action)
    assert i <= 36 and game.winner in ("spy", "civilians")
    total = sum(game.scores.values())
    assert total == 12 or all(game.is_spy(s) for s in game.alive_seats)
    json.dumps(game.record())
