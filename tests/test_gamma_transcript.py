"""γ-Bench's transcripts (each seat's prompt prefix and its window of round reports), their text
blocks, and the prompt options that set the window (arena_envs/gamma/transcript.py,
arena_envs/gamma/prompt_options.py)."""
from __future__ import annotations

import random

import pytest

from arena_envs.gamma.battle_royale import BattleRoyaleEnv
from arena_envs.gamma.el_farol import ElFarolEnv
from arena_envs.gamma.prompt_options import DEFAULT_HISTORY_WINDOW, PromptOptions
from arena_envs.gamma.transcript import SharedTranscripts, Transcript, report_block, request_block, rules_block

# ------------------------------------------------------------------------------ transcripts


def test_transcript_shows_the_prefix_and_the_last_window_reports():
    t = Transcript("RULES\n", 2)
    assert t.text == "RULES\n"
    for k in range(5):
        t.add(f"r{k}\n")
    assert t.text == "RULES\nr3\nr4\n" and t.reports == ("r3\n", "r4\n")
    full = Transcript("P", None)
    for k in range(30):
        full.add(str(k))
    assert full.text == "P" + "".join(str(k) for k in range(30))
    none = Transcript("P", 0)
    none.add("x")
    assert none.text == "P"
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="history_window"):
            Transcript("P", bad)  # type: ignore[arg-type]


def _reference_texts(prefixes, window, events):
    """What per-seat Transcripts show after ``events`` (the meaning SharedTranscripts must keep)."""
    seats = [Transcript(p, window) for p in prefixes]
    left: set[int] = set()
    for kind, *args in events:
        if kind == "post":
            public, own = args
            for seat, transcript in enumerate(seats):
                if seat not in left:
                    transcript.add(own.get(seat, public))
        else:
            left.add(args[0])
    return [t.text for t in seats]


@pytest.mark.parametrize("window", [None, 0, 1, 3, 20])
def test_shared_transcripts_read_like_one_transcript_per_seat(window):
    rng = random.Random(window)
    for _ in range(20):
        n = rng.randint(1, 6)
        prefixes = [f"seat {s}\n" for s in range(n)]
        shared = SharedTranscripts(prefixes, window)
        events: list[tuple] = []
        left: set[int] = set()
        for k in range(rng.randint(0, 40)):
            if rng.random() < 0.1 and len(left) < n:
                seat = rng.choice([s for s in range(n) if s not in left])
                shared.leave(seat)
                left.add(seat)
                events.append(("leave", seat))
            else:
                staying = [s for s in range(n) if s not in left]
                own = {s: f"[{k} own {s}]" for s in rng.sample(staying, rng.randint(0, len(staying)))}
                shared.post(f"[{k} public]", own)
                events.append(("post", f"[{k} public]", own))
            if rng.random() < 0.3:  # reads in between must not change what later reads show
                shared.text(rng.randrange(n))
        assert [shared.text(s) for s in range(n)] == _reference_texts(prefixes, window, events)


def test_shared_transcripts_refuse_a_report_for_a_seat_that_left():
    shared = SharedTranscripts(["a", "b"], None)
    shared.leave(1)
    with pytest.raises(ValueError, match="seat 1 has left"):
        shared.post("public", {1: "own"})


def test_text_blocks():
    assert rules_block("Intro.", ["one", "two"], "Be bold.", "You are p0.") == \
        "Be bold.\n\nIntro.\n\nRules:\n1. one\n2. two\n\nYou are p0.\n"
    assert report_block("Round 2", "Public.", '{"x": "1"}', "Private.") == \
        '\n=== Round 2 results ===\nPublic.\nYour answer: {"x": "1"}\nPrivate.\n'
    request = request_block("Round 3", ["Decide."], "Answer in JSON.", note="bad", cot=True)
    assert request.startswith("\n=== Round 3 starts ===\nDecide.\n") and "could not be used: bad" in request
    assert request.endswith("Answer in JSON.\n")


# ------------------------------------------------------------------------------ prompt options and window


def test_prompt_options_validate_once():
    assert PromptOptions().history_window == DEFAULT_HISTORY_WINDOW == 20
    assert PromptOptions(persona="Be kind.").rules("I.", ["r"]).startswith("Be kind.\n\nI.")
    with pytest.raises(ValueError, match="persona"):
        PromptOptions(persona=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="history_window"):
        PromptOptions(history_window=-2)


def test_default_window_shows_every_round_of_a_paper_default_game_and_bounds_longer_ones():
    """The γ-Bench games last 20 rounds by default: the window keeps all of them (the paper's prompt),
    and a 200-round game's text stays as long as a 20-round one's while the history keeps all."""
    def last_text(n_rounds):
        env = ElFarolEnv(n_rounds=n_rounds)
        env.reset(seed=0)
        while not env.done:
            env.step(env.action_of("go"))
        return env, env.observe("player_0")["text"]

    _, text20 = last_text(20)
    assert all(f"=== Round {r} results ===" in text20 for r in range(1, 21))
    env200, text200 = last_text(200)
    assert "=== Round 180 results ===" not in text200 and "=== Round 181 results ===" in text200
    assert len(env200.history) == 200 and len(env200.episode_record()["events"]) >= 200
    assert abs(len(text200) - len(text20)) < 100  # round numbers have more digits


def test_battle_royale_per_move_state_does_not_grow_with_the_history():
    """A long game's shooter reads as long a text as a short one's (window 20)."""
    env = BattleRoyaleEnv(n_players=4, hit_rates=[1, 1, 1, 1], max_turns=None)
    env.reset(seed=0)
    lengths = []
    for _ in range(200):
        agent = env.agent_selection
        lengths.append(len(env.observe(agent)["text"]))
        env.step(4)  # miss on purpose: nobody dies, the game goes on
    assert max(lengths[100:]) - min(lengths[100:]) < 40
