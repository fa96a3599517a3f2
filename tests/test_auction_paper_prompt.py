"""prompt="paper" (issue 11, point 6): a bidder sees what the reference code's bidder sees, and nothing more."""
import pickle

import pytest
from pettingzoo.test import api_test, seed_test

from arena_envs import auction_v0
from arena_envs.auction import text as T
from arena_envs.auction.items import TABLE1_ITEMS


def fixed_state(**kwargs):
    """Widget A sold to Bidder 1 at $1200; Gadget B ($3000) in round 2 after B1 $3300, B2 $3000, B3 out."""
    env = auction_v0.env(item_order="given", prompt="paper", tie_break="lowest_seat", **kwargs)
    env.reset(seed=0)
    for answer in ("I bid $1200!", "I'm out!", "I'm out!", "I bid $3300!", "I bid $3000!", "I'm out!"):
        env.step(answer)
    assert env.agent_selection == "bidder_2"
    return env


def test_first_turn_of_an_item_shows_the_reference_elements_only():
    env = auction_v0.env(item_order="given", prompt="paper", budgets=[20000, 15000, 20000])
    env.reset(seed=0)
    text = env.observe("bidder_2")["text"]
    shown = ["You are Bidder 2", "ascending-bid auction", "the last bidder left wins the item at the final price",
             T.OBJECTIVES["maximize_profit"], "resold", "too high or too low", "The highest bid wins",
             "true value minus your winning bid",
             "10 item(s) remain in this auction: " + ", ".join(i.name for i in TABLE1_ITEMS),
             "Up now: Widget A, starting at $1000.", "following your plan", "Give your reasons first",
             '"I\'m out!"', '"I bid $xxx!"']
    for element in shown:
        assert element in text, element
    hidden = ["estimate", "$2200", "$15000", "$20000", "budget:", "minimum valid bid", "A widget for all your needs",
              "Bidders: Bidder 1", "10%", "Results so far", "Round 1."]
    for element in hidden:
        assert element not in text.replace("your own estimate of it", ""), element


def test_later_round_shows_the_previous_round_and_the_standing_bid_only():
    env = fixed_state()
    text = env.observe("bidder_2")["text"]
    turn = env.unwrapped.bid_turn("bidder_2")
    assert text.endswith(turn)
    for element in ['The auctioneer now says: "', "round 1 of this item", "- Bidder 1: $3300",
                    "- You (Bidder 2): $3000", "- Bidder 3 withdrew",
                    "The highest bid is now $3300, from Bidder 1, for Gadget B",
                    "at least $300"]:
        assert element in turn, element
    # the item's first turn and this bidder's reply stay in the conversation
    assert "Up now: Gadget B, starting at $3000." in text and "Your reply: I bid $3000!" in text
    hidden = ["Widget A -> ", "$2000", "Sold!", "Congratulations", "$3600", "$6600", "$20000",
              "Your status: budget left", "estimated value", "A gadget with all the latest features"]
    for element in hidden:
        assert element not in text, element
    # an earlier item's conversation is gone
    assert "Up now: Widget A" not in text


def test_a_rejected_bid_gets_the_auctioneers_answer_as_the_next_turn():
    env = fixed_state()
    env.step("I bid $3400!")  # below 3300 + 300
    turn = env.unwrapped.bid_turn("bidder_2")
    assert turn.startswith("Your bid of $3400 must beat the previous highest bid $3300 by at least $300")
    assert turn.endswith("You must reconsider your decision.")
    text = env.observe("bidder_2")["text"]
    assert text.endswith("Your reply: I bid $3400!\n---\n" + turn)
    env.step("maybe")
    assert "state your decision clearly" in env.unwrapped.bid_turn("bidder_2")


def test_paper_prompt_ignores_reveal_status_and_keeps_the_guided_answer_format():
    env = fixed_state(reveal_status=True)
    assert "Your status" not in env.observe("bidder_2")["text"]
    constraint = env.unwrapped.answer_constraint("bidder_2")
    assert constraint.accepts("I bid $3600!") and constraint.accepts("I'm out!")


def test_native_actions_show_as_the_reference_phrases():
    env = auction_v0.env(item_order="given", prompt="paper", action_mode="amount", tie_break="lowest_seat")
    env.reset(seed=0)
    env.step(1100)
    env.step(-1)
    env.step(1100)
    assert "Your reply: I bid $1100!" in env.observe("bidder_1")["text"]
    assert "You have no decision to make now." in env.observe("bidder_1")["text"]


def test_paper_env_passes_the_api_test_and_pickles():
    env = auction_v0.env(prompt="paper")
    api_test(env, num_cycles=200)
    seed_test(lambda: auction_v0.env(prompt="paper"), num_cycles=100)
    env = fixed_state()
    clone = pickle.loads(pickle.dumps(env))
    assert clone.observe("bidder_2")["text"] == env.observe("bidder_2")["text"]


def test_bad_prompt_is_rejected():
    with pytest.raises(ValueError, match="prompt must be one of"):
        auction_v0.env(prompt="essay")
